package engine

import (
	"context"
	"errors"
	"fmt"
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
//   - a member whose fn (the store's search re-index included) fails is rolled back to its
//     savepoint, alone, and gets its error; the others commit;
//   - no member's Run returns before the commit is on disk, and a failed commit fails every
//     member that had succeeded;
//   - its caller's after-commit work (the store's AfterCommit hooks) runs on the caller's own
//     goroutine after the commit.
//
// A caller's context does not interrupt statements once its transaction has begun (on SQLite,
// an interrupted write inside a transaction rolls the whole transaction back, other members'
// work included). Until its turn comes a caller can give up: its Run returns the context's
// error and the committer skips it. Should a savepoint still fail, the group is rolled back and
// its members are run again one by one, as the store's InTx allows (fn is safe to run again).
// A member's fn must read through its transaction, never through the read pool, which does not
// see what the members before it in the group wrote.

// MaxGroup bounds a group: a long queue is committed in several groups, so the first members'
// callers are answered without waiting for the last.
const MaxGroup = 32

// A request's state: queued until the committer takes it for its turn, or until its caller
// gives up waiting (abandoned); the two race through a compare-and-swap.
const (
	queued int32 = iota
	taken
	abandoned
)

type txRequest[T any] struct {
	ctx      context.Context
	fn       func(tx T) error
	state    atomic.Int32
	tx       T     // the member's transaction, for its caller's after-commit work
	err      error // the member's outcome
	panicked *memberPanic
	settled  bool // its outcome is final (committed, or failed for good)
	done     chan struct{}
}

// memberPanic is a panic in a member's fn, re-raised on the caller's goroutine.
type memberPanic struct{ value any }

func (p *memberPanic) Error() string { return fmt.Sprintf("panic in transaction: %v", p.value) }

// Committer owns the SQLite writer for the store's transactions: one goroutine, for the
// store's life. T is the store's transaction type.
type Committer[T any] struct {
	tx      Transactions[T]
	mu      sync.Mutex
	queue   []*txRequest[T]
	wake    chan struct{} // buffer 1: the queue is not empty
	closed  bool
	stopped chan struct{}
	grouped atomic.Int64 // commits of more than one member, for tests
}

var (
	errStoreClosed = errors.New("store closed")
	ErrGoexit      = errors.New("transaction abandoned: a function in its group called runtime.Goexit")
)

// Transactions is what the committer needs of the store's transactions on the writer.
type Transactions[T any] struct {
	// Commit begins a transaction on the writer, runs body in it and commits; it rolls back
	// when body fails, panics or ends its goroutine.
	Commit func(body func(tx T) error) error
	// Member is a group member's own transaction value inside the group's transaction.
	Member func(group T) T
	// Exec runs a statement (a savepoint's) on the transaction as it is.
	Exec func(tx T, stmt string) error
}

// NewCommitter starts the committer of the transactions tx describes.
func NewCommitter[T any](tx Transactions[T]) *Committer[T] {
	c := &Committer[T]{tx: tx, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.loop()
	return c
}

// Run queues fn and waits for its outcome, or until ctx ends before fn's turn. fn includes
// whatever its transaction must do before it commits; once Run returns nil, the transaction
// fn ran in has committed and is returned for the caller's after-commit work.
func (c *Committer[T]) Run(ctx context.Context, fn func(tx T) error) (T, error) {
	var none T
	if err := ctx.Err(); err != nil {
		return none, err
	}
	r := &txRequest[T]{ctx: ctx, fn: fn, done: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return none, errStoreClosed
	}
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return none, ctx.Err()
		}
		<-r.done // its transaction has begun: it runs to its end
	}
	if r.panicked != nil {
		panic(r.panicked.value)
	}
	if r.err != nil {
		return none, r.err
	}
	return r.tx, nil
}

// Queued is how many transactions wait for the writer, for tests.
func (c *Committer[T]) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// Grouped is how many commits had more than one member, for tests.
func (c *Committer[T]) Grouped() int64 { return c.grouped.Load() }

