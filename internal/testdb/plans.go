package testdb

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// EachStoreWithNewStatistics runs fn on each engine with each set of planner statistics a new
// deployment has: none, and those taken while the tables were empty. On PostgreSQL autovacuum
// stays off the events table, so the rows fn writes leave its statistics as set.
func EachStoreWithNewStatistics(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	for _, stats := range []string{"none", "empty tables"} {
		t.Run("statistics "+stats, func(t *testing.T) {
			EachStore(t, func(t *testing.T, s *store.Store) {
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

// QueryPlan is the plan the engine chooses for q with args, as text.
func QueryPlan(t *testing.T, s *store.Store, q string, args ...any) string {
	t.Helper()
	explain := "EXPLAIN QUERY PLAN "
	if s.Dialect == store.Postgres {
		explain = "EXPLAIN "
	}
	rows, err := s.R().Query(context.Background(), explain+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	return planText(t, rows)
}

// planText is an EXPLAIN's rows as text, one line each: the last column of each row (SQLite:
// the detail column; PostgreSQL: the line). It closes rows.
func planText(t *testing.T, rows *sql.Rows) string {
	t.Helper()
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
		plan.WriteString(vals[len(vals)-1].String + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// CheckKeyedPlans checks each statement's plan with CheckKeyedPlan against want's key for its
// name and the store's engine; want must name every statement.
func CheckKeyedPlans(t *testing.T, s *store.Store, statements map[string]struct {
	Query string
	Args  []any
}, want map[string]map[store.Dialect]string) {
	t.Helper()
	if len(statements) != len(want) {
		t.Fatalf("%d statements, expectations for %d", len(statements), len(want))
	}
	for name, st := range statements {
		w, ok := want[name]
		if !ok {
			t.Fatalf("no expectation for %q", name)
		}
		CheckKeyedPlan(t, s, name, st.Query, st.Args, w[s.Dialect])
	}
}

// CheckIndexedPlans fails t for each statement whose IndexedQueryPlan does not contain
// want(name), the text its search shows on the store's engine.
func CheckIndexedPlans(t *testing.T, s *store.Store, statements map[string]struct {
	Query string
	Args  []any
}, want func(name string) string) {
	t.Helper()
	for name, st := range statements {
		if plan, w := IndexedQueryPlan(t, s, st.Query, st.Args...), want(name); !strings.Contains(plan, w) {
			t.Errorf("%s: plan does not search %s:\n%s", name, w, plan)
		}
	}
}

// CheckKeyedPlan fails t when the plan of a statement that names its rows by id reads a range
// of an index led by provider_id (every row the provider has) on either engine, or, with key
// set, does not search key.
func CheckKeyedPlan(t *testing.T, s *store.Store, name, query string, args []any, key string) {
	t.Helper()
	plan := QueryPlan(t, s, query, args...)
	if readsTheProvidersRange(plan) {
		t.Errorf("%s: plan reads a range of the provider:\n%s", name, plan)
	}
	if key != "" && !strings.Contains(plan, key) {
		t.Errorf("%s: plan does not search %s:\n%s", name, key, plan)
	}
}

// IndexedQueryPlan is the plan of q when the engine may not read a table whole where an index
// serves: on PostgreSQL with sequential scans off (a planner with few or no rows in the tables
// rightly scans them, which says nothing about the plan at scale); on SQLite, which searches
// any index that serves an equality, QueryPlan's. A plan that still scans lacks the index.
func IndexedQueryPlan(t *testing.T, s *store.Store, q string, args ...any) string {
	t.Helper()
	if s.Dialect != store.Postgres {
		return QueryPlan(t, s, q, args...)
	}
	ctx := context.Background()
	tx, err := rawdb.Writer(s).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, "EXPLAIN "+s.Dialect.Rebind(q), args...)
	if err != nil {
		t.Fatal(err)
	}
	return planText(t, rows)
}

// readsTheProvidersRange reports whether plan reads a range of an index led by provider_id.
func readsTheProvidersRange(plan string) bool {
	return strings.Contains(plan, "(provider_id=") || strings.Contains(plan, "Cond: (provider_id")
}

// ReadsTheProvidersRange reports whether plan reads a range of an index led by provider_id
// (every row the provider has) on either engine.
func ReadsTheProvidersRange(plan string) bool { return readsTheProvidersRange(plan) }

// SeedProvider writes a provider with id as its name, in UTC and CAD, at now.
func SeedProvider(t testing.TB, s *store.Store, id string, now time.Time) {
	t.Helper()
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.UpsertProvider(context.Background(), &subprov.Provider{ID: id, Name: id, TimeZone: "UTC", Currency: "CAD",
			WebhookSecret: "secret-" + id}, "hash-"+id, "", now)
	})
	if err != nil {
		t.Fatal(err)
	}
}
