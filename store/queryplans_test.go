package store_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestPendingEventReadsSkipDeliveredHistory: the statements on a provider's pending events
// are ranges of the events_pending partial index on both engines, so their cost does not grow
// with the events the provider had delivered before (through events_provider_seq they stepped
// over every one of them). It checks the plans with the statistics a new deployment has: none
// (SQLite then preferred events_provider_seq) and those taken while the table was empty
// (PostgreSQL then combined events_provider_seq with events_due and read both whole).
func TestPendingEventReadsSkipDeliveredHistory(t *testing.T) {
	t.Parallel()
	eachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		pending := deliveredHistory(t, s, "p-hist", 1497, 3)
		for name, st := range store.PendingEventStatements(s.Dialect, "p-hist") {
			if plan := queryPlan(t, s, st.Query, st.Args...); !strings.Contains(plan, "events_pending") {
				t.Errorf("%s: plan does not use events_pending:\n%s", name, plan)
			}
		}
		due, err := s.DueEvents(ctx, "p-hist", evT0, 50)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := eventIDs(due), pending; !slices.Equal(got, want) {
			t.Errorf("due events %v, want the three pending %v", got, want)
		}
	})
}

// TestKeyedStatementsReadTheirKeys: a statement that names its rows by id and checks their
// provider besides reads through the ids' index on both engines, never a range of an index led
// by provider_id, which holds every row the provider has: its whole event history for the
// webhook flusher's record of its deliveries, every event left unnumbered for good (no
// endpoint) for its numbering, all its subscribers for a search page's cards, all its lines
// for several subscribers' locations. Given ten ids and written without unindexed, each of them
// read such a range in two to four of the four runs below (two sets of statistics, two
// engines; on SQLite the "empty tables" run repeats "none", as ANALYZE of an empty table
// writes no statistics there).
func TestKeyedStatementsReadTheirKeys(t *testing.T) {
	t.Parallel()
	// What the plan must search: on SQLite the ids' column, as its plan names the search; on
	// PostgreSQL the events' primary key (it may scan the other, empty, tables whole).
	want := map[string]map[store.Dialect]string{
		"mark events delivered":  {store.SQLite: "(id=?)", store.Postgres: "events_pkey"},
		"number events":          {store.SQLite: "(id=?)", store.Postgres: "events_pkey"},
		"search cards":           {store.SQLite: "(id=?)"},
		"search cards from rows": {store.SQLite: "(id=?)"},
		"service locations":      {store.SQLite: "(subscriber_id=?)"},
	}
	// Ten ids, a search page's worth (the flusher records and numbers 50 or more at once).
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	eachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		deliveredHistory(t, s, "p-keyed", 1497, 3)
		statements := store.KeyedStatements("p-keyed", ids)
		if len(statements) != len(want) {
			t.Fatalf("%d statements, expectations for %d", len(statements), len(want))
		}
		for name, st := range statements {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %q", name)
			}
			plan := queryPlan(t, s, st.Query, st.Args...)
			if strings.Contains(plan, "(provider_id=") || strings.Contains(plan, "Cond: (provider_id") {
				t.Errorf("%s: plan reads a range of the provider:\n%s", name, plan)
			}
			if key, ok := w[s.Dialect]; ok && !strings.Contains(plan, key) {
				t.Errorf("%s: plan does not search %s:\n%s", name, key, plan)
			}
		}
	})
}

// TestCustomerIDSearchReadsThePrimaryKey: agent search by a customer id prefix never reads the
// provider's range of an index led by provider_id (every subscriber it has); SQLite reads a
// range of the ids' index, and so does PostgreSQL without statistics (with those of an empty
// table it may scan the table it believes empty, as in TestKeyedStatementsReadTheirKeys).
func TestCustomerIDSearchReadsThePrimaryKey(t *testing.T) {
	t.Parallel()
	want := map[store.Dialect]string{store.SQLite: "(id>? AND id<?)", store.Postgres: "subscribers_pkey"}
	eachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		st := store.SubscribersByIDPrefixStatement("p-keyed", "0a1b2c3d")
		plan := queryPlan(t, s, st.Query, st.Args...)
		if strings.Contains(plan, "(provider_id=") || strings.Contains(plan, "Cond: (provider_id") {
			t.Errorf("plan reads a range of the provider:\n%s", plan)
		}
		if emptyTable := strings.Contains(plan, "Seq Scan on subscribers"); !emptyTable && !strings.Contains(plan, want[s.Dialect]) {
			t.Errorf("plan does not read a range of the ids (%s):\n%s", want[s.Dialect], plan)
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
					if _, err := rawdb.Writer(s).ExecContext(ctx, `ALTER TABLE events SET (autovacuum_enabled = false)`); err != nil {
						t.Fatal(err)
					}
				}
				if stats == "empty tables" {
					for _, table := range []string{"events", "subscribers", "contacts", "subscriptions", "buildings", "units"} {
						if _, err := rawdb.Writer(s).ExecContext(ctx, `ANALYZE `+table); err != nil {
							t.Fatal(err)
						}
					}
				}
				fn(t, s)
			})
		})
	}
}

// queryPlan is the plan the engine chooses for q with args, as text.
func queryPlan(t *testing.T, s *store.Store, q string, args ...any) string {
	t.Helper()
	explain := "EXPLAIN QUERY PLAN "
	if s.Dialect == store.Postgres {
		explain = "EXPLAIN "
	}
	rows, err := s.R().Query(context.Background(), explain+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(vals[len(vals)-1].String + "\n") // SQLite: the detail column; PostgreSQL: the line
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}
