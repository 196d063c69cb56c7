package main

import (
	"context"
	"strings"
	"testing"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/testdb"
)

// The storage figures count every table once with its indexes, within the database's size, on
// both engines; the report lists the tables of at least 1% and sums the rest.
func TestStorageCountsEachTableWithItsIndexes(t *testing.T) {
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		if _, err := gen.Run(ctx, testdb.Open(t, u), gen.Options{Subscribers: 300, Seed: 1}); err != nil {
			t.Fatalf("gen: %v", err)
		}
		use, err := measureStorage(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		seen := map[string]bool{}
		for _, tb := range use.tables {
			if seen[tb.name] || strings.HasPrefix(tb.name, "sqlite_autoindex") {
				t.Errorf("table %q listed twice, or an index listed as a table", tb.name)
			}
			seen[tb.name] = true
			sum += tb.bytes
		}
		if sum == 0 || sum > use.total {
			t.Errorf("tables sum to %d bytes, the database is %d", sum, use.total)
		}
		for _, name := range []string{"subscribers", "subscriptions", "customer_search"} {
			if !seen[name] {
				t.Errorf("no figure for %s in %v", name, use.tables)
			}
		}
		var b strings.Builder
		writeStorage(&b, use, 300)
		if !strings.Contains(b.String(), "| customer_search |") || !strings.Contains(b.String(), "per subscriber") {
			t.Errorf("report:\n%s", b.String())
		}
	})
}
