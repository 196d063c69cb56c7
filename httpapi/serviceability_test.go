package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/serviceability"
	"github.com/subprov/subprov/store"
)

const (
	storeKey        = fixture.DemoStoreKey
	mapleKey        = fixture.DemoOtherProviderKey
	northwind       = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001"
	kingBuilding    = "b1000000-0000-4000-8000-000000000001"
	queenBuilding   = "b1000000-0000-4000-8000-000000000002"
	maisonneuve     = "b1000000-0000-4000-8000-000000000003"
	georgiaBuilding = "b1000000-0000-4000-8000-000000000005"
)

func suggestionIDs(r *apptest.Response) []string {
	var ids []string
	list, _ := r.JSON["suggestions"].([]any)
	for _, s := range list {
		ids = append(ids, s.(map[string]any)["building_id"].(string))
	}
	return ids
}

func TestAutocomplete(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		tests := []struct {
			name   string
			key    string
			q      string
			want   []string
			status int
		}{
			{"suffix fused", storeKey, "88a queen", []string{queenBuilding}, 200},
			{"suffix separated", storeKey, "88 a queen", []string{queenBuilding}, 200},
			{"suffix hyphenated", storeKey, "88-A Queen St", []string{queenBuilding}, 200},
			{"street type abbreviation and direction", storeKey, "120 rue king ouest", []string{kingBuilding}, 200},
			{"accents folded", storeKey, "120 King Montreal", []string{kingBuilding}, 200},
			{"postal code without space", storeKey, "h3c2b5", []string{kingBuilding}, 200},
			{"word prefix", storeKey, "maison", []string{maisonneuve}, 200},
			{"only the key's coverage", mapleKey, "120 rue king", nil, 200},
			{"shared building seen by both providers", mapleKey, "88a queen", []string{queenBuilding}, 200},
			{"other provider's own building", storeKey, "1055 georgia", nil, 200},
			{"missing q", storeKey, "", nil, 422},
			{"no key", "", "king", nil, 401},
			{"wrong key", "nope-nope-nope-nope", "king", nil, 401},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := map[string]string{}
				if tt.key != "" {
					h["X-API-Key"] = tt.key
				}
				res := s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=" + strings.ReplaceAll(tt.q, " ", "+"), Headers: h})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && fmt.Sprint(suggestionIDs(res)) != fmt.Sprint(tt.want) {
					t.Fatalf("got %v, want %v", suggestionIDs(res), tt.want)
				}
			})
		}
	})
}

// addBuildings adds n buildings covered by Northwind on "Rue Sherbrooke", two of them with the
// same display string.
func addBuildings(t *testing.T, s *apptest.Service, n int) {
	t.Helper()
	ctx := context.Background()
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		for i := 0; i < n; i++ {
			num := 1000 + i
			if i == 1 {
				num = 1000 // same display as building 0
			}
			b := &subprov.Building{ID: fmt.Sprintf("bx-%03d", i), Street: fmt.Sprintf("%d Rue Sherbrooke O", num), City: "Montréal",
				PostalCode: "H3A 0G4", Province: "QC", Country: "CA", LineType: subprov.LineSecond, Orderable: true}
			if err := tx.UpsertBuilding(ctx, b, serviceability.BuildingKey(b), time.Now()); err != nil {
				return err
			}
			if err := tx.SetCoverage(ctx, b.ID, []string{northwind}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAutocompleteLimitsAndDeduplicates(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		addBuildings(t, s, 25)
		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=sherbrooke", Headers: apptest.Key(storeKey)})
		list := res.JSON["suggestions"].([]any)
		if len(list) != 15 {
			t.Fatalf("%d suggestions, want at most 15", len(list))
		}
		seen := map[string]bool{}
		for _, sg := range list {
			d := sg.(map[string]any)["display"].(string)
			if seen[d] {
				t.Fatalf("display %q listed twice", d)
			}
			seen[d] = true
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=sherbrooke&limit=3", Headers: apptest.Key(storeKey)})
		if n := len(res.JSON["suggestions"].([]any)); n != 3 {
			t.Fatalf("limit=3 gave %d", n)
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=sherbrooke&limit=0", Headers: apptest.Key(storeKey)})
		if res.Status != 422 {
			t.Fatalf("limit=0: %d", res.Status)
		}
	})
}

// TestEarliestServiceDateOnlyWhileFuture: autocomplete and check show a building's
// earliest_service_date only while that day is still ahead in the provider's time zone
// (its calendar day), set through the dev clock: Northwind is in America/Toronto (UTC-5 in
// winter), so the date 2027-03-01 shows until 05:00 UTC that day.
func TestEarliestServiceDateOnlyWhileFuture(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		autocomplete := func() map[string]any {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=4500+maisonneuve", Headers: apptest.Key(storeKey)})
			return res.JSON["suggestions"].([]any)[0].(map[string]any)
		}
		check := func() map[string]any {
			res := s.Do(apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey),
				Body: map[string]any{"address": "4500 Boulevard De Maisonneuve O, Westmount QC H3Z 1L8"}})
			m, _ := res.JSON["match"].(map[string]any)
			if res.Status != 200 || m["building_id"] != maisonneuve {
				t.Fatalf("check: %d %s", res.Status, res.Raw)
			}
			return m
		}
		tests := []struct {
			now   string
			shown bool
		}{
			{"2027-02-28T12:00:00Z", true},  // Feb 28, 07:00 in Toronto
			{"2027-03-01T02:00:00Z", true},  // Feb 28, 21:00 in Toronto, March 1 in UTC
			{"2027-03-01T04:59:59Z", true},  // Feb 28, 23:59:59 in Toronto
			{"2027-03-01T05:00:00Z", false}, // March 1 begins in Toronto
			{"2027-03-02T12:00:00Z", false},
		}
		for _, tt := range tests {
			// A fresh login each time: the clock jumps past the last token's lifetime.
			if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: s.Operator(), Body: map[string]any{"set": tt.now}}); res.Status != 200 {
				t.Fatalf("set clock: %d %s", res.Status, res.Raw)
			}
			for what, got := range map[string]map[string]any{"autocomplete": autocomplete(), "check": check()} {
				date, present := got["earliest_service_date"]
				if present != tt.shown || (tt.shown && date != "2027-03-01") || got["presale"] != true {
					t.Errorf("%s at %s: %v, want earliest_service_date shown %v", what, tt.now, got, tt.shown)
				}
			}
		}
	})
}

