package gen

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestVtabWritesWhatBindWrote generates the same data twice on SQLite, once through the bind
// path gen used before (bindInsert) and once through the virtual tables, and compares every
// row of every bulk table, each value with its storage class: the service reads these columns
// back, so the virtual tables must store exactly what binding stored (a time.Time as the
// driver's text, not Unix seconds; a bool as 0 or 1). 2,500 subscribers a provider fill
// several batches of the larger tables and leave the rest to the flush; two providers create
// and drop each table's virtual table twice.
func TestVtabWritesWhatBindWrote(t *testing.T) {
	o := Options{Subscribers: 2500, Providers: 2, Seed: 11, Now: time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)}
	bindRows = bindInsert
	bound := generated(t, o)
	bindRows = nil
	read := generated(t, o)
	for _, table := range bulkTables {
		want, got := bound[table], read[table]
		if len(want) == 0 {
			t.Errorf("%s: no rows generated", table)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d rows through the virtual table, %d bound; first difference:\n%s", table, len(got), len(want), firstDiff(got, want))
		}
	}
}

// TestFailedLoadDropsVtabs fails a load in the middle of a transaction (a contact's id is
// taken, so its batch's INSERT fails after its parents' batches have created their virtual
// tables) and checks that none of them is left on the connection nor published.
func TestFailedLoadDropsVtabs(t *testing.T) {
	ctx := context.Background()
	st := testdb.Open(t, testdb.MigratedURL(t, "sqlite", testdb.StoreSchema))
	for _, q := range []string{"PRAGMA foreign_keys=OFF",
		"INSERT INTO contacts (id, subscriber_id, role, updated_at) VALUES ('" + id(kindContact, 1, 10) + "', 'x', 'holder', '2026-01-01')",
		"PRAGMA foreign_keys=ON"} {
		if _, err := rawdb.Writer(st).ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Run(ctx, st, Options{Subscribers: 2500, Seed: 11, Now: time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)})
	if err == nil || !strings.Contains(err.Error(), "insert into contacts") {
		t.Fatalf("gen over a taken contact id: %v, want the contacts insert to fail", err)
	}
	noVtabsLeft(t, st)
}

// noVtabsLeft checks that gen left no temporary table on the writer connection and no source
// published.
func noVtabsLeft(t *testing.T, st *store.Store) {
	t.Helper()
	left := testdb.Strings(t, rawdb.Writer(st).QueryContext, `SELECT name FROM sqlite_temp_master`) // the writer connection's own
	sources.Range(func(k, _ any) bool { left = append(left, "source "+k.(string)); return true })
	if len(left) > 0 {
		t.Errorf("left after gen: %v", left)
	}
}

// bindInsert is the bind path gen wrote SQLite batches with before the virtual tables.
func bindInsert(ctx context.Context, b *batch, args []any) error {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(b.cols)), ", ") + ")"
	values := strings.TrimSuffix(strings.Repeat(one+", ", len(args)/len(b.cols)), ", ")
	if _, err := b.tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", b.table, strings.Join(b.cols, ", "), values), args...); err != nil {
		return fmt.Errorf("insert into %s: %w", b.table, err)
	}
	return nil
}

// generated runs gen on a fresh SQLite store and returns each bulk table's rows, as text.
func generated(t *testing.T, o Options) map[string][]string {
	t.Helper()
	t.Cleanup(func() { bindRows = nil })
	st := testdb.Open(t, testdb.MigratedURL(t, "sqlite", testdb.StoreSchema))
	if _, err := Run(context.Background(), st, o); err != nil {
		t.Fatal(err)
	}
	noVtabsLeft(t, st)
	out := map[string][]string{}
	for _, table := range bulkTables {
		out[table] = tableRows(t, st, table)
	}
	return out
}

// tableRows dumps table in rowid order (when it has rowids), each row as its values'
// storage classes and SQL literals. The password hash is salted per run: only its class and
// length are compared.
func tableRows(t *testing.T, st *store.Store, table string) []string {
	t.Helper()
	ctx := context.Background()
	var withoutRowid bool
	if err := rawdb.Writer(st).QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, table).Scan(&withoutRowid); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	cols := testdb.Strings(t, rawdb.Writer(st).QueryContext, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if !withoutRowid {
		cols = append([]string{"rowid"}, cols...)
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = fmt.Sprintf("%s || ': ' || typeof(%s) || ' ' || quote(%s)", quoteText(c), c, c)
		if c == "password_hash" {
			exprs[i] = fmt.Sprintf("%s || ': ' || typeof(%s) || ' of ' || length(%s)", quoteText(c), c, c)
		}
	}
	q := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(exprs, " || ', ' || "), table, strings.Join(cols, ", "))
	return testdb.Strings(t, rawdb.Writer(st).QueryContext, q)
}

func quoteText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// firstDiff shows the first row where got and want differ.
func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("row %d:\n got %s\nwant %s", i, g, w)
		}
	}
	return "none"
}
