package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

const (
	fxKing1204 = "u1000000-0000-4000-8000-000000001204"
	fxKing1205 = "u1000000-0000-4000-8000-000000001205"
	fxKing1206 = "u1000000-0000-4000-8000-000000001206"
	fxMarie    = "s1000000-0000-4000-8000-000000000001"
	fxPriya    = "s1000000-0000-4000-8000-000000000002"
	fxJean     = "s1000000-0000-4000-8000-000000000003"
	fxPlan500  = "pv100000-0000-4000-8000-000000000500"
	fxBuilding = "b1000000-0000-4000-8000-000000000001"
	fxMarieFix = "c1000000-0000-4000-8000-000000000001"
)

// TestLocationHolderMigrationKeepsExistingLines: migration 0022 brings the lines an older
// version wrote into the one-place-one-holder scheme without failing on them. Direct lines
// were keyed by their port and suite lines by their suite, and cancelled lines held nothing,
// so a database may hold a place twice; the migration keys every line by its suite, keeps the
// place with the live (then the oldest) holder and gives each other holder a key of its own,
// touching no status. Afterwards the index refuses a new line at either place.
func TestLocationHolderMigrationKeepsExistingLines(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.MigrateTo(ctx, 21); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
		f, err := fixture.Parse(fixture.DemoJSON)
		if err != nil {
			t.Fatal(err)
		}
		// Portal logins need a column of a later migration (0029), operators columns of 0030:
		// the lines are what counts here.
		f.Accounts, f.Operators = nil, nil
		for i := range f.Subscribers {
			f.Subscribers[i].Holder.Password = nil
		}
		// Today's port writes name their switch in the inventory (migration 0043): a stand-in
		// table takes those rows while the fixture loads, and goes before the migrations run.
		f.Switches = nil
		w := rawdb.Writer(s)
		if _, err := w.ExecContext(ctx, s.Dialect.DDL(`CREATE TABLE switches (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, version INTEGER,
			created_at {{timestamp}}, updated_at {{timestamp}})`)); err != nil {
			t.Fatal(err)
		}
		dropStandIn, err := s.StandInLaterTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.LoadAtCost(ctx, s, f, now, identity.TestPasswordCost); err != nil {
			t.Fatal(err)
		}
		if err := dropStandIn(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.ExecContext(ctx, `DROP TABLE switches`); err != nil {
			t.Fatal(err)
		}
		port := func(unit string) string {
			return testdb.Strings(t, s.R().Query, `SELECT id FROM ports WHERE unit_id = ?`, unit)[0]
		}
		p1205, p1206 := port(fxKing1205), port(fxKing1206)
		// The rows as the old version wrote them: a direct line's key is its port.
		lines := []struct {
			id, subscriber, unit, port, key, status string
			created                                 time.Duration
			deprovisioned                           bool
		}{
			{"direct-1205", fxMarie, fxKing1205, p1205, p1205, "ACTIVE", 0, false},
			{"suite-1205", fxMarie, fxKing1205, p1205, fxKing1205, "ACTIVE", time.Hour, false}, // same subscriber and plan too
			{"ended-1206", fxPriya, fxKing1206, p1206, p1206, "CANCELLED", -time.Hour, true},
			{"ending-1206", fxPriya, fxKing1206, p1206, p1206, "CANCELLED", 0, false},
			{"direct-1206", fxJean, fxKing1206, p1206, p1206, "ACTIVE", time.Hour, false},
		}
		for _, l := range lines {
			var deprovisioned any
			if l.deprovisioned {
				deprovisioned = now
			}
			_, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id,
				building_id, unit_id, port_id, location_key, status, delivery_mode, source, deprovisioned_at, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'direct', 'test', ?, ?, ?)`), l.id, fixture.DemoProviderID, l.subscriber, fxPlan500,
				fxBuilding, l.unit, l.port, l.key, l.status, deprovisioned, now.Add(l.created), now.Add(l.created))
			if err != nil {
				t.Fatalf("insert %s: %v", l.id, err)
			}
		}
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate over existing lines: %v", err)
		}
		want := map[string]string{
			fxMarieFix:    fxKing1204,                  // a fixture line with a port: now keyed by its suite
			"direct-1205": fxKing1205,                  // the older of two live lines keeps the place
			"suite-1205":  "double-booked:suite-1205",  // the newer one is kept, under a key of its own
			"ended-1206":  fxKing1206,                  // deprovisioned: holds nothing, so it shares the key
			"ending-1206": "double-booked:ending-1206", // still in service, but the live line keeps the place
			"direct-1206": fxKing1206,
		}
		for id, key := range want {
			got := testdb.Strings(t, s.R().Query, `SELECT location_key FROM subscriptions WHERE id = ?`, id)
			if len(got) != 1 || got[0] != key {
				t.Errorf("%s: location_key %v, want %s", id, got, key)
			}
		}
		if n := len(testdb.Strings(t, s.R().Query, `SELECT id FROM subscriptions WHERE status = 'ACTIVE' AND id IN ('direct-1205', 'suite-1205', 'direct-1206')`)); n != 3 {
			t.Errorf("%d of the three live lines still ACTIVE", n)
		}
		for _, place := range []struct{ unit, port, holder string }{{fxKing1205, p1205, "direct-1205"}, {fxKing1206, "", "direct-1206"}} {
			err := s.InTx(ctx, func(tx *store.Tx) error {
				holder, err := tx.LineHolding(ctx, place.unit)
				if err != nil || holder.ID != place.holder {
					t.Errorf("%s held by %v (%v), want %s", place.unit, holder, err, place.holder)
				}
				line := &subprov.Subscription{ID: store.NewID(), ProviderID: fixture.DemoProviderID, SubscriberID: fxJean, PlanVersionID: fxPlan500,
					BuildingID: fxBuilding, UnitID: place.unit, PortID: place.port, Status: subprov.StatusPendingInstall,
					DeliveryMode: subprov.DeliveryHomeDrop, BillingOwner: subprov.BillingPartner, BillingDay: 1, Source: "test"}
				inserted, err := tx.InsertSubscription(ctx, line, now)
				if inserted {
					t.Errorf("a new line was inserted at %s, which %s holds", place.unit, place.holder)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestTheHolderOfAPlaceIsReadThroughItsIndex: the replay's read of the line holding a place
// repeats the partial unique index's predicate, so both engines can search
// subscriptions_location_holder (SQLite only uses a partial index whose WHERE terms the
// query repeats) rather than every line ever written at the place.
func TestTheHolderOfAPlaceIsReadThroughItsIndex(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		if plan := testdb.QueryPlan(t, s, store.LineHolding, "u-1"); !strings.Contains(plan, "subscriptions_location_holder") {
			t.Errorf("plan does not use subscriptions_location_holder:\n%s", plan)
		}
	})
}
