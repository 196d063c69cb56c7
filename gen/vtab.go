package gen

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite/vtab"
)

// On SQLite every bulk table is written with INSERT … SELECT from a virtual table that reads
// the rows straight from gen's memory: no bind parameters, so none of database/sql's
// per-argument conversion and none of the driver's binding and unbinding of every value of a
// 1000-row VALUES list, which were most of the writer's CPU in the rows phase
// (docs/performance.md). One module serves
// every table's batches (the buffered rows, one statement per batch). A module reaches only connections
// opened after it is registered, so it is registered when the package loads; it does nothing
// until gen creates a table with it.
const rowsModule = "subprov_gen_rows"

func init() {
	if err := vtab.RegisterModule(nil, rowsModule, rowSources{}); err != nil {
		panic(fmt.Sprintf("gen: register %s: %v", rowsModule, err))
	}
}

// source is rows a virtual table of the module reads, in order. Its values must already be
// what the bind path would have stored: the driver's result path stores a time.Time as Unix
// seconds and rejects an int (see sqliteValues).
type source interface {
	columns() []string
	len() int
	value(row, col int) any
}

// batchSource is a batch's rows, flat (len(cols) values a row): the writer swaps in each
// batch's rows just before the INSERT that reads them, so one virtual table serves every
// batch of a transaction.
type batchSource struct {
	cols []string
	vals []any
}

func (s *batchSource) columns() []string      { return s.cols }
func (s *batchSource) len() int               { return len(s.vals) / len(s.cols) }
func (s *batchSource) value(row, col int) any { return s.vals[row*len(s.cols)+col] }

// sqliteTimeLayout is how the driver binds a time.Time on the store's connections
// (_time_format=sqlite and no _loc: the instant in its own zone, see store.openSQLite); the
// service reads these columns back in it. TestVtabWritesWhatBindWrote fails if the two ever
// differ.
const sqliteTimeLayout = "2006-01-02 15:04:05.999999999-07:00"

// sqliteValues converts values for a virtual table into what the bind path stores: the
// driver's result path would store a time.Time as Unix seconds and refuses an int. It keeps
// the last instant it formatted: a batch's rows mostly carry the same few (gen's date, a
// subscriber's creation time twice a row).
type sqliteValues struct {
	last time.Time
	text any
}

// value returns v as database/sql and the driver's bind would store it.
func (c *sqliteValues) value(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, int64, float64:
		return v, nil
	case int:
		return int64(x), nil
	case bool: // bound as an integer
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case time.Time:
		// != rather than Equal: the same instant in another zone is other text.
		if c.text == nil || x != c.last {
			c.last, c.text = x, x.Format(sqliteTimeLayout)
		}
		return c.text, nil
	case []byte: // bound as NULL when nil; the result path would make it an empty blob
		if x == nil {
			return nil, nil
		}
		return x, nil
	}
	// Anything else as database/sql converts it for a driver without its own converter (a
	// driver.Valuer, a named string or integer type), then once more: to one of the above.
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return nil, err
	}
	return c.value(dv)
}

var (
	sourceSeq atomic.Int64
	sources   sync.Map // token (string) → source
)

// execer is where a virtual table is created and dropped: the writer connection's pool (the
// search index, written outside transactions) or a transaction (the batches).
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// vtable is a temporary virtual table of the module over one published source.
type vtable struct {
	name     string // in the temp schema
	withdraw func()
}

// createVtable publishes src and creates temp.name reading it, on exec's connection (temp
// tables are the connection's own).
func createVtable(ctx context.Context, exec execer, name string, src source) (*vtable, error) {
	token := "t" + strconv.FormatInt(sourceSeq.Add(1), 10)
	sources.Store(token, src)
	if _, err := exec.ExecContext(ctx, "CREATE VIRTUAL TABLE temp."+name+" USING "+rowsModule+"("+token+")"); err != nil {
		sources.Delete(token)
		return nil, fmt.Errorf("create %s source: %w", name, err)
	}
	return &vtable{name: name, withdraw: func() { sources.Delete(token) }}, nil
}

// drop drops the table, then withdraws its source: SQLite may connect to the table again
// to drop it (after a schema reload), which needs the source. IF EXISTS: on an error path the
// rollback may already have taken it.
func (v *vtable) drop(ctx context.Context, exec execer) error {
	defer v.withdraw()
	if _, err := exec.ExecContext(ctx, "DROP TABLE IF EXISTS temp."+v.name); err != nil {
		return fmt.Errorf("drop %s source: %w", v.name, err)
	}
	return nil
}

// rowSources is the module: a table is one published source, scanned in order.
type rowSources struct{}

func (rowSources) Create(ctx vtab.Context, args []string) (vtab.Table, error) {
	return rowSources{}.Connect(ctx, args)
}

func (rowSources) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	// args: module name, database name, table name, then the token.
	if len(args) != 4 {
		return nil, fmt.Errorf("%s: want one argument (the source token), got %d", rowsModule, len(args)-3)
	}
	src, ok := sources.Load(args[3])
	if !ok {
		return nil, fmt.Errorf("%s: no source %q", rowsModule, args[3])
	}
	s, ok := src.(source)
	if !ok {
		return nil, fmt.Errorf("%s: %q is a %T, not a source", rowsModule, args[3], src)
	}
	// No declared types: the values keep the type they are given, and the target table's
	// column affinity applies on insert, as it does to bound parameters.
	if err := ctx.Declare("CREATE TABLE x (" + strings.Join(s.columns(), ", ") + ")"); err != nil {
		return nil, fmt.Errorf("%s: declare: %w", rowsModule, err)
	}
	return &rowTable{src: s}, nil
}

type rowTable struct{ src source }

// BestIndex: the one plan is a scan in order. The estimate is the rows at planning time,
// none for a batch source (its rows arrive before each run of the prepared INSERT).
func (t *rowTable) BestIndex(info *vtab.IndexInfo) error {
	info.EstimatedRows = int64(t.src.len())
	info.EstimatedCost = float64(t.src.len())
	return nil
}

func (t *rowTable) Open() (vtab.Cursor, error) { return &rowCursor{src: t.src}, nil }
func (t *rowTable) Disconnect() error          { return nil }
func (t *rowTable) Destroy() error             { return nil }

// rowCursor walks its source; the row count is read at Filter, when the statement starts
// (a batch source's rows are swapped between statements, never during one).
type rowCursor struct {
	src  source
	i, n int
}

func (c *rowCursor) Filter(int, string, []vtab.Value) error {
	c.i, c.n = 0, c.src.len()
	return nil
}
func (c *rowCursor) Next() error                        { c.i++; return nil }
func (c *rowCursor) Eof() bool                          { return c.i >= c.n }
func (c *rowCursor) Rowid() (int64, error)              { return int64(c.i), nil }
func (c *rowCursor) Close() error                       { return nil }
func (c *rowCursor) Column(col int) (vtab.Value, error) { return c.src.value(c.i, col), nil }
