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
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store/internal/engine"
	"github.com/subprov/subprov/tracing"
)

// Store is the database handle. Writes go through db; on SQLite, db has a single connection
// (one writer, no SQLITE_BUSY storms). Reads that need no transaction go through rdb, a pool of
// read connections (on PostgreSQL, PostgresReadConns sessions unless read_pool_max_conns says
// otherwise). Neither is exported: a statement run on them directly would bypass the group
// committer and the error translation (the job queue's driver, the bulk generator and tests get
// them through internal/rawdb).
type Store struct {
	db      *sql.DB
	rdb     *sql.DB
	Dialect Dialect
	URL     string // DATABASE_URL as opened (PostgreSQL: without the pools' sizes, pool_max_conns and read_pool_max_conns)

	// counters hands out per-provider counter values from blocks reserved in their own
	// transactions (PostgreSQL; see NextCustomerNumber). Its one-connection pool never waits
	// on DB, whose connections may all be held by transactions waiting for a block.
	counters *counterBlocks

	// Reads on every request of their kind, remembered until the database's change log says
	// what they show changed (engine.ChangeFeed, cache_invalidations.go):
	// GET /partner/subscriber/me's account views and API keys.
	changes *engine.ChangeFeed
	views   engine.Memo[*subprov.AccountView]
	keys    engine.Memo[apiKeyHit]

	// searchDB is PostgreSQL's pool for agent search (SearchR); nil on SQLite.
	searchDB *sql.DB

	writer      *engine.Committer[*Tx] // SQLite: runs InTx's transactions, in groups
	checkpoints *engine.Checkpointer   // SQLite: copies the write-ahead log into the file, off the writer
}

// Open connects to the database named by a DATABASE_URL: sqlite://PATH or postgres://…
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	switch {
	case isSQLite(databaseURL):
		return openSQLite(ctx, sqlitePath(databaseURL), databaseURL)
	case isPostgres(databaseURL):
		return openPostgres(ctx, databaseURL)
	default:
		return nil, fmt.Errorf("DATABASE_URL %q: want sqlite://PATH or postgres://…", redactURL(databaseURL))
	}
}

func isSQLite(databaseURL string) bool { return strings.HasPrefix(databaseURL, "sqlite:") }

func sqlitePath(databaseURL string) string {
	return strings.TrimPrefix(strings.TrimPrefix(databaseURL, "sqlite:"), "//")
}

func isPostgres(databaseURL string) bool {
	return strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://")
}

// Describe names the database a DATABASE_URL points to, for a person: its engine and its file,
// or its database and host. It never shows the user, the password or the query (where a
// password may be too): "SQLite file ./data/demo.db", "PostgreSQL database subprov on db:5432".
func Describe(databaseURL string) string {
	switch {
	case isSQLite(databaseURL):
		return "SQLite file " + sqlitePath(databaseURL)
	case isPostgres(databaseURL):
		u, err := url.Parse(databaseURL)
		if err != nil {
			return "PostgreSQL"
		}
		out := "PostgreSQL"
		if db := strings.TrimPrefix(u.Path, "/"); db != "" {
			out += " database " + db
		}
		if u.Host != "" {
			out += " on " + u.Host
		}
		return out
	default:
		return "an unknown database"
	}
}

// SQLiteWriterCacheKiB is the page cache of the SQLite writer connection.
const SQLiteWriterCacheKiB = 32 << 10

