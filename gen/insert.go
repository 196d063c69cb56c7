package gen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// writer runs the database side of the load on its own goroutine, in order, so generating
// rows (one core) and SQLite executing them (the other) overlap.
type writer struct {
	jobs   chan func() error
	done   chan error
	broken atomic.Bool
}

// failed reports whether a job failed: the generator stops early.
func (w *writer) failed() bool { return w.broken.Load() }

func newWriter() *writer {
	w := &writer{jobs: make(chan func() error, 64), done: make(chan error, 1)}
	go func() {
		var first error
		for job := range w.jobs {
			if first == nil {
				if first = job(); first != nil {
					w.broken.Store(true)
				}
			}
		}
		w.done <- first
	}()
	return w
}

func (w *writer) do(job func() error) { w.jobs <- job }

// wait ends the writer and returns the first error of its jobs.
func (w *writer) wait() error {
	close(w.jobs)
	return <-w.done
}

// batch writes rows into one table, a batch of rows per statement: on SQLite INSERT … SELECT
// from the batch's virtual table (vtab.go), on PostgreSQL COPY. Rows are buffered by the
// generator and executed by the writer; tx, copy, stmt and the table are only touched by the
// writer's jobs.
type batch struct {
	w       *writer
	tx      *sql.Tx
	copy    pgx.Tx // on PostgreSQL: rows go through COPY instead of INSERT
	table   string
	cols    []string
	perStmt int
	args    []any
	rows    int64    // rows written, for the summary
	parents []*batch // written first, so foreign keys checked per statement (PostgreSQL) hold

	// SQLite: the values are converted as the generator adds them (on its goroutine: the
	// writer's core is the one the load waits for); src is what the virtual table reads,
	// vtab the table, created on the transaction's first batch and dropped at its end, and
	// stmt the INSERT reading it.
	values sqliteValues
	src    *batchSource
	vtab   *vtable
	stmt   *sql.Stmt
}

func newBatch(w *writer, d store.Dialect, table string, cols ...string) *batch {
	// 1000 rows a statement on SQLite: more saves nothing now that a statement binds no
	// parameters, and keeps the equality test's bind path (at most 28 columns) under
	// SQLite's 32,766 parameters.
	b := &batch{w: w, table: table, cols: cols, perStmt: 1000}
	if d == store.Postgres {
		b.perStmt = 10_000 // one COPY per 10,000 rows
	} else {
		b.src = &batchSource{cols: cols}
	}
	return b
}

// copyRows writes rows (flat, len(cols) values each) with COPY; a writer job on PostgreSQL.
func (b *batch) copyRows(ctx context.Context, args []any) error {
	n := len(b.cols)
	rows := make([][]any, len(args)/n)
	for i := range rows {
		rows[i] = args[i*n : (i+1)*n : (i+1)*n]
	}
	if _, err := b.copy.CopyFrom(ctx, pgx.Identifier{b.table}, b.cols, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy into %s: %w", b.table, err)
	}
	return nil
}

// insertRows writes rows (flat, already converted) on SQLite: it hands them to the batch's
// virtual table and runs the INSERT that reads them; a writer job, so no other statement
// reads the table meanwhile. The first batch of a transaction creates the table.
func (b *batch) insertRows(ctx context.Context, args []any) error {
	if b.stmt == nil {
		if err := b.openSource(ctx); err != nil {
			return err
		}
	}
	b.src.vals = args
	_, err := b.stmt.ExecContext(ctx)
	b.src.vals = nil // the rows are written: let them go
	if err != nil {
		return fmt.Errorf("insert into %s: %w", b.table, err)
	}
	return nil
}

// openSource creates the batch's virtual table in the transaction and prepares the INSERT
// reading it: DDL once per table and transaction, not per batch. Not once per run: a
// temporary table lives on one connection (a transaction holds it), and the index builds
// change PRAGMA temp_store, which deletes every temporary table.
func (b *batch) openSource(ctx context.Context) error {
	v, err := createVtable(ctx, b.tx, "gen_"+b.table, b.src)
	if err != nil {
		return err
	}
	b.vtab = v
	cols := strings.Join(b.cols, ", ")
	st, err := b.tx.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM temp.%s", b.table, cols, cols, v.name))
	if err != nil {
		return fmt.Errorf("prepare insert into %s: %w", b.table, err)
	}
	b.stmt = st
	return nil
}

