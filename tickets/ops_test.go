package tickets_test

import (
	"context"
	"errors"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// TestOperatorTicketQueue: operators list the tickets of their scope by status and group, and
// work them (status, assignee, comment) under the version they read, each edit audited.
func TestOperatorTicketQueue(t *testing.T) {
	platform := &subprov.Operator{ID: "op-admin", Email: "admin@ops.test", Role: subprov.RoleAdmin}
	support := &subprov.Operator{ID: "op-support", Email: "support@ops.test", Role: subprov.RoleSupport, ProviderID: servicetest.Northwind}
	maple := &subprov.Operator{ID: "op-maple", Email: "maple@ops.test", Role: subprov.RoleAdmin, ProviderID: servicetest.Maple}
	viewer := &subprov.Operator{ID: "op-viewer", Email: "viewer@ops.test", Role: subprov.RoleViewer}
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		svc := &tickets.Service{Store: e.Store, Clock: e.Clock}
		nw := open(t, e, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindSupport, Subject: "No sync"})
		open(t, e, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindOperator, Subject: "Switch write failed", Group: "NOC"})
		open(t, e, &subprov.Ticket{ProviderID: servicetest.Maple, Kind: tickets.KindSupport, Subject: "Slow"})
		for _, o := range []*subprov.Operator{support, maple} {
			if err := e.Store.InTx(ctx, func(tx *store.Tx) error { return tx.UpsertOperator(ctx, o, "", e.Clock.Now()) }); err != nil {
				t.Fatal(err)
			}
		}

		lists := []struct {
			name string
			op   *subprov.Operator
			f    tickets.Filter
			want int
			code subprov.Code
		}{
			{"platform", platform, tickets.Filter{}, 3, ""},
			{"Northwind's", support, tickets.Filter{}, 2, ""},
			{"Northwind's asking for Maple's", support, tickets.Filter{ProviderID: servicetest.Maple}, 0, ""},
			{"by group", platform, tickets.Filter{Group: "NOC"}, 1, ""},
			{"by status", platform, tickets.Filter{Status: "solved"}, 0, ""},
			{"an unknown status", platform, tickets.Filter{Status: "done"}, 0, subprov.EINVALID},
		}
		for _, tt := range lists {
			t.Run("list "+tt.name, func(t *testing.T) {
				var got int
				page := subprov.Page{Limit: 1}
				for {
					ts, next, err := svc.List(ctx, tt.op, tt.f, page)
					if subprov.ErrorCode(err) != tt.code && !(tt.code == "" && err == nil) {
						t.Fatalf("err %v, want %s", err, tt.code)
					}
					got += len(ts)
					if next == "" {
						break
					}
					if page, err = subprov.ParsePage(1, true, next); err != nil {
						t.Fatal(err)
					}
				}
				if got != tt.want {
					t.Errorf("%d tickets, want %d", got, tt.want)
				}
			})
		}

		reads := []struct {
			name string
			op   *subprov.Operator
			id   string
			code subprov.Code
		}{
			{"in scope", support, nw.ID, ""},
			{"platform", viewer, nw.ID, ""},
			{"another provider's", maple, nw.ID, subprov.ENOTFOUND},
			{"unknown", platform, store.NewID(), subprov.ENOTFOUND},
			{"a role that does not read tickets", &subprov.Operator{Role: subprov.RoleInstaller}, nw.ID, subprov.EFORBIDDEN},
		}
		for _, tt := range reads {
			t.Run("read "+tt.name, func(t *testing.T) {
				got, err := svc.Get(ctx, tt.op, tt.id)
				if tt.code == "" {
					if err != nil || got.ID != nw.ID || got.Subject != "No sync" {
						t.Fatalf("err %v, ticket %+v", err, got)
					}
					return
				}
				var se *subprov.Error
				if !errors.As(err, &se) || se.Code != tt.code || (tt.code == subprov.ENOTFOUND && se.Message != "Ticket not found") {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
			})
		}

		str := func(s string) *string { return &s }
		edits := []struct {
			name     string
			op       *subprov.Operator
			id       string
			version  int64
			u        tickets.Update
			code     subprov.Code
			status   string
			assigned string
			comments int
		}{
			{"a viewer may not", viewer, nw.ID, 0, tickets.Update{Status: str("solved")}, subprov.EFORBIDDEN, "", "", 0},
			{"another provider's", maple, nw.ID, 0, tickets.Update{Status: str("solved")}, subprov.ENOTFOUND, "", "", 0},
			{"unknown", support, store.NewID(), 0, tickets.Update{Status: str("solved")}, subprov.ENOTFOUND, "", "", 0},
			{"nothing to change", support, nw.ID, 0, tickets.Update{}, subprov.EINVALID, "", "", 0},
			{"an unknown status", support, nw.ID, 0, tickets.Update{Status: str("done")}, subprov.EINVALID, "", "", 0},
			{"an empty comment", support, nw.ID, 0, tickets.Update{Comment: str(" ")}, subprov.EINVALID, "", "", 0},
			{"assigned to another provider's operator", support, nw.ID, 0, tickets.Update{AssignedTo: str("maple@ops.test")}, subprov.EINVALID, "", "", 0},
			{"assigned to nobody's e-mail", support, nw.ID, 0, tickets.Update{AssignedTo: str("nobody@ops.test")}, subprov.EINVALID, "", "", 0},
			{"assigned and pending", support, nw.ID, 1, tickets.Update{Status: str("pending"), AssignedTo: str("support@ops.test")}, "", "pending", "support@ops.test", 0},
			{"a stale version", support, nw.ID, 1, tickets.Update{Status: str("solved")}, subprov.ECONFLICT, "", "", 0},
			{"a comment", platform, nw.ID, 2, tickets.Update{Comment: str("Asked the customer to reboot")}, "", "pending", "support@ops.test", 1},
			{"solved and unassigned", support, nw.ID, 0, tickets.Update{Status: str("solved"), AssignedTo: str("")}, "", "solved", "", 1},
		}
		for _, tt := range edits {
			t.Run("edit "+tt.name, func(t *testing.T) {
				audits := countRows(t, e, `SELECT COUNT(*) FROM audit_log WHERE action = 'ticket.updated'`)
				got, err := svc.Update(ctx, tt.op, tt.id, tt.version, tt.u)
				after := countRows(t, e, `SELECT COUNT(*) FROM audit_log WHERE action = 'ticket.updated'`)
				if tt.code != "" {
					var se *subprov.Error
					if !errors.As(err, &se) || se.Code != tt.code {
						t.Fatalf("err %v, want %s", err, tt.code)
					}
					if tt.code == subprov.ENOTFOUND && se.Message != "Ticket not found" {
						t.Errorf("message %q", se.Message)
					}
					if after != audits {
						t.Errorf("a refused edit was audited")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tt.status || got.AssignedTo != tt.assigned || len(got.Comments) != tt.comments || after != audits+1 {
					t.Fatalf("ticket %+v with %d comments, audits %d -> %d", got.Ticket, len(got.Comments), audits, after)
				}
			})
		}
		var changes string
		if err := e.Store.R().QueryRow(ctx, `SELECT changes FROM audit_log WHERE action = 'ticket.updated' AND changes LIKE '%comment%'`).Scan(&changes); err != nil {
			t.Fatal(err)
		}
		if changes != `{"comment":["changed","changed"]}` {
			t.Errorf("a comment is audited as %s", changes)
		}
	})
}

func countRows(t *testing.T, e *servicetest.Env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Store.R().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