// SQLiteWriterTempStore is the writer connection's PRAGMA temp_store: 2, memory. Statement journals
// then stay in memory; by default SQLite spills each one past 64 KB to a temporary file, and an
// order's search-term inserts did, page by page (docs/performance.md). The writer's sorts and
// temporary tables stay in memory too; its queries' are small, and migrations, which may build an
// index over a big table, run with temporary files (Migrate). The readers keep the default.
const SQLiteWriterTempStore = 2

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
	// The writer's page cache holds the upper levels of the big indexes (an order inserts
	// ~19 search terms at random places in one of them); the default 2 MB made it read them
	// back from the file on every order. Its checkpoints are the checkpointer's (engine.Checkpointer).
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(FULL)&_time_format=sqlite&_txlock=immediate" +
		fmt.Sprintf("&_pragma=cache_size(-%d)&_pragma=temp_store(%d)&_pragma=wal_autocheckpoint(%d)",
			SQLiteWriterCacheKiB, SQLiteWriterTempStore, engine.WALFallbackPages)
	w, err := engine.OpenSQLiteConn(path, pragmas)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	r, err := sql.Open(engine.SQLiteDriver, "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_time_format=sqlite&mode=ro")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite reader: %w", err)
	}
	// Idle readers are kept (not closed and reopened under load): a new connection reads the
	// schema again and loses its prepared statements.
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	logConn, err := engine.OpenSQLiteConn(path, "_pragma=busy_timeout(1000)&mode=ro")
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open sqlite change log reader: %w", err)
	}
	ckpt, err := engine.StartCheckpointer(path)
	if err != nil {
		w.Close()
		r.Close()
		logConn.Close()
		return nil, fmt.Errorf("open sqlite checkpointer: %w", err)
	}
	s := &Store{db: w, rdb: r, Dialect: SQLite, URL: raw, checkpoints: ckpt}
	s.changes = engine.NewChangeFeed(sqliteChangeLog(s, logConn))
	s.writer = engine.NewCommitter(engine.Transactions[*Tx]{
		Commit: func(body func(tx *Tx) error) error {
			_, err := s.commitTx(context.Background(), body)
			return err
		},
		Member: func(group *Tx) *Tx { return &Tx{Tx: group.Tx, d: group.d, s: group.s} },
		Exec: func(tx *Tx, stmt string) error {
			_, err := tx.Tx.ExecContext(context.Background(), stmt)
			return err
		},
	})
	if err := w.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

// PostgresConns is the size of PostgreSQL's main pool unless DATABASE_URL sets
// pool_max_conns (pgxpool's name for it). Sessions beyond what the server's cores run at once
// only queue inside the server, where they contend for its locks and its log's flushes, and
// cost more of its CPU an order (docs/performance.md).
const PostgresConns = 8

// PostgresReadConns is the size of PostgreSQL's pool of reads that need no transaction (the
// store's R), as SQLite's four read-only connections, unless DATABASE_URL sets
// read_pool_max_conns. A read waits on the server's CPU, not on its log: beyond the cores,
// more sessions only share them, each statement time-sliced with the others', and the slowest
// requests slower (docs/performance.md).
const PostgresReadConns = 4

// DriverURL is a PostgreSQL DATABASE_URL as the driver takes it: without pool_max_conns and
// read_pool_max_conns, which only size the pools and which the server would refuse as unknown
// parameters.
func DriverURL(databaseURL string) (string, error) {
	u, _, err := poolSizes(databaseURL)
	return u, err
}

// pools are the sizes of a process's PostgreSQL pools that DATABASE_URL may set.
type pools struct{ main, reads int }

// poolSizes takes pool_max_conns and read_pool_max_conns out of a PostgreSQL URL and returns
// the URL without them and the pools' sizes. A URL without either is returned as it is.
func poolSizes(databaseURL string) (string, pools, error) {
	sizes := pools{main: PostgresConns, reads: PostgresReadConns}
	u, err := url.Parse(databaseURL)
	if err != nil {
		// url.Parse's error quotes the whole URL, password included.
		return "", pools{}, errors.New("DATABASE_URL: not a valid URL (percent-encode any special character in the password)")
	}
	q := u.Query()
	if !q.Has("pool_max_conns") && !q.Has("read_pool_max_conns") {
		return databaseURL, sizes, nil
	}
	for _, p := range []struct {
		name string
		size *int
	}{{"pool_max_conns", &sizes.main}, {"read_pool_max_conns", &sizes.reads}} {
		if !q.Has(p.name) {
			continue
		}
		raw := q.Get(p.name)
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return "", pools{}, fmt.Errorf("DATABASE_URL: %s %q: want a whole number of sessions, at least 1", p.name, raw)
		}
		*p.size = n
		q.Del(p.name)
	}
	u.RawQuery = q.Encode()
	return u.String(), sizes, nil
}