// closeSource closes the INSERT and drops the virtual table, through exec: the transaction
// at its end, the connection's pool after a failed load.
func (b *batch) closeSource(ctx context.Context, exec execer) error {
	var err error
	if b.stmt != nil {
		err = b.stmt.Close()
		b.stmt = nil
	}
	if b.vtab != nil {
		err = errors.Join(err, b.vtab.drop(ctx, exec))
		b.vtab = nil
	}
	return err
}

// begin attaches the batch to tx or, on PostgreSQL, to copy (statements are per
// transaction); a writer job.
func (b *batch) begin(tx *sql.Tx, copy pgx.Tx) { b.tx, b.copy = tx, copy }

// bindRows, when set, writes SQLite batches as gen did before the virtual tables: the values
// unconverted, as the bind parameters of a multi-row INSERT … VALUES. Only
// TestVtabWritesWhatBindWrote sets it (vtab_test.go holds that path): the rows it writes are
// the reference the virtual tables' rows must equal, byte for byte.
var bindRows func(ctx context.Context, b *batch, args []any) error

// add buffers one row (len(cols) values) and queues the buffer once it holds perStmt rows.
func (b *batch) add(ctx context.Context, vals ...any) {
	if b.src != nil && bindRows == nil {
		b.convert(vals)
	} else {
		b.args = append(b.args, vals...)
	}
	if len(b.args) < b.perStmt*len(b.cols) {
		return
	}
	for _, p := range b.parents {
		p.spill(ctx)
	}
	b.spill(ctx)
}

// convert buffers vals as the virtual table must hand them to SQLite (sqliteValues). A value
// it cannot convert fails the writer before it writes the batch, and so stops the generator.
func (b *batch) convert(vals []any) {
	for _, v := range vals {
		sv, err := b.values.value(v)
		if err != nil {
			b.w.do(func() error { return fmt.Errorf("%s: %w", b.table, err) })
		}
		b.args = append(b.args, sv)
	}
}

// spill queues the rows still buffered as one statement.
func (b *batch) spill(ctx context.Context) {
	n := len(b.args) / len(b.cols)
	if n == 0 {
		return
	}
	args := b.args
	b.args = make([]any, 0, cap(args))
	b.rows += int64(n)
	b.w.do(func() error {
		switch {
		case b.copy != nil:
			return b.copyRows(ctx, args)
		case bindRows != nil:
			return bindRows(ctx, b, args)
		}
		return b.insertRows(ctx, args)
	})
}

// flush queues the rows still buffered and, on SQLite, the dropping of the batch's virtual
// table, before the transaction commits.
func (b *batch) flush(ctx context.Context) {
	b.spill(ctx)
	if b.src != nil {
		b.w.do(func() error { return b.closeSource(ctx, b.tx) })
	}
}

