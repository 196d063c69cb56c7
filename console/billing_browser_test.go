package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
)

// auditedBy reports whether the audit log (GET /api/v1/audit, read by the demo admin) has an
// entry action of object by the operator with e-mail.
func auditedBy(t *testing.T, s *apptest.Service, object, action, email string) bool {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + object + "&action=" + action, Headers: s.Operator()})
	entries, _ := res.JSON["entries"].([]any)
	for _, e := range entries {
		if actor, _ := e.(map[string]any)["actor"].(map[string]any); actor["email"] == email {
			return true
		}
	}
	return false
}

// TestConsoleBillingPagesInChromium: every billing, webhook, ticket and privacy page loads in
// Chromium as each role that reads it and fits 1280 and 390 px with a label on every field; the
// admin's, which show every control, leave their screenshots.
func TestConsoleBillingPagesInChromium(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		o := setUp(t, s)
		pages := map[string]string{
			"invoices": "/console/invoices", "invoice": "/console/invoices/" + o.invoice, "bill-runs": "/console/bill-runs",
			"webhook-events": "/console/webhook-events", "webhook-event": "/console/webhook-events/" + o.event,
			"tickets": "/console/tickets", "ticket": "/console/tickets/" + o.ticket, "privacy-requests": "/console/privacy-requests",
		}
		for _, role := range []subprov.Role{subprov.RoleAdmin, subprov.RoleSupport, subprov.RoleBilling, subprov.RoleViewer} {
			t.Run(string(role), func(t *testing.T) {
				email, password := s.PutOperator(role, "")
				ctx := consoleTab(t, s, email, password)
				for name, path := range pages {
					browse(t, ctx, s, path)
					if h := heading(t, ctx); h == "Error" || h == "Sign in" {
						t.Fatalf("%s as %s: %q", path, role, h)
					}
					if role == subprov.RoleAdmin { // the admin's pages show every control: their screenshots
						checkPage(t, ctx, name)
						continue
					}
					problems, err := browsertest.CheckLayout(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range problems {
						t.Errorf("%s as %s: %s", name, role, p)
					}
				}
			})
		}
	})
}

// TestConsoleReplayJourney: an event its receiver refused fails; from the home page's count a
// support operator finds it among the failed events, opens it, sees the refused attempt, and
// replays it with the receiver up: a new successful attempt on the event's page, audited.
func TestConsoleReplayJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		o := setUp(t, s)
		o.receiver.setAnswer(503)
		failing := s.RecordEvent(t, northwind, marieLine)
		apptest.Eventually(t, 15*time.Second, "the first attempt refused", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM events WHERE id = ? AND attempts = 1`, failing) == 1
		})
		exec(t, s, `UPDATE events SET delivery_state = 'failed', next_attempt_at = NULL WHERE id = ?`, failing) // its retries ran out
		email, password := s.PutOperator(subprov.RoleSupport, "")
		ctx := consoleTab(t, s, email, password)

		if err := follow(ctx, `#results`, chromedp.Click(chromedp.CSS(`a[href="/console/webhook-events?status=failed"]`))); err != nil {
			t.Fatalf("the home page's failing events: %v", err)
		}
		if err := follow(ctx, `table.attempts`, chromedp.Click(chromedp.CSS(`a[href="/console/webhook-events/`+failing+`"]`))); err != nil {
			t.Fatalf("the failed event is not listed: %v", err)
		}
		if got := pageText(t, ctx, `table.attempts tbody tr:last-child td[data-label="Answer"]`); got != "503" {
			t.Fatalf("the refused attempt shows %q", got)
		}
		o.receiver.setAnswer(0)
		if err := follow(ctx, `.flash`, chromedp.Click(chromedp.CSS(`form[action$="/replay"] button`))); err != nil {
			t.Fatalf("replay: %v", err)
		}
		checkPage(t, ctx, "webhook-event-replayed")
		if f := pageText(t, ctx, ".flash"); !strings.Contains(f, "answered 200") {
			t.Errorf("flash %q", f)
		}
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.attempts td[data-label="Answer"]')).map(e => e.textContent)`))
		if err != nil || len(rows) != 2 || rows[0] != "503" || rows[1] != "200" {
			t.Errorf("attempts %v (%v), want 503 then 200", rows, err)
		}
		if d := pageText(t, ctx, "dl.facts"); !strings.Contains(d, "delivered") {
			t.Errorf("the event after its replay: %q", d)
		}
		if !auditedBy(t, s, failing, "webhook_event.replayed", email) {
			t.Error("the replay is not in the audit log as the operator's")
		}
	})
}

