package httpapi_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// TestOperatorInvoicesAndCreditNotes: invoices listed by scope and state, their PDF, a credit
// note up to what the invoice has left, and the bill runs, over HTTP.
func TestOperatorInvoicesAndCreditNotes(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		invoice, creditNote := northwindBillingDocuments(t, s)
		admin := s.Operator()
		billingOp := s.OperatorAs(subprov.RoleBilling, northwind)
		viewer := s.OperatorAs(subprov.RoleViewer, "")
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		listed := func(res *apptest.Response) bool {
			for _, inv := range res.JSON["invoices"].([]any) {
				if inv.(map[string]any)["id"] == invoice {
					return true
				}
			}
			return false
		}
		lists := []struct {
			name    string
			headers map[string]string
			query   string
			status  int
			listed  bool
		}{
			{"platform admin", admin, "", 200, true},
			{"Northwind's billing operator", billingOp, "?subscriber_id=" + marieID, 200, true},
			{"Maple's admin", maple, "", 200, false},
			{"Maple's admin asking for Northwind", maple, "?provider_id=" + northwind, 200, false},
			{"another subscriber", admin, "?subscriber_id=" + priyaID, 200, false},
			{"void only", admin, "?status=void", 200, false},
			{"an unknown state", admin, "?status=late", 422, false},
			{"a bad limit", admin, "?limit=0", 422, false},
		}
		for _, tt := range lists {
			t.Run("list "+tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/invoices" + tt.query, Headers: tt.headers})
				if res.Status != tt.status {
					t.Fatalf("%d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && listed(res) != tt.listed {
					t.Errorf("invoice listed %v, want %v: %s", !tt.listed, tt.listed, res.Raw)
				}
			})
		}
		t.Run("pages", func(t *testing.T) {
			seen, path := 0, "/api/v1/invoices?limit=1"
			for i := 0; path != "" && i < 50; i++ {
				res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: admin})
				if res.Status != 200 {
					t.Fatalf("%d %s", res.Status, res.Raw)
				}
				seen += len(res.JSON["invoices"].([]any))
				path = ""
				if next, ok := res.JSON["next_cursor"].(string); ok {
					path = "/api/v1/invoices?limit=1&cursor=" + next
				}
			}
			if want := count(t, s, `SELECT COUNT(*) FROM invoices`); seen != want {
				t.Errorf("pages listed %d invoices, want %d", seen, want)
			}
		})

		// A voided credit note is not shown to its subscriber: not to an operator either.
		ctx := context.Background()
		var voided string
		p, _ := s.Store.Provider(ctx, northwind)
		sub, _ := s.Store.SubscriptionByID(ctx, marieLine)
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			cn, err := s.Billing.IssueCredit(ctx, tx, p, sub, 900, "mistake", "", time.Now())
			if err != nil {
				return err
			}
			voided = cn.ID
			return tx.VoidCredit(ctx, cn.ID, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		installer := s.OperatorAs(subprov.RoleInstaller, northwind)
		invoicePDF, creditPDF := "/api/v1/invoices/"+invoice+"/document", "/api/v1/credit-notes/"+creditNote+"/document"
		documents := []struct {
			name    string
			headers map[string]string
			path    string
			status  int
			missing string // the 404's detail
		}{
			{"Northwind's billing operator", billingOp, invoicePDF, 200, ""},
			{"a viewer", viewer, invoicePDF, 200, ""},
			{"an installer", installer, invoicePDF, 403, ""},
			{"Maple's admin", maple, invoicePDF, 404, "Invoice not found"},
			{"unknown", admin, "/api/v1/invoices/" + store.NewID() + "/document", 404, "Invoice not found"},
			{"credit note: Northwind's billing operator", billingOp, creditPDF, 200, ""},
			{"credit note: a viewer", viewer, creditPDF, 200, ""},
			{"credit note: an installer", installer, creditPDF, 403, ""},
			{"credit note: Maple's admin", maple, creditPDF, 404, "Credit note not found"},
			{"credit note: voided", admin, "/api/v1/credit-notes/" + voided + "/document", 404, "Credit note not found"},
			{"credit note: unknown", admin, "/api/v1/credit-notes/" + store.NewID() + "/document", 404, "Credit note not found"},
			{"credit note: an invoice's id", admin, "/api/v1/credit-notes/" + invoice + "/document", 404, "Credit note not found"},
		}
		for _, tt := range documents {
			t.Run("document "+tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: tt.path, Headers: tt.headers})
				if res.Status != tt.status {
					t.Fatalf("%d, want %d: %.200s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && (!bytes.HasPrefix(res.Raw, []byte("%PDF")) || res.Header.Get("Content-Type") != "application/pdf") {
					t.Errorf("not a PDF: %s", res.Header.Get("Content-Type"))
				}
				if tt.status == 404 && res.JSON["detail"] != tt.missing {
					t.Errorf("body %s, want %q", res.Raw, tt.missing)
				}
			})
		}
		// The credit note's own document: its number and reason.
		var number string
		if err := s.Store.R().QueryRow(ctx, `SELECT number FROM credit_notes WHERE id = ?`, creditNote).Scan(&number); err != nil {
			t.Fatal(err)
		}
		res := s.Do(apptest.Request{Method: "GET", Path: creditPDF, Headers: admin})
		if text := pdfText(res.Raw); !strings.Contains(text, number) || !strings.Contains(text, "goodwill") {
			t.Errorf("the credit note's PDF does not show %s and its reason", number)
		}

		var total subprov.Money
		if err := s.Store.R().QueryRow(context.Background(), `SELECT total_minor FROM invoices WHERE id = ?`, invoice).Scan(&total); err != nil {
			t.Fatal(err)
		}
		credits := []struct {
			name    string
			headers map[string]string
			body    any
			status  int
		}{
			{"a viewer may not", viewer, map[string]any{"amount": "1.00", "reason": "goodwill"}, 403},
			{"Maple's admin", maple, map[string]any{"amount": "1.00", "reason": "goodwill"}, 404},
			{"an unknown field", billingOp, map[string]any{"amount": "1.00", "reason": "goodwill", "note": "x"}, 422},
			{"more than the total", billingOp, map[string]any{"amount": (total + 1).String(), "reason": "goodwill"}, 422},
			{"no reason", billingOp, map[string]any{"amount": "1.00"}, 422},
			{"part of it", billingOp, map[string]any{"amount": (total - 100).String(), "reason": "outage"}, 201},
			{"more than is left", admin, map[string]any{"amount": "1.01", "reason": "outage"}, 422},
			{"the rest", admin, map[string]any{"amount": "1.00", "reason": "outage"}, 201},
		}
		for _, tt := range credits {
			t.Run("credit "+tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/invoices/" + invoice + "/credit-notes", Headers: tt.headers, Body: tt.body})
				if res.Status != tt.status {
					t.Fatalf("%d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 201 && (res.JSON["invoice_id"] != invoice || res.JSON["state"] != "open") {
					t.Errorf("credit note %s", res.Raw)
				}
			})
		}
		audit := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?action=credit_note.issued", Headers: admin})
		var byOperator int
		for _, e := range audit.JSON["entries"].([]any) {
			if actor := e.(map[string]any)["actor"].(map[string]any); actor["type"] == "operator" && actor["email"] == fixture.DemoOperatorEmail {
				byOperator++
			}
		}
		if byOperator != 1 {
			t.Errorf("credit notes the demo admin issued, audited: %d, want 1: %s", byOperator, audit.Raw)
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/api/v1/invoices?subscriber_id=" + marieID, Headers: admin})
		for _, inv := range res.JSON["invoices"].([]any) {
			if m := inv.(map[string]any); m["id"] == invoice && m["credited"] != float64(total)/100 {
				t.Errorf("credited %v, want %s", m["credited"], total)
			}
		}

		runs := []struct {
			name    string
			headers map[string]string
			query   string
			status  int
			any     bool
		}{
			{"platform", admin, "", 200, true},
			{"Northwind's", billingOp, "?provider_id=" + northwind, 200, true},
			{"Maple's asking for Northwind's", maple, "?provider_id=" + northwind, 200, false},
		}
		for _, tt := range runs {
			t.Run("bill runs "+tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/bill-runs" + tt.query, Headers: tt.headers})
				if res.Status != tt.status {
					t.Fatalf("%d: %s", res.Status, res.Raw)
				}
				found := false
				for _, r := range res.JSON["bill_runs"].([]any) {
					if m := r.(map[string]any); m["provider_id"] == northwind && m["period"] == "2026-12" && m["finished_at"] != nil {
						found = true
					}
				}
				if found != tt.any {
					t.Errorf("Northwind's December run listed %v, want %v: %s", found, tt.any, res.Raw)
				}
			})
		}
	})
}

