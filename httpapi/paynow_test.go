package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
)

// mustExec runs a statement on the test database (no parameters: rawdb's pool takes the
// engine's own placeholders).
func mustExec(t *testing.T, s *apptest.Service, q string) {
	t.Helper()
	if _, err := rawdb.Writer(s.Store).Exec(q); err != nil {
		t.Fatal(err)
	}
}

// marieBillingAddress is where Marie's invoices go (her billing contact).
func marieBillingAddress(t *testing.T, s *apptest.Service) string {
	t.Helper()
	var email string
	if err := s.Store.R().QueryRow(context.Background(), `SELECT COALESCE(c.email, s.email) FROM subscriptions l JOIN subscribers s ON s.id = l.subscriber_id
		LEFT JOIN contacts c ON c.subscriber_id = s.id AND c.role = 'invoice' WHERE l.id = ?`, marieLine).Scan(&email); err != nil {
		t.Fatal(err)
	}
	return email
}

// unpaidMonth is the month marieUnpaid bills: the first after the service clock's (in UTC),
// whose bill run comes after AutoPay is turned off whatever the day the tests run; the
// provider's month under way was billed when the service started.
func unpaidMonth(s *apptest.Service) time.Time {
	now := s.Clock.Now().UTC()
	return time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

// marieUnpaid turns AutoPay off for Marie's line from the portal, lets the bill run of the
// month after the clock's (unpaidMonth) issue its invoice, on its 5th, and returns the
// invoice's id and the pay link mailed with it: the invoice is left open, with nothing charged
// or scheduled.
func marieUnpaid(t *testing.T, s *apptest.Service) (invoiceID, link string) {
	t.Helper()
	ctx := context.Background()
	month := unpaidMonth(s)
	marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
	if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/autopay", Headers: marie,
		Body: map[string]any{"subscription_id": marieLine, "enabled": false}}); res.Status != 200 || res.JSON["enabled"] != false {
		t.Fatalf("AutoPay off: %d %s", res.Status, res.Raw)
	}
	s.DevClock.Set(month.AddDate(0, 0, 4).Add(15 * time.Hour))
	apptest.Eventually(t, 15*time.Second, "Marie's invoice of "+month.Format("2006-01"), func() bool {
		return s.Store.R().QueryRow(ctx, `SELECT id FROM invoices WHERE subscription_id = ? AND period = ?`, marieLine, month.Format("2006-01")).Scan(&invoiceID) == nil
	})
	s.Settle(t)
	var number string
	if err := s.Store.R().QueryRow(ctx, `SELECT number FROM invoices WHERE id = ?`, invoiceID).Scan(&number); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	apptest.Eventually(t, 15*time.Second, "the invoice mail with its pay link", func() bool {
		for _, mail := range outboxTo(s, s.Operator(), marieBillingAddress(t, s)) {
			if subj, _ := mail["subject"].(string); strings.Contains(subj, " "+number+" — ") { // "Invoice N — …", or French
				m = mail
			}
		}
		return m != nil
	})
	return invoiceID, m["links"].([]any)[0].(string)
}

// invoiceState is what a payment may change of an invoice: its status, its charge attempts
// (rows in charges and the processor's successful charges) and its AutoPay schedule.
type invoiceState struct {
	status                string
	attempts, succeeded   int
	queued, scheduled     bool
	processorChargesTotal int
}

func stateOf(t *testing.T, s *apptest.Service, invoiceID string) invoiceState {
	t.Helper()
	var st invoiceState
	var total int64
	if err := s.Store.R().QueryRow(context.Background(), `SELECT status, charge_queued_at IS NOT NULL, next_charge_at IS NOT NULL, total_minor
		FROM invoices WHERE id = ?`, invoiceID).Scan(&st.status, &st.queued, &st.scheduled, &total); err != nil {
		t.Fatal(err)
	}
	st.attempts = count(t, s, `SELECT COUNT(*) FROM charges WHERE invoice_id = ?`, invoiceID)
	st.succeeded = count(t, s, `SELECT COUNT(*) FROM charges WHERE invoice_id = ? AND status = 'succeeded'`, invoiceID)
	st.processorChargesTotal = count(t, s, `SELECT COUNT(*) FROM processor_charges WHERE status = 'succeeded' AND idempotency_key LIKE ?`,
		"%:invoice:"+invoiceID+":%")
	return st
}

