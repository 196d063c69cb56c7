package engine

import (
	"context"
	"database/sql"
	"time"
)

// SQLite in WAL mode appends every commit to the write-ahead log, and a checkpoint copies the
// log back into the database file and waits for the disk. By default the committing
// connection checkpoints itself every 1,000 pages, inside a commit: with group commit (a
// group of orders writes more than that) every commit of the store's one writer carried a
// checkpoint, a quarter of the writer's time in the orders benchmark. The store checkpoints
// from a connection of its own instead, on a timer, beside the writer rather than in its way.
// A PASSIVE checkpoint takes no lock that writers or readers wait for; it copies what no
// reader still needs and leaves the rest for the next one. Once the log is wholly copied, the
// writer's next transaction starts the log over from its beginning.
//
// The writer keeps a far-off automatic checkpoint (WALFallbackPages) as a safety net, for a
// checkpointer that cannot keep up or cannot run (the database held in exclusive mode).
const (
	checkpointEvery  = 250 * time.Millisecond
	WALFallbackPages = 20_000 // 80 MB of log
)

// Checkpointer runs PRAGMA wal_checkpoint(PASSIVE) every checkpointEvery until closed.
type Checkpointer struct {
	path string
	db   *sql.DB
	loop *ticking
}

// StartCheckpointer starts checkpointing the SQLite file at path.
func StartCheckpointer(path string) (*Checkpointer, error) {
	db, err := OpenSQLiteConn(path, "_pragma=busy_timeout(1000)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	return &Checkpointer{path: path, db: db, loop: tick(checkpointEvery, func(ctx context.Context) {
		// A failure (the file locked exclusively, a disk error) is left to the next tick
		// and, meanwhile, to the writer's fallback.
		_, _ = db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	})}, nil
}

// Path is the file the checkpointer checkpoints.
func (c *Checkpointer) Path() string { return c.path }

// Ping checks the checkpointer's connection answers: a closed one does not.
func (c *Checkpointer) Ping(ctx context.Context) error { return c.db.PingContext(ctx) }

// Close stops the checkpointer and closes its connection (a nil one: nothing to stop).
func (c *Checkpointer) Close() error {
	if c == nil {
		return nil
	}
	c.loop.close()
	return c.db.Close()
}
