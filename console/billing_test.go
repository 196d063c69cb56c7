package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// Priya, of the demo's accounts (subscribers_test.go names the others), asks for her data's
// deletion.
const priyaID = "s1000000-0000-4000-8000-000000000002"

// objects are one of each object the pages show, all Northwind's: Marie's December invoice,
// a webhook event, and Priya's privacy request with its ticket.
type objects struct {
	invoice, event, privacy, ticket string
	receiver                        *receiver
}

// receiver is a provider's webhook receiver on loopback, answering with answer (200 when 0).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	answer int
	got    int
}

func (h *receiver) setAnswer(code int) { h.mu.Lock(); h.answer = code; h.mu.Unlock() }

func (h *receiver) received() int { h.mu.Lock(); defer h.mu.Unlock(); return h.got }

// newReceiver starts a receiver and makes it Northwind's webhook URL.
func newReceiver(t *testing.T, s *apptest.Service) *receiver {
	t.Helper()
	h := &receiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.got++
		if h.answer != 0 {
			w.WriteHeader(h.answer)
		}
	}))
	t.Cleanup(h.srv.Close)
	exec(t, s, `UPDATE providers SET webhook_url = ? WHERE id = ?`, h.srv.URL, northwind)
	return h
}

func exec(t *testing.T, s *apptest.Service, q string, args ...any) {
	t.Helper()
	if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(q), args...); err != nil {
		t.Fatal(err)
	}
}