// TestAutoPayOffMailsAPayLink: with AutoPay off the bill run issues the invoice, charges
// nothing, schedules nothing, and mails it with a pay link; the holder sees the setting.
func TestAutoPayOffMailsAPayLink(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		invoiceID, link := marieUnpaid(t, s)
		if !strings.HasPrefix(link, "http://subprov.test/portal/pay?token=") {
			t.Fatalf("pay link %s", link)
		}
		if st := stateOf(t, s, invoiceID); st.status != "open" || st.attempts != 0 || st.scheduled || st.queued || st.processorChargesTotal != 0 {
			t.Fatalf("an invoice of a line with AutoPay off: %+v", st)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tokens WHERE subject_id = ? AND token_hash = ?`, invoiceID, tokenOf(link)); n != 0 {
			t.Fatal("the pay link's token is kept as it was mailed, not as its hash")
		}
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/autopay", Headers: marie})
		lines, _ := res.JSON["lines"].([]any)
		found := false
		for _, l := range lines {
			row := l.(map[string]any)
			found = found || (row["subscription_id"] == marieLine && row["enabled"] == false)
		}
		if res.Status != 200 || !found {
			t.Fatalf("autopay: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'subscription.autopay_changed' AND actor_type = 'subscriber'`); n != 1 {
			t.Fatalf("%d audit entries of the AutoPay change, want 1 by the subscriber", n)
		}
		// Back on: the holder has a card, so it is allowed; a line without one is refused.
		if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/autopay", Headers: marie,
			Body: map[string]any{"subscription_id": marieLine, "enabled": true}}); res.Status != 200 || res.JSON["enabled"] != true {
			t.Fatalf("AutoPay on: %d %s", res.Status, res.Raw)
		}
	})
}

