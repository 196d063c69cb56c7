package backup_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/backup"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/invariants"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

func TestMain(m *testing.M) { apptest.Main(m) }

const northwind = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001"

// A backup taken while the service takes writes is a consistent database: restored into a new
// location it passes every invariant and holds every write committed before it started.
func TestBackupWhileServingRestoresConsistently(t *testing.T) {
	s := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema))
	admin := s.Operator()
	ctx := context.Background()

	var (
		mu        sync.Mutex
		committed []string // e-mails of the operators created, in the order their answers came
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		failures  = make(chan string, 16)
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				email := fmt.Sprintf("writer%d-%d@example.com", w, i)
				res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators", Headers: admin,
					Body: map[string]any{"email": email, "password": "a-long-enough-password", "role": "viewer", "provider_id": northwind}})
				if res.Status != 201 {
					select {
					case failures <- fmt.Sprintf("create %s: %d %s", email, res.Status, res.Raw):
					default:
					}
					return
				}
				mu.Lock()
				committed = append(committed, email)
				mu.Unlock()
				time.Sleep(25 * time.Millisecond) // under the API's rate limit
			}
		}()
	}
	// Let the writers get going, take the backup in the middle of them, and let them go on a while.
	time.Sleep(700 * time.Millisecond)
	mu.Lock()
	before := slices.Clone(committed)
	mu.Unlock()
	file := filepath.Join(t.TempDir(), "subprov-backup.db")
	w, err := backup.Create(ctx, s.Store.URL, file)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if len(before) == 0 {
		t.Fatal("no write was committed before the backup started")
	}
	if w.Path != file || w.Size == 0 || w.SchemaVersion != store.LatestVersion() {
		t.Errorf("wrote %+v, want %s at schema version %d", w, file, store.LatestVersion())
	}

	target := filepath.Join(t.TempDir(), "restored", "subprov.db")
	r, err := backup.Restore(ctx, "sqlite://"+target, file)
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != target || r.Size != w.Size || r.SchemaVersion != w.SchemaVersion {
		t.Errorf("restored %+v, want %s, %d bytes, version %d", r, target, w.Size, w.SchemaVersion)
	}
	restored := testdb.Open(t, "sqlite://"+target)
	if bad, err := invariants.Check(ctx, restored); err != nil || len(bad) > 0 {
		t.Fatalf("the restored copy: %v %v", bad, err)
	}
	have := testdb.Strings(t, rawdb.Reader(restored).QueryContext, `SELECT email FROM operators WHERE email LIKE 'writer%'`)
	for _, e := range before {
		if !slices.Contains(have, e) {
			t.Errorf("the restored copy lacks %s, committed before the backup started", e)
		}
	}
	mu.Lock()
	all := len(committed)
	mu.Unlock()
	if len(have) > all {
		t.Errorf("the restored copy has %d of the writers' operators; only %d were created", len(have), all)
	}
	t.Logf("%d writes before the backup, %d in it, %d in all", len(before), len(have), all)
	entries, err := os.ReadDir(filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("beside the backup: %v, want the backup alone (no temporary file left)", entries)
	}
}