// TestOperatorTickets: the ticket queue over HTTP, with If-Match.
func TestOperatorTickets(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		req, err := s.Privacy.Request(context.Background(), northwind, priyaID)
		if err != nil {
			t.Fatal(err)
		}
		support := s.OperatorAs(subprov.RoleSupport, northwind)
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/tickets?status=open", Headers: support})
		if res.Status != 200 || len(res.JSON["tickets"].([]any)) == 0 {
			t.Fatalf("%d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/tickets", Headers: maple}); res.Status != 200 || len(res.JSON["tickets"].([]any)) != 0 {
			t.Fatalf("Maple sees Northwind's tickets: %s", res.Raw)
		}
		path := "/api/v1/tickets/" + req.TicketID
		edits := []struct {
			name    string
			headers map[string]string
			ifMatch string
			body    any
			status  int
		}{
			{"Maple's admin", maple, "", map[string]any{"status": "pending"}, 404},
			{"an empty edit", support, "", map[string]any{}, 422},
			{"an unknown status", support, "", map[string]any{"status": "done"}, 422},
			{"a bad If-Match", support, "x", map[string]any{"status": "pending"}, 422},
			{"assigned", support, "1", map[string]any{"status": "pending", "assigned_to": "support." + northwind + "@ops.test", "comment": "Checking the lines"}, 200},
			{"a stale version", support, "1", map[string]any{"status": "solved"}, 409},
			{"solved", support, "2", map[string]any{"status": "solved"}, 200},
		}
		for _, tt := range edits {
			t.Run(tt.name, func(t *testing.T) {
				h := map[string]string{}
				for k, v := range tt.headers {
					h[k] = v
				}
				if tt.ifMatch != "" {
					h["If-Match"] = tt.ifMatch
				}
				res := s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: h, Body: tt.body})
				if res.Status != tt.status {
					t.Fatalf("%d, want %d: %s", res.Status, tt.status, res.Raw)
				}
			})
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/api/v1/tickets?status=solved", Headers: support})
		tickets := res.JSON["tickets"].([]any)
		if len(tickets) != 1 {
			t.Fatalf("solved tickets: %s", res.Raw)
		}
		tk := tickets[0].(map[string]any)
		if tk["version"] != float64(3) || tk["assigned_to"] != "support."+northwind+"@ops.test" || len(tk["comments"].([]any)) != 1 {
			t.Errorf("ticket %s", res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'ticket.updated' AND subject_id = ?`, req.TicketID); n != 2 {
			t.Errorf("ticket.updated audited %d times, want 2", n)
		}
	})
}

// TestOperatorPrivacyRequests: a request is refused while the line is live (409 lines_live,
// nothing changes); once the line has ended the approval removes the login; a rejection needs
// a reason.
func TestOperatorPrivacyRequests(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		marie, err := s.Privacy.Request(ctx, northwind, marieID)
		if err != nil {
			t.Fatal(err)
		}
		priya, err := s.Privacy.Request(ctx, northwind, priyaID)
		if err != nil {
			t.Fatal(err)
		}
		support := s.OperatorAs(subprov.RoleSupport, northwind)
		billingOp := s.OperatorAs(subprov.RoleBilling, northwind)
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/privacy-requests?status=pending", Headers: support})
		if res.Status != 200 || len(res.JSON["privacy_requests"].([]any)) != 2 {
			t.Fatalf("%d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/privacy-requests", Headers: maple}); len(res.JSON["privacy_requests"].([]any)) != 0 {
			t.Fatalf("Maple sees Northwind's requests: %s", res.Raw)
		}
		approve := func(id string, h map[string]string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/privacy-requests/" + id + "/approve", Headers: h})
		}
		for _, tt := range []struct {
			name    string
			headers map[string]string
			status  int
			detail  string
		}{
			{"a billing operator", billingOp, 403, "Forbidden"},
			{"Maple's admin", maple, 404, "Privacy request not found"},
			{"a live line", support, 409, "lines_live"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if res := approve(marie.ID, tt.headers); res.Status != tt.status || res.JSON["detail"] != tt.detail {
					t.Fatalf("%d %s, want %d %s", res.Status, res.Raw, tt.status, tt.detail)
				}
			})
		}
		s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass) // the refusal changed nothing
		ended := s.Clock.Now().Add(-time.Hour).UTC()
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE subscriptions SET status = 'CANCELLED', canceled_at = ?, ended_at = ? WHERE id = ?`, ended, ended, marieLine)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		res = approve(marie.ID, support)
		if res.Status != 200 || res.JSON["status"] != "approved" || res.JSON["decided_at"] == nil {
			t.Fatalf("approve: %d %s", res.Status, res.Raw)
		}
		login := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login",
			Body: map[string]string{"email": fixture.DemoSubscriberEmail, "password": fixture.DemoSubscriberPass}})
		if login.Status != 401 {
			t.Errorf("Marie's login after the deletion: %d %s", login.Status, login.Raw)
		}
		if res := approve(marie.ID, support); res.Status != 409 {
			t.Errorf("approving twice: %d %s", res.Status, res.Raw)
		}
		audit := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + marie.ID, Headers: s.Operator()})
		if !bytes.Contains(audit.Raw, []byte(`"privacy_request.approved"`)) || bytes.Contains(bytes.ToLower(audit.Raw), []byte("marie")) {
			t.Errorf("the approval's audit entries: %s", audit.Raw)
		}

		reject := func(body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/privacy-requests/" + priya.ID + "/reject", Headers: support, Body: body})
		}
		for _, tt := range []struct {
			body   any
			status int
		}{
			{map[string]any{}, 422},
			{map[string]any{"reason": "x", "extra": 1}, 422},
			{map[string]any{"reason": "Billing dispute open"}, 200},
			{map[string]any{"reason": "again"}, 409},
		} {
			if res := reject(tt.body); res.Status != tt.status {
				t.Errorf("reject %v: %d, want %d: %s", tt.body, res.Status, tt.status, res.Raw)
			}
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/api/v1/privacy-requests?status=rejected", Headers: support})
		if rs := res.JSON["privacy_requests"].([]any); len(rs) != 1 || rs[0].(map[string]any)["reason"] != "Billing dispute open" {
			t.Errorf("rejected: %s", res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/privacy-requests?status=done", Headers: support}); res.Status != 422 {
			t.Errorf("an unknown status: %d", res.Status)
		}
	})
}

