package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subprov/subprov/store/internal/engine"
)

// openTestSQLite opens a migrated store on a new SQLite file, closed when the test ends.
func openTestSQLite(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openGroupStore(t *testing.T) *Store {
	t.Helper()
	s := openTestSQLite(t)
	if _, err := s.db.ExecContext(context.Background(), `CREATE TABLE rows (name TEXT PRIMARY KEY, seen INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return s
}

// holdWriter starts a transaction that holds the writer until want more transactions are
// queued behind it, so that they are committed in groups. release waits until they are
// queued, runs then (if not nil) while they still wait, lets the holder commit and waits for it.
func holdWriter(t *testing.T, s *Store, want int) (release func(then func())) {
	t.Helper()
	started, full, proceed, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- s.InTx(context.Background(), func(tx *Tx) error {
			close(started)
			for {
				if s.writer.Queued() >= want {
					close(full)
					<-proceed
					return nil
				}
				time.Sleep(time.Millisecond)
			}
		})
	}()
	<-started
	return func(then func()) {
		<-full
		if then != nil {
			then()
		}
		close(proceed)
		if err := <-done; err != nil {
			t.Errorf("holding transaction: %v", err)
		}
	}
}

// TestGroupCommit checks that transactions committed together keep each its own outcome: a
// failing member is rolled back alone and gets its error, a panicking member re-panics on its
// caller's goroutine, the others commit and run their AfterCommit hooks, every member sees
// what the members before it wrote, and a caller whose context ended before its turn is not
// run.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGroupStore(t)
	const members = 64 // two groups of engine.MaxGroup
	release := holdWriter(t, s, members)
	type outcome struct {
		err      error
		panicked any
		hooked   bool
	}
	outcomes := make([]outcome, members)
	cancelled, cancel := context.WithCancel(ctx) // ended once queued, before its turn
	var wg sync.WaitGroup
	for i := 0; i < members; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { outcomes[i].panicked = recover() }()
			c := ctx
			if i%10 == 9 {
				c = cancelled
			}
			outcomes[i].err = s.InTx(c, func(tx *Tx) error {
				var seen int // members committed before this one in the same group count too
				if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM rows`).Scan(&seen); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `INSERT INTO rows (name, seen) VALUES (?, ?)`, fmt.Sprint(i), seen); err != nil {
					return err
				}
				tx.AfterCommit(func() { outcomes[i].hooked = true })
				switch i % 10 {
				case 3:
					return fmt.Errorf("member %d refuses", i)
				case 7:
					panic(fmt.Sprintf("member %d panics", i))
				}
				return nil
			})
		}(i)
	}
	release(cancel) // the cancelled members are queued by then, and not yet run
	wg.Wait()

	var want []string
	for i, o := range outcomes {
		switch i % 10 {
		case 3:
			if o.err == nil || !strings.Contains(o.err.Error(), "refuses") || o.hooked {
				t.Errorf("member %d: err %v, hooked %v; want its own error and no hook", i, o.err, o.hooked)
			}
		case 7:
			if o.panicked == nil || !strings.Contains(fmt.Sprint(o.panicked), "panics") || o.hooked {
				t.Errorf("member %d: panic %v, hooked %v; want its panic re-raised and no hook", i, o.panicked, o.hooked)
			}
		case 9:
			if !errors.Is(o.err, context.Canceled) || o.hooked {
				t.Errorf("member %d: err %v; want context.Canceled, not run", i, o.err)
			}
		default:
			if o.err != nil || o.panicked != nil || !o.hooked {
				t.Errorf("member %d: err %v, panic %v, hooked %v; want committed with its hook", i, o.err, o.panicked, o.hooked)
			}
			want = append(want, fmt.Sprint(i))
		}
	}
	if n := s.writer.Grouped(); n != members/engine.MaxGroup {
		t.Errorf("%d group commits, want %d: the queued members were not committed together", n, members/engine.MaxGroup)
	}
	rows, err := s.R().Query(ctx, `SELECT name, seen FROM rows ORDER BY seen`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for n := 0; rows.Next(); n++ {
		var name string
		var seen int
		if err := rows.Scan(&name, &seen); err != nil {
			t.Fatal(err)
		}
		if seen != n {
			t.Errorf("row %s saw %d rows before it, want %d (the members committed before it)", name, seen, n)
		}
		got = append(got, name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("committed rows %v, want %v", got, want)
	}
}

// insertInOneGroup queues n transactions behind a held writer, so they run as one group; member
// i inserts the row named i, then runs then(i, tx). It returns each member's InTx error.
func insertInOneGroup(t *testing.T, s *Store, n int, then func(i int, tx *Tx) error) []error {
	t.Helper()
	ctx := context.Background()
	release := holdWriter(t, s, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.InTx(ctx, func(tx *Tx) error {
				if _, err := tx.Exec(ctx, `INSERT INTO rows (name, seen) VALUES (?, 0)`, fmt.Sprint(i)); err != nil {
					return err
				}
				return then(i, tx)
			})
		}(i)
	}
	release(nil)
	wg.Wait()
	return errs
}

