package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"
)

// The pure-Go SQLite driver parses and plans a statement again on every call unless it was
// prepared, and much of the CPU of a simple read or of an order's transaction was the parser
// (docs/performance.md). Every SQLite
// connection the store opens therefore goes through SQLiteDriver, modernc's driver with a
// statement cache on each connection: a query text is prepared on first use and its statement
// reset and reused after. That covers the writer's transactions, the read pool and the job
// queue's own queries alike, with no caller asking for it.
//
// A cached statement is used by one call at a time: while its rows are open (or during a
// nested call of the same text on the same connection), the query is run uncached instead.
// database/sql serialises everything done on one connection, rows' Close included, so the
// cache needs no lock of its own.
const SQLiteDriver = "sqlite-stmtcache"

// maxStmtsPerConn bounds a connection's cache. The store's queries are constants, but a few
// are built with a variable number of placeholders; once full, a new text takes the place of
// one not in use. Schema statements (migrations) are never cached.
const maxStmtsPerConn = 512

// sqliteDriver is the driver SQLiteDriver wraps, the one SQL functions are registered with.
var sqliteDriver = &sqlite.Driver{}

func init() { sql.Register(SQLiteDriver, cachingDriver{sqliteDriver}) }

// RegisterSQLiteFunction makes a deterministic SQL function of n arguments available on every
// SQLite connection opened after it: the store's own functions, registered from its init.
func RegisterSQLiteFunction(name string, n int32, fn func(args []driver.Value) (driver.Value, error)) {
	sqliteDriver.MustRegisterDeterministicScalarFunction(name, n, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return fn(args)
	})
}

type cachingDriver struct{ base driver.Driver }

func (d cachingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.base.Open(name)
	if err != nil {
		return nil, err
	}
	bc, ok := c.(sqliteConn)
	if !ok { // a driver version without these methods: run it as it is
		return c, nil
	}
	return &cachingConn{sqliteConn: bc, stmts: map[string]*cachedStmt{}}, nil
}

// sqliteConn is what modernc's connection implements and database/sql uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

type preparedStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type cachedStmt struct {
	stmt preparedStmt
	busy bool // a call, or open rows, use it
}

type cachingConn struct {
	sqliteConn
	stmts map[string]*cachedStmt
}

// take returns query's statement, marked busy, preparing and caching it on first use; nil when
// the query is run uncached (a script of several statements, a schema change, in use, or it
// does not prepare, in which case the uncached call reports why).
func (c *cachingConn) take(ctx context.Context, query string) *cachedStmt {
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil
		}
		cs.busy = true
		return cs
	}
	if strings.Contains(query, ";") || schemaChange(query) {
		return nil
	}
	if len(c.stmts) >= maxStmtsPerConn {
		for q, cs := range c.stmts { // any one not in use: map order is random
			if !cs.busy {
				cs.stmt.Close()
				delete(c.stmts, q)
				break
			}
		}
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	ps, ok := st.(preparedStmt)
	if !ok {
		st.Close()
		return nil
	}
	cs := &cachedStmt{stmt: ps, busy: true}
	c.stmts[query] = cs
	return cs
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs := c.take(ctx, query)
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	defer func() { cs.busy = false }()
	return cs.stmt.ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs := c.take(ctx, query)
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		cs.busy = false
		return nil, err
	}
	return &cachedRows{Rows: rows, cs: cs}, nil
}

// Close finalises the cached statements, then the connection.
func (c *cachingConn) Close() error {
	for q, cs := range c.stmts {
		cs.stmt.Close()
		delete(c.stmts, q)
	}
	return c.sqliteConn.Close()
}

// cachedRows frees its statement for the next call when closed (the driver resets it).
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	if r.cs != nil {
		r.cs.busy = false
		r.cs = nil
	}
	return err
}

// schemaChange reports whether query's first keyword, after blank lines and "--" comments,
// is CREATE, DROP or ALTER.
func schemaChange(query string) bool {
	q := strings.TrimSpace(query)
	for strings.HasPrefix(q, "--") {
		_, rest, _ := strings.Cut(q, "\n")
		q = strings.TrimSpace(rest)
	}
	word, _, _ := strings.Cut(q, " ")
	switch strings.ToUpper(word) {
	case "CREATE", "DROP", "ALTER":
		return true
	}
	return false
}
