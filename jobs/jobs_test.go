package jobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// TestEnqueueInTransaction proves the rule the whole service rests on: a job exists if and
// only if the transaction that enqueued it committed, and a failed job is retried.
func TestEnqueueInTransaction(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := jobs.Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		calls := map[string]int{}
		c, err := jobs.New(s, jobs.Handlers{DeliverMail: func(ctx context.Context, a jobs.DeliverMail) error {
			mu.Lock()
			defer mu.Unlock()
			calls[a.MailID]++
			if a.MailID == "flaky" && calls[a.MailID] == 1 {
				return errors.New("transient failure")
			}
			return nil
		}}, jobs.Options{Work: true, PollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer c.Stop(context.Background())

		rolledBack := errors.New("roll back")
		err = s.InTx(ctx, func(tx *store.Tx) error {
			if err := c.Enqueue(ctx, tx, jobs.DeliverMail{MailID: "rolled-back"}); err != nil {
				return err
			}
			return rolledBack
		})
		if !errors.Is(err, rolledBack) {
			t.Fatal(err)
		}
		for _, id := range []string{"committed", "flaky"} {
			if err := s.InTx(ctx, func(tx *store.Tx) error { return c.Enqueue(ctx, tx, jobs.DeliverMail{MailID: id}) }); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			done := calls["committed"] == 1 && calls["flaky"] == 2
			mu.Unlock()
			if done {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		if calls["committed"] != 1 || calls["flaky"] != 2 {
			t.Fatalf("calls = %v; want committed once and flaky retried once", calls)
		}
		if calls["rolled-back"] != 0 {
			t.Fatal("a job enqueued in a rolled-back transaction ran")
		}
		// Completion is recorded asynchronously by River's completer.
		var counts map[string]int
		for time.Now().Before(deadline) {
			if counts, err = jobs.Counts(ctx, s); err == nil && counts["completed"] == 2 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("counts = %v, %v; want 2 completed", counts, err)
	})
}

func TestReadyNeedsTheJobQueueMigrated(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if err := jobs.Ready(ctx, s); err == nil {
			t.Fatal("ready before River's migrations ran")
		}
		if err := jobs.Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := jobs.Ready(ctx, s); err != nil {
			t.Fatalf("not ready after migrating: %v", err)
		}
	})
}

// TestCommitWakesWorkers: a job enqueued in a transaction is worked as soon as the
// transaction commits, not at the next fetch poll (River runs both drivers poll-only).
func TestCommitWakesWorkers(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := jobs.Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		ran := make(chan time.Time, 10)
		c, err := jobs.New(s, jobs.Handlers{DeliverMail: func(ctx context.Context, a jobs.DeliverMail) error {
			ran <- time.Now()
			return nil
		}}, jobs.Options{Work: true, PollInterval: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer c.Stop(context.Background())
		time.Sleep(200 * time.Millisecond) // past the producer's first fetch at start
		for i := 0; i < 3; i++ {
			committed := time.Now()
			if err := s.InTx(ctx, func(tx *store.Tx) error { return c.Enqueue(ctx, tx, jobs.DeliverMail{MailID: "wake"}) }); err != nil {
				t.Fatal(err)
			}
			select {
			case at := <-ran:
				if d := at.Sub(committed); d > 5*time.Second {
					t.Fatalf("job %d ran %s after its commit", i, d)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("job %d did not run within 10s of its commit (poll interval 1 min)", i)
			}
		}
	})
}

// TestUnfinished: a job waiting to run is unfinished work, listed by kind and state, until a
// worker has done it.
func TestUnfinished(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if err := jobs.Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		done := jobs.Handlers{DeliverMail: func(context.Context, jobs.DeliverMail) error { return nil }}
		insertOnly, err := jobs.New(s, done, jobs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return insertOnly.Enqueue(ctx, tx, jobs.DeliverMail{MailID: "m-1"}) }); err != nil {
			t.Fatal(err)
		}
		got, err := insertOnly.Unfinished(ctx, 10)
		if err != nil || len(got) != 1 || got[0] != "mail.deliver available (attempt 0)" {
			t.Fatalf("Unfinished = %q, %v; want the waiting mail job", got, err)
		}
		worker, err := jobs.New(s, done, jobs.Options{Work: true, PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := worker.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = worker.Stop(context.Background()) })
		deadline := time.Now().Add(15 * time.Second)
		for {
			got, err := worker.Unfinished(ctx, 10)
			if err == nil && len(got) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Unfinished = %q, %v after the worker ran; want nothing", got, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
