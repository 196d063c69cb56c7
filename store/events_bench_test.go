package store_test

import (
	"context"
	"testing"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// BenchmarkDueEvents measures the webhook flusher's read of a provider's next batch
// (DueEvents, once per batch) when the provider has a long delivered history: 20,000 events by
// default, SUBPROV_BENCH_EVENTS for another size. Its cost should not follow the history.
func BenchmarkDueEvents(b *testing.B) {
	history := testdb.Scale("SUBPROV_BENCH_EVENTS", 20000)
	testdb.EachBenchStore(b, func(b *testing.B, st *store.Store) {
		ctx := context.Background()
		// Statistics from the empty table, as a new deployment has them (see
		// TestPendingEventReadsSkipDeliveredHistory).
		if _, err := rawdb.Writer(st).ExecContext(ctx, `ANALYZE events`); err != nil {
			b.Fatal(err)
		}
		deliveredHistory(b, st, "p-bench", history, 3)
		for b.Loop() {
			due, err := st.DueEvents(ctx, "p-bench", evT0, 50)
			if err != nil || len(due) != 3 {
				b.Fatalf("due %d events, %v; want the 3 pending", len(due), err)
			}
		}
	})
}
