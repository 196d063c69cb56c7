package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// cachedTexts returns the query texts cached on db's connection (the writer has one).
func cachedTexts(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out := map[string]bool{}
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*cachingConn)
		if !ok {
			return fmt.Errorf("connection is %T, not the caching connection", dc)
		}
		for q := range c.stmts {
			out[q] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// openWriterAndReaders opens a new SQLite file's writer (one connection) and a read pool.
func openWriterAndReaders(t *testing.T) (w, r *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "engine.db")
	w, err := OpenSQLiteConn(path, "_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r, err = sql.Open(SQLiteDriver, "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return w, r
}

func TestSQLiteStatementCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, r := openWriterAndReaders(t)
	if _, err := w.ExecContext(ctx, `CREATE TABLE t (v INTEGER PRIMARY KEY); CREATE TABLE u (w TEXT)`); err != nil {
		t.Fatal(err)
	}
	const insert, ge = `INSERT INTO t (v) VALUES (?)`, `SELECT v FROM t WHERE v >= ? ORDER BY v`
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = func() error {
		for v := 1; v <= 5; v++ {
			if _, err := tx.ExecContext(ctx, insert, v); err != nil {
				return err
			}
		}
		// The same text again while its rows are open: run uncached, both see their own rows.
		rows, err := tx.QueryContext(ctx, ge, 2)
		if err != nil {
			return err
		}
		defer rows.Close()
		var outer, inner []int
		for rows.Next() {
			var v, w int
			if err := rows.Scan(&v); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, ge, v+1).Scan(&w); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			outer, inner = append(outer, v), append(inner, w)
		}
		if fmt.Sprint(outer) != "[2 3 4 5]" || fmt.Sprint(inner) != "[3 4 5 0]" {
			t.Errorf("nested use of one statement: outer %v inner %v, want [2 3 4 5] and [3 4 5 0]", outer, inner)
		}
		return rows.Err()
	}()
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		t.Fatal(err)
	}
	// A failed statement leaves its cached statement usable.
	if _, err := w.ExecContext(ctx, insert, 1); err == nil {
		t.Fatal("duplicate key inserted")
	}
	if _, err := w.ExecContext(ctx, insert, 6); err != nil {
		t.Fatalf("insert after a failed one: %v", err)
	}
	var n int
	if err := w.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("count: %d, %v; want 6", n, err)
	}
	cached := cachedTexts(t, w)
	for _, q := range []string{insert, ge, `SELECT COUNT(*) FROM t`} {
		if !cached[q] {
			t.Errorf("%q not cached", q)
		}
	}
	for q := range cached {
		if q == `CREATE TABLE t (v INTEGER PRIMARY KEY); CREATE TABLE u (w TEXT)` {
			t.Errorf("a script of several statements was cached")
		}
	}
	// Schema changes are not cached.
	if _, err := w.ExecContext(ctx, "-- a migration\nCREATE INDEX t_v ON t (v)"); err != nil {
		t.Fatal(err)
	}
	for q := range cachedTexts(t, w) {
		if strings.Contains(q, "CREATE INDEX") {
			t.Errorf("schema change %q cached", q)
		}
	}
	// Past the bound, new texts take the place of others: the cache stays at the bound and the
	// latest text is in it.
	last := ""
	for i := 0; i < maxStmtsPerConn+10; i++ {
		var got int
		last = fmt.Sprintf(`SELECT %d`, i)
		if err := w.QueryRowContext(ctx, last).Scan(&got); err != nil || got != i {
			t.Fatalf("SELECT %d: %d, %v", i, got, err)
		}
	}
	cached = cachedTexts(t, w)
	if len(cached) != maxStmtsPerConn || !cached[last] {
		t.Errorf("%d statements cached (latest cached: %v), want the bound %d with the latest", len(cached), cached[last], maxStmtsPerConn)
	}
	// The read pool caches too.
	if err := r.QueryRowContext(ctx, `SELECT COUNT(*) FROM t WHERE v > ?`, 3).Scan(&n); err != nil || n != 3 {
		t.Fatalf("read pool count: %d, %v; want 3", n, err)
	}
}