func TestCheck(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		tests := []struct {
			name        string
			key         string
			body        any
			status      int
			serviceable bool
			building    string
			unit        string
		}{
			{"free text with compact lower-case postal code", storeKey, map[string]any{"address": "120 rue King Ouest, Montréal QC h3c2b5"}, 200, true, kingBuilding, ""},
			{"postal code with space and upper case", storeKey, map[string]any{"address": "120 King St W, Montreal, QC H3C 2B5"}, 200, true, kingBuilding, ""},
			{"structured", storeKey, map[string]any{"street": "88 A Queen Street West", "city": "Toronto", "province": "Ontario", "postal_code": "m5h2n2"}, 200, true, queenBuilding, ""},
			{"structured wins over free text", storeKey, map[string]any{"address": "88A Queen St W, Toronto", "street": "120 Rue King O", "city": "Montreal"}, 200, true, kingBuilding, ""},
			{"structured with unit", storeKey, map[string]any{"street": "4500 boul. de Maisonneuve O", "city": "Westmount", "unit": "2B"}, 200, true, maisonneuve, "2B"},
			{"no match", storeKey, map[string]any{"address": "1 Nowhere Road, Halifax NS B3H 1A1"}, 200, false, "", ""},
			{"house number must match exactly", storeKey, map[string]any{"address": "12 Rue King O, Montréal"}, 200, false, "", ""},
			{"wrong postal code is no match", storeKey, map[string]any{"address": "120 Rue King O, Montréal H2X 1Y4"}, 200, false, "", ""},
			{"other provider's building is no match", mapleKey, map[string]any{"address": "120 Rue King O, Montréal"}, 200, false, "", ""},
			{"neither address nor street", storeKey, map[string]any{"city": "Toronto"}, 422, false, "", ""},
			{"unknown field", storeKey, map[string]any{"address": "x", "adress": "y"}, 422, false, "", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(tt.key), Body: tt.body})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status != 200 {
					if _, ok := res.JSON["detail"].([]any); !ok {
						t.Fatalf("422 should list the offending fields: %s", res.Raw)
					}
					return
				}
				if res.JSON["serviceable"] != tt.serviceable {
					t.Fatalf("serviceable = %v: %s", res.JSON["serviceable"], res.Raw)
				}
				plans := res.JSON["plans"].([]any)
				if tt.building == "" {
					if res.JSON["match"] != nil || len(plans) != 0 {
						t.Fatalf("no match must give match null and no plans: %s", res.Raw)
					}
					return
				}
				m := res.JSON["match"].(map[string]any)
				if m["building_id"] != tt.building || res.JSON["building_id"] != tt.building {
					t.Fatalf("matched %v, want %s", m["building_id"], tt.building)
				}
				if len(plans) != 3 {
					t.Fatalf("want Northwind's 3 sellable plans, got %d", len(plans))
				}
				if tt.unit != "" && m["unit"].(map[string]any)["unit_number"] != tt.unit {
					t.Fatalf("unit = %v", m["unit"])
				}
			})
		}
	})
}