// count is the number a COUNT query answers.
func count(t testing.TB, s *apptest.Service, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.Store.R().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// setUp makes the objects: the clock on 5 December 2026 bills Marie's December; the event is
// recorded and delivered to a receiver answering 200.
func setUp(t *testing.T, s *apptest.Service) objects {
	t.Helper()
	ctx := context.Background()
	var o objects
	s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
	apptest.Eventually(t, 15*time.Second, "Marie's December invoice", func() bool {
		return s.Store.R().QueryRow(ctx, `SELECT id FROM invoices WHERE subscription_id = ? AND period = '2026-12'`, marieLine).Scan(&o.invoice) == nil
	})
	req, err := s.Privacy.Request(ctx, northwind, priyaID)
	if err != nil {
		t.Fatal(err)
	}
	o.privacy, o.ticket = req.ID, req.TicketID
	o.receiver = newReceiver(t, s)
	o.event = s.RecordEvent(t, northwind, marieLine)
	// A provider's events are sent in order: the next one waits until this one is delivered.
	apptest.Eventually(t, 15*time.Second, "the event delivered", func() bool {
		return count(t, s, `SELECT COUNT(*) FROM events WHERE id = ? AND delivery_state = 'delivered'`, o.event) == 1
	})
	s.Settle(t) // the invoice's AutoPay charge is done: a test sets the state it needs
	return o
}

// TestConsoleBillingPages: each page and form of billing, webhook events, tickets and privacy
// requests, as the capability answers it: lists by filter and page, the PDF, a credit note
// refused then issued, a charge retried, an event replayed, a ticket worked under its version,
// a privacy request refused while its line is live and rejected with a reason; another
// provider's objects are not found.
func TestConsoleBillingPages(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		o := setUp(t, s)
		admin := s.ConsoleAs(t, subprov.RoleAdmin, "")
		billing := s.ConsoleAs(t, subprov.RoleBilling, northwind)
		support := s.ConsoleAs(t, subprov.RoleSupport, northwind)
		mapleAdmin := s.ConsoleAs(t, subprov.RoleAdmin, maple)

		t.Run("lists", func(t *testing.T) {
			exec(t, s, `UPDATE invoices SET status = 'open', paid_at = NULL WHERE id = ?`, o.invoice) // dated 1 December, unpaid
			for _, tt := range []struct {
				path   string
				status int
				shown  []string
				gone   []string
			}{
				{"/console/invoices", 200, []string{`href="/console/invoices/` + o.invoice + `"`, "Northwind"}, nil},
				{"/console/invoices?status=overdue", 200, []string{o.invoice, "overdue"}, nil},
				{"/console/invoices?status=paid", 200, nil, []string{o.invoice}},
				{"/console/invoices?subscriber_id=" + priyaID, 200, nil, []string{o.invoice}},
				{"/console/invoices?provider_id=" + maple, 200, nil, []string{o.invoice}},
				{"/console/invoices?status=late", 422, []string{"Status must be one of open, overdue, paid, void", `aria-invalid="true"`}, nil},
				{"/console/invoices?cursor=nope", 422, []string{"Page is not a cursor this list issued"}, nil},
				{"/console/bill-runs", 200, []string{"2026-12"}, nil},
				{"/console/webhook-events", 200, []string{`href="/console/webhook-events/` + o.event + `"`}, nil},
				{"/console/webhook-events?status=failed", 200, []string{"No events match."}, []string{o.event}},
				{"/console/webhook-events?type=subscription.activated", 200, nil, []string{o.event}},
				{"/console/webhook-events?status=lost", 422, []string{"Status want pending, delivered, failed or no_endpoint"}, nil},
				{"/console/tickets?status=open", 200, []string{`href="/console/tickets/` + o.ticket + `"`}, nil},
				{"/console/tickets?status=solved", 200, nil, []string{o.ticket}},
				{"/console/privacy-requests?status=pending", 200, []string{"Approve and delete", `id="reason-` + o.privacy + `"`}, nil},
				{"/console/privacy-requests?status=approved", 200, []string{"No requests match."}, nil},
			} {
				p := admin.Get(tt.path)
				wantPage(t, tt.path, p, tt.status, tt.shown...)
				for _, g := range tt.gone {
					if strings.Contains(p.Body, g) {
						t.Errorf("%s shows %q", tt.path, g)
					}
				}
			}
			// An htmx request gets the table only.
			req, _ := http.NewRequest("GET", s.URL+"/console/invoices?status=paid", nil)
			req.Header.Set("HX-Request", "true")
			if p := admin.Do(req); p.Status != 200 || strings.Contains(p.Body, "<html") || strings.Contains(p.Body, `<form method="get"`) {
				t.Errorf("htmx fragment: %d %.300s", p.Status, p.Body)
			}
		})

		t.Run("pages", func(t *testing.T) {
			seen, path := 0, "/console/invoices?limit=1"
			for i := 0; path != "" && i < 100; i++ {
				p := admin.Get(path)
				wantPage(t, path, p, 200)
				seen += strings.Count(p.Body, `<td data-label="Number">`)
				path = ""
				if _, after, ok := strings.Cut(p.Body, `<p class="pager"><a href="`); ok {
					path, _, _ = strings.Cut(after, `"`)
					path = strings.ReplaceAll(path, "&amp;", "&")
				}
			}
			if n := count(t, s, `SELECT COUNT(*) FROM invoices`); seen != n {
				t.Errorf("the pages listed %d invoices, want %d", seen, n)
			}
		})

		t.Run("the PDF", func(t *testing.T) {
			p := billing.Get("/console/invoices/" + o.invoice + "/document")
			if p.Status != 200 || p.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(p.Body, "%PDF") {
				t.Errorf("PDF: %d %s", p.Status, p.Header.Get("Content-Type"))
			}
			// The account page links here: the PDF has no second address under the subscriber.
			var subscriber string
			if err := s.Store.R().QueryRow(context.Background(), `SELECT subscriber_id FROM invoices WHERE id = ?`, o.invoice).Scan(&subscriber); err != nil {
				t.Fatal(err)
			}
			wantPage(t, "the PDF under the subscriber", billing.Get("/console/subscribers/"+subscriber+"/invoices/"+o.invoice+"/document"), 404)
		})

		t.Run("scope", func(t *testing.T) {
			for path, what := range map[string]string{"/console/invoices/" + o.invoice: "Invoice", "/console/invoices/" + o.invoice + "/document": "Invoice",
				"/console/webhook-events/" + o.event: "Event", "/console/tickets/" + o.ticket: "Ticket", "/console/invoices/" + store.NewID(): "Invoice"} {
				wantPage(t, path+" as Maple's admin", mapleAdmin.Get(path), 404, what+" not found")
			}
			for _, path := range []string{"/console/invoices", "/console/webhook-events", "/console/tickets", "/console/privacy-requests"} {
				if p := mapleAdmin.Get(path); strings.Contains(p.Body, o.invoice) || strings.Contains(p.Body, o.event) ||
					strings.Contains(p.Body, o.ticket) || strings.Contains(p.Body, o.privacy) {
					t.Errorf("%s as Maple's admin lists Northwind's", path)
				}
			}
			before := count(t, s, `SELECT COUNT(*) FROM audit_log`)
			wantPage(t, "Maple's credit note", mapleAdmin.Post("/console/invoices/"+o.invoice+"/credit-notes", url.Values{"amount": {"1.00"}, "reason": {"x"}}), 404)
			wantPage(t, "Maple's replay", mapleAdmin.Post("/console/webhook-events/"+o.event+"/replay", url.Values{}), 404)
			if after := count(t, s, `SELECT COUNT(*) FROM audit_log`); after != before {
				t.Errorf("refused forms wrote %d audit entries", after-before)
			}
		})

		t.Run("credit note", func(t *testing.T) {
			var total subprov.Money
			if err := s.Store.R().QueryRow(context.Background(), `SELECT total_minor FROM invoices WHERE id = ?`, o.invoice).Scan(&total); err != nil {
				t.Fatal(err)
			}
			path := "/console/invoices/" + o.invoice
			wantPage(t, "the invoice", billing.Get(path), 200, "Issue the credit note", "At most "+total.String())
			notes := func() int { return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE invoice_id = ?`, o.invoice) }
			for _, tt := range []struct {
				amount, reason string
				status         int
				shown          string
			}{
				{(total + 1).String(), "goodwill", 422, "Amount must be at most " + total.String() + ", the invoice&#39;s total less its earlier credits"},
				{"1.234", "goodwill", 422, "Amount must be an amount with at most two decimals"},
				{"", "goodwill", 422, "Amount required"},
				{"1.00", " ", 422, "Reason required"},
			} {
				p := billing.Post(path+"/credit-notes", url.Values{"amount": {tt.amount}, "reason": {tt.reason}})
				wantPage(t, "credit "+tt.amount, p, tt.status, tt.shown, `value="`+tt.amount+`"`)
			}
			if n := notes(); n != 0 {
				t.Fatalf("refused notes issued %d", n)
			}
			p := billing.Post(path+"/credit-notes", url.Values{"amount": {"5.00"}, "reason": {"Outage on 3 December"}})
			if p.Status != http.StatusSeeOther || p.Location() != path {
				t.Fatalf("credit: %d %s %.300s", p.Status, p.Location(), p.Body)
			}
			wantPage(t, "after the note", billing.Get(path), 200, "Credit note ", "of 5.00 CAD issued.", "At most "+(total-500).String())
			if notes() != 1 || count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'credit_note.issued' AND provider_id = ?`, northwind) != 1 {
				t.Error("the note is not issued and audited once")
			}

			// The note is listed on the invoice and the account, each linking its PDF, which every
			// role that reads opens, in the operator's scope only.
			var note, subscriber string
			if err := s.Store.R().QueryRow(context.Background(), `SELECT id, subscriber_id FROM credit_notes WHERE invoice_id = ?`, o.invoice).Scan(&note, &subscriber); err != nil {
				t.Fatal(err)
			}
			doc := "/console/credit-notes/" + note + "/document"
			viewer := s.ConsoleAs(t, subprov.RoleViewer, northwind)
			wantPage(t, "the invoice's credit notes", viewer.Get(path), 200, `href="`+doc+`"`, "Outage on 3 December")
			wantPage(t, "the account's credit notes", viewer.Get("/console/subscribers/"+subscriber), 200, `href="`+doc+`"`)
			if p := viewer.Get(doc); p.Status != 200 || p.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(p.Body, "%PDF") {
				t.Errorf("credit note PDF: %d %s", p.Status, p.Header.Get("Content-Type"))
			}
			wantPage(t, "Maple's admin's credit note PDF", mapleAdmin.Get(doc), 404, "Credit note not found")
			wantPage(t, "an unknown credit note", viewer.Get("/console/credit-notes/"+store.NewID()+"/document"), 404, "Credit note not found")
		})

		t.Run("retry charge", func(t *testing.T) {
			path := "/console/invoices/" + o.invoice
			exec(t, s, `UPDATE invoices SET status = 'paid' WHERE id = ?`, o.invoice)
			wantPage(t, "retry of a paid invoice", billing.Post(path+"/retry-charge", url.Values{}), 409, "The invoice is paid")
			exec(t, s, `UPDATE invoices SET status = 'open', paid_at = NULL WHERE id = ?`, o.invoice)
			p := billing.Post(path+"/retry-charge", url.Values{})
			if p.Status != http.StatusSeeOther || p.Location() != path {
				t.Fatalf("retry: %d %s %.300s", p.Status, p.Location(), p.Body)
			}
			wantPage(t, "after the retry", billing.Get(path), 200, "An AutoPay attempt for invoice")
			if count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'invoice.charge_retried' AND subject_id = ?`, o.invoice) != 1 {
				t.Error("the retry is not audited once")
			}
		})

		t.Run("replay", func(t *testing.T) {
			path := "/console/webhook-events/" + o.event
			wantPage(t, "the event", support.Get(path), 200, "Replay", "&#34;type&#34;: &#34;subscription.updated&#34;", o.receiver.srv.URL)
			o.receiver.setAnswer(503)
			p := support.Post(path+"/replay", url.Values{})
			if p.Status != http.StatusSeeOther || p.Location() != path {
				t.Fatalf("replay: %d %s", p.Status, p.Location())
			}
			wantPage(t, "after a failing replay", support.Get(path), 200, "the receiver answered 503", "<td data-label=\"Answer\">503</td>", "<dt>Attempts</dt><dd>2</dd>")
			o.receiver.setAnswer(0)
			exec(t, s, `UPDATE providers SET webhook_url = '' WHERE id = ?`, northwind)
			before := o.receiver.received()
			wantPage(t, "replay without a receiver", support.Post(path+"/replay", url.Values{}), 409, "The provider has no webhook URL")
			if o.receiver.received() != before {
				t.Error("sent without a receiver")
			}
		})

		t.Run("ticket", func(t *testing.T) {
			path := "/console/tickets/" + o.ticket
			wantPage(t, "the ticket", support.Get(path), 200, `name="version" value="1"`, "No comments yet.")
			p := support.Post(path, url.Values{"version": {"1"}, "status": {"pending"}, "assigned_to": {"nobody@ops.test"}, "comment": {"Looking"}})
			wantPage(t, "an unknown assignee", p, 422, "Assignee no active operator", `value="nobody@ops.test"`, ">Looking</textarea>")
			p = support.Post(path, url.Values{"version": {"1"}, "status": {"pending"}, "assigned_to": {""}, "comment": {"Checking the lines"}})
			if p.Status != http.StatusSeeOther || p.Location() != path {
				t.Fatalf("edit: %d %.300s", p.Status, p.Body)
			}
			wantPage(t, "after the edit", support.Get(path), 200, "The ticket is updated.", "Checking the lines", `name="version" value="2"`)
			p = support.Post(path, url.Values{"version": {"1"}, "status": {"solved"}, "assigned_to": {""}, "comment": {"Stale"}})
			wantPage(t, "a stale edit", p, 409, `name="version" value="2"`, ">Stale</textarea>")
			if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'ticket.updated' AND subject_id = ?`, o.ticket); n != 1 {
				t.Errorf("ticket.updated audited %d times, want 1", n)
			}
		})

		t.Run("privacy", func(t *testing.T) {
			marie, err := s.Privacy.Request(context.Background(), northwind, marieID)
			if err != nil {
				t.Fatal(err)
			}
			p := support.Post("/console/privacy-requests/"+marie.ID+"/approve", url.Values{})
			wantPage(t, "approval with a live line", p, 409, "still has a line that is active", "Nothing was changed.")
			if n := count(t, s, `SELECT COUNT(*) FROM privacy_requests WHERE id = ? AND status = 'pending'`, marie.ID); n != 1 {
				t.Error("the refused approval changed the request")
			}
			s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass) // Marie's login is kept
			p = support.Post("/console/privacy-requests/"+o.privacy+"/reject", url.Values{"reason": {"  "}})
			wantPage(t, "a rejection without a reason", p, 422, `id="reason-`+o.privacy+`-error">Reason required`)
			p = support.Post("/console/privacy-requests/"+o.privacy+"/reject", url.Values{"reason": {"Billing dispute open"}})
			if p.Status != http.StatusSeeOther {
				t.Fatalf("reject: %d %.300s", p.Status, p.Body)
			}
			wantPage(t, "rejected", support.Get("/console/privacy-requests?status=rejected"), 200, "The request is rejected.", "rejected: Billing dispute open")
			wantPage(t, "twice", support.Post("/console/privacy-requests/"+o.privacy+"/reject", url.Values{"reason": {"again"}}), 409, "already rejected")
		})
	})
}

