package invariants_test

import (
	"context"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/invariants"
	"github.com/subprov/subprov/internal/rawdb"
)

// The demo world is consistent, and each kind of damage is found by its rule.
func TestCheckerFindsHalfWrittenRows(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		if bad, err := invariants.Check(ctx, s.Store); err != nil || len(bad) > 0 {
			t.Fatalf("demo world: %v %v", bad, err)
		}
		damage := []struct{ sql, rule string }{
			{`UPDATE subscriptions SET status = 'LIMBO' WHERE id = 'c1000000-0000-4000-8000-000000000002'`, "subscription status is known"},
			{`UPDATE subscriptions SET port_id = (SELECT port_id FROM subscriptions WHERE id = 'c1000000-0000-4000-8000-000000000001')
				WHERE id = 'c1000000-0000-4000-8000-000000000002'`, "a port serves at most one live line"},
			{`UPDATE subscriptions SET unit_id = (SELECT unit_id FROM subscriptions WHERE id = 'c1000000-0000-4000-8000-000000000001'),
				location_key = 'double-booked:c1000000-0000-4000-8000-000000000003' WHERE id = 'c1000000-0000-4000-8000-000000000003'`,
				"a suite is held by at most one line"},
			{`INSERT INTO events (id, provider_id, type, subscription_id, payload, delivery_state, created_at)
				VALUES ('ev-lost', '8d0c7f2e-1a3b-4c5d-9e6f-000000000001', 'x', 'no-such-line', '{}', 'lost', CURRENT_TIMESTAMP)`, "event delivery state is known"},
			{`UPDATE subscriptions SET workflow_state = 'deprovisioned' WHERE id = 'c1000000-0000-4000-8000-000000000002'`,
				"a deprovisioned line is cancelled and its port reset"},
			{`SELECT 1`, "events name an existing subscription"},
		}
		for _, d := range damage {
			if _, err := rawdb.Writer(s.Store).ExecContext(ctx, d.sql); err != nil {
				t.Fatalf("%s: %v", d.sql, err)
			}
			bad, err := invariants.Check(ctx, s.Store)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(bad, "\n"), d.rule) {
				t.Errorf("after %q the checker says %v, want %q", d.sql, bad, d.rule)
			}
		}
	})
}
