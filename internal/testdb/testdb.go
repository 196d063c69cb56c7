// Package testdb gives tests a fresh, migrated store on each engine: SQLite always, and
// PostgreSQL when SUBPROV_TEST_POSTGRES_URL is set (CI sets it). Each PostgreSQL test database
// is a database of its own on the server, empty (URL) or copied from a template migrated once
// (MigratedURL, for stores and services), dropped when the test ends, so tests never see each
// other's rows.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/subprov/subprov/store"
)

// PostgresEnv names the variable holding the PostgreSQL URL for tests.
const PostgresEnv = "SUBPROV_TEST_POSTGRES_URL"

// Engines lists the engines tests run on here: "sqlite", plus "postgres" when configured.
func Engines() []string {
	if os.Getenv(PostgresEnv) != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// Each runs fn as one subtest per engine, each with its own fresh database URL. The engines
// run in parallel (each has its own database), so fn must not share state with the code that
// calls Each, which returns before they run.
func Each(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	t.Helper()
	each(t, URL, fn)
}

// EachMigrated is Each for fn that migrates its database to schema before anything else (by
// Open, or by starting a service): it gets MigratedURL's databases.
func EachMigrated(t *testing.T, schema Schema, fn func(t *testing.T, databaseURL string)) {
	t.Helper()
	each(t, func(t testing.TB, engine string) string { return MigratedURL(t, engine, schema) }, fn)
}

func each(t *testing.T, newURL func(t testing.TB, engine string) string, fn func(t *testing.T, databaseURL string)) {
	t.Helper()
	for _, engine := range Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, newURL(t, engine))
		})
	}
}

// EachStore runs fn as one subtest per engine with a fresh, migrated store.
func EachStore(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	EachMigrated(t, StoreSchema, func(t *testing.T, u string) { fn(t, Open(t, u)) })
}

// URL returns the URL of a fresh, empty database on engine. On PostgreSQL it is a database of
// its own, dropped when the test ends: a migration's advisory lock is the database's, so
// migrations of other tests (of other processes, other checkouts) on the server do not queue
// behind each other. Where the role may not create databases it is a schema of the configured
// database.
func URL(t testing.TB, engine string) string {
	t.Helper()
	if engine == "sqlite" {
		return "sqlite://" + filepath.Join(t.TempDir(), "subprov.db")
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set")
	}
	u, err := newDatabase(t, base, "")
	if err == nil {
		return u
	}
	t.Logf("no database of its own (%v): a schema", err)
	return schemaURL(t, base)
}

// schemaURL returns the URL of a fresh schema of the database at base, dropped when t ends.
func schemaURL(t testing.TB, base string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	withTestPools(q)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens and migrates the store at databaseURL, closing it when the test ends.
func Open(t testing.TB, databaseURL string) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, databaseURL)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

// Strings runs q, which selects one text column, through query (a *sql.DB's QueryContext, or a
// store Querier's Query for the dialect's placeholders) and returns the column.
func Strings(t testing.TB, query func(ctx context.Context, q string, args ...any) (*sql.Rows, error), q string, args ...any) []string {
	t.Helper()
	rows, err := query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// Scale is the size a test or benchmark works at: the positive integer in the environment
// variable env (SUBPROV_BENCH_SUBSCRIBERS, say, for the performance issue's million), else def.
func Scale(env string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	return def
}

// EachBenchStore is EachStore for a benchmark: one sub-benchmark per engine, each with a
// fresh, migrated store.
func EachBenchStore(b *testing.B, fn func(b *testing.B, s *store.Store)) {
	b.Helper()
	for _, engine := range Engines() {
		b.Run(engine, func(b *testing.B) { fn(b, Open(b, MigratedURL(b, engine, StoreSchema))) })
	}
}
