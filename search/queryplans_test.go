package search_test

import (
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// TestSearchCardsReadTheirKeys: a search page's cards are read by id through the subscribers'
// ids' index on both engines, never through a range of an index led by provider_id, which
// holds every subscriber the provider has (the store's TestKeyedStatementsReadTheirKeys checks
// its own keyed statements the same way).
func TestSearchCardsReadTheirKeys(t *testing.T) {
	t.Parallel()
	// What the plan must search on SQLite: the ids' column, as its plan names the search.
	want := map[string]map[store.Dialect]string{
		"search cards":           {store.SQLite: "(id=?)"},
		"search cards from rows": {store.SQLite: "(id=?)"},
	}
	// Ten ids, a search page's worth.
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		statements := search.CardStatements("p-keyed", ids)
		testdb.CheckKeyedPlans(t, s, statements, want)
	})
}

// TestCustomerIDSearchReadsThePrimaryKey: agent search by a customer id prefix, for one
// provider or several, never reads a provider's range of an index led by provider_id (every
// subscriber it has); SQLite reads a range of the ids' index, and so does PostgreSQL without
// statistics (with those of an empty table it may scan the table it believes empty, as in
// TestSearchCardsReadTheirKeys).
func TestCustomerIDSearchReadsThePrimaryKey(t *testing.T) {
	t.Parallel()
	want := map[store.Dialect]string{store.SQLite: "(id>? AND id<?)", store.Postgres: "subscribers_pkey"}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		for _, providers := range [][]string{{"p-keyed"}, {"p-keyed", "p-other", "p-third"}} {
			st := search.SubscribersByIDPrefixStatement(providers, "0a1b2c3d")
			plan := testdb.QueryPlan(t, s, st.Query, st.Args...)
			if testdb.ReadsTheProvidersRange(plan) {
				t.Errorf("%d providers: plan reads a range of a provider:\n%s", len(providers), plan)
			}
			if emptyTable := strings.Contains(plan, "Seq Scan on subscribers"); !emptyTable && !strings.Contains(plan, want[s.Dialect]) {
				t.Errorf("%d providers: plan does not read a range of the ids (%s):\n%s", len(providers), want[s.Dialect], plan)
			}
		}
	})
}
