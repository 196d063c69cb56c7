package store

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migrations are SQL files in migrations/, named NNNN_name.sql, applied in the order of their
// numbers and recorded in schema_migrations.
//
// The rule that keeps upgrades free of downtime: a migration leaves the schema usable by the
// release before it, because during a rolling upgrade the old processes keep serving on the
// migrated database until they are replaced (and a release may have to be rolled back onto it).
// A change that would break the older binary is made in steps across releases: add the new
// column or table (nullable, or with a default), backfill it, switch the code to it, and drop
// the old one only in a later release, once no binary that reads it runs anymore.
//
// Each migration records how far back that holds: a header line among its leading comments,
//
//	-- compatible-with: N
//
// names the oldest binary, by the latest migration it knows, that still works on the schema
// after this migration. Without the header a migration is compatible with the binary before it
// (N is its own version - 1); a migration that breaks older binaries (a drop, a rename) names
// its own version. The header is recorded with the migration in schema_migrations, so a binary
// that does not know a newer migration still reads what it requires: a process starts on a
// schema newer than it knows when every applied migration's compatible-with is at most its own
// latest migration, and refuses to start otherwise (IncompatibleSchemaError).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version        int
	name           string
	sql            string
	compatibleWith int
}

// Migration is one embedded migration as `subprov migrate --dry-run` lists it.
type Migration struct {
	Version int
	Name    string
	// CompatibleWith is the oldest binary, by the latest migration it knows, that works on the
	// schema after this migration.
	CompatibleWith int
}

// compatibilityRecorded is the migration that adds schema_migrations.compatible_with: the
// migrations from it on record their compatible-with; the ones before record none.
const compatibilityRecorded = 42

// compatibleWithHeader starts the header line naming a migration's compatible-with.
const compatibleWithHeader = "compatible-with"

// parseCompatibleWith reads the compatible-with header among the leading comments of the
// migration version's text: version - 1 without one. A header that does not read
// "-- compatible-with: N", a second one, or an N that is negative or newer than the migration
// itself is an error.
func parseCompatibleWith(version int, sql string) (int, error) {
	n, found := version-1, false
	for _, line := range strings.Split(sql, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		comment, ok := strings.CutPrefix(line, "--")
		if !ok {
			break // the header is among the leading comments only
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(comment), compatibleWithHeader)
		if !ok {
			continue
		}
		value, ok := strings.CutPrefix(rest, ":")
		v, err := strconv.Atoi(strings.TrimSpace(value))
		switch {
		case !ok || err != nil:
			return 0, fmt.Errorf("malformed header %q: want \"-- %s: N\", N the oldest binary's latest migration", line, compatibleWithHeader)
		case found:
			return 0, fmt.Errorf("a second %s header %q", compatibleWithHeader, line)
		case v > version:
			return 0, fmt.Errorf("%s: %d names a version newer than the migration itself: it is at most %d", compatibleWithHeader, v, version)
		case v < 0:
			return 0, fmt.Errorf("%s: %d is not a version", compatibleWithHeader, v)
		}
		n, found = v, true
	}
	return n, nil
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and _", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		compat, err := parseCompatibleWith(v, string(b))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b), compatibleWith: compat})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// LatestVersion is the schema version this binary expects.
func LatestVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// MigrationsDigest is a digest of every embedded migration's name and text: a database migrated
// by a binary with the same digest has the same schema (test helpers key the databases they
// migrate once and copy per test on it).
func MigrationsDigest() string {
	h := sha256.New()
	ms, err := migrations()
	if err != nil {
		fmt.Fprintf(h, "error: %v", err)
	}
	for _, m := range ms {
		fmt.Fprintf(h, "%d %s %d\n%s\n", m.version, m.name, len(m.sql), m.sql)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Migrations lists the embedded migrations in order.
func Migrations() ([]Migration, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	out := make([]Migration, len(ms))
	for i, m := range ms {
		out[i] = m.public()
	}
	return out, nil
}

func (m migration) public() Migration {
	return Migration{Version: m.version, Name: m.name, CompatibleWith: m.compatibleWith}
}

// Migrate applies every embedded migration not yet applied, each in its own transaction. On
// PostgreSQL an advisory lock keeps two starting replicas from migrating at once; on SQLite the
// single writer connection already serialises them. A schema this binary cannot work on (an
// applied migration it does not know requires a newer binary) is refused with an
// *IncompatibleSchemaError before anything is applied; a newer schema that is compatible is
// migrated as any other (only the migrations this binary knows and misses are applied).
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	return s.migrateTo(ctx, LatestVersion())
}

// migrateTo is Migrate stopping after version last (tests build older schemas with it).
func (s *Store) migrateTo(ctx context.Context, last int) (applied []string, err error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	if _, err := s.db.ExecContext(ctx, s.Dialect.DDL(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at {{timestamp}} NOT NULL)`)); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	if s.Dialect == SQLite {
		// A migration may build an index over a big table: its sort spills to temporary
		// files, not to the memory the writer's temp_store keeps statement journals in.
		if _, err := s.db.ExecContext(ctx, "PRAGMA temp_store = 1"); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		defer func() {
			_, werr := s.db.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA temp_store = %d", SQLiteWriterTempStore))
			if werr != nil {
				err = errors.Join(err, fmt.Errorf("migrate: %w", werr))
			}
		}()
	}
	// Read on the writer connection, as the migrations run: opening the read pool here would
	// keep connections to a SQLite file that then can no longer leave WAL mode (gen's load).
	state, err := schemaState(ctx, reader{s.db, s.Dialect}, s.Dialect)
	if err != nil {
		return nil, err
	}
	if err := state.Check(LatestVersion()); err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.version > last {
			break
		}
		err := s.InTx(ctx, func(tx *Tx) error {
			if s.Dialect == Postgres {
				if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7243001)`); err != nil {
					return fmt.Errorf("lock: %w", err)
				}
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return fmt.Errorf("read schema_migrations: %w", err)
			}
			if n > 0 {
				return nil
			}
			for _, stmt := range splitStatements(s.Dialect.DDL(m.sql)) {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w\n%s", m.name, err, stmt)
				}
			}
			record, args := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, []any{m.version, m.name, time.Now().UTC()}
			if m.version >= compatibilityRecorded {
				record, args = `INSERT INTO schema_migrations (version, name, applied_at, compatible_with) VALUES (?, ?, ?, ?)`, append(args, m.compatibleWith)
			}
			if _, err := tx.Exec(ctx, record, args...); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
			applied = append(applied, m.name)
			return nil
		})
		if err != nil {
			return applied, fmt.Errorf("migrate: %w", err)
		}
	}
	return applied, nil
}

