package main

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The harness reaches a server on this machine through its Unix socket in the first directory
// where the server answers, and falls back to TCP loopback; the report says which, without
// credentials.
func TestLocalPostgresURL(t *testing.T) {
	ctx := context.Background()
	first, second, otherPort, empty := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(first, ".s.PGSQL.5432"), filepath.Join(second, ".s.PGSQL.5432"), filepath.Join(otherPort, ".s.PGSQL.5433")} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("FATAL: Peer authentication failed")
	for _, c := range []struct {
		name     string
		dirs     []string
		answer   map[string]error // by socket URL; absent: answers
		want     string
		wantAsks int
	}{
		{"the first dir with a socket that answers", []string{empty, first, second}, nil, socketURL(first), 1},
		{"a refused socket, then one that answers", []string{first, second}, map[string]error{socketURL(first): refused}, socketURL(second), 2},
		{"every socket refused", []string{first, second}, map[string]error{socketURL(first): refused, socketURL(second): refused}, tcpLoopbackURL, 2},
		{"another port's socket only", []string{otherPort, empty}, nil, tcpLoopbackURL, 0},
		{"no dirs", nil, nil, tcpLoopbackURL, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			asks := 0
			got := localPostgresURL(ctx, c.dirs, func(_ context.Context, u string) error { asks++; return c.answer[u] })
			if got != c.want || asks != c.wantAsks {
				t.Errorf("localPostgresURL = %q after %d asks, want %q after %d", got, asks, c.want, c.wantAsks)
			}
		})
	}
	// The real probe: nothing listens on a plain file.
	if err := ping(ctx, socketURL(first)); err == nil {
		t.Error("ping through a plain file answered")
	}
	if got, want := postgresReach(tcpLoopbackURL), "TCP to 127.0.0.1:5432"; got != want {
		t.Errorf("postgresReach(TCP) = %q, want %q", got, want)
	}

	// A socket URL names its directory (escaped) and reads back as the socket.
	dir := "/var/run/postgresql"
	if got, want := socketURL(dir), "postgres://postgres@/postgres?host=%2Fvar%2Frun%2Fpostgresql&sslmode=disable"; got != want {
		t.Errorf("socketURL = %q, want %q", got, want)
	}
	if got, want := postgresReach(socketURL(dir)), "its Unix socket in "+dir; got != want {
		t.Errorf("postgresReach(socket) = %q, want %q", got, want)
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
	if _, err := withDatabase("postgres://u:secret@%zz", "x"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("withDatabase of an unparsable URL: %v, want an error that does not quote it", err)
	}

	// On a machine whose test server answers on its socket, the default reaches it there, and
	// so does a database URL derived from it.
	testURL := os.Getenv("SUBPROV_TEST_POSTGRES_URL")
	if testURL == "" {
		t.Skip("SUBPROV_TEST_POSTGRES_URL not set")
	}
	parsed, err := url.Parse(testURL)
	if err != nil {
		t.Fatal(err)
	}
	server := localPostgresURL(context.Background(), postgresSocketDirs, ping)
	if !strings.HasPrefix(postgresReach(server), "its Unix socket") {
		t.Skip("the PostgreSQL server does not answer on a socket on this machine")
	}
	for _, name := range []string{"postgres", strings.TrimPrefix(parsed.Path, "/")} {
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
