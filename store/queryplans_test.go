package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/sqltext"
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
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		pending := deliveredHistory(t, s, "p-hist", 1497, 3)
		for name, st := range store.PendingEventStatements(s.Dialect, "p-hist") {
			if plan := testdb.QueryPlan(t, s, st.Query, st.Args...); !strings.Contains(plan, "events_pending") {
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
// endpoint) for its numbering, all its lines for several subscribers' locations (a search
// page's cards: package search's TestSearchCardsReadTheirKeys). Given ten ids and written
// without sqltext.Unindexed, each of them read such a range in two to four of the four runs
// below (two sets of statistics, two engines; on SQLite the "empty tables" run repeats "none",
// as ANALYZE of an empty table writes no statistics there).
func TestKeyedStatementsReadTheirKeys(t *testing.T) {
	t.Parallel()
	// What the plan must search: on SQLite the ids' column, as its plan names the search; on
	// PostgreSQL the events' primary key (it may scan the other, empty, tables whole).
	want := map[string]map[store.Dialect]string{
		"mark events delivered": {store.SQLite: "(id=?)", store.Postgres: "events_pkey"},
		"number events":         {store.SQLite: "(id=?)", store.Postgres: "events_pkey"},
		"service locations":     {store.SQLite: "(subscriber_id=?)"},
	}
	// Ten ids, a search page's worth (the flusher records and numbers 50 or more at once).
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		deliveredHistory(t, s, "p-keyed", 1497, 3)
		statements := store.KeyedStatements("p-keyed", ids)
		testdb.CheckKeyedPlans(t, s, statements, want)
	})
}

// TestPortLinesReadThePortsIndex: every read of a port's lines (its holders, on each order,
// plan change and convergence; its newest line, for tickets; another line in service on it;
// the ports of a switch that lines hold, for sampling) searches subscriptions_port on both
// engines. Without it each went through all of the provider's lines: at a million lines an
// order took a second on SQLite.
func TestPortLinesReadThePortsIndex(t *testing.T) {
	t.Parallel()
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		testdb.CheckIndexedPlans(t, s, store.PortLineStatements("port-1", "sw-1"), func(string) string { return "subscriptions_port" })
	})
}

// TestSearchReadsTheEnginesIndex: agent search's lookup reads the engine's text index (the GIN
// index on PostgreSQL, the FTS5 table on SQLite), then each match's subscriber by id, never a
// provider's range of an index led by provider_id, for one provider or several at once.
func TestSearchReadsTheEnginesIndex(t *testing.T) {
	t.Parallel()
	want := map[store.Dialect]string{store.SQLite: "SCAN customer_search VIRTUAL TABLE INDEX", store.Postgres: "Bitmap Index Scan on subscribers_search"}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		statements := store.SearchMatchStatements(s.Dialect)
		testdb.CheckIndexedPlans(t, s, statements, func(string) string { return want[s.Dialect] })
		for name, st := range statements {
			if plan := testdb.QueryPlan(t, s, st.Query, st.Args...); testdb.ReadsTheProvidersRange(plan) {
				t.Errorf("%s: plan reads a range of the provider:\n%s", name, plan)
			}
		}
	})
}

// TestSearchSessionsNeverScanTheSubscribers: PostgreSQL's search sessions read the GIN index
// for a match over a hundred providers (a platform operator's search), whatever the
// statistics: the planner takes the hundred prefixes for many rows and the index expression
// for a cheap one, and a scan of the table under the LIMIT looked cheaper (45 s at a million
// subscribers, for 2 ms through the index).
func TestSearchSessionsNeverScanTheSubscribers(t *testing.T) {
	t.Parallel()
	providers := make([]string, 100)
	for i := range providers {
		providers[i] = fmt.Sprintf("p-%03d", i)
	}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		if s.Dialect != store.Postgres {
			return // SQLite's MATCH reads its FTS5 table whatever the query (TestSearchReadsTheEnginesIndex)
		}
		st := store.SearchMatchStatement(s.Dialect, providers)
		plan, err := sqltext.Strings(context.Background(), s.SearchR(), "plan", "EXPLAIN "+st.Query, st.Args...)
		if err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(plan, "\n"); !strings.Contains(text, "Bitmap Index Scan on subscribers_search") {
			t.Errorf("plan does not search subscribers_search:\n%s", text)
		}
	})
}

// TestBillRunPagesReadTheirIndexes: a bill run's page of a provider's platform-billed lines is
// a range of subscriptions_platform_billed, and the read of which of its lines have the
// period's invoice searches the invoices' (subscription, period, kind) index, on both engines.
// The page once took those lines out with an anti-join, whose plan on PostgreSQL, with the
// statistics taken before the run wrote the period's invoices, read every invoice on each page.
func TestBillRunPagesReadTheirIndexes(t *testing.T) {
	t.Parallel()
	want := map[string]map[store.Dialect]string{
		"page of platform-billed lines": {store.SQLite: "subscriptions_platform_billed", store.Postgres: "subscriptions_platform_billed"},
		"lines invoiced for the period": {store.SQLite: "(subscription_id=? AND period=?", store.Postgres: "Cond: ((subscription_id = ANY"},
	}
	ids := []string{"l-1", "l-2", "l-3", "l-4", "l-5", "l-6", "l-7", "l-8", "l-9", "l-10"}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		testdb.CheckIndexedPlans(t, s, store.RecurringCandidateStatements("p-bill", ids), func(name string) string { return want[name][s.Dialect] })
	})
}