func (c *Committer[T]) loop() {
	var batch []*txRequest[T]
	normal := false
	defer func() {
		if normal {
			close(c.stopped)
			return
		}
		// A member's fn called runtime.Goexit (t.FailNow, say), which ends this goroutine
		// whatever it recovers (Commit rolled its transaction back on the way out): fail
		// what its group had not settled and go on in a new goroutine.
		for _, r := range batch {
			if !r.settled {
				r.err = ErrGoexit
			}
			close(r.done)
		}
		go c.loop()
	}()
	for {
		c.mu.Lock()
		n := min(len(c.queue), MaxGroup)
		batch = c.queue[:n:n]
		c.queue = c.queue[n:]
		closed := c.closed
		c.mu.Unlock()
		if n == 0 {
			if closed {
				normal = true
				return
			}
			<-c.wake
			continue
		}
		c.commit(batch)
		for _, r := range batch {
			close(r.done)
		}
		batch = nil
	}
}

// Close lets the queued transactions finish, then stops the committer.
func (c *Committer[T]) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.stopped
}

// take claims r for its turn: false when its caller gave up, or its context has ended (then
// it is settled with that error and not run).
func take[T any](r *txRequest[T]) bool {
	if !r.state.CompareAndSwap(queued, taken) {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err, r.settled = err, true
		return false
	}
	return true
}

// commit runs batch as one group (a batch of one: as a plain transaction). Each member is
// taken at its turn, so a caller can give up until then.
func (c *Committer[T]) commit(batch []*txRequest[T]) {
	if len(batch) == 1 {
		if take(batch[0]) {
			c.alone(batch[0])
		}
		return
	}
	var members, rest []*txRequest[T] // taken, in order; not reached when the group broke
	err := c.tx.Commit(func(tx T) error {
		for i, r := range batch {
			if !take(r) {
				continue
			}
			members, rest = append(members, r), batch[i+1:]
			if err := c.tx.Exec(tx, "SAVEPOINT member"); err != nil {
				return errBrokenGroup
			}
			if r.err = r.member(c.tx.Member(tx)); r.err != nil {
				if err := c.tx.Exec(tx, "ROLLBACK TO member"); err != nil {
					return errBrokenGroup
				}
			}
			if err := c.tx.Exec(tx, "RELEASE member"); err != nil {
				return errBrokenGroup
			}
		}
		if len(members) == 0 {
			return errEmptyGroup // every caller gave up: roll back the empty transaction
		}
		return nil
	})
	if errors.Is(err, errBrokenGroup) {
		c.regroup(members, rest)
		return
	}
	if len(members) > 0 {
		c.grouped.Add(1)
	}
	for _, r := range members {
		if r.err == nil {
			r.err = err // nil when committed
		}
		r.settled = true
	}
	for _, r := range batch { // the transaction did not begin: those still queued fail with it
		if take(r) {
			r.err, r.settled = err, true
		}
	}
}

var (
	errBrokenGroup = errors.New("group commit: a savepoint failed")
	errEmptyGroup  = errors.New("group commit: no member left")
)

// alone runs r, taken, as a plain transaction.
func (c *Committer[T]) alone(r *txRequest[T]) {
	r.err = c.tx.Commit(r.member)
	r.settled = true
}

// regroup reruns a group whose savepoints failed (Commit rolled it back): each alone, the
// members taken so far whose own fn had succeeded (their writes went with the rollback), then
// those not reached yet.
func (c *Committer[T]) regroup(members, rest []*txRequest[T]) {
	for _, r := range members {
		if r.err == nil && r.panicked == nil {
			c.alone(r)
		}
		r.settled = true
	}
	for _, r := range rest {
		if take(r) {
			c.alone(r)
		}
	}
}

// member runs the request's fn in tx, turning a panic into an error (the caller re-raises it).
func (r *txRequest[T]) member(tx T) (err error) {
	r.tx = tx
	defer func() {
		if v := recover(); v != nil {
			r.panicked = &memberPanic{value: v}
			err = r.panicked
		}
	}()
	return r.fn(tx)
}
