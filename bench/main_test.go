package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The harness reaches a server on this machine through its Unix socket when there is one, and
// falls back to TCP loopback; the report says which, without credentials.
func TestLocalPostgresURL(t *testing.T) {
	withSocket, without := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(withSocket, ".s.PGSQL.5432"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(without, ".s.PGSQL.5433"), nil, 0o600); err != nil { // another port's
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		dirs  []string
		want  string
		reach string
	}{
		{"socket in the first dir", []string{withSocket, without}, "postgres://postgres@/postgres?host=" + url.QueryEscape(withSocket) + "&sslmode=disable",
			"its Unix socket in " + withSocket},
		{"socket in a later dir", []string{without, withSocket}, "postgres://postgres@/postgres?host=" + url.QueryEscape(withSocket) + "&sslmode=disable",
			"its Unix socket in " + withSocket},
		{"no socket for port 5432", []string{without}, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "TCP to 127.0.0.1:5432"},
		{"no dirs", nil, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "TCP to 127.0.0.1:5432"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := localPostgresURL(c.dirs)
			if got != c.want {
				t.Fatalf("localPostgresURL = %q, want %q", got, c.want)
			}
			if reach := postgresReach(got); reach != c.reach {
				t.Errorf("postgresReach = %q, want %q", reach, c.reach)
			}
		})
	}
	for raw, want := range map[string]string{
		"postgres://u:secret@db.example:5432/x":   "TCP to db.example:5432",
		"postgres://u:secret@/x?host=db.internal": "TCP to db.internal",
		"postgres:///x": "the driver's default host",
		"postgres://u:secret@/x?host=%2Frun%2Fpg&a=b":    "its Unix socket in /run/pg",
		"postgres://u:secret@[::1]:5432/x?sslmode=allow": "TCP to [::1]:5432",
	} {
		if got := postgresReach(raw); got != want {
			t.Errorf("postgresReach(%q) = %q, want %q", raw, got, want)
		}
	}
}

// A database URL derived from the server's keeps how the server is reached: through the socket,
// the harness's databases and their scratch copies are on the same server.
func TestWithDatabaseKeepsTheWayToTheServer(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://postgres@/postgres?host=%2Fvar%2Frun%2Fpostgresql&sslmode=disable": "postgres://postgres@/subprov_bench_10?host=%2Fvar%2Frun%2Fpostgresql&sslmode=disable",
		"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable":                  "postgres://postgres@127.0.0.1:5432/subprov_bench_10?sslmode=disable",
	} {
		got, err := withDatabase(raw, "subprov_bench_10")
		if err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	if _, err := withDatabase("postgres://%zz", "x"); err == nil {
		t.Error("withDatabase accepted an unparsable URL")
	}

	// On a machine whose server has a socket, the default reaches it there, and so does a
	// database URL derived from it.
	server := localPostgresURL(postgresSocketDirs)
	if !strings.HasPrefix(postgresReach(server), "its Unix socket") {
		t.Skip("no PostgreSQL socket on this machine")
	}
	for _, name := range []string{"postgres", "test"} {
		u, err := withDatabase(server, name)
		if err != nil {
			t.Fatal(err)
		}
		db, err := openPostgres(u)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = db.QueryRowContext(context.Background(), `SELECT current_database()`).Scan(&got)
		db.Close()
		if err != nil || got != name {
			t.Errorf("through %s: current_database() = %q, %v; want %q", postgresReach(u), got, err, name)
		}
	}
}