// secondaryIndexes returns the CREATE statements of the indexes on tables that are not
// primary keys or constraints: gen drops them before the bulk load and builds them again
// after it, which is much faster than maintaining them row by row.
func secondaryIndexes(ctx context.Context, st *store.Store, tables []string) ([]index, error) {
	q := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (%s) ORDER BY name`
	if st.Dialect == store.Postgres {
		q = `SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = current_schema() AND i.tablename IN (%s)
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname) ORDER BY i.indexname`
	}
	return schemaOf(ctx, st, "indexes", q, tables)
}

// index is a secondary index (or, on SQLite, a trigger: loadTriggers) gen drops for the load
// and creates again after it.
type index struct{ name, create string }

// loadTriggers are SQLite's triggers on tables (line_counts', the change log's), which gen drops
// for the load and creates again after it, recounting what they keep (Store.RecountLines; the
// change log stays empty: no process reads the database during the load), as a trigger
// that runs for each row inserted costs the load more than the count at its end. On
// PostgreSQL the load's session skips them (bulkPostgres): none.
func loadTriggers(ctx context.Context, st *store.Store, tables []string) ([]index, error) {
	if st.Dialect != store.SQLite {
		return nil, nil
	}
	return schemaOf(ctx, st, "triggers", `SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (%s) ORDER BY name`, tables)
}

// schemaOf runs q, which lists what (name, statement) of the tables its %s names.
func schemaOf(ctx context.Context, st *store.Store, what, q string, tables []string) ([]index, error) {
	args := make([]any, len(tables))
	for i, t := range tables {
		args[i] = t
	}
	q = fmt.Sprintf(q, strings.TrimSuffix(strings.Repeat("?, ", len(tables)), ", "))
	rows, err := rawdb.Writer(st).QueryContext(ctx, st.Dialect.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	var out []index
	for rows.Next() {
		var ix index
		if err := rows.Scan(&ix.name, &ix.create); err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, ix)
	}
	return out, rows.Err()
}

// create creates each of objs, of kind ("INDEX", "TRIGGER"), in order, with exec.
func create(exec func(string) error, kind string, objs []index) error {
	for _, o := range objs {
		if err := exec(o.create); err != nil {
			return fmt.Errorf("create %s %s: %w", strings.ToLower(kind), o.name, err)
		}
	}
	return nil
}

// drop drops each of objs, of kind ("INDEX", "TRIGGER").
func drop(ctx context.Context, st *store.Store, kind string, objs []index) error {
	for _, o := range objs {
		if _, err := rawdb.Writer(st).ExecContext(ctx, "DROP "+kind+" "+o.name); err != nil {
			return fmt.Errorf("drop %s %s: %w", strings.ToLower(kind), o.name, err)
		}
	}
	return nil
}

// inThreads runs build (index builds) with SQLite sorting the keys on worker threads: with
// temporary storage in memory its sorter keeps one run and sorts it alone at the end; with
// temporary files and a sort memory smaller than the index (the page cache's size, loadCache),
// it sorts runs of 64 MB on the worker threads (PRAGMA threads) while it reads the table, and
// merges them. The load's temporary storage comes back after build.
func inThreads(ctx context.Context, st *store.Store, build func() error) error {
	if st.Dialect != store.SQLite {
		return build()
	}
	if err := pragmas(ctx, st, "temp_store=FILE"); err != nil {
		return err
	}
	err := build()
	return errors.Join(err, pragmas(ctx, st, loadTemp))
}

// pragmas sets SQLite PRAGMAs on the writer connection, in order.
func pragmas(ctx context.Context, st *store.Store, ps ...string) error {
	for _, p := range ps {
		if _, err := rawdb.Writer(st).ExecContext(ctx, "PRAGMA "+p); err != nil {
			return fmt.Errorf("PRAGMA %s: %w", p, err)
		}
	}
	return nil
}

// bulkPostgres opens gen's own PostgreSQL connection (nil on SQLite): rows go through COPY,
// which database/sql does not offer. Like the SQLite tuning it trades safety for speed while
// gen runs, for this session only: commits do not wait for the WAL flush, index builds get
// 1 GB of sort memory, and where the role may (superuser), foreign-key triggers are skipped
// (session_replication_role = replica) — gen writes parents before children, as SQLite's
// load with foreign_keys=OFF relies on too.
func bulkPostgres(ctx context.Context, st *store.Store) (*pgx.Conn, error) {
	if st.Dialect != store.Postgres {
		return nil, nil
	}
	pg, err := pgx.Connect(ctx, st.URL)
	if err != nil {
		return nil, fmt.Errorf("connect for COPY: %w", err)
	}
	for _, set := range []string{"SET synchronous_commit = off", "SET maintenance_work_mem = '1GB'"} {
		if _, err := pg.Exec(ctx, set); err != nil {
			pg.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the SET error is the one to report
			return nil, fmt.Errorf("%s: %w", set, err)
		}
	}
	_, _ = pg.Exec(ctx, "SET session_replication_role = replica") // refused unless superuser: checks stay on
	return pg, nil
}

// The load's memory settings on SQLite: temporary tables in memory, and a 64 MB page cache,
// which is also the index builds' sort memory (inThreads), so it never changes during the
// load. A larger cache is slower: the driver's allocator hands freed cache pages back to the
// kernel one region at a time (madvise, with a TLB shootdown on every core) and the next
// growth faults them in again; a cache that the index builds shrink and the search index
// grows back churns all through the load (docs/performance.md).
const (
	loadCache = "cache_size=-65536"
	loadTemp  = "temp_store=MEMORY"
)

// tuneSQLite trades durability for speed while gen runs (a crash means running gen again on a
// fresh file) and restore puts the store's own settings back.
func tuneSQLite(ctx context.Context, st *store.Store) (restore func() error, err error) {
	if st.Dialect != store.SQLite {
		return func() error { return nil }, nil
	}
	resume, err := st.PauseCheckpoints() // leaving WAL mode needs the file to itself
	if err != nil {
		return nil, err
	}
	err = pragmas(ctx, st, "journal_mode=OFF", "synchronous=OFF", "foreign_keys=OFF", loadCache, loadTemp, "locking_mode=EXCLUSIVE", "threads=2")
	return func() error {
		err := pragmas(ctx, st, "locking_mode=NORMAL", "journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON",
			fmt.Sprintf("cache_size=-%d", store.SQLiteWriterCacheKiB), fmt.Sprintf("temp_store=%d", store.SQLiteWriterTempStore), "threads=0")
		return errors.Join(err, resume())
	}, err
}
