package serviceability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/serviceability"
)

// addSherbrooke adds n second-line buildings on Rue Sherbrooke covered by Northwind, through
// the fixture loader; the first two share one display string.
func addSherbrooke(t *testing.T, e *servicetest.Env, n int) {
	t.Helper()
	bs := make([]string, n)
	for i := range n {
		num := 1000 + i
		if i == 1 {
			num = 1000
		}
		bs[i] = fmt.Sprintf(`{"id": "b7000000-0000-4000-8000-%012d", "provider_ids": [%q], "street": "%d Rue Sherbrooke O", "city": "Montréal",
			"postal_code": "H3A 0G4", "province": "QC", "country": "CA", "line_type": "second", "orderable": true}`, i, servicetest.Northwind, num)
	}
	f, err := fixture.Parse([]byte(`{"buildings": [` + strings.Join(bs, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Load(context.Background(), e.Store, f, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func autocomplete(t *testing.T, e *servicetest.Env) {
	addSherbrooke(t, e, 20)
	northwind, maple := e.Provider(t, servicetest.Northwind), e.Provider(t, servicetest.Maple)
	tests := []struct {
		name  string
		p     *subprov.Provider
		q     string
		limit int
		want  int
		first string
	}{
		{"no limit is the maximum", northwind, "sherbrooke", 0, subprov.MaxAutocomplete, "b7000000-0000-4000-8000-000000000000"},
		{"a limit above the maximum is the maximum", northwind, "sherbrooke", 40, subprov.MaxAutocomplete, ""},
		{"a limit below the maximum is kept", northwind, "sherbrooke", 3, 3, ""},
		{"a query of no words suggests nothing", northwind, " ,. ", 0, 0, ""},
		{"only the provider's coverage", maple, "sherbrooke", 0, 0, ""},
		{"a building two providers cover", maple, "88a queen", 0, 1, servicetest.BuildingQueen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Serviceability.Autocomplete(context.Background(), tt.p, tt.q, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got) != tt.want || (tt.first != "" && got[0].BuildingID != tt.first) {
				t.Fatalf("%d suggestions %+v, want %d starting with %q", len(got), got, tt.want, tt.first)
			}
			seen := map[string]bool{}
			for _, s := range got {
				if seen[s.Display] {
					t.Fatalf("%q suggested twice", s.Display)
				}
				seen[s.Display] = true
			}
		})
	}
}

// TestEarliestServiceDateIsShownUntilTheProvidersDay: the date is shown while it is still
// ahead in the provider's time zone, not UTC's.
func TestEarliestServiceDateIsShownUntilTheProvidersDay(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		p := e.Provider(t, servicetest.Northwind)
		tests := []struct {
			name string
			at   time.Time
			want string
		}{
			{"the day before", time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC), "2027-03-01"},
			{"its morning in UTC is still the evening before in Toronto", time.Date(2027, 3, 1, 2, 0, 0, 0, time.UTC), "2027-03-01"},
			{"the day itself in Toronto", time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC), ""},
		}
		for _, tt := range tests { // in order: the clock only moves forward
			e.Clock.Set(tt.at)
			got, err := e.Serviceability.Autocomplete(context.Background(), p, "maisonneuve", 0)
			if err != nil || len(got) != 1 || got[0].EarliestServiceDate != tt.want || !got[0].Presale {
				t.Errorf("%s: %+v %v, want earliest service date %q", tt.name, got, err, tt.want)
			}
			res, err := e.Serviceability.Check(context.Background(), p, serviceability.CheckInput{Address: "4500 boul de Maisonneuve O, Westmount"})
			if err != nil || res.Match == nil || res.Match.EarliestServiceDate != tt.want {
				t.Errorf("%s: check %+v %v, want earliest service date %q", tt.name, res, err, tt.want)
			}
		}
	})
}

