package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestKeyedStatementsReadTheirKeys: a statement that names its rows by id and checks their
// provider besides reads through the ids' index on both engines, never a range of an index led
// by provider_id, which holds every row the provider has: its whole event history for the
// webhook flusher's record of its deliveries, all its subscribers for a search page's cards,
// all its lines for the agent's view of a customer. Both engines chose such a range for all
// three without statistics; with those of the empty tables SQLite did for all three and
// PostgreSQL for the events. Checked, as in TestPendingEventReadsSkipDeliveredHistory, with the
// statistics a new deployment has.
func TestKeyedStatementsReadTheirKeys(t *testing.T) {
	// The ids' index, as SQLite's plan names its search (PostgreSQL may also scan the small
	// tables; what it must not do is read a provider range).
	sqliteKey := map[string]string{
		"mark events delivered": "(id=?)",
		"search cards":          "(id=?)",
		"service locations":     "(subscriber_id=?)",
	}
	// The provider, then ten ids, a search page's worth (the flusher records 50 or more at
	// once): with three, SQLite chose the key even without statistics.
	ids := []any{"p-keyed", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	eachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		deliveredHistory(t, s, "p-keyed", 1497, 3)
		statements := store.KeyedStatements(s.Dialect, len(ids)-1)
		if len(statements) != len(sqliteKey) {
			t.Fatalf("%d statements, expectations for %d", len(statements), len(sqliteKey))
		}
		for name, q := range statements {
			plan := queryPlan(t, s, q, ids...)
			if strings.Contains(plan, "(provider_id=") || strings.Contains(plan, "Cond: (provider_id") {
				t.Errorf("%s: plan reads a range of the provider:\n%s", name, plan)
			}
			if key := sqliteKey[name]; s.Dialect == store.SQLite && !strings.Contains(plan, key) {
				t.Errorf("%s: plan does not search %s:\n%s", name, key, plan)
			}
		}
	})
}

// eachStoreWithNewStatistics runs fn on each engine with each set of planner statistics a new
// deployment has: none, and those taken while the tables were empty. On PostgreSQL autovacuum
// stays off the events table, so the rows fn writes leave its statistics as set.
func eachStoreWithNewStatistics(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	for _, stats := range []string{"none", "empty tables"} {
		t.Run("statistics "+stats, func(t *testing.T) {
			testdb.EachStore(t, func(t *testing.T, s *store.Store) {
				ctx := context.Background()
				if s.Dialect == store.Postgres {
					if _, err := s.DB.ExecContext(ctx, `ALTER TABLE events SET (autovacuum_enabled = false)`); err != nil {
						t.Fatal(err)
					}
				}
				if stats == "empty tables" {
					if _, err := s.DB.ExecContext(ctx, `ANALYZE`); err != nil {
						t.Fatal(err)
					}
				}
				fn(t, s)
			})
		})
	}
}
