package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lock is this process's hold on a named lock that every process on the database shares: at
// most one process holds a name at a time, and a process that dies lets go of it at once.
//
// On PostgreSQL it is a session advisory lock on a connection of its own: the server releases it
// when the session ends, which it does as soon as a killed process's socket closes, and within
// about ten seconds for a host that vanished (the session's TCP keepalives). On SQLite it is an
// flock(2) on a file beside the database, which the kernel releases with the process.
type Lock struct {
	name string
	pg   *pgx.Conn // PostgreSQL: the session holding the advisory lock
	file *os.File  // SQLite: the locked file
}

// lockKeepalive bounds how long PostgreSQL keeps the lock of a session whose host vanished:
// the first keepalive after 5 s idle, then two more 2 s apart.
var lockKeepalive = map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "2"}

// TryLock takes the lock name if no process holds it. It answers nil and no error when another
// process does.
func (s *Store) TryLock(ctx context.Context, name string) (*Lock, error) {
	if s.Dialect == Postgres {
		return tryPostgresLock(ctx, s.URL, name)
	}
	return trySQLiteLock(sqlitePath(s.URL), name)
}

func tryPostgresLock(ctx context.Context, url, name string) (*Lock, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	for k, v := range lockKeepalive {
		cfg.RuntimeParams[k] = v
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("lock %s: connect: %w", name, err)
	}
	var got bool
	if err := conn.QueryRow(cctx, `SELECT pg_try_advisory_lock($1)`, lockKey(name)).Scan(&got); err != nil || !got {
		_ = conn.Close(context.Background())
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		return nil, nil
	}
	return &Lock{name: name, pg: conn}, nil
}

// lockKey is the advisory lock's number for name: an FNV-1a hash, its high bit set so it
// never meets the small fixed numbers of the migration and test-template locks.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("subprov lock " + name))
	return int64(h.Sum64() | 1<<62)
}

func trySQLiteLock(path, name string) (*Lock, error) {
	f, err := os.OpenFile(path+"-"+name+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return &Lock{name: name, file: f}, nil
}

// Held checks that the lock is still this process's: on PostgreSQL, that its session still
// answers (within 2 s). A lock that fails the check is released: take it again with TryLock.
func (l *Lock) Held(ctx context.Context) error {
	if l.pg == nil {
		return nil // a file lock ends only with the process or Release
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := l.pg.Exec(cctx, `SELECT 1`); err != nil {
		l.Release()
		return fmt.Errorf("lock %s: its session is gone: %w", l.name, err)
	}
	return nil
}

// Release gives the lock up (ending its session on PostgreSQL, which releases it).
func (l *Lock) Release() {
	if l.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.pg.Close(ctx)
	}
	if l.file != nil {
		_ = l.file.Close() // closing the descriptor drops the flock
	}
}