// Each refusal names its reason and leaves nothing behind: no backup file, no database.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := testdb.Open(t, "sqlite://"+filepath.Join(dir, "live.db"))
	good := filepath.Join(dir, "good.db")
	if _, err := backup.Create(ctx, src.URL, good); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "existing.db")
	must(t, os.WriteFile(existing, []byte("keep me"), 0o600))
	junk := filepath.Join(dir, "junk.db")
	must(t, os.WriteFile(junk, []byte("this is no database, only words that fill more than a header would"), 0o600))
	empty := filepath.Join(dir, "empty.db")
	must(t, os.WriteFile(empty, nil, 0o600))

	// Backups of databases one schema version ahead of this subprov: one whose newer migration
	// this subprov still works with, one whose migration needs a newer subprov.
	newerBackup := func(name string, compatibleWith int) string {
		t.Helper()
		live := testdb.Open(t, "sqlite://"+filepath.Join(dir, name+"-live.db"))
		if _, err := rawdb.Writer(live).ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at, compatible_with)
			VALUES (?, 'from the future', CURRENT_TIMESTAMP, ?)`, store.LatestVersion()+1, compatibleWith); err != nil {
			t.Fatal(err)
		}
		// Backed up all the same: the subprov that migrated it restores it.
		file := filepath.Join(dir, name+".db")
		if w, err := backup.Create(ctx, live.URL, file); err != nil || w.SchemaVersion != store.LatestVersion()+1 {
			t.Fatalf("a backup of a newer database: %+v %v", w, err)
		}
		return file
	}
	newer := newerBackup("newer", store.LatestVersion()+1)
	if _, err := backup.Restore(ctx, "sqlite://"+filepath.Join(t.TempDir(), "subprov.db"), newerBackup("newer-compatible", store.LatestVersion())); err != nil {
		t.Errorf("a newer schema this subprov works with is refused: %v", err)
	}

	withLog := filepath.Join(dir, "with-log", "subprov.db")
	must(t, os.MkdirAll(filepath.Dir(withLog), 0o755))
	must(t, os.WriteFile(withLog+"-wal", []byte("an old log"), 0o600))

	pg := "postgres://subprov@db.example:5432/subprov?sslmode=disable"
	fresh := func() string { return "sqlite://" + filepath.Join(t.TempDir(), "subprov.db") }

	tests := []struct {
		name    string
		restore bool   // restore file into url; else back url up into file
		url     string // DATABASE_URL
		file    string
		want    error
	}{
		{"backup onto an existing file", false, src.URL, existing, backup.ErrExists},
		{"backup onto an existing empty file", false, src.URL, empty, backup.ErrExists},
		{"backup of PostgreSQL", false, pg, filepath.Join(dir, "pg.db"), backup.ErrPostgres},
		{"backup of no database", false, "sqlite://" + filepath.Join(dir, "absent.db"), filepath.Join(dir, "of-absent.db"), backup.ErrNoDatabase},
		{"restore over a database", true, src.URL, good, backup.ErrExists},
		{"restore where a log is left", true, "sqlite://" + withLog, good, backup.ErrExists},
		{"restore of no SQLite file", true, fresh(), junk, store.ErrNotSQLite},
		{"restore of an empty file", true, fresh(), empty, backup.ErrNotSubprov},
		{"restore of a newer schema", true, fresh(), newer, backup.ErrNewer},
		{"restore into PostgreSQL", true, pg, good, backup.ErrPostgres},
		{"restore of a missing file", true, fresh(), filepath.Join(dir, "missing.db"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := listing(t, dir)
			var err error
			var target string
			if tt.restore {
				target, _ = store.SQLiteFile(tt.url)
				var tb []string
				if target != "" {
					tb = listing(t, filepath.Dir(target))
				}
				_, err = backup.Restore(ctx, tt.url, tt.file)
				if target != "" && !slices.Equal(tb, listing(t, filepath.Dir(target))) {
					t.Errorf("the refusal changed the database's directory: %v -> %v", tb, listing(t, filepath.Dir(target)))
				}
			} else {
				_, err = backup.Create(ctx, tt.url, tt.file)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			t.Log(err)
			if after := listing(t, dir); !slices.Equal(before, after) {
				t.Errorf("the refusal changed the directory: %v -> %v", before, after)
			}
		})
	}
	if got, err := os.ReadFile(existing); err != nil || string(got) != "keep me" {
		t.Errorf("the existing file is now %q (%v)", got, err)
	}
}

// A restore installs into an empty file SQLite left where the database would be.
func TestRestoreIntoEmptyFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := testdb.Open(t, "sqlite://"+filepath.Join(dir, "live.db"))
	file := filepath.Join(dir, "b.db")
	if _, err := backup.Create(ctx, src.URL, file); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "new", "subprov.db")
	must(t, os.MkdirAll(filepath.Dir(target), 0o755))
	must(t, os.WriteFile(target, nil, 0o600))
	w, err := backup.Restore(ctx, "sqlite://"+target, file)
	if err != nil {
		t.Fatal(err)
	}
	if w.SchemaVersion != store.LatestVersion() || w.Size == 0 {
		t.Errorf("restored %+v", w)
	}
	restored := testdb.Open(t, "sqlite://"+target)
	if v, err := restored.SchemaVersion(ctx); err != nil || v != store.LatestVersion() {
		t.Errorf("restored schema version %d %v", v, err)
	}
}

func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
