package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// storageUse is what the generated database takes on disk, by table: each table with its
// indexes (and, on PostgreSQL, its TOAST data), for the bytes-per-subscriber figures.
type storageUse struct {
	total  int64 // the whole database: SQLite's file pages, PostgreSQL's database size
	tables []tableBytes
}

type tableBytes struct {
	name  string
	bytes int64
}

// storageQuery is each table's bytes with its indexes: on SQLite from the dbstat virtual table
// (every b-tree's pages, an index counted with the table it belongs to, a virtual table's own
// tables with it), on PostgreSQL from pg_total_relation_size. The agent search index is a line
// of its own on both engines, customer_search: SQLite's FTS5 table, PostgreSQL's GIN index
// subscribers_search (taken out of subscribers' figure).
var storageQuery = map[store.Dialect]string{
	store.SQLite: `SELECT COALESCE((SELECT v.name FROM sqlite_schema v WHERE v.sql LIKE 'CREATE VIRTUAL TABLE%' AND d.name LIKE v.name || '\_%' ESCAPE '\'),
			s.tbl_name, d.name), SUM(d.pgsize)
		FROM dbstat d LEFT JOIN sqlite_schema s ON s.name = d.name GROUP BY 1`,
	store.Postgres: `SELECT c.relname, pg_total_relation_size(c.oid) - CASE WHEN c.relname = 'subscribers'
			THEN COALESCE(pg_relation_size(to_regclass('subscribers_search')), 0) ELSE 0 END
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()
		UNION ALL SELECT 'customer_search', pg_relation_size(to_regclass('subscribers_search')) WHERE to_regclass('subscribers_search') IS NOT NULL`,
}

// totalQuery is the whole database's size.
var totalQuery = map[store.Dialect]string{
	store.SQLite:   `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`,
	store.Postgres: `SELECT pg_database_size(current_database())`,
}

// measureStorage reads what the database at dbURL takes, by table, largest first.
func measureStorage(ctx context.Context, dbURL string) (*storageUse, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	db := rawdb.Writer(st)
	u := &storageUse{}
	if err := db.QueryRowContext(ctx, totalQuery[st.Dialect]).Scan(&u.total); err != nil {
		return nil, fmt.Errorf("database size: %w", err)
	}
	rows, err := db.QueryContext(ctx, storageQuery[st.Dialect])
	if err != nil {
		return nil, fmt.Errorf("table sizes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t tableBytes
		if err := rows.Scan(&t.name, &t.bytes); err != nil {
			return nil, err
		}
		u.tables = append(u.tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table sizes: %w", err)
	}
	sort.Slice(u.tables, func(i, j int) bool {
		if u.tables[i].bytes != u.tables[j].bytes {
			return u.tables[i].bytes > u.tables[j].bytes
		}
		return u.tables[i].name < u.tables[j].name
	})
	return u, nil
}

// writeStorage is the storage section of an engine's report: the whole database and each table
// of at least 1% of it per subscriber, the rest summed.
func writeStorage(b *strings.Builder, u *storageUse, subscribers int) {
	if u == nil || subscribers < 1 {
		return
	}
	per := func(n int64) string { return fmt.Sprintf("%.0f B", float64(n)/float64(subscribers)) }
	fmt.Fprintf(b, "Storage of the generated database (storage.go): %.2f GB, %s per subscriber (target ≤ 2.5 KB); each table with its indexes:\n\n",
		float64(u.total)/1e9, per(u.total))
	b.WriteString("| table | bytes | per subscriber | share |\n|---|---|---|---|\n")
	var rest int64
	for _, t := range u.tables {
		if t.bytes*100 < u.total {
			rest += t.bytes
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %s | %.0f%% |\n", t.name, t.bytes, per(t.bytes), 100*float64(t.bytes)/float64(u.total))
	}
	if rest > 0 {
		fmt.Fprintf(b, "| every other table | %d | %s | %.0f%% |\n", rest, per(rest), 100*float64(rest)/float64(u.total))
	}
	b.WriteString("\n")
}
