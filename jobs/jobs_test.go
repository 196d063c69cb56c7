package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// working starts a client that works jobs on s with h and o, its queue migrated; it stops when
// the test ends, and the context it returns is cancelled after that.
func working(t *testing.T, s *store.Store, h jobs.Handlers, o jobs.Options) (context.Context, *jobs.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := jobs.Migrate(ctx, s); err != nil {
		t.Fatal(err)
	}
	c, err := jobs.New(s, h, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background()) })
	return ctx, c
}

// TestEnqueueInTransaction proves the rule the whole service rests on: a job exists if and
// only if the transaction that enqueued it committed, and a failed job is retried.
func TestEnqueueInTransaction(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		var mu sync.Mutex
		calls := map[string]int{}
		ctx, c := working(t, s, jobs.Handlers{DeliverMail: func(ctx context.Context, a jobs.DeliverMail) error {
			mu.Lock()
			defer mu.Unlock()
			calls[a.MailID]++
			if a.MailID == "flaky" && calls[a.MailID] == 1 {
				return errors.New("transient failure")
			}
			return nil
		}}, jobs.Options{Work: true, PollInterval: 50 * time.Millisecond})

		rolledBack := errors.New("roll back")
		err := s.InTx(ctx, func(tx *store.Tx) error {
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
// transaction commits, not at the next fetch poll (River runs both drivers poll-only), in
// River's default queue and in the bill runs' own.
func TestCommitWakesWorkers(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ran := make(chan time.Time, 10)
		ctx, c := working(t, s, jobs.Handlers{
			DeliverMail: func(ctx context.Context, a jobs.DeliverMail) error { ran <- time.Now(); return nil },
			BillRun:     func(ctx context.Context, a jobs.BillRun) error { ran <- time.Now(); return nil },
		}, jobs.Options{Work: true, PollInterval: time.Minute})
		time.Sleep(200 * time.Millisecond) // past the producers' first fetch at start
		for i, args := range []jobs.Args{jobs.DeliverMail{MailID: "wake"}, jobs.BillRun{ProviderID: "p", Period: "2026-12"},
			jobs.DeliverMail{MailID: "wake"}, jobs.BillRun{ProviderID: "p", Period: "2027-01"}} {
			committed := time.Now()
			if err := s.InTx(ctx, func(tx *store.Tx) error { return c.Enqueue(ctx, tx, args) }); err != nil {
				t.Fatal(err)
			}
			select {
			case at := <-ran:
				if d := at.Sub(committed); d > 5*time.Second {
					t.Fatalf("job %d (%s) ran %s after its commit", i, args.Kind(), d)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("job %d (%s) did not run within 10s of its commit (poll interval 1 min)", i, args.Kind())
			}
		}
	})
}

// TestBillRunsAtOnce: a process works at most Options.BillRunsAtOnce bill runs at once, the
// others waiting their turn, while jobs of other kinds run beside them.
func TestBillRunsAtOnce(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		const atOnce, runs = 2, 5
		var mu sync.Mutex
		running, most, done := 0, 0, 0
		release := make(chan struct{})
		mailed := make(chan struct{}, 1)
		ctx, c := working(t, s, jobs.Handlers{
			BillRun: func(ctx context.Context, a jobs.BillRun) error {
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				<-release
				mu.Lock()
				running--
				done++
				mu.Unlock()
				return nil
			},
			DeliverMail: func(ctx context.Context, a jobs.DeliverMail) error { mailed <- struct{}{}; return nil },
		}, jobs.Options{Work: true, BillRunsAtOnce: atOnce, PollInterval: 50 * time.Millisecond})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		defer free() // before the client stops, which waits for the running jobs
		for i := range runs {
			if err := c.EnqueueNow(ctx, s, jobs.BillRun{ProviderID: fmt.Sprintf("p%d", i), Period: "2026-12"}); err != nil {
				t.Fatal(err)
			}
		}
		state := func() (int, int, int) {
			mu.Lock()
			defer mu.Unlock()
			return running, most, done
		}
		deadline := time.Now().Add(10 * time.Second)
		for r, _, _ := state(); r < atOnce && time.Now().Before(deadline); r, _, _ = state() {
			time.Sleep(20 * time.Millisecond)
		}
		// The bill runs' workers are taken; a mail still goes.
		if err := c.EnqueueNow(ctx, s, jobs.DeliverMail{MailID: "beside"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-mailed:
		case <-time.After(10 * time.Second):
			t.Fatal("a mail waited behind the bill runs")
		}
		time.Sleep(300 * time.Millisecond) // six fetch polls: time for a third run to start, were it allowed
		if r, m, _ := state(); r != atOnce || m != atOnce {
			t.Fatalf("%d bill runs running, at most %d; want %d", r, m, atOnce)
		}
		free()
		deadline = time.Now().Add(10 * time.Second)
		for _, _, d := state(); d < runs && time.Now().Before(deadline); _, _, d = state() {
			time.Sleep(20 * time.Millisecond)
		}
		if r, m, d := state(); d != runs || m != atOnce {
			t.Fatalf("%d of %d bill runs done (%d running), at most %d at once; want all, %d at once", d, runs, r, m, atOnce)
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
