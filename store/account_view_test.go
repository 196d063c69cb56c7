package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// AccountView and APIKeyByHash are remembered between calls, and every way the database can
// change makes them read again: a commit through the same store at once, a write by another
// process (here a second store on the same database) within the change feed's bound, a deleted
// login at once.
func TestRememberedReadsSeeEveryChange(t *testing.T) {
	// Not parallel: it checks the change feed's wall-clock bound, which a loaded machine stretches.
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		s := testdb.Open(t, u)
		loadDemo(t, s, time.Now())
		acc, err := s.AccountByEmail(ctx, fixture.DemoSubscriberEmail)
		if err != nil {
			t.Fatal(err)
		}
		firstName := func(t *testing.T) string {
			t.Helper()
			v, err := s.AccountView(ctx, acc.ID)
			if err != nil {
				t.Fatalf("account view: %v", err)
			}
			return v.Subscriber.Holder.FirstName
		}
		rename := func(t *testing.T, via *store.Store, name string) {
			t.Helper()
			err := via.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE contacts SET firstname = ? WHERE subscriber_id = ? AND role = 'holder'`, name, acc.SubscriberID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// Let the change feed start and the view be remembered.
		deadline := time.Now().Add(2 * time.Second)
		for firstName(t) != "Marie" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		for range 3 {
			if got := firstName(t); got != "Marie" {
				t.Fatalf("first name %q, want Marie", got)
			}
			time.Sleep(20 * time.Millisecond)
		}
		v1, _ := s.AccountView(ctx, acc.ID)
		v2, _ := s.AccountView(ctx, acc.ID)
		if v1 != v2 {
			t.Error("two reads with nothing written in between: the second was not served from memory")
		}

		t.Run("a commit through the same store is seen at once", func(t *testing.T) {
			rename(t, s, "Mariette")
			if got := firstName(t); got != "Mariette" {
				t.Fatalf("first name %q right after the commit, want Mariette", got)
			}
		})
		t.Run("another process's write is seen within the bound", func(t *testing.T) {
			other := testdb.Open(t, u)
			rename(t, other, "Marion")
			start := time.Now()
			for firstName(t) != "Marion" {
				if time.Since(start) > time.Second {
					t.Fatalf("another store's write not seen after %s", time.Since(start))
				}
				time.Sleep(2 * time.Millisecond)
			}
			if waited := time.Since(start); waited > 500*time.Millisecond {
				t.Errorf("another store's write seen after %s, want within the 100 ms bound (with slack)", waited)
			}
		})
		t.Run("an API key revoked by another process stops within the bound", func(t *testing.T) {
			h := identity.HashSecret(fixture.DemoAgentKey)
			k, p, err := s.APIKeyByHash(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			k.Features[0], p.Name = "changed by a caller", "changed by a caller"
			k2, p2, err := s.APIKeyByHash(ctx, h)
			if err != nil || k2.Features[0] == k.Features[0] || p2.Name == p.Name {
				t.Fatalf("a caller's change to its copy reached the next caller: %v %v %v", err, k2.Features, p2.Name)
			}
			other := testdb.Open(t, u)
			err = other.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE key_hash = ?`, time.Now().UTC(), h)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for {
				_, _, err := s.APIKeyByHash(ctx, h)
				if errors.Is(err, subprov.ErrNotFound) {
					break
				}
				if time.Since(start) > 500*time.Millisecond {
					t.Fatalf("revoked key still accepted after %s (err %v)", time.Since(start), err)
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
		t.Run("a deleted login stops at once", func(t *testing.T) {
			err := s.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `DELETE FROM accounts WHERE id = ?`, acc.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AccountView(ctx, acc.ID); !errors.Is(err, subprov.ErrNotFound) {
				t.Fatalf("account view of a deleted login: %v, want no rows", err)
			}
		})
	})
}
