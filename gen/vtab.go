package gen

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite/vtab"
)

// On SQLite the search index, by far the largest table (about 24 rows per subscriber), is
// written with one INSERT … SELECT from a virtual table that reads the sorted rows straight
// from gen's memory: no bind parameters, no per-row arguments through database/sql, one
// statement. A module reaches only connections opened after it is registered, so it is
// registered when the package loads; it does nothing until gen creates a table with it.
const termsModule = "subprov_gen_terms"

func init() {
	if err := vtab.RegisterModule(nil, termsModule, termSources{}); err != nil {
		panic(fmt.Sprintf("gen: register %s: %v", termsModule, err))
	}
}

// termSource is one provider's sorted search-index rows, published for the virtual table.
type termSource struct {
	rows  []uint64 // term rank << 32 | subscriber number
	terms []any    // term text by rank, boxed once
	subs  []any    // subscriber id by number, boxed once
}

var (
	sourceSeq atomic.Int64
	sources   sync.Map // token (string) → *termSource
)

// publish makes src readable as CREATE VIRTUAL TABLE … USING subprov_gen_terms(token); the
// returned func withdraws it.
func publish(src *termSource) (token string, withdraw func()) {
	token = "t" + strconv.FormatInt(sourceSeq.Add(1), 10)
	sources.Store(token, src)
	return token, func() { sources.Delete(token) }
}

// termSources is the module: a table is one published source, scanned in order.
type termSources struct{}

func (termSources) Create(ctx vtab.Context, args []string) (vtab.Table, error) {
	return termSources{}.Connect(ctx, args)
}

func (termSources) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	// args: module name, database name, table name, then the token.
	if len(args) != 4 {
		return nil, fmt.Errorf("%s: want one argument (the source token), got %d", termsModule, len(args)-3)
	}
	src, ok := sources.Load(args[3])
	if !ok {
		return nil, fmt.Errorf("%s: no source %q", termsModule, args[3])
	}
	if err := ctx.Declare("CREATE TABLE x (term TEXT, subscriber_id TEXT)"); err != nil {
		return nil, err
	}
	return &termTable{src: src.(*termSource)}, nil
}

type termTable struct{ src *termSource }

func (t *termTable) BestIndex(info *vtab.IndexInfo) error {
	info.EstimatedRows = int64(len(t.src.rows))
	info.EstimatedCost = float64(len(t.src.rows))
	return nil
}

func (t *termTable) Open() (vtab.Cursor, error) { return &termCursor{src: t.src}, nil }
func (t *termTable) Disconnect() error          { return nil }
func (t *termTable) Destroy() error             { return nil }

type termCursor struct {
	src *termSource
	i   int
}

func (c *termCursor) Filter(int, string, []vtab.Value) error { c.i = 0; return nil }
func (c *termCursor) Next() error                            { c.i++; return nil }
func (c *termCursor) Eof() bool                              { return c.i >= len(c.src.rows) }
func (c *termCursor) Rowid() (int64, error)                  { return int64(c.i), nil }
func (c *termCursor) Close() error                           { return nil }

func (c *termCursor) Column(col int) (vtab.Value, error) {
	r := c.src.rows[c.i]
	if col == 0 {
		return c.src.terms[r>>32], nil
	}
	return c.src.subs[r&0xffffffff], nil
}
