package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Subject is what a change concerns, as the database's change log names it: a portal login
// ("account"), a subscriber or a provider, by id. A remembered read lists the subjects it shows
// and is forgotten when a change to any of them is read from the log.
type Subject struct{ Kind, ID string }

// ChangeLog reads the database's log of changes to remembered reads' subjects, appended by
// triggers in the transactions that made them. A mark is a position in the log in the
// dialect's own terms: everything committed before it has been read.
type ChangeLog struct {
	// End is the mark of everything committed so far.
	End func(ctx context.Context) (mark string, err error)
	// Since reads the subjects of the changes committed after mark, and the mark after them.
	Since func(ctx context.Context, mark string) (next string, changed []Subject, err error)
	// Prune deletes the entries before mark (a mark read at least pruneAfter ago).
	Prune func(ctx context.Context, mark string) error
	// Close releases what the log reads on.
	Close func() error
}

// ChangeFeed tells remembered reads (Memo) what the database changed since they were read. It
// reads the change log every pollEvery, and at once after a commit of this process that may
// have changed a remembered read's rows (Committed), before that commit's caller goes on, so a
// process always reads its own writes. A remembered read is forgotten when a change to one of
// its subjects is read, and served only while the log is being read (its last successful read
// started within staleAfter), so another process's write is seen within staleAfter at worst;
// a failing read turns serving off and forgets everything until one succeeds.
type ChangeFeed struct {
	log   ChangeLog
	epoch time.Time

	pruneEvery, pruneAfter, forgetAfter time.Duration

	polled atomic.Int64 // nanoseconds since epoch at which the last successful read started; 0: none recent

	start          sync.Once
	poller, pruner *ticking

	commits atomic.Uint64 // commits that asked for a read (Committed)

	mu          sync.Mutex // one read of the log at a time; guards what follows
	started     bool       // the poller runs: only then are reads remembered, and so forgotten
	mark        string     // "": not read yet
	readThrough uint64     // every commit counted up to this one is covered by a read done
	memos       []memo
	marks       []timedMark // marks read, for pruning: oldest first
}

type timedMark struct {
	at   time.Time
	mark string
}

// memo is a Memo of any value type, as the feed forgets its entries.
type memo interface {
	forget(changed map[Subject]bool) // nil: everything
}

const (
	pollEvery  = 10 * time.Millisecond
	staleAfter = 100 * time.Millisecond // no successful read for this long: remembered reads are not served
	pruneEvery = 10 * time.Second       // often, so that each prune deletes few entries
	pruneAfter = time.Minute            // what every live process read long ago: its entries are deleted
	// An entry committed after a process's last read is pruned at least pruneAfter after that
	// read: a process whose reads stopped for less than pruneAfter / 2 (forgetAfter) misses none.

	readTimeout  = time.Second      // the longest a read of the log may take (a failed read forgets everything)
	pruneTimeout = 10 * time.Second // the longest a prune may take
)

// NewChangeFeed returns a feed of log; it starts reading at the first remembered read.
func NewChangeFeed(log ChangeLog) *ChangeFeed {
	return &ChangeFeed{log: log, epoch: time.Now(), pruneEvery: pruneEvery, pruneAfter: pruneAfter, forgetAfter: pruneAfter / 2}
}

// live reports whether remembered reads may be served, starting the poller at the first call,
// so a store that never serves a remembered read never reads the log.
func (f *ChangeFeed) live() bool {
	if f == nil {
		return false
	}
	f.start.Do(f.run)
	last := f.polled.Load()
	return last != 0 && time.Since(f.epoch).Nanoseconds()-last < staleAfter.Nanoseconds()
}

// Committed is called after a commit by this process (also one whose outcome is unknown) that
// may have changed a remembered read's rows: it returns once the log has been read past that
// commit, so the caller's next read finds none of what it changed remembered. Commits at once
// share a read. The read runs to its end (at most readTimeout) even if ctx ends: a read that
// fails forgets everything.
func (f *ChangeFeed) Committed(ctx context.Context) {
	if f == nil {
		return
	}
	ticket := f.commits.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started || f.readThrough >= ticket {
		return // nothing remembered yet, or a read begun after this commit has already run
	}
	f.readLocked(context.WithoutCancel(ctx))
}

// readLocked reads the log past every commit counted so far and forgets what it names. After a
// gap (no successful read started within forgetAfter: entries since may have been pruned) it
// forgets everything. f.mu is held.
func (f *ChangeFeed) readLocked(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	through := f.commits.Load()
	started := time.Since(f.epoch).Nanoseconds()
	last := f.polled.Load()
	gap := last == 0 || started-last >= f.forgetAfter.Nanoseconds()
	var changed []Subject
	var next string
	var err error
	if f.mark == "" {
		next, err = f.log.End(ctx)
	} else {
		next, changed, err = f.log.Since(ctx, f.mark)
	}
	if err != nil {
		f.polled.Store(0) // not served until a read succeeds
		f.mark = ""
		f.forgetLocked(nil)
		return
	}
	switch {
	case gap || f.mark == "":
		f.forgetLocked(nil)
	case len(changed) > 0:
		set := make(map[Subject]bool, len(changed))
		for _, s := range changed {
			set[s] = true
		}
		f.forgetLocked(set)
	}
	f.mark, f.readThrough = next, through
	// A read counts from when it started: it saw every commit made before then, so a read
	// served within staleAfter of it misses no write older than staleAfter, however long the
	// read itself took.
	f.polled.Store(started)
}

