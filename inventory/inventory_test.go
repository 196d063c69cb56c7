package inventory_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/inventory"
	"github.com/subprov/subprov/store"
)

func ptr[T any](v T) *T { return &v }

func fields(ps inventory.Problems) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Field)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// The rules of each row, as both a fixture load and the operations surface hold rows to them.
func TestRowRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ps   inventory.Problems
		want string
	}{
		{"a good building", inventory.Building{Street: "1 Main", PostalCode: "h3c 2b5", LineType: ptr("first")}.Check(), ""},
		{"a building abroad keeps its postal code", inventory.Building{Street: "1 Main", PostalCode: "10001", Country: "US"}.Check(), ""},
		{"building values", inventory.Building{PostalCode: "ZZZ", LineType: ptr("fourth"), EarliestServiceDate: ptr("soon"),
			ProviderIDs: []string{"a", "a"}}.Check(), "earliest_service_date line_type postal_code provider_ids[1] street"},
		{"unit values", inventory.Unit{}.Check(), "building_id unit_number"},
		{"port values", inventory.Port{}.Check(), "building_id port switch"},
		{"plan values", inventory.Plan{Versions: []inventory.PlanVersion{{MonthlyPrice: "-1.00", SetupFee: "x", PromoPrice: ptr(""),
			PromoEndsOn: ptr("x")}}}.Check(),
			"name provider_id versions[0].download_mbps versions[0].monthly_price versions[0].promo_ends_on versions[0].promo_price versions[0].setup_fee versions[0].upload_mbps"},
		{"a good plan version", inventory.PlanVersion{MonthlyPrice: "60", DownloadMbps: 1, UploadMbps: 1}.Check(), ""},
		{"install window values", inventory.InstallWindow{Weekday: "mon", Starts: "8:00", Ends: "07:00"}.Check(),
			"ends provider_id starts technicians weekday"},
		{"a good install window", inventory.InstallWindow{ProviderID: "p", Weekday: "monday", Starts: "08:00", Ends: "12:00", Technicians: 1}.Check(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fields(tt.ps); got != tt.want {
				t.Errorf("problems at %q, want %q (%v)", got, tt.want, tt.ps)
			}
		})
	}
}

// One set of rules: a row a fixture refuses is refused by the operations surface with the same
// messages, field by field.
func TestFixtureAndOperatorsShareTheRules(t *testing.T) {
	t.Parallel()
	row := inventory.Building{ID: "b-x", Street: "", PostalCode: "ZZZ", LineType: ptr("fourth")}
	_, err := fixture.Parse([]byte(`{"buildings": [{"id": "b-x", "provider_ids": [], "street": "", "postal_code": "ZZZ", "line_type": "fourth"}]}`))
	var fp fixture.Problems
	if !errors.As(err, &fp) {
		t.Fatalf("fixture: %v", err)
	}
	for _, p := range row.Check() {
		w := "buildings[0]." + p.Field + ": " + p.Msg
		found := false
		for _, f := range fp {
			found = found || f == w
		}
		if !found {
			t.Errorf("the fixture does not report %q: %v", w, fp)
		}
	}
	if len(fp) != len(row.Check()) {
		t.Errorf("fixture problems %v, row problems %v", fp, row.Check())
	}
}

func operator(role subprov.Role, provider string) *subprov.Operator {
	return &subprov.Operator{ID: "op-" + string(role) + provider, Email: "op@test", Role: role, ProviderID: provider}
}

func code(err error) subprov.Code {
	if err == nil {
		return ""
	}
	return subprov.ErrorCode(err)
}