// TestGroupCommitBrokenSavepoint: a member that ends the shared transaction itself breaks the
// group; the others are run again alone and commit, and that member fails.
func TestGroupCommitBrokenSavepoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGroupStore(t)
	const members = 8
	var runs atomic.Int32
	errs := insertInOneGroup(t, s, members, func(i int, tx *Tx) error {
		runs.Add(1)
		if i == 4 {
			_, err := tx.Exec(ctx, `ROLLBACK`)
			return err
		}
		return nil
	})
	var n int
	if err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM rows WHERE name <> '4'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if (err != nil) != (i == 4) {
			t.Errorf("member %d: %v", i, err)
		}
	}
	if n != members-1 {
		t.Errorf("%d rows committed, want %d", n, members-1)
	}
	if runs.Load() <= members {
		t.Errorf("%d runs of %d members: the broken group was not run again", runs.Load(), members)
	}
}

// TestGroupCommitCallerGivesUp: a caller whose context ends while its transaction waits for
// the writer returns at once with that error, and its fn never runs.
func TestGroupCommitCallerGivesUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGroupStore(t)
	release := holdWriter(t, s, 1)
	c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	var ran atomic.Bool
	start := time.Now()
	err := s.InTx(c, func(tx *Tx) error { ran.Store(true); return nil })
	waited := time.Since(start)
	release(nil)
	if !errors.Is(err, context.DeadlineExceeded) || waited > 2*time.Second {
		t.Fatalf("InTx returned %v after %s; want the deadline's error as soon as it passed", err, waited)
	}
	// The committer skips it and goes on.
	if err := s.InTx(ctx, func(tx *Tx) error { return nil }); err != nil || ran.Load() {
		t.Fatalf("next transaction: %v; abandoned fn ran: %v", err, ran.Load())
	}
}

// TestGroupCommitGoexit: a member whose fn ends its goroutine (runtime.Goexit, as t.FailNow
// does) fails its group's unsettled members instead of stranding them, and the writer serves
// the next transaction.
func TestGroupCommitGoexit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGroupStore(t)
	const members = 4
	errs := insertInOneGroup(t, s, members, func(i int, tx *Tx) error {
		if i == 2 {
			runtime.Goexit()
		}
		return nil
	})
	for i, err := range errs {
		if !errors.Is(err, engine.ErrGoexit) {
			t.Errorf("member %d: %v, want engine.ErrGoexit (its group was rolled back)", i, err)
		}
	}
	if err := s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO rows (name, seen) VALUES ('after', 0)`)
		return err
	}); err != nil {
		t.Fatalf("transaction after the Goexit: %v", err)
	}
	var n int
	if err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM rows`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows: %d, %v; want only the one written after", n, err)
	}
}
