package agent

import (
	"reflect"
	"testing"

	"github.com/subprov/subprov"
)

func TestFormatAddress(t *testing.T) {
	for _, tc := range []struct{ street, city, province, postal, want string }{
		{"120 Rue King", "Montréal", "QC", "H3C 2B5", "120 Rue King, Montréal, QC H3C 2B5"},
		{"120 Rue King", "", "QC", "", "120 Rue King, QC"},
		{"", "Montréal", "", "H3C 2B5", "Montréal, H3C 2B5"},
		{" 88A Queen St ", "  ", " ON", "M5V 2T6 ", "88A Queen St, ON M5V 2T6"},
		{"", "", "", "", ""},
		{"1 Rue Notre-Dame", "Québec", " ", "  ", "1 Rue Notre-Dame, Québec"},
		{"", "", "QC ", " H3C", "QC   H3C"}, // inner spaces kept, as typed
	} {
		if got := formatAddress(tc.street, tc.city, tc.province, tc.postal); got != tc.want {
			t.Errorf("formatAddress(%q, %q, %q, %q) = %q, want %q", tc.street, tc.city, tc.province, tc.postal, got, tc.want)
		}
	}
}

func TestDistinctLocations(t *testing.T) {
	line := func(building, unit string) subprov.ServiceLocation {
		return subprov.ServiceLocation{BuildingID: building, UnitNumber: unit, Street: "1 " + building, City: "Laval", Province: "QC", PostalCode: "H7N 1A1"}
	}
	summary := func(building, unit string) LocationSummary {
		return LocationSummary{BuildingID: building, Address: "1 " + building + ", Laval, QC H7N 1A1", UnitNumber: unit}
	}
	for _, tc := range []struct {
		name  string
		lines []subprov.ServiceLocation
		want  []LocationSummary
	}{
		{"no line", nil, []LocationSummary{}},
		{"one line", []subprov.ServiceLocation{line("b1", "101")}, []LocationSummary{summary("b1", "101")}},
		{"a unit's lines once, newest first", []subprov.ServiceLocation{line("b2", "7"), line("b1", "101"), line("b2", "7"), line("b1", "102")},
			[]LocationSummary{summary("b2", "7"), summary("b1", "101"), summary("b1", "102")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := distinctLocations(tc.lines); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