// TestSubscriberDeletionRequest: the holder asks for the deletion of the account's personal
// data; the request waits for an operator with a ticket, and asking again answers the same.
func TestSubscriberDeletionRequest(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		var tickets []any
		for _, path := range []string{"/partner/subscriber/me/privacy/deletion-request", "/api/v1/subscriber/me/privacy/deletion-request"} {
			res := s.Do(apptest.Request{Method: "POST", Path: path, Headers: marie})
			if res.Status != 202 || res.JSON["ticket_id"] == "" {
				t.Fatalf("%s: %d %s", path, res.Status, res.Raw)
			}
			tickets = append(tickets, res.JSON["ticket_id"])
		}
		if tickets[0] != tickets[1] {
			t.Errorf("asking again opened another ticket: %v", tickets)
		}
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/privacy-requests?status=pending", Headers: s.OperatorAs(subprov.RoleSupport, northwind)})
		rs := res.JSON["privacy_requests"].([]any)
		if len(rs) != 1 || rs[0].(map[string]any)["subscriber_id"] != marieID || rs[0].(map[string]any)["ticket_id"] != tickets[0] {
			t.Fatalf("pending requests: %s", res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'privacy_request.created' AND actor_type = 'subscriber'`); n != 1 {
			t.Errorf("the request audited %d times", n)
		}
	})
}
