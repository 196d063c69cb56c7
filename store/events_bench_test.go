package store_test

import (
	"context"
	"testing"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// BenchmarkDueEvents measures the webhook flusher's read of a provider's next batch
// (DueEvents, once per batch) when the provider has a long delivered history: 20,000 events by
// default, SUBPROV_BENCH_EVENTS for another size. Its cost should not follow the history.
func BenchmarkDueEvents(b *testing.B) {
	history := testdb.Scale("SUBPROV_BENCH_EVENTS", 20000)
	for _, engine := range testdb.Engines() {
		b.Run(engine, func(b *testing.B) {
			st := testdb.Open(b, testdb.URL(b, engine))
			ctx := context.Background()
			// Statistics from the empty table, as a new deployment has them (see
			// TestPendingEventReadsSkipDeliveredHistory).
			if _, err := st.DB.ExecContext(ctx, `ANALYZE events`); err != nil {
				b.Fatal(err)
			}
			addEventProvider(b, st, "p-bench")
			insertEvents(b, st, "p-bench", history+3, evT0)
			err := st.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE events SET delivery_state = 'delivered' WHERE provider_id = ? AND seq <= ?`, "p-bench", history)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				due, err := st.DueEvents(ctx, "p-bench", evT0, 50)
				if err != nil || len(due) != 3 {
					b.Fatalf("due %d events, %v; want the 3 pending", len(due), err)
				}
			}
		})
	}
}