// TestConsoleCreditNoteJourney: a billing operator asks for more than the invoice has left and
// is told so beside the amount, its input kept; then issues a good note, audited.
func TestConsoleCreditNoteJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		o := setUp(t, s)
		var total subprov.Money
		if err := s.Store.R().QueryRow(context.Background(), `SELECT total_minor FROM invoices WHERE id = ?`, o.invoice).Scan(&total); err != nil {
			t.Fatal(err)
		}
		email, password := s.PutOperator(subprov.RoleBilling, "")
		ctx := consoleTab(t, s, email, password)
		browse(t, ctx, s, "/console/invoices/"+o.invoice)
		tooMuch := (total + 1).String()
		if err := follow(ctx, "#amount-error", chromedp.SendKeys(chromedp.CSS("#amount"), tooMuch), chromedp.SendKeys(chromedp.CSS("#reason"), "Outage on 3 December"),
			chromedp.Click(chromedp.CSS(`form[action$="/credit-notes"] button`))); err != nil {
			t.Fatalf("a note above the total: %v", err)
		}
		checkPage(t, ctx, "invoice-credit-refused")
		if e := pageText(t, ctx, "#amount-error"); !strings.Contains(e, "at most "+total.String()+", the invoice's total less its earlier credits") {
			t.Errorf("the refusal says %q", e)
		}
		kept, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector('#amount').value, document.querySelector('#reason').value]`))
		if err != nil || kept[0] != tooMuch || kept[1] != "Outage on 3 December" {
			t.Errorf("input kept: %v (%v)", kept, err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE invoice_id = ?`, o.invoice); n != 0 {
			t.Fatalf("the refused note was issued")
		}
		if err := follow(ctx, ".flash", chromedp.Clear(chromedp.CSS("#amount")), chromedp.SendKeys(chromedp.CSS("#amount"), "5.00"),
			chromedp.Click(chromedp.CSS(`form[action$="/credit-notes"] button`))); err != nil {
			t.Fatalf("a good note: %v", err)
		}
		if f := pageText(t, ctx, ".flash"); !strings.Contains(f, "of 5.00 CAD issued") {
			t.Errorf("flash %q", f)
		}
		if d := pageText(t, ctx, "dl.facts"); !strings.Contains(d, "5.00 CAD") {
			t.Errorf("the invoice's credited amount: %q", d)
		}
		var note string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT id FROM credit_notes WHERE invoice_id = ?`, o.invoice).Scan(&note); err != nil {
			t.Fatal(err)
		}
		if !auditedBy(t, s, note, "credit_note.issued", email) {
			t.Error("the credit note is not in the audit log as the operator's")
		}
		// The invoice lists the note with its PDF, at both widths.
		checkPage(t, ctx, "invoice-credit-notes")
		if cell := pageText(t, ctx, `section[aria-labelledby="credit-notes"] td[data-label="Document"]`); !strings.Contains(cell, "PDF") {
			t.Errorf("the credit note's document cell: %q", cell)
		}
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href="/console/credit-notes/`+note+`/document"]').length`)); err != nil || n != 1 {
			t.Errorf("links to the credit note's PDF: %d (%v)", n, err)
		}
	})
}

// TestConsoleRetryChargeJourney: a billing operator retries an open invoice's charge from its
// page: queued, audited.
func TestConsoleRetryChargeJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		o := setUp(t, s)
		exec(t, s, `UPDATE invoices SET status = 'open', paid_at = NULL WHERE id = ?`, o.invoice) // its AutoPay was declined
		email, password := s.PutOperator(subprov.RoleBilling, "")
		ctx := consoleTab(t, s, email, password)
		browse(t, ctx, s, "/console/invoices?status=overdue")
		if err := follow(ctx, `form[action$="/retry-charge"]`, chromedp.Click(chromedp.CSS(`a[href="/console/invoices/`+o.invoice+`"]`))); err != nil {
			t.Fatalf("the overdue invoice: %v", err)
		}
		if err := follow(ctx, ".flash", chromedp.Click(chromedp.CSS(`form[action$="/retry-charge"] button`))); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if f := pageText(t, ctx, ".flash"); !strings.Contains(f, "An AutoPay attempt for invoice") {
			t.Errorf("flash %q", f)
		}
		if !auditedBy(t, s, o.invoice, "invoice.charge_retried", email) {
			t.Error("the retry is not in the audit log as the operator's")
		}
	})
}
