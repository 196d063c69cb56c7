// Package backup copies a SQLite database out of a running subprov and installs a copy back:
// the rules of 'subprov backup' and 'subprov restore'. A backup never overwrites a file, a
// restore never overwrites a database, and neither leaves a half-written file where the other
// would be read: both write a temporary file beside the one they make and link it into place
// only once it is complete and on disk. PostgreSQL databases are backed up with its own tools
// (pg_dump, pg_restore), which these refuse to stand in for.
package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/subprov/subprov/store"
)

// Docs is where the PostgreSQL recipe is, for the refusals to point at.
const Docs = "docs/operations.md, Backups"

// Errors a refusal wraps, so callers and tests can tell them apart.
var (
	ErrPostgres     = errors.New("PostgreSQL is backed up and restored with pg_dump and pg_restore")
	ErrNotSQLiteURL = errors.New("DATABASE_URL is not a sqlite:// URL")
	ErrExists       = errors.New("already exists")
	ErrNoDatabase   = errors.New("no database there")
	ErrNotSubprov   = errors.New("not a subprov database")
	ErrDamaged      = errors.New("fails SQLite's integrity check")
	ErrNewer        = errors.New("has a newer schema than this subprov")
)

// Written is what Create or Restore wrote.
type Written struct {
	Path          string
	Size          int64
	SchemaVersion int
}

// Create writes a consistent copy of the SQLite database DATABASE_URL names into the new file
// path while the service goes on serving. It refuses a path that exists, and a PostgreSQL URL.
func Create(ctx context.Context, databaseURL, path string) (Written, error) {
	src, err := sqliteFile(databaseURL, "back up")
	if err != nil {
		return Written{}, err
	}
	if err := absent(path, "backup file"); err != nil {
		return Written{}, err
	}
	if _, err := os.Stat(src); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Written{}, fmt.Errorf("back up %s: %w (DATABASE_URL names a file that does not exist)", src, ErrNoDatabase)
		}
		return Written{}, fmt.Errorf("back up %s: %w", src, err)
	}
	tmp, err := tempName(path, ".backup-")
	if err != nil {
		return Written{}, err
	}
	defer removeTemp(tmp)
	if err := store.VacuumInto(ctx, src, tmp); err != nil {
		return Written{}, fmt.Errorf("back up %s: %w", src, err)
	}
	// A database a newer subprov migrated is backed up all the same: that subprov restores it.
	rep, err := check(ctx, tmp, path, false)
	if err != nil {
		return Written{}, err
	}
	if err := syncFile(tmp); err != nil {
		return Written{}, err
	}
	return install(tmp, path, rep, false)
}

// Restore installs the backup file into the location DATABASE_URL names, which must hold no
// database: no file there, or an empty one, and no write-ahead log left beside it. The file must
// be a sound SQLite database of subprov whose schema this subprov knows (an older one is
// migrated when the service starts).
func Restore(ctx context.Context, databaseURL, file string) (Written, error) {
	dst, err := sqliteFile(databaseURL, "restore")
	if err != nil {
		return Written{}, err
	}
	if err := emptyTarget(dst); err != nil {
		return Written{}, err
	}
	in, err := os.Open(file)
	if err != nil {
		return Written{}, fmt.Errorf("restore from %s: %w", file, err)
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return Written{}, fmt.Errorf("restore from %s: %w", file, err)
	} else if !fi.Mode().IsRegular() {
		return Written{}, fmt.Errorf("restore from %s: not a regular file", file)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Written{}, fmt.Errorf("restore into %s: %w", dst, err)
	}
	tmp, err := tempName(dst, ".restore-")
	if err != nil {
		return Written{}, err
	}
	defer removeTemp(tmp)
	// The copy is checked, not the file: what is installed is exactly what passed.
	if err := copyFile(in, tmp); err != nil {
		return Written{}, fmt.Errorf("restore from %s: %w", file, err)
	}
	rep, err := check(ctx, tmp, file, true)
	if err != nil {
		return Written{}, err
	}
	return install(tmp, dst, rep, true)
}

// sqliteFile is the SQLite file of databaseURL, or the refusal of any other engine.
func sqliteFile(databaseURL, verb string) (string, error) {
	if store.IsPostgres(databaseURL) {
		return "", fmt.Errorf("%s %s: %w: see %s", verb, store.Describe(databaseURL), ErrPostgres, Docs)
	}
	path, ok := store.SQLiteFile(databaseURL)
	if !ok || path == "" {
		return "", fmt.Errorf("%s: %w", verb, ErrNotSQLiteURL)
	}
	return path, nil
}

