package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
)

// Ids sent in a body: another provider's object answers exactly as an unknown id, and nothing
// of it shows.

// TestPortWithAnotherProvidersUnit: a provider's admin adding a port in its own building that
// names another provider's unit is told the unit is unknown, as for an id that does not exist,
// and the answer does not name the unit's building.
func TestPortWithAnotherProvidersUnit(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		const unknown = "u1000000-0000-4000-8000-00000000ffff"
		port := func(unit string) *apptest.Response {
			return call(s, maple, "POST", "/api/v1/ports", map[string]any{"building_id": buildingWest, "unit_id": unit,
				"switch": "sw-review", "port": "p1"})
		}
		theirs, none := port(unitKing1205), port(unknown)
		want(t, theirs, 422, "another provider's unit")
		want(t, none, 422, "an unknown unit")
		if strings.Contains(string(theirs.Raw), buildingKing) {
			t.Errorf("the answer names the other provider's building: %s", theirs.Raw)
		}
		if got, exp := strings.ReplaceAll(string(theirs.Raw), unitKing1205, "ID"), strings.ReplaceAll(string(none.Raw), unknown, "ID"); got != exp {
			t.Errorf("another provider's unit answers\n%s\nan unknown one\n%s", got, exp)
		}
	})
}

// TestTicketAssignedAcrossProviders: a ticket is assigned to an active operator who sees its
// provider; another provider's operator is refused exactly as an e-mail nobody has, and
// nothing changes. The assignee, an e-mail, is audited only as changed.
func TestTicketAssignedAcrossProviders(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		req, err := s.Privacy.Request(context.Background(), northwind, priyaID)
		if err != nil {
			t.Fatal(err)
		}
		support := s.OperatorAs(subprov.RoleSupport, northwind)
		s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		path := "/api/v1/tickets/" + req.TicketID
		assign := func(email string) *apptest.Response {
			return call(s, support, "PATCH", path, map[string]any{"assigned_to": email})
		}
		mapleEmail, unknown := "admin."+mapleProvider+"@ops.test", "nobody@ops.test"
		theirs, none := assign(mapleEmail), assign(unknown)
		want(t, theirs, 422, "another provider's operator")
		want(t, none, 422, "an unknown e-mail")
		if string(theirs.Raw) != string(none.Raw) {
			t.Errorf("another provider's operator answers %s, an unknown e-mail %s", theirs.Raw, none.Raw)
		}
		own := "support." + northwind + "@ops.test"
		res := assign(own)
		want(t, res, 200, "its own provider's operator")
		if res.JSON["assigned_to"] != own || res.JSON["version"] != float64(2) {
			t.Errorf("ticket %s", res.Raw)
		}
		var changes string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT changes FROM audit_log WHERE action = 'ticket.updated' AND subject_id = ?`,
			req.TicketID).Scan(&changes); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(changes, "@") || changes != `{"assigned_to":["changed","changed"]}` {
			t.Errorf("the assignment is audited as %s", changes)
		}
	})
}

// TestRetryChargeChecksRoleAndAudits: an operator's retry of an invoice's charge is audited in
// its transaction (invoice.charge_retried, naming the operator), and the capability checks
// the role itself: a viewer is refused whatever the route table says.
func TestRetryChargeChecksRoleAndAudits(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		id, _ := northwindBillingDocuments(t, s)
		provider := northwind
		// The invoice's own charge, queued when it was issued, runs first: reopened before it
		// ran, the invoice would be paid by it again before the retry.
		apptest.Eventually(t, 15*time.Second, "the December invoice paid by its own charge", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND status = 'paid'`, id) == 1
		})
		if _, err := rawdb.Writer(s.Store).Exec(`UPDATE invoices SET status = 'open' WHERE id = '` + id + `'`); err != nil {
			t.Fatal(err)
		}
		viewer := &subprov.Operator{ID: "op-viewer", Email: "viewer@ops.test", Role: subprov.RoleViewer}
		if _, err := s.Billing.RetryNow(ctx, viewer, id); subprov.ErrorCode(err) != subprov.EFORBIDDEN {
			t.Errorf("a viewer's retry: %v, want forbidden", err)
		}
		billingOp := s.OperatorAs(subprov.RoleBilling, provider)
		if r := call(s, billingOp, "POST", "/api/v1/invoices/"+id+"/retry-charge", nil); r.Status != 202 {
			t.Fatalf("retry-charge: %d %s", r.Status, r.Raw)
		}
		res := call(s, s.Operator(), "GET", "/api/v1/audit?object_id="+id+"&action=invoice.charge_retried", nil)
		want(t, res, 200, "audit")
		es := res.JSON["entries"].([]any)
		if len(es) != 1 {
			t.Fatalf("retry audited %d times: %s", len(es), res.Raw)
		}
		if a := es[0].(map[string]any)["actor"].(map[string]any); a["email"] != "billing."+provider+"@ops.test" {
			t.Errorf("retry audited as %v", a)
		}
	})
}

// TestInstallJobWritesCheckRole: assigning, booking and completing an install job check the
// install permission in the capability itself, not only in the route table: a viewer is
// refused (403) for any id, and nothing changes.
func TestInstallJobWritesCheckRole(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		viewer := &subprov.Operator{ID: "op-viewer", Email: "viewer@ops.test", Role: subprov.RoleViewer}
		var job string
		if err := s.Store.R().QueryRow(ctx, `SELECT id FROM install_jobs ORDER BY id LIMIT 1`).Scan(&job); err != nil {
			t.Fatalf("an install job: %v", err)
		}
		const audited = `SELECT COUNT(*) FROM audit_log WHERE subject_id = ?`
		before := count(t, s, audited, job)
		if _, err := s.Install.Assign(ctx, viewer, job, "Team X"); subprov.ErrorCode(err) != subprov.EFORBIDDEN {
			t.Errorf("assign: %v, want forbidden", err)
		}
		if _, err := s.Install.BookForCustomer(ctx, viewer, job, "x"); subprov.ErrorCode(err) != subprov.EFORBIDDEN {
			t.Errorf("book: %v, want forbidden", err)
		}
		if _, err := s.Install.Complete(ctx, viewer, job, ""); subprov.ErrorCode(err) != subprov.EFORBIDDEN {
			t.Errorf("complete: %v, want forbidden", err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE id = ? AND assigned_to = 'Team X'`, job); n != 0 {
			t.Errorf("a viewer assigned the job")
		}
		if after := count(t, s, audited, job); after != before {
			t.Errorf("refused writes left %d audit entries", after-before)
		}
	})
}
