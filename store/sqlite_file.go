package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/subprov/subprov/store/internal/engine"
)

// SQLiteFile is the file a sqlite:// DATABASE_URL names; ok is false for any other URL.
func SQLiteFile(databaseURL string) (path string, ok bool) {
	if !isSQLite(databaseURL) {
		return "", false
	}
	return sqlitePath(databaseURL), true
}

// IsPostgres reports whether a DATABASE_URL names a PostgreSQL database.
func IsPostgres(databaseURL string) bool { return isPostgres(databaseURL) }

// ErrNotSQLite is a file that is not a SQLite database.
var ErrNotSQLite = errors.New("not a SQLite database")

// openFileReadOnly opens the SQLite file at path on a connection of its own that can only read.
func openFileReadOnly(path string) (*sql.DB, error) {
	// The path goes into a URI: its own '?' or '#' would end it early.
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db, err := engine.OpenSQLiteConn(p, "mode=ro&_pragma=busy_timeout(10000)&_time_format=sqlite")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// VacuumInto writes a consistent copy of the SQLite database file at path into target, which must
// not exist yet, with SQLite's VACUUM INTO. It reads on a read-only connection of its own, in one
// read transaction: the copy is the database as of one commit, and writers, in this process or
// another, go on meanwhile (the write-ahead log lets them). The copy is compacted and has no
// write-ahead log of its own.
func VacuumInto(ctx context.Context, path, target string) error {
	db, err := openFileReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, target); err != nil {
		return fmt.Errorf("copy %s into %s: %w", path, target, notSQLite(err))
	}
	return nil
}

// SQLiteFileReport is what InspectSQLite found in a database file.
type SQLiteFileReport struct {
	Integrity []string // PRAGMA integrity_check's findings; none when the file is sound
	Versions  []int    // the schema migrations applied, in order; nil when it has no schema_migrations table
	HasSchema bool     // the file has the schema_migrations table
	// State is its schema's version and the oldest binary that works on it (SchemaState).
	State SchemaState
}

// InspectSQLite opens the SQLite file at path read-only and reports its integrity and the schema
// versions applied to it. A file that is no SQLite database is ErrNotSQLite.
func InspectSQLite(ctx context.Context, path string) (SQLiteFileReport, error) {
	var r SQLiteFileReport
	db, err := openFileReadOnly(path)
	if err != nil {
		return r, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return r, fmt.Errorf("check %s: %w", path, notSQLite(err))
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return r, fmt.Errorf("check %s: %w", path, err)
		}
		if s != "ok" {
			r.Integrity = append(r.Integrity, s)
		}
	}
	if err := rows.Close(); err != nil {
		return r, fmt.Errorf("check %s: %w", path, notSQLite(err))
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("check %s: %w", path, notSQLite(err))
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return r, fmt.Errorf("read %s: %w", path, notSQLite(err))
	}
	if n == 0 {
		return r, nil
	}
	r.HasSchema = true
	vrows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return r, fmt.Errorf("read schema versions of %s: %w", path, err)
	}
	defer vrows.Close()
	for vrows.Next() {
		var v int
		if err := vrows.Scan(&v); err != nil {
			return r, fmt.Errorf("read schema versions of %s: %w", path, err)
		}
		r.Versions = append(r.Versions, v)
	}
	if err := vrows.Err(); err != nil {
		return r, fmt.Errorf("read schema versions of %s: %w", path, err)
	}
	if r.State, err = schemaState(ctx, reader{db, SQLite}, SQLite); err != nil {
		return r, fmt.Errorf("read %s: %w", path, err)
	}
	return r, nil
}

// notSQLite turns SQLite's "file is not a database" into ErrNotSQLite.
func notSQLite(err error) error {
	if err != nil && strings.Contains(err.Error(), "file is not a database") {
		return fmt.Errorf("%w (%v)", ErrNotSQLite, err)
	}
	return err
}
