package testdb

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

func TestIsStale(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	stamp := func(ago time.Duration) string { return strconv.FormatInt(now.Add(-ago).Unix(), 10) }
	current := templatePrefix + "app_0123456789abcdef"
	for _, c := range []struct {
		name, db, comment string
		want              bool
	}{
		{"a copy of this run", clonePrefix + stamp(time.Minute) + "_0a1b2c3d", "", false},
		{"a copy of a killed run", clonePrefix + stamp(3*time.Hour) + "_0a1b2c3d", "", true},
		{"a copy named otherwise", clonePrefix + "x_0a1b2c3d", "", false},
		{"the current template, however old", current, stamp(30 * 24 * time.Hour), false},
		{"another template used today", templatePrefix + "app_fedcba9876543210", stamp(time.Hour), false},
		{"another template unused for two days", templatePrefix + "app_fedcba9876543210", stamp(48 * time.Hour), true},
		{"another template without its mark", templatePrefix + "store_fedcba9876543210", "", true},
		{"an unfinished template", current + "_building", "", true},
		{"a database of someone else's", "subprov_bench_10000", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := isStale(c.db, c.comment, current, now); got != c.want {
				t.Errorf("isStale(%q, %q) = %v, want %v", c.db, c.comment, got, c.want)
			}
		})
	}
}

// TestSQLiteCopies: each copy of the SQLite template is migrated to the latest version (so a
// store opened on it applies nothing) and is a database of its own.
func TestSQLiteCopies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func() *store.Store {
		u := MigratedURL(t, "sqlite", AppSchema)
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		applied, err := s.Migrate(ctx)
		if err != nil || len(applied) != 0 {
			t.Fatalf("migrating a copy applied %v (%v); want nothing", applied, err)
		}
		return s
	}
	a, b := open(), open()
	if _, err := rawdb.Writer(a).ExecContext(ctx, `INSERT INTO river_leader (elected_at, expires_at, leader_id, name) VALUES (datetime('now'), datetime('now', '+1 minute'), 'a', 'default')`); err != nil {
		t.Fatalf("the copy has no job queue tables: %v", err)
	}
	var n int
	if err := rawdb.Reader(b).QueryRowContext(ctx, `SELECT count(*) FROM river_leader`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the other copy sees %d rows (%v): the copies share a file", n, err)
	}
}

func TestRemoveStaleSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now()
	current := templatePrefix + "app_0123456789abcdef.db"
	files := []struct {
		name string
		age  time.Duration
		kept bool
	}{
		{current, 30 * 24 * time.Hour, true},
		{templatePrefix + "store_fedcba9876543210.db", time.Hour, true},
		{templatePrefix + "app_fedcba9876543210.db", 48 * time.Hour, false},
		{"building-123", 48 * time.Hour, false},
		{"building-456", time.Minute, true},
		{"someone-elses.db", 48 * time.Hour, true},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleSQLite(dir, current, now)
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s: kept %v, want %v", f.name, kept, f.kept)
		}
	}
}
