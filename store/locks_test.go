package store_test

import (
	"context"
	"testing"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestLockHasOneHolder: two stores on one database (two processes) cannot both hold a lock;
// once the holder releases it, or its store closes (a process that dies), the other takes it;
// another name is a lock of its own. On PostgreSQL, a holder whose session the server ended
// learns it from Held and no longer holds the lock.
func TestLockHasOneHolder(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, url string) {
		ctx := context.Background()
		a, b := testdb.Open(t, url), testdb.Open(t, url)
		take := func(s *store.Store, name string, want bool) *store.Lock {
			t.Helper()
			l, err := s.TryLock(ctx, name)
			if err != nil || (l != nil) != want {
				t.Fatalf("TryLock(%s) = %v, %v; want held %v", name, l, err, want)
			}
			return l
		}
		first := take(a, "sweeps", true)
		take(b, "sweeps", false)
		take(a, "sweeps", false) // not twice in one process either
		other := take(b, "other", true)
		if err := first.Held(ctx); err != nil {
			t.Fatalf("Held: %v", err)
		}
		first.Release()
		second := take(b, "sweeps", true)
		take(a, "sweeps", false)
		other.Release()
		if a.Dialect != store.Postgres {
			second.Release()
			return
		}
		// The server ends the holder's session: Held fails, and the lock is free.
		if _, err := rawdb.Writer(a).ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
			WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`); err != nil {
			t.Fatal(err)
		}
		if err := second.Held(ctx); err == nil {
			t.Fatal("Held after the session ended: no error")
		}
		take(a, "sweeps", true).Release()
	})
}
