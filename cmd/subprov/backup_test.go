package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// The commands print what they wrote, refuse a second run onto the same file, and a missing
// FILE is a usage error; the rules themselves are the backup package's tests'.
func TestBackupAndRestoreCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	live := testdb.Open(t, "sqlite://"+filepath.Join(dir, "live.db"))
	file := filepath.Join(dir, "backup.db")
	target := filepath.Join(dir, "restored", "subprov.db")
	version := "schema version " + strconv.Itoa(store.LatestVersion())
	tests := []struct {
		name  string
		args  []string
		url   string
		usage bool
		fails string
		out   string
	}{
		{"backup", []string{"backup", file}, live.URL, false, "", "wrote " + file + ": "},
		{"backup again", []string{"backup", file}, live.URL, false, "already exists", ""},
		{"backup without a file", []string{"backup"}, live.URL, true, "", ""},
		{"restore", []string{"restore", file}, "sqlite://" + target, false, "", "restored " + target + ": "},
		{"restore again", []string{"restore", file}, "sqlite://" + target, false, "restore never overwrites", ""},
		{"restore into PostgreSQL", []string{"restore", file}, "postgres://subprov@db.example/subprov", false, "pg_dump and pg_restore: see docs/operations.md", ""},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		err := run(ctx, tt.args, env(map[string]string{"DATABASE_URL": tt.url}), &out, &errOut)
		switch {
		case tt.usage:
			if !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "Usage: subprov "+tt.args[0]) {
				t.Errorf("%s: want a usage error: %v %s", tt.name, err, errOut.String())
			}
		case tt.fails != "":
			if err == nil || !strings.Contains(err.Error(), tt.fails) || exitCode(err) != exitFailure {
				t.Errorf("%s: got %v, want a failure naming %q", tt.name, err, tt.fails)
			}
		default:
			if err != nil || !strings.Contains(out.String(), tt.out) || !strings.Contains(out.String(), version) || !strings.Contains(out.String(), " bytes") {
				t.Errorf("%s: %v\n%s%s", tt.name, err, out.String(), errOut.String())
			}
		}
	}
}
