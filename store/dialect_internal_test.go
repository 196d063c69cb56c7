package store

import (
	"strings"
	"testing"
)

// Rebind keeps at most reboundMax conversions; past that it still converts, without keeping.
// A query longer than reboundLongest is converted each time.
func TestRebindMemoIsBounded(t *testing.T) {
	t.Parallel()
	q := "SELECT ? FROM dialect_memo_test WHERE x = ?"
	forget := func() {
		if _, ok := rebound.LoadAndDelete(q); ok {
			rebound.n.Add(-1)
		}
	}
	forget()
	kept := rebound.n.Load()
	rebound.n.Store(reboundMax)
	t.Cleanup(func() { rebound.n.Store(kept); forget() })
	for range 2 {
		if got := Postgres.Rebind(q); got != "SELECT $1 FROM dialect_memo_test WHERE x = $2" {
			t.Fatalf("Rebind = %q", got)
		}
	}
	if _, ok := rebound.Load(q); ok {
		t.Errorf("a conversion past the bound was kept")
	}
	rebound.n.Store(kept)
	Postgres.Rebind(q)
	if r, ok := rebound.Load(q); !ok || r != "SELECT $1 FROM dialect_memo_test WHERE x = $2" || rebound.n.Load() != kept+1 {
		t.Errorf("under the bound: kept %v %q, count %d (was %d)", ok, r, rebound.n.Load(), kept)
	}
}

func TestRebindKeepsNoLongQuery(t *testing.T) {
	t.Parallel()
	q := "SELECT ?" + strings.Repeat(", ?", reboundLongest/3)
	want := rebind(q)
	if got := Postgres.Rebind(q); got != want {
		t.Fatalf("Rebind of a long query = %.40q…", got)
	}
	if _, ok := rebound.Load(q); ok {
		t.Errorf("a query of %d bytes was kept", len(q))
	}
}