func (f *ChangeFeed) forgetLocked(changed map[Subject]bool) {
	for _, m := range f.memos {
		m.forget(changed)
	}
}

// track registers m to be forgotten from.
func (f *ChangeFeed) track(m memo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.memos = append(f.memos, m)
}

// run starts the poller and the pruner.
func (f *ChangeFeed) run() {
	f.mu.Lock()
	f.started = true
	f.mu.Unlock()
	f.poller = tick(pollEvery, func(ctx context.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.readLocked(ctx)
	})
	f.pruner = tick(f.pruneEvery, func(ctx context.Context) {
		f.mu.Lock()
		mark, ok := f.mark, f.polled.Load() != 0
		f.mu.Unlock()
		if ok {
			ctx, cancel := context.WithTimeout(ctx, pruneTimeout)
			defer cancel()
			f.prune(ctx, mark)
		}
	})
}

// prune records mark and deletes the log's entries before the newest mark read at least
// pruneAfter ago, which every process reading the log has read by now (one that has not
// forgets everything at its next read: a gap). A failure is logged; the next prune deletes
// those entries with its own.
func (f *ChangeFeed) prune(ctx context.Context, mark string) {
	now := time.Now()
	f.marks = append(f.marks, timedMark{now, mark})
	old := -1
	for i, m := range f.marks {
		if now.Sub(m.at) >= f.pruneAfter {
			old = i
		}
	}
	if old < 0 {
		return
	}
	if err := f.log.Prune(ctx, f.marks[old].mark); err != nil {
		slog.Warn("remembered reads: pruning the change log failed; the next attempt is in "+f.pruneEvery.String(), "err", err)
		return
	}
	f.marks = f.marks[old+1:]
}

// Close stops the poller and releases the log's connection.
func (f *ChangeFeed) Close() error {
	if f == nil {
		return nil
	}
	f.start.Do(func() {}) // never start after close
	f.poller.close()
	f.pruner.close()
	if f.log.Close == nil {
		return nil
	}
	return f.log.Close()
}

// Memo remembers values by key, each with the subjects it shows, until the change feed reads a
// change to one of them.
type Memo[V any] struct {
	tracked sync.Once

	mu     sync.RWMutex
	m      map[string]V
	about  map[Subject][]string // the keys whose values show each subject
	refs   int                  // keys listed in about
	epoch  uint64               // moves whenever the feed forgets anything: a read begun before cannot be remembered
	resets uint64               // times everything was forgotten
}

const maxMemoEntries = 10_000

func (c *Memo[V]) get(key string) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	return v, ok
}

// Holds reports whether a value is remembered for key, and how many times everything was
// forgotten so far (tests read them to tell a remembered read from a fresh one, and a
// forgetting of one value from a forgetting of all).
func (c *Memo[V]) Holds(key string) (held bool, resets uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, held = c.m[key]
	return held, c.resets
}

func (c *Memo[V]) currentEpoch() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// put remembers v unless the feed forgot anything since epoch was current: the value may have
// been read before a change that was then forgotten.
func (c *Memo[V]) put(key string, v V, subjects []Subject, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if c.m == nil || len(c.m) >= maxMemoEntries || c.refs >= 4*maxMemoEntries {
		c.resetLocked() // full: start over rather than track recency
	}
	c.m[key] = v
	for _, s := range subjects {
		c.about[s] = append(c.about[s], key)
		c.refs++
	}
}

func (c *Memo[V]) resetLocked() {
	c.m, c.about, c.refs = make(map[string]V, 64), make(map[Subject][]string, 64), 0
}

func (c *Memo[V]) forget(changed map[Subject]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if changed == nil {
		c.resetLocked()
		c.resets++
		return
	}
	for s := range changed {
		for _, key := range c.about[s] {
			delete(c.m, key)
		}
		c.refs -= len(c.about[s])
		delete(c.about, s)
	}
}

// Remembered returns what read returns for key, from c while the change feed has read no
// change to the subjects about lists for it.
func Remembered[V any](f *ChangeFeed, c *Memo[V], key string, read func() (V, error), about func(V) []Subject) (V, error) {
	if f == nil {
		return read()
	}
	c.tracked.Do(func() { f.track(c) })
	live := f.live()
	if live {
		if v, ok := c.get(key); ok {
			return v, nil
		}
	}
	epoch := c.currentEpoch() // before the read: anything forgotten after it keeps the value out
	v, err := read()
	if err == nil && live {
		c.put(key, v, about(v), epoch)
	}
	return v, err
}
