package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Group commit (SQLite). SQLite has one writer at a time, and each commit appends its pages
// to the write-ahead log and waits for the disk (synchronous=FULL: an answered order survives
// a power cut). Under load most of a commit's cost is the same for one transaction as for
// twenty: the pages they share (the job queue's, the events', the subscriptions' last pages)
// and the sync. So transactions that arrive while the writer is busy wait in a queue, and the
// committer runs the queue's members back to back inside one SQLite transaction, each inside
// a savepoint of its own, and commits them together.
//
// Each member keeps the meaning of its own transaction:
//   - it sees what the members before it wrote, as if they had committed just before it (they
//     run in order, on one connection, like serial transactions);
//   - a member whose fn (or search re-index) fails is rolled back to its savepoint, alone, and
//     gets its error; the others commit;
//   - no member's InTx returns before the commit is on disk, and a failed commit fails every
//     member that had succeeded;
//   - its AfterCommit hooks run on its own goroutine after the commit.
//
// A caller's context does not interrupt statements once its transaction has begun (on SQLite,
// an interrupted write inside a transaction rolls the whole transaction back, other members'
// work included); a caller whose context has ended before its turn is not run. Should a
// savepoint still fail, the group is rolled back and its members are run again one by one, as
// InTx's contract allows (fn is safe to run again).

// maxGroup bounds a group: a long queue is committed in several groups, so the first members'
// callers are answered without waiting for the last.
const maxGroup = 32

type txRequest struct {
	ctx      context.Context
	fn       func(tx *Tx) error
	tx       *Tx   // the member's Tx, for its AfterCommit hooks
	err      error // the member's outcome
	panicked *memberPanic
	done     chan struct{}
}

// memberPanic is a panic in a member's fn, re-raised on the caller's goroutine.
type memberPanic struct {
	value any
	stack []byte
}

func (p *memberPanic) Error() string { return fmt.Sprintf("panic in transaction: %v", p.value) }

// committer owns the SQLite writer for InTx: one goroutine, for the store's life.
type committer struct {
	s       *Store
	mu      sync.Mutex
	queue   []*txRequest
	wake    chan struct{} // buffer 1: the queue is not empty
	closed  bool
	stopped chan struct{}
	grouped atomic.Int64 // commits of more than one member, for tests
}

var errStoreClosed = errors.New("store closed")

func newCommitter(s *Store) *committer {
	c := &committer{s: s, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.loop()
	return c
}

// run queues fn and waits for its group's outcome.
func (c *committer) run(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &txRequest{ctx: ctx, fn: fn, done: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errStoreClosed
	}
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-r.done // even when ctx ends: fn may be running
	if r.panicked != nil {
		panic(fmt.Sprintf("%v\n\noriginal stack:\n%s", r.panicked.value, r.panicked.stack))
	}
	if r.err != nil {
		return r.err
	}
	for _, f := range r.tx.afterCommit {
		f()
	}
	return nil
}

func (c *committer) loop() {
	defer close(c.stopped)
	for {
		c.mu.Lock()
		n := min(len(c.queue), maxGroup)
		batch := c.queue[:n:n]
		c.queue = c.queue[n:]
		closed := c.closed
		c.mu.Unlock()
		if n == 0 {
			if closed {
				return
			}
			<-c.wake
			continue
		}
		c.commit(batch)
		for _, r := range batch {
			close(r.done)
		}
	}
}

// close lets the queued transactions finish, then stops the committer.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.stopped
}

// commit runs batch as one group (alone: as a plain transaction).
func (c *committer) commit(batch []*txRequest) {
	var live []*txRequest
	for _, r := range batch {
		if r.err = r.ctx.Err(); r.err == nil {
			live = append(live, r)
		}
	}
	switch len(live) {
	case 0:
		return
	case 1:
		c.alone(live[0])
		return
	}
	s := c.s
	sqlTx, err := s.DB.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range live {
			r.err = fmt.Errorf("begin transaction: %w", err)
		}
		return
	}
	for i, r := range live {
		r.tx = &Tx{Tx: sqlTx, d: s.Dialect, s: s}
		if err := savepoint(sqlTx, "SAVEPOINT member"); err != nil {
			c.regroup(sqlTx, live[i:], live[:i])
			return
		}
		if r.err = r.member(); r.err != nil {
			if err := savepoint(sqlTx, "ROLLBACK TO member"); err != nil {
				c.regroup(sqlTx, live[i+1:], live[:i])
				return
			}
		}
		if err := savepoint(sqlTx, "RELEASE member"); err != nil {
			redo := live[i+1:]
			if r.err == nil {
				redo = live[i:]
			}
			c.regroup(sqlTx, redo, live[:i])
			return
		}
	}
	err = sqlTx.Commit()
	s.changes.committed() // also after a failed commit: its outcome is unknown, assume it landed
	c.grouped.Add(1)
	if err != nil {
		for _, r := range live {
			if r.err == nil {
				r.err = fmt.Errorf("commit: %w", err)
			}
		}
	}
}

// alone runs r as a plain transaction.
func (c *committer) alone(r *txRequest) {
	s := c.s
	sqlTx, err := s.DB.BeginTx(context.Background(), nil)
	if err != nil {
		r.err = fmt.Errorf("begin transaction: %w", err)
		return
	}
	r.tx = &Tx{Tx: sqlTx, d: s.Dialect, s: s}
	if r.err = r.member(); r.err != nil {
		_ = sqlTx.Rollback()
		return
	}
	err = sqlTx.Commit()
	s.changes.committed()
	if err != nil {
		r.err = fmt.Errorf("commit: %w", err)
	}
}

// regroup abandons a group whose savepoints failed: it rolls the transaction back and runs
// again, each alone, the members that had succeeded (done) and those not run yet (rest).
func (c *committer) regroup(sqlTx *sql.Tx, rest, done []*txRequest) {
	_ = sqlTx.Rollback()
	for _, r := range append(done, rest...) {
		if r.err == nil && r.panicked == nil {
			c.alone(r)
		}
	}
}

// member runs the request's fn and its search re-index, turning a panic into an error (the
// caller re-raises it).
func (r *txRequest) member() (err error) {
	defer func() {
		if v := recover(); v != nil {
			r.panicked = &memberPanic{value: v, stack: debug.Stack()}
			err = r.panicked
		}
	}()
	if err := r.fn(r.tx); err != nil {
		return err
	}
	return r.tx.beforeCommit(r.ctx)
}

func savepoint(tx *sql.Tx, stmt string) error {
	_, err := tx.ExecContext(context.Background(), stmt)
	return err
}
