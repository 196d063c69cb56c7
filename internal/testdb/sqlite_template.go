package testdb

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/store"
)

// On SQLite, migrating a new database parses the whole schema again after each of its DDL
// statements: about half of the HTTP tests' time went to it. MigratedURL instead copies a
// template file, migrated once per machine and set of migrations, into the test's temporary
// directory. The templates live in one directory of the machine's temporary directory, named
// as the PostgreSQL ones are; one is built in a directory of its own and renamed into place
// once complete, so that test processes building the same template at once never copy a
// half-written one (the last rename wins, and every build is the same schema).

// sqliteTemplates is the directory the SQLite templates are kept in.
func sqliteTemplates() string { return filepath.Join(os.TempDir(), "subprov-test-templates") }

// sqliteCopy returns the URL of a copy of the SQLite template migrated to schema, in t's
// temporary directory; where no template can be built, of an empty database.
func sqliteCopy(t testing.TB, schema Schema) string {
	t.Helper()
	tmpl, err := once(templateKey{"sqlite", schema}, func() (string, error) { return ensureSQLiteTemplate(schema) })
	if err == nil {
		path := filepath.Join(t.TempDir(), "subprov.db")
		if err = copyFile(tmpl, path); err == nil {
			return "sqlite://" + path
		}
	}
	t.Logf("no copy of a template database (%v): migrating a fresh one", err)
	return URL(t, "sqlite")
}

// ensureSQLiteTemplate returns the path of the SQLite template for schema, building it unless
// it exists, and removes the templates of other migrations no test process used for
// staleTemplate.
func ensureSQLiteTemplate(schema Schema) (string, error) {
	name, err := templateName("sqlite", schema)
	if err != nil {
		return "", err
	}
	dir := sqliteTemplates()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("template directory: %w", err)
	}
	now := time.Now()
	removeStaleSQLite(dir, name+".db", now)
	path := filepath.Join(dir, name+".db")
	if err := os.Chtimes(path, now, now); err == nil {
		return path, nil // its modification time is when a test process last used it
	}
	building, err := os.MkdirTemp(dir, "building-")
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	defer os.RemoveAll(building)
	if err := buildSQLiteTemplate(filepath.Join(building, "subprov.db"), filepath.Join(building, "template.db"), schema); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(building, "template.db"), path); err != nil {
		return "", fmt.Errorf("finish template: %w", err)
	}
	return path, nil
}

// buildSQLiteTemplate migrates a new database at work to schema and writes it, as one file
// with nothing in a write-ahead log, to out.
func buildSQLiteTemplate(work, out string, schema Schema) error {
	ctx := context.Background()
	if err := migrate(ctx, "sqlite://"+work, schema); err != nil {
		return err
	}
	return store.VacuumInto(ctx, work, out)
}

// removeStaleSQLite removes the templates in dir other than current that no test process used
// for staleTemplate, and the unfinished builds of killed processes.
func removeStaleSQLite(dir, current string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || e.Name() == current || now.Sub(info.ModTime()) <= staleTemplate {
			continue
		}
		if strings.HasPrefix(e.Name(), templatePrefix) || strings.HasPrefix(e.Name(), "building-") {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// copyFile copies the file at from to a new file at to.
func copyFile(from, to string) (err error) {
	src, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("copy template: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("copy template: %w", err)
	}
	defer func() {
		if cerr := dst.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("copy template: %w", cerr)
		}
	}()
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("copy template: %w", err)
	}
	return nil
}
