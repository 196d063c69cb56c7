package main

import (
	"context"
	"fmt"
	"io"

	"github.com/subprov/subprov/backup"
	"github.com/subprov/subprov/store"
)

func cmdBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", "backup FILE",
		"Writes a consistent copy of the SQLite database DATABASE_URL names into the new file FILE while the\n"+
			"service keeps serving: the copy is the database as of one commit, taken on a read-only connection,\n"+
			"and writers are not held up (SQLite's VACUUM INTO). FILE must not exist: a backup never overwrites\n"+
			"a file. The copy is written beside FILE under a temporary name, checked (integrity and schema) and\n"+
			"only then given its name, so FILE is either the whole backup or not there. For example:\n\n"+
			"  DATABASE_URL=sqlite:///var/lib/subprov/subprov.db subprov backup /backups/subprov-$(date +%F).db\n\n"+
			"The backup holds every subscriber's personal data and the secret that signs tokens: keep it as\n"+
			"private as the database, and age it out after the retention the privacy policy states.\n"+
			"A PostgreSQL DATABASE_URL is refused: back PostgreSQL up with pg_dump ("+backup.Docs+").\n"+
			"'subprov restore FILE' installs a backup.")
	if done, err := parse(fs, args, stdout, stderr, "FILE"); done {
		return err
	}
	cfg, _, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "backing up %s into %s\n", store.Describe(cfg.DatabaseURL), fs.Arg(0))
	w, err := backup.Create(ctx, cfg.DatabaseURL, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s, schema version %d\n", w.Path, size(w.Size), w.SchemaVersion)
	return nil
}

func cmdRestore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("restore", "restore FILE",
		"Installs the backup FILE (written by 'subprov backup') as the SQLite database DATABASE_URL names.\n"+
			"FILE is opened read-only and checked first: it must be a SQLite database that passes SQLite's\n"+
			"integrity check and whose schema this subprov works on (an older schema is migrated when the\n"+
			"service starts; a newer one is restored if its migrations are compatible with this subprov, and\n"+
			"refused if they need a newer one). The location must hold no database: no file, or an\n"+
			"empty one, and no -wal, -shm or -journal file beside it; restore never overwrites a database. Stop\n"+
			"the service, move the damaged database aside (with its -wal and -shm files), restore, start:\n\n"+
			"  mv /var/lib/subprov/subprov.db* /var/lib/subprov/damaged/\n"+
			"  DATABASE_URL=sqlite:///var/lib/subprov/subprov.db subprov restore /backups/subprov-2026-11-28.db\n\n"+
			"The copy is written beside the database under a temporary name and given its name only once\n"+
			"complete, so nothing half-written is ever where the service reads. A restored backup brings back\n"+
			"everything it holds, people erased since included: see "+backup.Docs+".\n"+
			"A PostgreSQL DATABASE_URL is refused: restore PostgreSQL with pg_restore ("+backup.Docs+").")
	if done, err := parse(fs, args, stdout, stderr, "FILE"); done {
		return err
	}
	cfg, _, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "restoring %s into %s\n", fs.Arg(0), store.Describe(cfg.DatabaseURL))
	w, err := backup.Restore(ctx, cfg.DatabaseURL, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s: %s, schema version %d\n", w.Path, size(w.Size), w.SchemaVersion)
	return nil
}

// size is a file size for a person: bytes up to a kibibyte, else one decimal of the unit.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, u := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, u = v/unit, next
	}
	return fmt.Sprintf("%d bytes (%.1f %s)", n, v, u)
}