func TestUnits(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		tests := []struct {
			name      string
			key       string
			building  string
			status    int
			available map[string]bool
		}{
			{"suites with availability", storeKey, kingBuilding, 200, map[string]bool{"1204": false, "1205": true, "1206": true}},
			{"pending install holds the suite", storeKey, maisonneuve, 200, map[string]bool{"2A": false, "2B": true, "3A": true}},
			{"unknown building", storeKey, "no-such-building", 404, nil},
			{"building of another provider", storeKey, georgiaBuilding, 404, nil},
			{"missing building_id", storeKey, "", 422, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/units?building_id=" + tt.building, Headers: apptest.Key(tt.key)})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 404 && res.JSON["detail"] != "Building not found" {
					t.Fatalf("404 body %s", res.Raw)
				}
				if tt.available == nil {
					return
				}
				got := map[string]bool{}
				for _, u := range res.JSON["units"].([]any) {
					m := u.(map[string]any)
					got[m["unit_number"].(string)] = m["available"].(bool)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.available) {
					t.Fatalf("availability %v, want %v", got, tt.available)
				}
			})
		}
	})
}

func TestLocation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		tests := []struct {
			name   string
			path   string
			body   any
			status int
			unit   string
			detail string
		}{
			{"by hash", "/partner/location/", map[string]string{"location_hash": "lh_7f3a9c1205"}, 200, "1205", ""},
			{"by identifier", "/partner/location/", map[string]string{"location_identifier": "MTL-KING-1204"}, 200, "1204", ""},
			{"hash wins over identifier", "/partner/location/", map[string]string{"location_hash": "lh_7f3a9c1205", "location_identifier": "MTL-KING-1204"}, 200, "1205", ""},
			{"internal surface", "/api/v1/location/", map[string]string{"location_hash": "lh_7f3a9c1206"}, 200, "1206", ""},
			{"neither", "/partner/location/", map[string]string{}, 422, "", "Provide location_hash or location_identifier"},
			{"blank values", "/partner/location/", map[string]string{"location_hash": " "}, 422, "", "Provide location_hash or location_identifier"},
			{"unknown", "/partner/location/", map[string]string{"location_hash": "lh_nope"}, 404, "", "Location not found"},
			// Only the path itself: a path below it (a mistyped /details) is no lookup.
			{"a path below it", "/partner/location/detail", map[string]string{"location_hash": "lh_7f3a9c1205"}, 404, "", "Not found"},
			{"a path below its mirror", "/api/v1/location/x", map[string]string{"location_hash": "lh_7f3a9c1205"}, 404, "", "Not found"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "POST", Path: tt.path, Body: tt.body})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.detail != "" && res.JSON["detail"] != tt.detail {
					t.Fatalf("detail = %v, want %q", res.JSON["detail"], tt.detail)
				}
				if tt.unit != "" {
					for _, k := range []string{"location_hash", "location_identifier", "unit_number", "postal_unit", "building_id", "street", "city", "postal_code", "province", "country"} {
						if _, ok := res.JSON[k]; !ok {
							t.Errorf("Location lacks %s", k)
						}
					}
					if res.JSON["unit_number"] != tt.unit || res.JSON["building_id"] != kingBuilding {
						t.Fatalf("resolved %s", res.Raw)
					}
				}
			})
		}
		// postal_unit is carried when the suite has one.
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/location/", Body: map[string]string{"location_hash": "lh_7f3a9c1206"}})
		if res.JSON["postal_unit"] != "PH-6" {
			t.Fatalf("postal_unit = %v", res.JSON["postal_unit"])
		}
		// Details need the dashboard JWT.
		body := map[string]string{"location_hash": "lh_7f3a9c1205"}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/location/details", Body: body}); res.Status != 401 {
			t.Fatalf("details without JWT: %d", res.Status)
		}
		sub := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/location/details", Headers: sub, Body: body}); res.Status != 401 {
			t.Fatalf("details with a subscriber JWT: %d", res.Status)
		}
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/location/details", Headers: s.Operator(), Body: body})
		if res.Status != 200 || res.JSON["line_type"] != "first" || res.JSON["port"].(map[string]any)["switch"] != "mtl-king-sw1" {
			t.Fatalf("details: %d %s", res.Status, res.Raw)
		}
	})
}
