package engine

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// ChangeFeed tells cached reads whether the database may have changed since they read it. Its
// generation moves after every transaction this store commits (at once, before the writer's
// caller sees the commit return) and whenever a poll of the database's change marker sees a
// write by another connection or process: SQLite's PRAGMA data_version (which moves when any
// other connection commits) and PostgreSQL's current snapshot (which moves when a transaction
// takes a transaction id and again when its commit becomes visible, anywhere in the database
// cluster). A change bumps the generation on that poll and, for safety, on the next one too.
// A cached read is served only while the poller is alive (its last successful poll is recent),
// so another process's write is seen within staleAfter at worst; a failing poll turns caching
// off until one succeeds.
type ChangeFeed struct {
	gen    atomic.Uint64
	polled atomic.Int64 // nanoseconds since epoch at which the last successful poll started (monotonic clock)
	epoch  time.Time

	poll    func(ctx context.Context) (string, error) // the database's change marker
	closeDB func() error                              // releases poll's connection
	start   sync.Once
	poller  *ticking
}

const (
	pollEvery  = 10 * time.Millisecond
	staleAfter = 100 * time.Millisecond // no successful poll for this long: cached reads are not served
)

func newChangeFeed(poll func(ctx context.Context) (string, error), closeDB func() error) *ChangeFeed {
	return &ChangeFeed{epoch: time.Now(), poll: poll, closeDB: closeDB}
}

// SQLiteChanges polls PRAGMA data_version on a read-only connection of its own (the value is
// per connection, so it must always be the same one).
func SQLiteChanges(path string) (*ChangeFeed, error) {
	db, err := OpenSQLiteConn(path, "_pragma=busy_timeout(1000)&mode=ro")
	if err != nil {
		return nil, err
	}
	return newChangeFeed(func(ctx context.Context) (string, error) {
		var v string
		err := db.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
		return v, err
	}, db.Close), nil
}

// PostgresChanges polls the current snapshot (its xmin, xmax and in-progress transactions) on
// the pool. Read-only transactions take no transaction id, so reads never move it.
func PostgresChanges(db *sql.DB) *ChangeFeed {
	return newChangeFeed(func(ctx context.Context) (string, error) {
		var v string
		err := db.QueryRowContext(ctx, "SELECT pg_current_snapshot()::text").Scan(&v)
		return v, err
	}, func() error { return nil })
}

// Current returns the generation and whether cached reads may be served at all.
func (f *ChangeFeed) Current() (gen uint64, live bool) {
	if f == nil {
		return 0, false
	}
	f.start.Do(f.run)
	last := f.polled.Load()
	return f.gen.Load(), last != 0 && time.Since(f.epoch).Nanoseconds()-last < staleAfter.Nanoseconds()
}

// Committed records a commit by this store.
func (f *ChangeFeed) Committed() {
	if f != nil {
		f.gen.Add(1)
	}
}

// run starts the poller; the first call to Current does, so a store that never serves a
// cached read never polls.
func (f *ChangeFeed) run() {
	last, settling := "", false
	f.poller = tick(pollEvery, func(ctx context.Context) {
		// A poll counts from when it started: it sees every commit made before then, so a read
		// served within staleAfter of it misses no write older than staleAfter, however long
		// the poll itself took.
		started := time.Since(f.epoch).Nanoseconds()
		v, err := f.poll(ctx)
		if err != nil {
			f.polled.Store(0) // cached reads off until a poll succeeds
			return
		}
		if v != last || settling {
			f.gen.Add(1)
			settling = v != last
			last = v
		}
		f.polled.Store(started)
	})
}

// Close stops the poller and releases its connection.
func (f *ChangeFeed) Close() error {
	if f == nil {
		return nil
	}
	f.start.Do(func() {}) // never start after close
	f.poller.close()
	return f.closeDB()
}

// Memo remembers values by key, each with the change generation read before it was read
// from the database: an entry is served only while that generation is current.
type Memo[V any] struct {
	mu sync.RWMutex
	m  map[string]memoEntry[V]
}

type memoEntry[V any] struct {
	gen uint64
	v   V
}

const maxMemoEntries = 10_000

func (c *Memo[V]) get(key string, gen uint64) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	return e.v, ok && e.gen == gen
}

func (c *Memo[V]) put(key string, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxMemoEntries {
		c.m = make(map[string]memoEntry[V], 64) // full: start over rather than track recency
	}
	c.m[key] = memoEntry[V]{gen: gen, v: v}
}

// Remembered returns what read returns for key, from c while the database has not changed
// since it was read (see ChangeFeed).
func Remembered[V any](f *ChangeFeed, c *Memo[V], key string, read func() (V, error)) (V, error) {
	gen, live := f.Current() // read before the value: a commit after this forgets it
	if live {
		if v, ok := c.get(key, gen); ok {
			return v, nil
		}
	}
	v, err := read()
	if err == nil && live {
		c.put(key, v, gen)
	}
	return v, err
}