// TestConsoleBillingVisibility: which of the billing, webhook, ticket and privacy controls each
// role sees on an object's page (the role-visibility table's rows for pages that need an
// object): billing and admin retry charges and issue credit notes; support and admin replay
// events, work tickets and decide privacy requests; a viewer sees none; an installer reads
// none of these pages (403).
func TestConsoleBillingVisibility(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		o := setUp(t, s)
		exec(t, s, `UPDATE invoices SET status = 'open', paid_at = NULL WHERE id = ?`, o.invoice)
		retry := `action="/console/invoices/` + o.invoice + `/retry-charge"`
		credit := `action="/console/invoices/` + o.invoice + `/credit-notes"`
		replay := `action="/console/webhook-events/` + o.event + `/replay"`
		edit := `action="/console/tickets/` + o.ticket + `"`
		approve := `action="/console/privacy-requests/` + o.privacy + `/approve"`
		reject := `action="/console/privacy-requests/` + o.privacy + `/reject"`
		invoice, event, ticket, privacy := "/console/invoices/"+o.invoice, "/console/webhook-events/"+o.event, "/console/tickets/"+o.ticket, "/console/privacy-requests"
		for _, tt := range []struct {
			role        subprov.Role
			page        string
			shown, gone []string
		}{
			{subprov.RoleAdmin, invoice, []string{retry, credit, "/document"}, nil},
			{subprov.RoleBilling, invoice, []string{retry, credit}, nil},
			{subprov.RoleSupport, invoice, []string{"/document"}, []string{retry, credit}},
			{subprov.RoleViewer, invoice, []string{"/document"}, []string{retry, credit}},
			{subprov.RoleAdmin, event, []string{replay}, nil},
			{subprov.RoleSupport, event, []string{replay}, nil},
			{subprov.RoleBilling, event, nil, []string{replay}},
			{subprov.RoleViewer, event, nil, []string{replay}},
			{subprov.RoleAdmin, ticket, []string{edit}, nil},
			{subprov.RoleSupport, ticket, []string{edit}, nil},
			{subprov.RoleBilling, ticket, nil, []string{edit}},
			{subprov.RoleViewer, ticket, nil, []string{edit}},
			{subprov.RoleAdmin, privacy, []string{approve, reject}, nil},
			{subprov.RoleSupport, privacy, []string{approve, reject}, nil},
			{subprov.RoleBilling, privacy, []string{o.privacy}, []string{approve, reject}},
			{subprov.RoleViewer, privacy, []string{o.privacy}, []string{approve, reject}},
		} {
			c := s.ConsoleAs(t, tt.role, northwind)
			p := c.Get(tt.page)
			wantPage(t, tt.page+" as "+string(tt.role), p, 200, tt.shown...)
			for _, g := range tt.gone {
				if strings.Contains(p.Body, g) {
					t.Errorf("%s as %s shows %q", tt.page, tt.role, g)
				}
			}
		}
		installer := s.ConsoleAs(t, subprov.RoleInstaller, northwind)
		for _, page := range []string{"/console/invoices", invoice, invoice + "/document", "/console/bill-runs", event, ticket, privacy} {
			wantPage(t, page+" as installer", installer.Get(page), 403)
		}
	})
}