// TestAutoPayRefusals: who may change AutoPay, on which line, and with what.
func TestAutoPayRefusals(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		noCard := func() {
			mustExec(t, s, `UPDATE subscriptions SET processor_customer_id = NULL WHERE id = '`+marieLine+`'`)
		}
		tests := []struct {
			name    string
			headers map[string]string
			body    map[string]any
			setup   func()
			status  int
			code    string
		}{
			{"an authorized user may not", luc, map[string]any{"subscription_id": marieLine, "enabled": false}, nil, 403, "holder_only"},
			{"another account's or an unknown line is not found", marie, map[string]any{"subscription_id": "nope", "enabled": false}, nil, 404, "not_found"},
			{"enabled is required", marie, map[string]any{"subscription_id": marieLine}, nil, 422, ""},
			{"turning it off needs no card", marie, map[string]any{"subscription_id": marieLine, "enabled": false}, noCard, 200, ""},
			{"turning it on needs a saved card", marie, map[string]any{"subscription_id": marieLine, "enabled": true}, nil, 409, "no_payment_method"},
		}
		for _, tt := range tests {
			if tt.setup != nil {
				tt.setup()
			}
			res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/autopay", Headers: tt.headers, Body: tt.body})
			if res.Status != tt.status || (tt.code != "" && detailCode(res) != tt.code) {
				t.Fatalf("%s: %d %s, want %d %s", tt.name, res.Status, res.Raw, tt.status, tt.code)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND autopay_off`, marieLine); n != 1 {
			t.Fatal("a refused change changed the setting")
		}
	})
}

// TestPayNow: the holder pays an open invoice at once with the saved card; each refusal
// changes nothing (a declined card records the attempt and charges nothing), and the payment
// charges once, mails the receipt and is audited as the subscriber's.
func TestPayNow(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		other := h.post(s, platformOrder("lh_7f3a9c1206", "someone.else@example.ca", "cus_demo_visa"))
		var othersInvoice string
		apptest.Eventually(t, 15*time.Second, "another account's invoice", func() bool {
			return s.Store.R().QueryRow(context.Background(), `SELECT id FROM invoices WHERE subscription_id = ?`,
				other.JSON["subscription_id"]).Scan(&othersInvoice) == nil
		})
		invoiceID, _ := marieUnpaid(t, s)
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		db := func(q string) { mustExec(t, s, q) }
		fault := func(v string) func() {
			return func() {
				s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: s.Operator(), Body: map[string]string{"processor": v}})
			}
		}
		tests := []struct {
			name          string
			headers       map[string]string
			invoice       string
			setup, undo   func()
			status        int
			code          string
			attemptsAdded int
		}{
			{"an authorized user may not", luc, invoiceID, nil, nil, 403, "holder_only", 0},
			{"another account's invoice is not found", marie, othersInvoice, nil, nil, 404, "not_found", 0},
			{"an unknown invoice is not found", marie, "nope", nil, nil, 404, "not_found", 0},
			{"no saved card", marie, invoiceID,
				func() { db(`UPDATE subscriptions SET processor_customer_id = NULL WHERE id = '` + marieLine + `'`) },
				func() {
					db(`UPDATE subscriptions SET processor_customer_id = 'cus_demo_marie' WHERE id = '` + marieLine + `'`)
				},
				409, "no_payment_method", 0},
			{"a declined card leaves the invoice open", marie, invoiceID,
				func() {
					db(`UPDATE processor_payment_methods SET behaviour = 'declines' WHERE id = 'pm_demo_marie'`)
				},
				func() {
					db(`UPDATE processor_payment_methods SET behaviour = 'succeeds' WHERE id = 'pm_demo_marie'`)
				},
				409, "card_declined", 1},
			{"a processor that does not answer changes nothing", marie, invoiceID, fault("down"), fault("up"), 502, "processor_unavailable", 0},
			{"a charge under way is not started again", marie, invoiceID,
				func() { claimCharge(t, s, invoiceID, s.Clock.Now()) },
				func() { db(`UPDATE invoices SET charge_queued_at = NULL WHERE id = '` + invoiceID + `'`) },
				409, "not_payable", 0},
		}
		for _, tt := range tests {
			before := stateOf(t, s, invoiceID)
			if tt.setup != nil {
				tt.setup()
			}
			res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + tt.invoice + "/pay", Headers: tt.headers})
			if tt.undo != nil {
				tt.undo()
			}
			if res.Status != tt.status || detailCode(res) != tt.code {
				t.Fatalf("%s: %d %s, want %d %s", tt.name, res.Status, res.Raw, tt.status, tt.code)
			}
			after := stateOf(t, s, invoiceID)
			if after.status != "open" || after.queued || after.scheduled || after.succeeded != 0 || after.processorChargesTotal != 0 ||
				after.attempts != before.attempts+tt.attemptsAdded {
				t.Fatalf("%s: the invoice went from %+v to %+v", tt.name, before, after)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE subject LIKE 'Payment failed%'`); n != 0 {
			t.Fatal("a declined pay-now was dunned")
		}
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + invoiceID + "/pay", Headers: marie})
		if res.Status != 200 || res.JSON["status"] != "paid" || res.JSON["id"] != invoiceID {
			t.Fatalf("pay now: %d %s", res.Status, res.Raw)
		}
		if st := stateOf(t, s, invoiceID); st.status != "paid" || st.succeeded != 1 || st.processorChargesTotal != 1 {
			t.Fatalf("paid invoice %+v", st)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + invoiceID + "/pay", Headers: marie}); res.Status != 409 || detailCode(res) != "not_payable" {
			t.Fatalf("paying a paid invoice: %d %s", res.Status, res.Raw)
		}
		if st := stateOf(t, s, invoiceID); st.processorChargesTotal != 1 {
			t.Fatalf("charged %d times", st.processorChargesTotal)
		}
		apptest.Eventually(t, 15*time.Second, "the receipt", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = ? AND subject LIKE 'Receipt%'`, marieBillingAddress(t, s)) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'invoice.paid' AND actor_type = 'subscriber' AND subject_id = ?`, marieLine); n != 1 {
			t.Fatalf("%d payments audited as the subscriber's, want 1", n)
		}
	})
}

