package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		s := testdb.Open(t, u)
		applied, err := s.Migrate(ctx)
		if err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		if len(applied) != 0 {
			t.Fatalf("second migrate applied %v, want nothing", applied)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil || v != store.LatestVersion() {
			t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, store.LatestVersion())
		}
	})
}

// addUnknownMigration records a migration this binary does not know, as a newer release
// migrating the database leaves it.
func addUnknownMigration(t *testing.T, s *store.Store, version, compatibleWith int) {
	t.Helper()
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO schema_migrations (version, name, applied_at, compatible_with) VALUES (?, ?, ?, ?)`,
			version, fmt.Sprintf("%04d_from_a_newer_release.sql", version), time.Now().UTC(), compatibleWith)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNewerSchema: a binary works on a schema a newer release migrated as long as every
// migration it does not know is compatible with it, and refuses it, changing nothing, when one
// needs a newer binary.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	latest := store.LatestVersion()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addUnknownMigration(t, s, latest+1, latest)
		if applied, err := s.Migrate(ctx); err != nil || len(applied) != 0 {
			t.Fatalf("migrate on a compatible newer schema: %v, %v", applied, err)
		}
		st, err := s.SchemaState(ctx)
		if err != nil || st != (store.SchemaState{Version: latest + 1, CompatibleWith: latest}) {
			t.Fatalf("SchemaState = %+v, %v", st, err)
		}

		addUnknownMigration(t, s, latest+2, latest+2)
		_, err = s.Migrate(ctx)
		var incompatible *store.IncompatibleSchemaError
		if !errors.As(err, &incompatible) || *incompatible != (store.IncompatibleSchemaError{Schema: latest + 2, CompatibleWith: latest + 2, Binary: latest}) {
			t.Fatalf("migrate on an incompatible schema: %v", err)
		}
		want := fmt.Sprintf("the database schema is at version %d and works only with a subprov that knows migration %d or later; this subprov knows migrations up to %d: upgrade subprov", latest+2, latest+2, latest)
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q lacks %q", err, want)
		}
	})
}

// TestPendingMigrations lists what Migrate would apply and applies nothing, on a fresh
// database too.
func TestPendingMigrations(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		all, err := store.Migrations()
		if err != nil {
			t.Fatal(err)
		}
		pending, err := s.PendingMigrations(ctx)
		if err != nil || len(pending) != len(all) {
			t.Fatalf("fresh database: %d pending, %v; want %d", len(pending), err, len(all))
		}
		if st, err := s.SchemaState(ctx); err != nil || st.Version != 0 {
			t.Fatalf("fresh database after listing: %+v, %v", st, err)
		}
		const last = 41
		if _, err := s.MigrateTo(ctx, last); err != nil {
			t.Fatal(err)
		}
		pending, err = s.PendingMigrations(ctx)
		if err != nil || len(pending) == 0 || pending[0].Version != last+1 || pending[len(pending)-1].Version != store.LatestVersion() {
			t.Fatalf("pending after %d: %+v, %v", last, pending, err)
		}
		if pending[0] != (store.Migration{Version: 42, Name: "0042_schema_compatibility.sql", CompatibleWith: 41}) {
			t.Fatalf("pending[0] = %+v", pending[0])
		}
		if st, err := s.SchemaState(ctx); err != nil || st.Version != last {
			t.Fatalf("after listing: %+v, %v", st, err)
		}
	})
}
