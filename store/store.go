// Package store is the SQL store of subprov, one implementation for embedded SQLite and for
// PostgreSQL. It persists and reads; it never decides who may see what, but every query on
// tenant data takes the provider it is scoped to. Engine differences live in dialect.go.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"           // registers the "sqlite" database/sql driver
)

// Store is the database handle. Writes go through DB; on SQLite, DB has a single connection
// (one writer, no SQLITE_BUSY storms) and reads that need no transaction go through RDB, a pool
// of read connections. On PostgreSQL both are the same pool.
type Store struct {
	DB      *sql.DB
	RDB     *sql.DB
	Dialect Dialect
	URL     string
	stmts   *stmtCache // SQLite's read pool only; nil on PostgreSQL, whose driver caches statements itself

	// counters hands out per-provider counter values from blocks reserved in their own
	// transactions (PostgreSQL; see NextCustomerNumber). Its one-connection pool never waits
	// on DB, whose connections may all be held by transactions waiting for a block.
	counters *counterBlocks

	// Reads on every request of their kind, remembered until the database may have changed
	// (see changeFeed): GET /partner/subscriber/me's account views and API keys.
	changes *changeFeed
	views   memo[*AccountView]
	keys    memo[apiKeyHit]
}

// Open connects to the database named by a DATABASE_URL: sqlite://PATH or postgres://…
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	switch {
	case strings.HasPrefix(databaseURL, "sqlite://"), strings.HasPrefix(databaseURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(databaseURL, "sqlite:"), "//")
		return openSQLite(ctx, path, databaseURL)
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		return openPostgres(ctx, databaseURL)
	default:
		return nil, fmt.Errorf("DATABASE_URL %q: want sqlite://PATH or postgres://…", redactURL(databaseURL))
	}
}

func openSQLite(ctx context.Context, path, raw string) (*Store, error) {
	if path == "" {
		return nil, errors.New("DATABASE_URL: sqlite:// needs a file path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	// busy_timeout first so the other pragmas already wait instead of failing on a lock.
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(FULL)&_time_format=sqlite&_txlock=immediate"
	dsn := "file:" + path + "?" + pragmas
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_time_format=sqlite&mode=ro")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite reader: %w", err)
	}
	// Idle readers are kept (not closed and reopened under load): a new connection reads the
	// schema again and loses its prepared statements.
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	changes, err := sqliteChanges(path)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open sqlite change feed: %w", err)
	}
	s := &Store{DB: w, RDB: r, Dialect: SQLite, URL: raw, stmts: &stmtCache{db: r, m: map[string]*sql.Stmt{}}, changes: changes}
	if err := w.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

func openPostgres(ctx context.Context, databaseURL string) (*Store, error) {
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres %s: %w", redactURL(databaseURL), err)
	}
	// The counters' connection waits at most 100 ms for the provider row: longer means this
	// very transaction (or a long one like a bill run batch) holds it, and the caller then
	// takes the number inside its own transaction instead.
	auxCfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	auxCfg.RuntimeParams["lock_timeout"] = "100ms"
	aux := stdlib.OpenDB(*auxCfg)
	aux.SetMaxOpenConns(1)
	aux.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{DB: db, RDB: db, Dialect: Postgres, URL: databaseURL, counters: newCounterBlocks(aux), changes: postgresChanges(db)}, nil
}

// Close releases the pools.
func (s *Store) Close() error {
	s.stmts.close()
	err := s.changes.close()
	err = errors.Join(err, s.DB.Close())
	if s.RDB != s.DB {
		err = errors.Join(err, s.RDB.Close())
	}
	if s.counters != nil {
		err = errors.Join(err, s.counters.db.Close())
	}
	return err
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.RDB.PingContext(ctx) }

// Tx is a transaction that speaks the store's dialect. Capability packages pass Tx.Tx to the
// job client so work is enqueued in the same transaction as the rows that asked for it.
type Tx struct {
	*sql.Tx
	d           Dialect
	s           *Store
	afterCommit []func()
	reindex     []string // subscribers whose search terms are rewritten just before commit
}

// AfterCommit registers fn to run once tx has committed (never when it rolls back, nor for an
// attempt that is retried): in-process wake-ups of whoever waits for the rows it wrote, such
// as the job workers. fn must not block.
func (tx *Tx) AfterCommit(fn func()) { tx.afterCommit = append(tx.afterCommit, fn) }

// Exec runs a statement written with ? placeholders.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.Tx.ExecContext(ctx, tx.d.Rebind(query), args...)
}

// Query runs a query written with ? placeholders.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.Tx.QueryContext(ctx, tx.d.Rebind(query), args...)
}

// QueryRow runs a single-row query written with ? placeholders.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.Tx.QueryRowContext(ctx, tx.d.Rebind(query), args...)
}

// Dialect returns the engine's dialect.
func (tx *Tx) Dialect() Dialect { return tx.d }

// InTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise, so no
// rule ever leaves half its writes behind. A PostgreSQL serialization failure or deadlock is
// retried a few times because the whole fn is safe to run again.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = s.inTxOnce(ctx, fn)
		if err == nil || !s.Dialect.Retryable(err) {
			return err
		}
	}
	return err
}

func (s *Store) inTxOnce(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{Tx: sqlTx, d: s.Dialect, s: s}
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := tx.beforeCommit(ctx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	err = sqlTx.Commit()
	s.changes.committed() // also after a failed commit: its outcome is unknown, assume it landed
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	for _, f := range tx.afterCommit {
		f()
	}
	return nil
}

// Querier is what read helpers need: a transaction or a read pool.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// reader adapts the read pool to querier with the dialect's placeholders.
type reader struct {
	db    *sql.DB
	d     Dialect
	stmts *stmtCache
}

func (r reader) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := r.stmts.get(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.db.QueryContext(ctx, r.d.Rebind(q), args...)
}

func (r reader) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if st := r.stmts.get(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.db.QueryRowContext(ctx, r.d.Rebind(q), args...)
}

// R returns a querier on the read pool, for reads outside a transaction.
func (s *Store) R() Querier { return reader{s.RDB, s.Dialect, s.stmts} }

// stmtCache keeps one prepared statement per query text on SQLite's read pool. The pure-Go
// driver otherwise parses and plans every query again on every call, which was most of the
// CPU of a simple read (pprof of GET /partner/subscriber/me: 60% in sqlite3RunParser). A
// database/sql Stmt prepares itself lazily on each pooled connection it runs on. The cache
// holds at most maxCachedStmts queries (the store's queries are constants, but a few are
// built with a variable number of placeholders); past that, queries are prepared per call.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
}

const maxCachedStmts = 1024

// get returns the cached statement for q, preparing it on first use; nil when the cache is
// off (PostgreSQL) or full, or q does not prepare (the caller's query then reports why).
func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	st, full := c.m[q], len(c.m) >= maxCachedStmts
	c.mu.RUnlock()
	if st != nil || full {
		return st
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[q]; old != nil {
		st.Close()
		return old
	}
	if len(c.m) >= maxCachedStmts || c.m == nil {
		st.Close()
		return nil
	}
	c.m[q] = st
	return st
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
