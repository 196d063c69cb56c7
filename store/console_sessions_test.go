package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestDeleteEndedConsoleSessions: the sweep removes the sessions that ended without being
// dropped, past their lifetime, idle too long, or of an operator disabled or whose token
// generation moved on, and keeps every live one, on both engines.
func TestDeleteEndedConsoleSessions(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		disabledAt := now.Add(-time.Hour)
		operators := []*subprov.Operator{
			{ID: "op-active", Email: "active@example.net", Role: subprov.RoleAdmin, TokenGeneration: 3, CreatedAt: now.Add(-48 * time.Hour)},
			{ID: "op-disabled", Email: "disabled@example.net", Role: subprov.RoleAdmin, DisabledAt: &disabledAt, CreatedAt: now.Add(-48 * time.Hour)},
		}
		sessions := []struct {
			name      string
			operator  string
			gen       int64
			signedIn  time.Duration // before now
			lastSeen  time.Duration // before now
			remaining bool
		}{
			{"live", "op-active", 3, time.Hour, time.Minute, true},
			{"just signed in", "op-active", 3, 0, 0, true},
			{"idle almost too long", "op-active", 3, 2 * time.Hour, subprov.ConsoleSessionIdle - time.Second, true},
			{"almost at its lifetime", "op-active", 3, subprov.ConsoleSessionLifetime - time.Second, time.Minute, true},
			{"idle too long", "op-active", 3, 2 * time.Hour, subprov.ConsoleSessionIdle + time.Second, false},
			{"past its lifetime, though busy", "op-active", 3, subprov.ConsoleSessionLifetime + time.Second, time.Minute, false},
			{"of an earlier token generation", "op-active", 2, time.Hour, time.Minute, false},
			{"of a disabled operator", "op-disabled", 0, time.Hour, time.Minute, false},
		}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			for _, o := range operators {
				if err := tx.InsertOperator(ctx, o, "hash"); err != nil {
					return err
				}
			}
			for _, c := range sessions {
				cs := store.ConsoleSession{IDHash: c.name, OperatorID: c.operator, TokenGeneration: c.gen, CSRFToken: "csrf",
					CreatedAt: now.Add(-c.signedIn), LastSeenAt: now.Add(-c.lastSeen)}
				if err := tx.InsertConsoleSession(ctx, cs, time.Time{}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.DeleteEndedConsoleSessions(ctx, now.Add(-subprov.ConsoleSessionLifetime), now.Add(-subprov.ConsoleSessionIdle))
		if err != nil {
			t.Fatal(err)
		}
		left := testdb.Strings(t, s.R().Query, `SELECT id_hash FROM console_sessions`)
		removed := 0
		for _, c := range sessions {
			if kept := slices.Contains(left, c.name); kept != c.remaining {
				t.Errorf("%s: kept %v, want %v", c.name, kept, c.remaining)
			}
			if !c.remaining {
				removed++
			}
		}
		if n != int64(removed) {
			t.Errorf("removed %d, want %d", n, removed)
		}
	})
}
