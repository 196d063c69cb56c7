package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// The audit log keeps what each entry was given, reads newest first a page at a time, and
// refuses every UPDATE and DELETE on both engines, whoever sends it.
func TestAuditLogAppendOnly(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := subprov.WithRequest(context.Background(), subprov.Request{ID: "req-1", IP: "203.0.113.7",
			Actor: subprov.Actor{Type: subprov.ActorOperator, ID: "op-1", Email: "ops@example.net"}})
		seedProvider(t, s, "p1")
		base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		for i := range 5 {
			e := subprov.NewAudit(ctx, "p1", "subscription.suspended", "subscription", "sub-1")
			e.Reason = "asked by phone"
			e.Changes.Set("status", "ACTIVE", "SUSPENDED")
			e.Changes.SetRedacted("email")
			if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.RecordAudit(ctx, e, base.Add(time.Duration(i)*time.Second)) }); err != nil {
				t.Fatal(err)
			}
		}
		var all []subprov.AuditEntry
		page := subprov.Page{Limit: 2}
		for {
			es, err := s.AuditEntries(ctx, store.AuditFilter{ProviderID: "p1", ObjectID: "sub-1"}, page)
			if err != nil {
				t.Fatal(err)
			}
			es, next := subprov.Cut(page, es, store.AuditKey)
			all = append(all, es...)
			if next == "" {
				break
			}
			if page, err = subprov.ParsePage(2, true, next); err != nil {
				t.Fatal(err)
			}
		}
		if len(all) != 5 {
			t.Fatalf("read %d entries over the pages, want 5", len(all))
		}
		for i := 1; i < len(all); i++ {
			if !all[i].At.Before(all[i-1].At) {
				t.Errorf("entry %d at %s is not older than the one before (%s)", i, all[i].At, all[i-1].At)
			}
		}
		e := all[0]
		if e.Actor.Email != "ops@example.net" || e.Actor.ID != "op-1" || e.RequestID != "req-1" || e.IP != "203.0.113.7" ||
			e.Reason != "asked by phone" || e.Changes["status"] != [2]any{"ACTIVE", "SUSPENDED"} || e.Changes["email"] != [2]any{"changed", "changed"} {
			t.Errorf("entry read back as %+v", e)
		}
		if es, _ := s.AuditEntries(ctx, store.AuditFilter{ProviderID: "p2"}, subprov.Page{Limit: 10}); len(es) != 0 {
			t.Errorf("another provider's filter reads %d entries", len(es))
		}
		for _, q := range []string{`UPDATE audit_log SET reason = 'rewritten'`, `DELETE FROM audit_log`} {
			if _, err := rawdb.Writer(s).ExecContext(context.Background(), q); err == nil {
				t.Errorf("%s: accepted, want refused", q)
			}
		}
		var n int
		if err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM audit_log WHERE reason = 'asked by phone'`).Scan(&n); err != nil || n != 5 {
			t.Errorf("after the refused statements: %d entries as written (%v), want 5", n, err)
		}
	})
}
