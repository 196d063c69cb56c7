package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestHoldsPlaceInSQLIsTheRule: the store's SQL for "this line holds its place" (the unique
// index's predicate, repeated in reads by place) answers as subprov.HoldsPlace does for every
// status, in service or deprovisioned, on both engines.
func TestHoldsPlaceInSQLIsTheRule(t *testing.T) {
	statuses := []subprov.Status{subprov.StatusPendingInstall, subprov.StatusActive, subprov.StatusSuspended, subprov.StatusCancelled}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
		f, err := fixture.Parse(fixture.DemoJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.Load(ctx, s, f, now); err != nil {
			t.Fatal(err)
		}
		for _, status := range statuses {
			for _, deprovisioned := range []bool{false, true} {
				unit := fmt.Sprintf("u-%s-%v", status, deprovisioned)
				err := s.InTx(ctx, func(tx *store.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO units (id, building_id, unit_number, created_at) VALUES (?, ?, ?, ?)`,
						unit, fxBuilding, unit, now); err != nil {
						return err
					}
					var at any
					if deprovisioned {
						at = now
					}
					_, err := tx.Exec(ctx, `INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id, building_id, unit_id,
						location_key, status, delivery_mode, source, deprovisioned_at, created_at, updated_at)
						VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'home_drop', 'test', ?, ?, ?)`, "line-"+unit, fixture.DemoProviderID, fxJean, fxPlan500,
						fxBuilding, unit, unit, string(status), at, now, now)
					return err
				})
				if err != nil {
					t.Fatalf("%s: %v", unit, err)
				}
				held, err := s.UnitHeldByOther(ctx, unit, "")
				if err != nil {
					t.Fatal(err)
				}
				if want := subprov.HoldsPlace(status, deprovisioned); held != want {
					t.Errorf("%s, deprovisioned %v: the store says held %v, the rule %v", status, deprovisioned, held, want)
				}
			}
		}
	})
}
