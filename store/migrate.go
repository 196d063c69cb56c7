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

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
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
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
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

// Migrate applies every embedded migration not yet applied, each in its own transaction. On
// PostgreSQL an advisory lock keeps two starting replicas from migrating at once; on SQLite the
// single writer connection already serialises them.
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
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UTC()); err != nil {
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

// splitStatements splits a migration on semicolons that end a line, dropping comments. Our
// migrations hold no procedural bodies, so this is enough and keeps both engines on one file.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || trimmed == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