// SchemaState is what a database's schema_migrations says about the binaries that work on it.
type SchemaState struct {
	// Version is the highest applied migration, 0 on a fresh database.
	Version int
	// CompatibleWith is the oldest binary, by the latest migration it knows, that works on the
	// schema: the highest compatible-with an applied migration records (0 when none does).
	CompatibleWith int
}

// Check is nil when a binary whose latest migration is binary works on the schema: nil as well
// when the schema is newer but every migration it lacks keeps it compatible; an
// *IncompatibleSchemaError otherwise.
func (st SchemaState) Check(binary int) error {
	if st.CompatibleWith > binary {
		return &IncompatibleSchemaError{Schema: st.Version, CompatibleWith: st.CompatibleWith, Binary: binary}
	}
	return nil
}

// IncompatibleSchemaError is a database whose schema needs a newer binary than this one.
type IncompatibleSchemaError struct {
	Schema         int // the database's highest applied migration
	CompatibleWith int // the oldest binary, by its latest migration, that works on it
	Binary         int // this binary's latest migration
}

func (e *IncompatibleSchemaError) Error() string {
	return fmt.Sprintf("the database schema is at version %d and works only with a subprov that knows migration %d or later; "+
		"this subprov knows migrations up to %d: upgrade subprov to a release with migration %d or later and start that (nothing was changed)",
		e.Schema, e.CompatibleWith, e.Binary, e.CompatibleWith)
}

// SchemaState reads the schema's version and the oldest binary that works on it. It writes
// nothing: a database never migrated is version 0, compatible with any binary.
func (s *Store) SchemaState(ctx context.Context) (SchemaState, error) {
	return schemaState(ctx, s.R(), s.Dialect)
}

// schemaState reads the SchemaState of a database of dialect d through q.
func schemaState(ctx context.Context, q Querier, d Dialect) (SchemaState, error) {
	var st SchemaState
	ok, err := hasMigrationsTable(ctx, q, d)
	if err != nil || !ok {
		return st, err
	}
	var v, recorded *int
	err = q.QueryRow(ctx, `SELECT MAX(version), MAX(CASE WHEN version = ? THEN 1 END) FROM schema_migrations`,
		compatibilityRecorded).Scan(&v, &recorded)
	if err != nil {
		return st, fmt.Errorf("read schema version: %w", err)
	}
	if v != nil {
		st.Version = *v
	}
	if recorded == nil {
		return st, nil // the column is not there yet: no migration records a compatible-with
	}
	var c *int
	if err := q.QueryRow(ctx, `SELECT MAX(compatible_with) FROM schema_migrations`).Scan(&c); err != nil {
		return st, fmt.Errorf("read schema compatibility: %w", err)
	}
	if c != nil {
		st.CompatibleWith = *c
	}
	return st, nil
}

// PendingMigrations lists the embedded migrations the database has not applied, in order,
// without applying any.
func (s *Store) PendingMigrations(ctx context.Context) ([]Migration, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	applied := map[int]bool{}
	ok, err := hasMigrationsTable(ctx, s.R(), s.Dialect)
	if err != nil {
		return nil, err
	}
	if ok {
		rows, err := s.R().Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				return nil, fmt.Errorf("read schema_migrations: %w", err)
			}
			applied[v] = true
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
	}
	var out []Migration
	for _, m := range ms {
		if !applied[m.version] {
			out = append(out, m.public())
		}
	}
	return out, nil
}

// hasMigrationsTable reports whether the database has schema_migrations (a migration ran).
func hasMigrationsTable(ctx context.Context, q Querier, d Dialect) (bool, error) {
	query := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`
	if d == Postgres {
		query = `SELECT COUNT(*) FROM (SELECT to_regclass('schema_migrations') AS t) r WHERE t IS NOT NULL`
	}
	var n int
	if err := q.QueryRow(ctx, query).Scan(&n); err != nil {
		return false, fmt.Errorf("look for schema_migrations: %w", err)
	}
	return n > 0, nil
}

// SchemaVersion returns the highest applied migration, 0 on a fresh database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v *int
	err := s.R().QueryRow(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// splitStatements splits a migration on semicolons that end a line, dropping comment lines,
// except inside a function's body quoted by $$ (a line with an odd number of $$ opens or closes
// one): its statements end lines too. That is enough for our migrations and keeps both engines
// on one file.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	inBody := false
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || trimmed == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.Count(line, "$$")%2 == 1 {
			inBody = !inBody
		}
		if !inBody && strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