// absent refuses a path that exists (or cannot be looked at).
func absent(path, what string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return fmt.Errorf("%s %s %w: a backup never overwrites a file; choose a new name", what, path, ErrExists)
	case errors.Is(err, os.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
}

// emptyTarget refuses a database location that holds a database: a non-empty file, or a
// write-ahead log or shared-memory file left beside it (SQLite would replay a log onto the
// restored file).
func emptyTarget(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("restore into %s: %w", path, err)
	case !fi.Mode().IsRegular() || fi.Size() > 0:
		return fmt.Errorf("restore into %s: a database %w there: restore never overwrites one; stop the service and move it aside, or point DATABASE_URL at a new file", path, ErrExists)
	}
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Lstat(path + side); err == nil {
			return fmt.Errorf("restore into %s: %s%s %w: the files of an earlier database are still there; move them aside", path, path, side, ErrExists)
		}
	}
	return nil
}

// check inspects the SQLite file at path (a copy of name) and refuses anything but a sound
// subprov database; with known, also one with a schema version this subprov does not know.
func check(ctx context.Context, path, name string, known bool) (store.SQLiteFileReport, error) {
	rep, err := store.InspectSQLite(ctx, path)
	if err != nil {
		if errors.Is(err, store.ErrNotSQLite) {
			return rep, fmt.Errorf("%s: %w", name, store.ErrNotSQLite)
		}
		return rep, fmt.Errorf("%s: %w", name, err)
	}
	if len(rep.Integrity) > 0 {
		return rep, fmt.Errorf("%s %w: %s", name, ErrDamaged, strings.Join(first(rep.Integrity, 5), "; "))
	}
	if !rep.HasSchema || len(rep.Versions) == 0 {
		return rep, fmt.Errorf("%s: %w (it has no applied schema migrations)", name, ErrNotSubprov)
	}
	// A newer schema this subprov works on (the upgrade rule's compatible-with) restores as
	// serve would start on it; one that needs a newer subprov is refused.
	if err := rep.State.Check(store.LatestVersion()); known && err != nil {
		return rep, fmt.Errorf("%s %w: %v; restore it with the subprov that wrote it", name, ErrNewer, err)
	}
	return rep, nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// tempName is a fresh name beside path for the file that becomes it.
func tempName(path, infix string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+infix+"*")
	if err != nil {
		return "", fmt.Errorf("temporary file beside %s: %w", path, err)
	}
	name := f.Name()
	f.Close()
	// VACUUM INTO wants no file there (or an empty one); the name stays ours, it is random.
	if err := os.Remove(name); err != nil {
		return "", fmt.Errorf("temporary file beside %s: %w", path, err)
	}
	return name, nil
}

// removeTemp removes the temporary file tmp, if it is still there, and the files SQLite may
// have made beside it while checking it (a database in write-ahead-log mode gets them even when
// opened read-only).
func removeTemp(tmp string) {
	for _, side := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(tmp + side)
	}
}

func copyFile(in io.Reader, to string) error {
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}

// install gives the complete file tmp its name path: a hard link, which fails if path appeared
// meanwhile (a rename would replace it), then the temporary name goes. An empty file at path
// (a database location SQLite created and never wrote) is replaced by a rename when replaceEmpty.
func install(tmp, path string, rep store.SQLiteFileReport, replaceEmpty bool) (Written, error) {
	if err := os.Chmod(tmp, 0o600); err != nil {
		return Written{}, fmt.Errorf("install %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		fi, serr := os.Lstat(path)
		if serr != nil || !fi.Mode().IsRegular() || fi.Size() > 0 || !replaceEmpty {
			if errors.Is(err, os.ErrExist) {
				return Written{}, fmt.Errorf("%s %w (it appeared while the copy was made); nothing was changed", path, ErrExists)
			}
			return Written{}, fmt.Errorf("install %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return Written{}, fmt.Errorf("install %s: %w", path, err)
		}
	}
	_ = os.Remove(tmp)
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the new name survives a crash
		d.Close()
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Written{}, fmt.Errorf("install %s: %w", path, err)
	}
	return Written{Path: path, Size: fi.Size(), SchemaVersion: rep.Versions[len(rep.Versions)-1]}, nil
}
