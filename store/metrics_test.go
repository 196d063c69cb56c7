package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestUnfinishedBillRuns: the oldest run since the window's start that has not finished, per
// provider; finished runs and runs before the window are left out.
func TestUnfinishedBillRuns(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
		testdb.SeedProvider(t, s, "p-a", now)
		testdb.SeedProvider(t, s, "p-b", now)
		runs := []struct {
			id, provider string
			started      time.Time
			end          string // "": still running; "failed"; "finished"
		}{
			{"run-old", "p-a", now.Add(-30 * time.Hour), ""},
			{"run-a1", "p-a", now.Add(-7 * time.Hour), "failed"},
			{"run-a2", "p-a", now.Add(-2 * time.Hour), ""},
			{"run-b", "p-b", now.Add(-7 * time.Hour), "finished"},
		}
		for _, r := range runs {
			if err := s.StartBillRun(ctx, r.id, r.provider, "2026-11", r.started); err != nil {
				t.Fatal(err)
			}
			if r.end != "" {
				if err := s.EndBillRun(ctx, r.id, r.end == "failed", r.started.Add(time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := s.UnfinishedBillRuns(ctx, now.Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !got["p-a"].Equal(now.Add(-7*time.Hour)) {
			t.Fatalf("unfinished bill runs %v, want p-a's from %v", got, now.Add(-7*time.Hour))
		}
		counts, err := s.InvoiceCounts(ctx)
		if err != nil || len(counts) != 0 {
			t.Fatalf("invoice counts of an empty database: %v, %v", counts, err)
		}
		backlogs, err := s.WebhookBacklogs(ctx)
		if err != nil || len(backlogs) != 0 {
			t.Fatalf("webhook backlogs of an empty database: %v, %v", backlogs, err)
		}
	})
}
