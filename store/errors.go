package store

import (
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/subprov/subprov"
)

// engineError is an engine's error as the rest of the service reads it: errors.Is matches its
// domain sentinel (subprov.ErrNotFound, subprov.ErrDuplicate), so no package outside the store
// knows how either engine reports a missing row or a taken key. Its text and its chain are
// the engine error's own, for logs and for the store's own checks (Retryable).
type engineError struct {
	sentinel error
	cause    error
}

func (e *engineError) Error() string        { return e.cause.Error() }
func (e *engineError) Unwrap() error        { return e.cause }
func (e *engineError) Is(target error) bool { return target == e.sentinel }

// translate gives an engine error its domain sentinel; every statement of the store returns
// its error through it (Tx, the read pool, autocommit writes, Row).
func translate(err error) error {
	switch {
	case err == nil, errors.Is(err, subprov.ErrNotFound), errors.Is(err, subprov.ErrDuplicate):
		return err
	case errors.Is(err, sql.ErrNoRows):
		return &engineError{subprov.ErrNotFound, err}
	case isUniqueViolation(err):
		return &engineError{subprov.ErrDuplicate, err}
	}
	return err
}

// errNoRows is what a lookup returns when it decides itself that nothing matched.
var errNoRows error = &engineError{subprov.ErrNotFound, sql.ErrNoRows}

// isUniqueViolation reports whether err is a unique-constraint violation on either engine.
// Idempotency rests on these: a duplicate insert loses the race and the caller reads the
// winner.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		c := sqErr.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Retryable reports whether a whole transaction may simply be run again.
func (d Dialect) Retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code()&0xff == sqlite3.SQLITE_BUSY
	}
	return false
}

// isLockTimeout reports whether err is PostgreSQL's lock_timeout expiring.
func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// Row is one row of QueryRow, whose Scan returns a translated error.
type Row struct{ row *sql.Row }

// Scan copies the row's columns into dest; subprov.ErrNotFound when there was no row.
func (r Row) Scan(dest ...any) error { return translate(r.row.Scan(dest...)) }

// Err is the query's error, if any, without scanning.
func (r Row) Err() error { return translate(r.row.Err()) }
