package store

import (
	"context"
	"database/sql"
	"fmt"
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
// The writer keeps a far-off automatic checkpoint (walFallbackPages) as a safety net, for a
// checkpointer that cannot keep up or cannot run (the database held in exclusive mode).
const (
	checkpointEvery  = 250 * time.Millisecond
	walFallbackPages = 20_000 // 80 MB of log
)

// checkpointer runs PRAGMA wal_checkpoint(PASSIVE) every checkpointEvery until closed.
type checkpointer struct {
	path string
	db   *sql.DB
	loop *ticking
}

func startCheckpointer(path string) (*checkpointer, error) {
	db, err := openSQLiteConn(path, "_pragma=busy_timeout(1000)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	return &checkpointer{path: path, db: db, loop: tick(checkpointEvery, func(ctx context.Context) {
		// A failure (the file locked exclusively, a disk error) is left to the next tick
		// and, meanwhile, to the writer's fallback.
		_, _ = db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	})}, nil
}

func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	c.loop.close()
	return c.db.Close()
}

// PauseCheckpoints stops the checkpointer and closes its connection until resume, for a caller
// that takes the database for itself: subprov gen's bulk load leaves WAL mode, which SQLite
// allows only while no other connection has the file open. A no-op on PostgreSQL.
func (s *Store) PauseCheckpoints() (resume func() error, err error) {
	if s.checkpoints == nil {
		return func() error { return nil }, nil
	}
	path := s.checkpoints.path
	if err := s.checkpoints.close(); err != nil {
		return nil, fmt.Errorf("pause checkpoints: %w", err)
	}
	s.checkpoints = nil
	return func() error { // once: a second call finds the checkpointer running
		if s.checkpoints != nil {
			return nil
		}
		c, err := startCheckpointer(path)
		if err != nil {
			return fmt.Errorf("resume checkpoints: %w", err)
		}
		s.checkpoints = c
		return nil
	}, nil
}
