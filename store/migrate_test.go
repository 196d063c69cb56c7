package store_test

import (
	"context"
	"testing"

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
