package gen_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// genSize is the scale of the generator test: 2000 subscribers, SUBPROV_GEN_SUBSCRIBERS to
// profile a larger run.
func genSize() int { return testdb.Scale("SUBPROV_GEN_SUBSCRIBERS", 2000) }

func TestGenWritesConsistentData(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		n := genSize()
		before := indexNames(t, st)
		sum, err := gen.Run(ctx, st, gen.Options{Subscribers: n, Providers: 2, Seed: 7, Now: time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		// Every index dropped for the load is back.
		if after := indexNames(t, st); !slices.Equal(after, before) {
			t.Errorf("indexes after gen:\n%v\nwant the migrated schema's:\n%v", after, before)
		}
		if sum.Subscribers != int64(2*n) || sum.Subscriptions != int64(2*n) || sum.Providers != 2 {
			t.Fatalf("summary %s", sum)
		}
		t.Log(sum)
		// The search index finds a generated subscriber by the store's own query terms.
		var email, number string
		if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT email, customer_number FROM subscribers WHERE id = ?`),
			gen.SubscriberID(2, 10)).Scan(&email, &number); err != nil {
			t.Fatal(err)
		}
		// So it does once the service has indexed it again from its rows, as after any change.
		for _, reindexed := range []bool{false, true} {
			if reindexed {
				if err := st.InTx(ctx, func(tx *store.Tx) error {
					if _, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = '' WHERE id = ?`, gen.SubscriberID(2, 10)); err != nil {
						return err
					}
					return tx.ReindexSubscriber(ctx, gen.SubscriberID(2, 10))
				}); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{email, number} {
				ids, err := search.Subscribers(ctx, st.SearchR(), []string{gen.ProviderID(2)}, search.QueryTerms(q), 10)
				if err != nil || len(ids) != 1 || ids[0] != gen.SubscriberID(2, 10) {
					t.Errorf("search %q (indexed again: %v): %v, %v", q, reindexed, ids, err)
				}
			}
		}
		// Every reference resolves: gen loads with foreign-key checks off (SQLite) or skipped
		// (PostgreSQL as superuser), so the generator alone keeps them right.
		if st.Dialect == store.SQLite {
			rows, err := rawdb.Writer(st).QueryContext(ctx, `PRAGMA foreign_key_check`)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for rows.Next() {
				bad++
			}
			rows.Close()
			if bad > 0 {
				t.Fatalf("%d rows break a foreign key", bad)
			}
		}
		// Every table has statistics (the search index's virtual table aside).
		if st.Dialect == store.SQLite {
			if n := testdb.Strings(t, rawdb.Writer(st).QueryContext, `SELECT DISTINCT tbl FROM sqlite_stat1 WHERE tbl IN ('subscribers', 'subscriptions', 'invoices')`); len(n) != 3 {
				t.Errorf("tables with statistics: %v", n)
			}
			// The tables FTS5 keeps the search index in (its shadow tables, read by key) have none.
			if n := testdb.Strings(t, rawdb.Writer(st).QueryContext, `SELECT DISTINCT tbl FROM sqlite_stat1 WHERE tbl IN ('customer_search_config',
				'customer_search_content', 'customer_search_data', 'customer_search_docsize', 'customer_search_idx')`); len(n) != 0 {
				t.Errorf("the search index's tables have statistics: %v", n)
			}
		}
		// One live line per location: the unique index rebuilt after the load holds.
		var live int
		if err := rawdb.Writer(st).QueryRowContext(ctx, `SELECT COUNT(*) FROM subscriptions WHERE status <> 'CANCELLED'`).Scan(&live); err != nil || live == 0 {
			t.Fatalf("live lines: %d, %v", live, err)
		}
	})
}

// indexNames lists the database's indexes, each as its name and definition, sorted.
func indexNames(t *testing.T, st *store.Store) []string {
	t.Helper()
	q := `SELECT name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE type = 'index' ORDER BY name`
	if st.Dialect == store.Postgres {
		q = `SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`
	}
	return testdb.Strings(t, rawdb.Writer(st).QueryContext, q)
}

func TestIDFormat(t *testing.T) {
	for _, c := range [][2]int{{1, 0}, {2, 10}, {999, 1_000_000}, {3, 0xfffffffffff}} {
		want := fmt.Sprintf("%x%07x-0000-4000-8000-%012x", 5, c[0], c[1])
		if got := gen.SubscriberID(c[0], c[1]); got != want {
			t.Errorf("SubscriberID(%d, %d) = %s, want %s", c[0], c[1], got, want)
		}
	}
}