func openPostgres(ctx context.Context, databaseURL string) (*Store, error) {
	pgURL, sizes, err := poolSizes(databaseURL)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(pgURL)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := postgresPool(cfg, sizes.main)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres %s: %w", redactURL(databaseURL), err)
	}
	// The counters' connection waits at most 100 ms for the provider row: longer means this
	// very transaction (or a long one like a bill run batch) holds it, and the caller then
	// takes the number inside its own transaction instead.
	aux := sessionPool(cfg, 1, map[string]string{"lock_timeout": "100ms"})
	// Agent search's sessions always run a prepared statement's generic plan. The search
	// index's range (term >= $2 AND term < $3) has no selectivity the planner can know without
	// the values, so its generic plan looks costlier than any custom one and the default
	// plan_cache_mode planned every search anew, though both plans are the same primary-key
	// range scan (docs/performance.md).
	// They never scan a table either (enable_seqscan off): every search statement has an index
	// to read (the terms' GIN index, the primary keys), and the planner cannot tell what a
	// scan costs, as it takes the terms' index expression (the provider's mark put before each
	// term) for a few cheap operators where it is tens of microseconds a row. A custom plan of
	// a match over every provider, whose hundred prefixes it takes for tens of thousands of
	// rows, scanned the table under the LIMIT: 45 s at a million subscribers, for 2 ms through
	// the index (docs/performance.md). The generic plans keep to the index too; this holds
	// whatever the plan.
	// Only search reads go there: other queries keep the planner's per-value choice.
	search := sessionPool(cfg, searchConns, map[string]string{"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off"})
	// The change log is read on a session of its own, as on SQLite: a read waiting for one of
	// db's sessions, all held by writes under load, would stop remembered reads being served.
	changes := engine.NewChangeFeed(postgresChangeLog(postgresPool(cfg, 1), db))
	return &Store{db: db, rdb: postgresPool(cfg, sizes.reads), Dialect: Postgres, URL: pgURL, counters: newCounterBlocks(aux), changes: changes,
		searchDB: search}, nil
}

// postgresPool opens a pool of at most conns PostgreSQL sessions of cfg, kept open while in use
// and each encoding River's arrays from their slices (pgarrays.go).
func postgresPool(cfg *pgx.ConnConfig, conns int) *sql.DB {
	pool := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(encodePQArrays))
	pool.SetMaxOpenConns(conns)
	pool.SetMaxIdleConns(conns)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	return pool
}

// sessionPool is postgresPool with runtime parameters set at connect.
func sessionPool(cfg *pgx.ConnConfig, conns int, params map[string]string) *sql.DB {
	c := cfg.Copy()
	for k, v := range params {
		c.RuntimeParams[k] = v
	}
	return postgresPool(c, conns)
}

// searchConns is the size of PostgreSQL's search pool: a search is two short reads, so ten
// sessions serve many more concurrent agents than that.
const searchConns = 10

// Close releases the pools.
func (s *Store) Close() error {
	if s.writer != nil {
		s.writer.Close()
	}
	err := errors.Join(s.changes.Close(), s.checkpoints.Close())
	err = errors.Join(err, s.db.Close())
	if s.rdb != s.db {
		err = errors.Join(err, s.rdb.Close())
	}
	if s.counters != nil {
		err = errors.Join(err, s.counters.db.Close())
	}
	if s.searchDB != nil {
		err = errors.Join(err, s.searchDB.Close())
	}
	return err
}