// check: what a check matches, and that only an orderable building with a line type is
// serviceable and lists plans.
func check(t *testing.T, e *servicetest.Env) {
	northwind, maple, sandbox := e.Provider(t, servicetest.Northwind), e.Provider(t, servicetest.Maple), e.Provider(t, servicetest.Sandbox)
	tests := []struct {
		name        string
		p           *subprov.Provider
		in          serviceability.CheckInput
		building    string
		serviceable bool
		unit        string
	}{
		{"free text", northwind, serviceability.CheckInput{Address: "120 King St W, Montreal QC H3C 2B5"}, servicetest.BuildingKing, true, ""},
		{"structured fields win over free text", northwind, serviceability.CheckInput{Address: "88A Queen St W", Street: "120 Rue King O", City: "Montreal"}, servicetest.BuildingKing, true, ""},
		{"a suite by its number", northwind, serviceability.CheckInput{Address: "120 Rue King O", Unit: "1205"}, servicetest.BuildingKing, true, "1205"},
		{"a suite by its postal unit", northwind, serviceability.CheckInput{Address: "120 Rue King O", Unit: "ph-6"}, servicetest.BuildingKing, true, "1206"},
		{"an unknown suite matches the building only", northwind, serviceability.CheckInput{Address: "120 Rue King O", Unit: "9999"}, servicetest.BuildingKing, true, ""},
		{"a building not orderable is matched, not serviceable", northwind, serviceability.CheckInput{Address: "55 Rue Saint-Paul E, Montréal"}, servicetest.BuildingSaintPaul, false, ""},
		{"a building with no line type is matched, not serviceable", sandbox, serviceability.CheckInput{Address: "1 Sandbox Ave, Toronto"}, servicetest.BuildingSandbox, false, ""},
		{"the house number must match exactly", northwind, serviceability.CheckInput{Address: "12 Rue King O"}, "", false, ""},
		{"a postal code that differs is no match", northwind, serviceability.CheckInput{Address: "120 Rue King O, Montréal H2X 1Y4"}, "", false, ""},
		{"a province that differs is no match", northwind, serviceability.CheckInput{Street: "120 Rue King O", Province: "ON"}, "", false, ""},
		{"a city that differs is no match", northwind, serviceability.CheckInput{Street: "120 Rue King O", City: "Toronto"}, "", false, ""},
		{"another provider's building is no match", maple, serviceability.CheckInput{Address: "120 Rue King O"}, "", false, ""},
		{"no street is no match", northwind, serviceability.CheckInput{City: "Toronto"}, "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Serviceability.Check(context.Background(), tt.p, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Plans == nil || res.Serviceable != tt.serviceable || (res.Serviceable != (len(res.Plans) > 0)) {
				t.Fatalf("serviceable %v with %d plans, want serviceable %v", res.Serviceable, len(res.Plans), tt.serviceable)
			}
			if tt.building == "" {
				if res.Match != nil {
					t.Fatalf("matched %s, want no match", res.Match.Building.ID)
				}
				return
			}
			if res.Match == nil || res.Match.Building.ID != tt.building {
				t.Fatalf("matched %+v, want %s", res.Match, tt.building)
			}
			if got := ""; res.Match.Unit != nil || tt.unit != "" {
				if res.Match.Unit != nil {
					got = res.Match.Unit.UnitNumber
				}
				if got != tt.unit {
					t.Fatalf("suite %q, want %q", got, tt.unit)
				}
			}
			for _, v := range res.Plans {
				if v.ProviderID != tt.p.ID || !v.Sellable {
					t.Fatalf("plan %s of %s (sellable %v) offered", v.ID, v.ProviderID, v.Sellable)
				}
			}
		})
	}
}

// unitsAndLocate: a building the provider does not cover is as unknown as one that does
// not exist; a port is found by hash first, then by identifier.
func unitsAndLocate(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	units := []struct {
		name, provider, building, code string
		n                              int
	}{
		{"the provider's building", servicetest.Northwind, servicetest.BuildingKing, "", 3},
		{"a building another provider covers", servicetest.Northwind, servicetest.BuildingGeorgia, "not_found/not_found", 0},
		{"an unknown building", servicetest.Northwind, "no-such-building", "not_found/not_found", 0},
		{"a shared building", servicetest.Maple, servicetest.BuildingQueen, "", 3},
	}
	for _, tt := range units {
		got, err := e.Serviceability.Units(ctx, tt.provider, tt.building)
		if servicetest.Code(err) != tt.code || len(got) != tt.n || (err == nil && got == nil) {
			t.Errorf("units, %s: %d suites, %v; want %d, %q", tt.name, len(got), err, tt.n, tt.code)
		}
	}
	locate := []struct {
		name, hash, identifier, code, unit string
	}{
		{"by hash", servicetest.HashKing1205, "", "", servicetest.UnitKing1205},
		{"by identifier", "", "MTL-KING-1204", "", servicetest.UnitKing1204},
		{"the hash wins", servicetest.HashKing1205, "MTL-KING-1204", "", servicetest.UnitKing1205},
		{"blank values are neither", " ", "\t", "invalid/validation_error", ""},
		{"an unknown hash", "lh_nope", "", "not_found/not_found", ""},
	}
	for _, tt := range locate {
		loc, err := e.Serviceability.LocateDetails(ctx, subprov.Everything, tt.hash, tt.identifier)
		if servicetest.Code(err) != tt.code || (err == nil && loc.Port.UnitID != tt.unit) {
			t.Errorf("locate, %s: %+v, %v; want suite %q, %q", tt.name, loc, err, tt.unit, tt.code)
		}
	}
	loc, err := e.Serviceability.LocateDetails(ctx, subprov.Everything, "", "VAN-GEO-3001")
	if err != nil || fmt.Sprint(loc.ProviderIDs) != fmt.Sprint([]string{servicetest.Maple}) {
		t.Errorf("the covering providers of a Maple port: %+v %v", loc, err)
	}
}

func TestDisplay(t *testing.T) {
	tests := []struct {
		name string
		b    subprov.Building
		want string
	}{
		{"full", subprov.Building{Street: "120 Rue King O", City: "Montréal", Province: "QC", PostalCode: "H3C 2B5"}, "120 Rue King O, Montréal, QC H3C 2B5"},
		{"no city", subprov.Building{Street: "1 Main St", Province: "ON", PostalCode: "M5V 2T6"}, "1 Main St, ON M5V 2T6"},
		{"no province", subprov.Building{Street: "1 Main St", City: "Toronto", PostalCode: "M5V 2T6"}, "1 Main St, Toronto, M5V 2T6"},
		{"street only", subprov.Building{Street: "1 Main St"}, "1 Main St"},
	}
	for _, tt := range tests {
		if got := serviceability.Display(&tt.b); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestReads runs the reads that leave the clock alone on one store per engine.
func TestReads(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "Autocomplete", Test: autocomplete},
		servicetest.Rule{Name: "Check", Test: check},
		servicetest.Rule{Name: "UnitsAndLocate", Test: unitsAndLocate},
	)
}