// The capability checks the role first, then the scope, whatever the HTTP layer did.
func TestServiceRoleAndScope(t *testing.T) {
	t.Parallel()
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		s := &inventory.Service{Store: e.Store, Clock: e.Clock}
		platform := operator(subprov.RoleAdmin, "")
		maple := operator(subprov.RoleAdmin, servicetest.Maple)
		viewer := operator(subprov.RoleViewer, servicetest.Northwind)
		installer := operator(subprov.RoleInstaller, servicetest.Northwind)
		tests := []struct {
			name string
			call func() error
			want subprov.Code
		}{
			{"a viewer creates no building", func() error {
				_, err := s.CreateBuilding(ctx, viewer, inventory.Building{Street: "1 Main"})
				return err
			}, subprov.EFORBIDDEN},
			{"an installer reads a building", func() error {
				_, err := s.Building(ctx, installer, servicetest.BuildingKing)
				return err
			}, ""},
			{"an installer reads no plans", func() error {
				_, _, err := s.Plans(ctx, installer, inventory.ListFilter{}, subprov.Page{Limit: 10})
				return err
			}, subprov.EFORBIDDEN},
			{"another provider's building is not found", func() error {
				_, err := s.Building(ctx, maple, servicetest.BuildingKing)
				return err
			}, subprov.ENOTFOUND},
			{"a shared building is the platform's", func() error {
				_, err := s.EditBuilding(ctx, maple, servicetest.BuildingQueen, 0, inventory.BuildingPatch{Presale: inventory.Optional[bool]{Set: true, V: true}})
				return err
			}, subprov.EFORBIDDEN},
			{"the platform edits a shared building", func() error {
				_, err := s.EditBuilding(ctx, platform, servicetest.BuildingQueen, 0, inventory.BuildingPatch{Presale: inventory.Optional[bool]{Set: true, V: true}})
				return err
			}, ""},
			{"a stale version", func() error {
				_, err := s.EditBuilding(ctx, platform, servicetest.BuildingGeorgia, 9, inventory.BuildingPatch{})
				return err
			}, subprov.ECONFLICT},
			{"another provider's plan version", func() error {
				_, err := s.EditPlanVersion(ctx, maple, servicetest.PlanFibre150, 0, inventory.PlanVersionPatch{Sellable: ptr(false)})
				return err
			}, subprov.ENOTFOUND},
			{"an installer removes another provider's window", func() error {
				return s.DeleteInstallWindow(ctx, installer, "iw200000-0000-4000-8000-000000000001")
			}, subprov.ENOTFOUND},
			{"a provider's admin names another provider's plan", func() error {
				_, err := s.CreatePlan(ctx, maple, inventory.Plan{ProviderID: servicetest.Northwind, Name: "X"})
				return err
			}, subprov.EINVALID},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := code(tt.call()); got != tt.want {
					t.Errorf("code %q, want %q", got, tt.want)
				}
			})
		}
		b, err := s.CreateBuilding(ctx, maple, inventory.Building{Street: "9 Rue Maple"})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.ProviderIDs) != 1 || b.ProviderIDs[0] != servicetest.Maple || b.Shared {
			t.Errorf("a provider's admin's building: %+v", b.BuildingRecord)
		}
		w, err := s.CreateInstallWindow(ctx, installer, inventory.InstallWindow{Weekday: "sunday", Starts: "09:00", Ends: "10:00", Technicians: 1})
		if err != nil || w.ProviderID != servicetest.Northwind {
			t.Fatalf("an installer's window: %+v %v", w, err)
		}
		offered := func() bool { // the windows the install slots are computed from
			ws, err := e.Store.InstallWindows(ctx, servicetest.Northwind)
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(ws, func(x subprov.InstallWindow) bool { return x.ID == w.ID })
		}
		if !offered() {
			t.Error("a new window's slots are not offered")
		}
		if err := s.DeleteInstallWindow(ctx, installer, w.ID); err != nil {
			t.Fatal(err)
		}
		if offered() {
			t.Error("a removed window's slots are still offered")
		}
		var took bool
		if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			took, err = tx.TakeSlotPlace(ctx, servicetest.Northwind, subprov.InstallSlot{WindowID: w.ID, Date: "2026-12-06"})
			return err
		}); err != nil || took {
			t.Errorf("a place taken in a removed window: %v %v", took, err)
		}
	})
}

// An import with problems lists each by row and column and writes nothing; without, it
// creates what the file describes.
func TestImport(t *testing.T) {
	t.Parallel()
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		s := &inventory.Service{Store: e.Store, Clock: e.Clock}
		maple := operator(subprov.RoleAdmin, servicetest.Maple)
		_, err := s.Import(ctx, maple, []byte("building_id,street,provider_ids,unit_number,unit_id\n"+
			servicetest.BuildingKing+",1 Main,,1,\n"+
			"b-new,2 Main,"+servicetest.Northwind+",1,"+servicetest.UnitKing1204+"\n"+
			"b-new,2 Main,"+servicetest.Northwind+",2,\n"))
		var ps inventory.ImportProblems
		if !errors.As(err, &ps) {
			t.Fatalf("err = %v, want ImportProblems", err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Column)
		}
		if want := "building_id provider_ids unit_id"; strings.Join(got, " ") != want {
			t.Errorf("problems at %v, want %s: %v", got, want, ps)
		}
		res, err := s.Import(ctx, maple, []byte("street,unit_number,switch,port\n1 Maple Lane,1,van-sw9,ge-0/0/1\n1 Maple Lane,2,,\n"))
		if err != nil {
			t.Fatal(err)
		}
		if res.BuildingsCreated != 1 || res.Units != 2 || res.Ports != 1 || len(res.Buildings[0].Units) != 2 {
			t.Errorf("imported %+v", res)
		}
	})
}