// PauseCheckpoints stops the checkpointer and closes its connection until resume, for a caller
// that takes the database for itself: subprov gen's bulk load leaves WAL mode, which SQLite
// allows only while no other connection has the file open. A no-op on PostgreSQL.
func (s *Store) PauseCheckpoints() (resume func() error, err error) {
	if s.checkpoints == nil {
		return func() error { return nil }, nil
	}
	path := s.checkpoints.Path()
	if err := s.checkpoints.Close(); err != nil {
		return nil, fmt.Errorf("pause checkpoints: %w", err)
	}
	s.checkpoints = nil
	return func() error { // once: a second call finds the checkpointer running
		if s.checkpoints != nil {
			return nil
		}
		c, err := engine.StartCheckpointer(path)
		if err != nil {
			return fmt.Errorf("resume checkpoints: %w", err)
		}
		s.checkpoints = c
		return nil
	}, nil
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.PingContext(ctx) }

// Tx is a transaction that speaks the store's dialect. Capability packages pass Tx.Tx to the
// job client so work is enqueued in the same transaction as the rows that asked for it.
type Tx struct {
	*sql.Tx
	d           Dialect
	s           *Store
	afterCommit []func()
	reindex     []string // subscribers whose search terms are rewritten just before commit
	remembered  bool     // a statement may have changed a remembered read's rows (mayChangeRemembered)
}

// AfterCommit registers fn to run once tx has committed (never when it rolls back, nor for an
// attempt that is retried): in-process wake-ups of whoever waits for the rows it wrote, such
// as the job workers. fn must not block.
func (tx *Tx) AfterCommit(fn func()) { tx.afterCommit = append(tx.afterCommit, fn) }

// StatementContext is the context to run a statement of tx with: on SQLite the caller's
// context without its cancellation, because an interrupted write rolls back the whole SQLite
// transaction, which other callers' transactions share (group commit); a transaction that has
// begun runs to its end.
func (tx *Tx) StatementContext(ctx context.Context) context.Context {
	if tx.d == SQLite {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// Exec runs a statement written with ? placeholders.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx.remembered = tx.remembered || mayChangeRemembered(query)
	res, err := tx.Tx.ExecContext(tx.StatementContext(ctx), tx.d.Rebind(query), args...)
	return res, translate(err)
}

// Query runs a query written with ? placeholders.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	tx.remembered = tx.remembered || mayChangeRemembered(query)
	rows, err := tx.Tx.QueryContext(tx.StatementContext(ctx), tx.d.Rebind(query), args...)
	return rows, translate(err)
}

// QueryRow runs a single-row query written with ? placeholders.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) Row {
	tx.remembered = tx.remembered || mayChangeRemembered(query)
	return Row{tx.Tx.QueryRowContext(tx.StatementContext(ctx), tx.d.Rebind(query), args...)}
}

// Dialect returns the engine's dialect.
func (tx *Tx) Dialect() Dialect { return tx.d }

// InTx runs fn in one transaction: committed when fn returns nil, rolled back otherwise, so no
// rule ever leaves half its writes behind. A PostgreSQL serialization failure or deadlock (or
// SQLite busy with another process's write) is retried a few times because the whole fn is
// safe to run again. On SQLite, transactions that queue for the one writer are committed in
// groups (engine.Committer). fn reads through tx, never through the read pool (R): the pool sees
// neither fn's own writes nor, on SQLite, those of the transactions before it in its group.
//
// With tracing on, the transaction is one span, "sql.tx", covering its retries.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if tracing.Enabled() {
		var span trace.Span
		ctx, span = tracing.Start(ctx, "sql.tx", trace.SpanKindClient, attribute.String("db.system.name", s.Dialect.system()))
		defer func() { tracing.End(span, err) }()
	}
	for attempt := 0; attempt < 3; attempt++ {
		err = s.inTxOnce(ctx, fn)
		if err == nil || !s.Dialect.Retryable(err) {
			return err
		}
	}
	return err
}