// TestPayNowDoubleClick: the holder's clicks sent at once charge the invoice once; every
// other click is 409 not_payable.
func TestPayNowDoubleClick(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		invoiceID, _ := marieUnpaid(t, s)
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		const clicks = 8
		statuses := make([]int, clicks)
		var wg sync.WaitGroup
		for i := range clicks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + invoiceID + "/pay", Headers: marie})
				statuses[i] = res.Status
				if res.Status == 409 && detailCode(res) != "not_payable" {
					t.Errorf("click: %d %s", res.Status, res.Raw)
				}
			}()
		}
		wg.Wait()
		paid := 0
		for _, st := range statuses {
			if st == 200 {
				paid++
			} else if st != 409 {
				t.Fatalf("statuses %v", statuses)
			}
		}
		if st := stateOf(t, s, invoiceID); paid != 1 || st.status != "paid" || st.succeeded != 1 || st.processorChargesTotal != 1 {
			t.Fatalf("%d clicks answered 200, invoice %+v: want exactly one charge", paid, st)
		}
	})
}

// TestPaperBilling: the holder's request opens a ticket in the provider's billing group and
// is audited; an authorized user may not ask.
func TestPaperBilling(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		tests := []struct {
			name    string
			headers map[string]string
			body    map[string]any
			status  int
		}{
			{"an authorized user may not", luc, map[string]any{"enabled": true}, 403},
			{"enabled is required", marie, map[string]any{}, 422},
			{"enabled must be a boolean", marie, map[string]any{"enabled": "yes"}, 422},
		}
		for _, tt := range tests {
			if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/paper-billing", Headers: tt.headers, Body: tt.body}); res.Status != tt.status {
				t.Fatalf("%s: %d %s", tt.name, res.Status, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE group_name = 'Billing'`); n != 0 {
			t.Fatal("a refused request opened a ticket")
		}
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/paper-billing", Headers: marie, Body: map[string]any{"enabled": true}})
		id, _ := res.JSON["ticket_id"].(string)
		if res.Status != 202 || id == "" {
			t.Fatalf("paper billing: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE id = ? AND group_name = 'Billing' AND provider_id = ? AND subject LIKE 'Start paper invoices%'`, id, northwind); n != 1 {
			t.Fatal("no ticket in the provider's billing group")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'paper_billing.requested' AND actor_type = 'subscriber' AND subject_id = ?`, id); n != 1 {
			t.Fatal("the request is not audited as the subscriber's")
		}
	})
}

// TestInvoicePayPageInBrowser: the mailed pay link opens a page showing the invoice's amount,
// in the browser's language; pressing Pay pays it with the saved card; opening the link again
// says it is paid (410); a link naming no invoice is 404.
func TestInvoicePayPageInBrowser(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		invoiceID, link := marieUnpaid(t, s)
		var total subprov.Money
		if err := s.Store.R().QueryRow(context.Background(), `SELECT total_minor FROM invoices WHERE id = ?`, invoiceID).Scan(&total); err != nil {
			t.Fatal(err)
		}
		page := localURL(s, link)
		ctx := browsertest.New(t, 60*time.Second)
		text := func(sel string) string {
			t.Helper()
			s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
			if err != nil {
				t.Fatalf("text of %s: %v", sel, err)
			}
			return s
		}
		// A browser in Canadian French: the page, its money and its answer are French.
		if err := chromedp.Do(ctx, browsertest.AcceptLanguage("fr-CA,fr;q=0.9"), chromedp.Navigate(page)); err != nil {
			t.Fatal(err)
		}
		if h1, amount, want := text("h1"), text("#invoice-amount"), locale.FR.Money(total, "CAD"); total <= 0 || h1 != "Payez votre facture" || amount != want {
			t.Fatalf("the page in French: %q, amount %q, want %q", h1, amount, want)
		}
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#pay"))); err != nil {
			t.Fatal(err)
		}
		if st, status, done := stateOf(t, s, invoiceID), text("#invoice-status"), text("#pay-status"); status != "Payée" ||
			!strings.HasPrefix(done, "Merci") || st.status != "paid" || st.processorChargesTotal != 1 {
			t.Fatalf("after Pay the page says %q, %q; invoice %+v", status, done, st)
		}
		// The same link in an English browser, again: paid.
		if err := chromedp.Do(ctx, browsertest.AcceptLanguage("en-CA,en;q=0.9"), chromedp.Navigate(page)); err != nil {
			t.Fatal(err)
		}
		if h1 := text("h1"); h1 != "This invoice is paid" {
			t.Fatalf("second visit: %q", h1)
		}
		for u, want := range map[string]int{page: 410, s.URL + "/portal/pay?token=not-a-link": 404, s.URL + "/portal/pay": 404} {
			res, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != want {
				t.Fatalf("GET %s: %d, want %d", u, res.StatusCode, want)
			}
		}
		if st := stateOf(t, s, invoiceID); st.processorChargesTotal != 1 {
			t.Fatal("the second visit charged again")
		}
	})
}

// claimCharge leaves a claim on the invoice's charge taken at at, as a pay-now or a sweep that
// died mid-charge leaves it.
func claimCharge(t *testing.T, s *apptest.Service, invoiceID string, at time.Time) {
	t.Helper()
	if err := s.Store.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ClaimCharge(context.Background(), invoiceID, at, at)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPayNowTakesOverAnAbandonedClaim: a claim left by a process that died mid-charge holds
// for a few minutes, then the next pay-now charges under the same idempotency key: once in
// all, whether or not the processor took the first charge.
func TestPayNowTakesOverAnAbandonedClaim(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		charged bool // the processor took the first charge before the process died
	}{
		{"died before charging", false},
		{"died after the processor charged", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				ctx := context.Background()
				invoiceID, _ := marieUnpaid(t, s)
				marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
				claimCharge(t, s, invoiceID, s.Clock.Now())
				if tt.charged {
					var providerID string
					if err := s.Store.R().QueryRow(ctx, `SELECT provider_id FROM invoices WHERE id = ?`, invoiceID).Scan(&providerID); err != nil {
						t.Fatal(err)
					}
					inv, err := s.Store.Invoice(ctx, providerID, invoiceID)
					if err != nil {
						t.Fatal(err)
					}
					p, err := s.Store.Provider(ctx, inv.ProviderID)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.Billing.Processor.Charge(ctx, p, payments.ChargeRequest{CustomerID: "cus_demo_marie", MethodID: "pm_demo_marie",
						Amount: inv.Total, Currency: inv.Currency, IdempotencyKey: "invoice:" + invoiceID + ":attempt:1"}); err != nil {
						t.Fatal(err)
					}
				}
				pay := func() *apptest.Response {
					return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + invoiceID + "/pay", Headers: marie})
				}
				s.DevClock.Set(s.Clock.Now().Add(4 * time.Minute))
				if res := pay(); res.Status != 409 || detailCode(res) != "not_payable" {
					t.Fatalf("a fresh claim: %d %s", res.Status, res.Raw)
				}
				s.DevClock.Set(s.Clock.Now().Add(2 * time.Minute))
				if res := pay(); res.Status != 200 || res.JSON["status"] != "paid" {
					t.Fatalf("an abandoned claim: %d %s", res.Status, res.Raw)
				}
				if st := stateOf(t, s, invoiceID); st.status != "paid" || st.succeeded != 1 || st.processorChargesTotal != 1 || st.queued {
					t.Fatalf("invoice %+v: want one charge", st)
				}
			})
		})
	}
}

// TestAutoPayOffInvoiceIsDunned: an invoice of a line with AutoPay off left unpaid is reminded
// and cut off on dunning's days from its due date (issued on the 5th of the month at 15:00:
// reminders 3 and 7 days on, cut-off 14 days on, the 19th, as for a card declined on the 5th;
// each step counts from the one before, taken when the clock got there); paying it on the way
// stops dunning, paying it after the cut-off restores the line.
func TestAutoPayOffInvoiceIsDunned(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		payDay [2]int // the day and hour of the payment; zero: not before the cut-off
		cutOff bool
	}{
		{"unpaid", [2]int{}, true},
		{"paid after the first reminder", [2]int{9, 12}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				month := unpaidMonth(s)
				day := func(d, h int) time.Time { return month.AddDate(0, 0, d-1).Add(time.Duration(h) * time.Hour) }
				var payAt time.Time
				if tt.payDay != [2]int{} {
					payAt = day(tt.payDay[0], tt.payDay[1])
				}
				invoiceID, _ := marieUnpaid(t, s)
				pay := func() *apptest.Response {
					marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
					return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + invoiceID + "/pay", Headers: marie})
				}
				// Only this invoice is left unpaid (the months the bill run caught up on are paid).
				mustExec(t, s, `UPDATE invoices SET status = 'paid', remind_at = NULL WHERE subscription_id = '`+marieLine+`' AND id <> '`+invoiceID+`'`)
				addr := marieBillingAddress(t, s)
				var number string
				if err := s.Store.R().QueryRow(context.Background(), `SELECT number FROM invoices WHERE id = ?`, invoiceID).Scan(&number); err != nil {
					t.Fatal(err)
				}
				reminders := func() int {
					return count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = ? AND subject = ?`, addr, "Reminder — invoice "+number+" unpaid")
				}
				cutOff := func() bool {
					return count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND suspended_for = 'dunning'`, marieLine) == 1
				}
				paid := false
				for _, step := range []struct {
					at        time.Time
					reminders int
					cutOff    bool
				}{
					{day(5, 18), 0, false}, {day(8, 14), 0, false}, {day(8, 18), 1, false}, {day(12, 17), 1, false},
					{day(12, 19), 2, false}, {day(19, 18), 2, false}, {day(19, 20), 2, true}, {day(27, 21), 2, true},
				} {
					if !paid && !payAt.IsZero() && !step.at.Before(payAt) {
						s.DevClock.Set(payAt)
						s.Settle(t)
						if res := pay(); res.Status != 200 {
							t.Fatalf("pay: %d %s", res.Status, res.Raw)
						}
						paid = true
					}
					s.DevClock.Set(step.at)
					s.Settle(t)
					wantReminders, wantCut := step.reminders, step.cutOff && tt.cutOff
					if paid {
						wantReminders = min(wantReminders, 1)
					}
					if got := reminders(); got != wantReminders || cutOff() != wantCut {
						t.Fatalf("at %s: %d reminders, cut off %t; want %d, %t", step.at, got, cutOff(), wantReminders, wantCut)
					}
				}
				if !tt.cutOff {
					return
				}
				// The cut-off mail speaks of the reminders, not of card attempts there were none of.
				if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = ? AND subject = ? AND body LIKE '%after our reminders%'`,
					addr, "Service suspended — invoice "+number+" unpaid"); n != 1 {
					t.Fatalf("%d cut-off mails that speak of the reminders, want 1", n)
				}
				if res := pay(); res.Status != 200 {
					t.Fatalf("pay after the cut-off: %d %s", res.Status, res.Raw)
				}
				s.Settle(t)
				if cutOff() {
					t.Fatal("paying the invoice did not restore the line")
				}
			})
		})
	}
}
