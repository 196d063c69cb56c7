package store

import "testing"

// Rebind keeps at most reboundMax conversions; past that it still converts, without keeping.
func TestRebindMemoIsBounded(t *testing.T) {
	q := "SELECT ? FROM dialect_memo_test WHERE x = ?"
	kept := rebound.n.Load()
	rebound.n.Store(reboundMax)
	t.Cleanup(func() { rebound.n.Store(kept) })
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