// inTxOnce runs fn in one transaction: on SQLite as a member of a group commit, on
// PostgreSQL on its own.
func (s *Store) inTxOnce(ctx context.Context, fn func(tx *Tx) error) error {
	body := func(tx *Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return tx.beforeCommit(ctx)
	}
	var tx *Tx
	var err error
	if s.writer != nil {
		tx, err = s.writer.Run(ctx, body)
	} else {
		tx, err = s.commitTx(ctx, body)
	}
	if tx != nil && tx.remembered {
		// Also after a commit that failed on PostgreSQL, whose outcome may be unknown (SQLite's
		// committer returns no transaction for a failed one: its writes were rolled back).
		s.changes.Committed(ctx)
	}
	if err != nil {
		return err
	}
	for _, f := range tx.afterCommit {
		f()
	}
	return nil
}

// commitTx begins a transaction (beginCtx ending rolls it back), runs body in it and commits;
// it rolls back when body fails, panics or ends its goroutine. It returns the Tx body ran in.
func (s *Store) commitTx(beginCtx context.Context, body func(tx *Tx) error) (*Tx, error) {
	sqlTx, err := s.db.BeginTx(beginCtx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	finished := false
	defer func() {
		if !finished {
			_ = sqlTx.Rollback()
		}
	}()
	tx := &Tx{Tx: sqlTx, d: s.Dialect, s: s}
	if err := body(tx); err != nil {
		return tx, err
	}
	finished = true
	err = sqlTx.Commit()
	if err != nil {
		return tx, fmt.Errorf("commit: %w", err)
	}
	return tx, nil
}

// Execer runs a write: a transaction, or the write pool in autocommit (WriteOne). QueryRow
// runs a write that returns its row (RETURNING).
type Execer interface {
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// autocommit adapts the write pool to Execer with the dialect's placeholders.
type autocommit struct {
	db         *sql.DB
	d          Dialect
	remembered bool // a statement may have changed a remembered read's rows (mayChangeRemembered)
}

func (a *autocommit) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	a.remembered = a.remembered || mayChangeRemembered(q)
	res, err := a.db.ExecContext(ctx, a.d.Rebind(q), args...)
	return res, translate(err)
}

func (a *autocommit) QueryRow(ctx context.Context, q string, args ...any) Row {
	a.remembered = a.remembered || mayChangeRemembered(q)
	return Row{a.db.QueryRowContext(ctx, a.d.Rebind(q), args...)}
}

// WriteOne runs a write that is a single statement. PostgreSQL runs it in autocommit, one
// round trip instead of three (begin, the statement, commit); SQLite runs it as a transaction
// of InTx, so it takes its turn with the other writes of the one writer (group commit). The write
// must need nothing of a Tx's own: on PostgreSQL no search terms are re-indexed at commit
// and no AfterCommit hook runs.
func (s *Store) WriteOne(ctx context.Context, write func(q Execer) error) error {
	if s.Dialect == SQLite {
		return s.InTx(ctx, func(tx *Tx) error { return write(tx) })
	}
	q := &autocommit{db: s.db, d: s.Dialect}
	err := write(q)
	if q.remembered {
		s.changes.Committed(ctx)
	}
	return err
}

// Querier is what read helpers need: a transaction or a read pool.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// reader adapts the read pool to querier with the dialect's placeholders.
type reader struct {
	db *sql.DB
	d  Dialect
}

func (r reader) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	rows, err := r.db.QueryContext(ctx, r.d.Rebind(q), args...)
	return rows, translate(err)
}

func (r reader) QueryRow(ctx context.Context, q string, args ...any) Row {
	return Row{r.db.QueryRowContext(ctx, r.d.Rebind(q), args...)}
}

// R returns a querier on the read pool, for reads outside a transaction.
func (s *Store) R() Querier { return reader{s.rdb, s.Dialect} }

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
