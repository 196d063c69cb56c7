package gen

import (
	"context"
	"fmt"
	"testing"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
)

// TestWriteTermStatsAgreesWithAnalyze: for search indexes of several shapes, the row gen writes
// is the one a full ANALYZE gathers, rounding included (ANALYZE writes 1, not 2, where the
// keys are almost all distinct).
func TestWriteTermStatsAgreesWithAnalyze(t *testing.T) {
	tests := []struct {
		name                     string
		providers, terms, perKey int // each provider has terms distinct terms, each on perKey subscribers
		extra                    int // and its first extra terms on one subscriber more
	}{
		{"one subscriber per term", 1, 10, 1, 0},
		{"almost all distinct", 1, 10, 1, 1},
		{"a fifth shared", 1, 10, 1, 2},
		{"three per term", 1, 7, 3, 0},
		{"two providers", 2, 5, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := testdb.Open(t, testdb.MigratedURL(t, "sqlite", testdb.StoreSchema))
			var sum Summary
			for p := 1; p <= tt.providers; p++ {
				sum.Providers++
				for k := 0; k < tt.terms; k++ {
					n := tt.perKey
					if k < tt.extra {
						n++
					}
					sum.termKeys++
					for s := 0; s < n; s++ {
						_, err := rawdb.Writer(st).ExecContext(ctx, `INSERT INTO customer_search_terms (provider_id, term, subscriber_id) VALUES (?, ?, ?)`,
							ProviderID(p), fmt.Sprintf("term%02d", k), SubscriberID(p, s))
						if err != nil {
							t.Fatal(err)
						}
						sum.SearchTerms++
					}
				}
			}
			stat := func() string {
				var s string
				if err := rawdb.Writer(st).QueryRowContext(ctx, `SELECT stat FROM sqlite_stat1 WHERE tbl = ?`, termsTable).Scan(&s); err != nil {
					t.Fatal(err)
				}
				return s
			}
			if _, err := rawdb.Writer(st).ExecContext(ctx, `PRAGMA analysis_limit = 0; ANALYZE `+termsTable); err != nil {
				t.Fatal(err)
			}
			analyzed := stat()
			if err := writeTermStats(ctx, st, sum); err != nil {
				t.Fatal(err)
			}
			if written := stat(); written != analyzed {
				t.Errorf("gen writes %q, ANALYZE gathers %q", written, analyzed)
			}
		})
	}
}
