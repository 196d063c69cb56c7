package httpapi_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

type invoiceRow struct {
	kind, period, status, date string
	net, tax, total            int64
}

func invoicesOf(t *testing.T, s *apptest.Service, subID string) []invoiceRow {
	t.Helper()
	rows, err := s.Store.R().Query(context.Background(), `SELECT kind, period, status, invoice_date, net_minor, tax_minor, total_minor
		FROM invoices WHERE subscription_id = ? ORDER BY invoice_date, created_at`, subID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []invoiceRow
	for rows.Next() {
		var r invoiceRow
		if err := rows.Scan(&r.kind, &r.period, &r.status, &r.date, &r.net, &r.tax, &r.total); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func platformOrder(hash, email, customer string) map[string]any {
	return order(map[string]any{"plan_version_id": planFibre1000, "location_hash": hash, "subscriber": person(email),
		"billing": map[string]any{"owner": "platform", "processor_customer_id": customer, "billing_day": 5}})
}

// TestFirstAndRecurringInvoices: activation bills the setup fee plus the rest of the month,
// charged at once; each following month is invoiced on the billing day; running the bill run
// again adds nothing and charges nobody twice. Partner-billed lines are never invoiced.
func TestFirstAndRecurringInvoices(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)) // 10:00 in Toronto: 10 days left of 30
		h := &hook{}
		res := h.post(s, platformOrder("lh_7f3a9c1206", "payer@example.ca", "cus_demo_visa"))
		id := res.JSON["subscription_id"].(string)
		partner := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205"}))
		apptest.Eventually(t, 15*time.Second, "the first invoice to be paid", func() bool {
			inv := invoicesOf(t, s, id)
			return len(inv) == 1 && inv[0].status == "paid"
		})
		// Fibre 1000 is 85.00, on promotion at 75.00 until 31 January 2027, which is what it bills:
		// setup fee 50.00 + 75.00 x 10/30 = 25.00 -> net 75.00, tax 13% = 9.75, total 84.75.
		first := invoicesOf(t, s, id)[0]
		if first.kind != "first" || first.period != "2026-11" || first.date != "2026-11-21" || first.net != 7500 || first.tax != 975 || first.total != 8475 {
			t.Fatalf("first invoice %+v", first)
		}
		lines := count(t, s, `SELECT COUNT(*) FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id
			WHERE i.subscription_id = ? AND ((l.kind = 'setup_fee' AND l.amount_minor = 5000) OR (l.kind = 'plan' AND l.days = 10 AND l.days_in_period = 30 AND l.unit_price_minor = 7500 AND l.amount_minor = 2500))`, id)
		if lines != 2 {
			t.Fatal("first invoice lines do not show unit price, days and days_in_period")
		}
		// December: nothing before the billing day (the 5th), the full month on it (75.00).
		s.DevClock.Set(time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC))
		s.Settle(t)
		if n := len(invoicesOf(t, s, id)); n != 1 {
			t.Fatalf("%d invoices before the billing day", n)
		}
		s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
		apptest.Eventually(t, 15*time.Second, "the December invoice to be paid", func() bool {
			inv := invoicesOf(t, s, id)
			return len(inv) == 2 && inv[1].status == "paid"
		})
		dec := invoicesOf(t, s, id)[1]
		if dec.kind != "recurring" || dec.period != "2026-12" || dec.date != "2026-12-05" || dec.net != 7500 || dec.total != 8475 {
			t.Fatalf("recurring invoice %+v", dec)
		}
		// A second bill run for the same period adds nothing.
		charges := count(t, s, `SELECT COUNT(*) FROM charges`)
		if err := s.Billing.BillRun(context.Background(), billRun(northwind, "2026-12")); err != nil {
			t.Fatal(err)
		}
		s.Settle(t)
		if n := len(invoicesOf(t, s, id)); n != 2 {
			t.Fatalf("%d invoices after a second run", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM charges`); n != charges {
			t.Fatal("a second run charged again")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM processor_charges WHERE status = 'succeeded' AND customer_id = 'cus_demo_visa'`); n != 2 {
			t.Fatalf("%d processor charges, want exactly one per invoice", n)
		}
		if n := len(invoicesOf(t, s, partner.JSON["subscription_id"].(string))); n != 0 {
			t.Fatalf("a partner-billed line got %d invoices", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'invoice.paid' AND subject_id = ?`, id); n != 2 {
			t.Fatal("payments are not audited")
		}
	})
}

// TestDunningCutsOffAndRestores: a declined card is retried on days 3, 7 and 14 with a mail
// each time; the last failure suspends the line (port and status); paying restores it.
func TestDunningCutsOffAndRestores(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		start := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
		s.DevClock.Set(start)
		h := &hook{}
		res := h.post(s, platformOrder("lh_7f3a9c1206", "late@example.ca", "cus_demo_declines"))
		id := res.JSON["subscription_id"].(string)
		attempts := func() int {
			return count(t, s, `SELECT COUNT(*) FROM charges c JOIN invoices i ON i.id = c.invoice_id
				WHERE i.subscription_id = ? AND i.kind = 'first' AND c.status = 'declined'`, id)
		}
		apptest.Eventually(t, 15*time.Second, "the first declined attempt", func() bool { return attempts() == 1 })
		for i, days := range []int{3, 7, 14} {
			s.DevClock.Set(start.Add(time.Duration(days)*24*time.Hour + time.Hour))
			apptest.Eventually(t, 15*time.Second, "the next attempt", func() bool { return attempts() == i+2 })
		}
		sim, _ := switches.AsSim(s.Provisioning.Switch)
		port := switches.Port{Switch: "mtl-king-sw1", Name: "ge-0/0/14"}
		apptest.Eventually(t, 15*time.Second, "the cut-off", func() bool {
			st, _ := sim.Read(context.Background(), port)
			return st.Mode == switches.ModeSuspended &&
				count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'SUSPENDED'`, id) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = 'late@example.ca' AND subject LIKE 'Payment failed%'`); n < 3 {
			t.Fatalf("%d payment-failed mails, want one per retried attempt", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = 'late@example.ca' AND subject LIKE 'Service suspended%'`); n != 1 {
			t.Fatal("no suspension mail")
		}
		// The customer fixes the card; the operator retries now; the line comes back.
		rawdb.Writer(s.Store).Exec(`UPDATE processor_payment_methods SET behaviour = 'succeeds' WHERE id = 'pm_demo_declines'`)
		op := s.Operator()
		openInvoices := func() []string {
			rows, err := s.Store.R().Query(context.Background(), `SELECT id FROM invoices WHERE subscription_id = ? AND status = 'open'`, id)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var inv string
				rows.Scan(&inv)
				out = append(out, inv)
			}
			return out
		}
		var invoiceID string
		_ = s.Store.R().QueryRow(context.Background(), `SELECT id FROM invoices WHERE subscription_id = ? AND kind = 'first'`, id).Scan(&invoiceID)
		// Every open invoice (December's may appear meanwhile) is retried until the line is back.
		apptest.Eventually(t, 20*time.Second, "the line restored", func() bool {
			for _, inv := range openInvoices() {
				if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/invoices/" + inv + "/retry-charge", Headers: op}); r.Status != 202 && r.Status != 409 {
					t.Fatalf("retry-charge: %d %s", r.Status, r.Raw)
				}
			}
			st, _ := sim.Read(context.Background(), port)
			return st.Mode == switches.ModeService &&
				count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'ACTIVE'`, id) == 1
		})
		if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/invoices/" + invoiceID + "/retry-charge", Headers: op}); r.Status != 409 {
			t.Fatalf("retrying a paid invoice: %d", r.Status)
		}
		if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/invoices/nope/retry-charge", Headers: op}); r.Status != 404 {
			t.Fatalf("unknown invoice: %d", r.Status)
		}
	})
}

// TestPlanChangeMoney: the preview equals what applying bills, to the cent (the plan-change
// money of docs/billing.md, on the partner route): a downgrade is credited now and applied to the next
// invoice, an upgrade is a line on the next invoice, a correction under 0.50 is none and
// carried, and an uninvoiced month gives a null adjustment with a note.
func TestPlanChangeMoney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)) // 10 of 30 days left in Toronto
		h := &hook{}
		res := h.post(s, platformOrder("lh_7f3a9c1206", "changer@example.ca", "cus_demo_visa"))
		id := res.JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "the first invoice", func() bool { return len(invoicesOf(t, s, id)) == 1 })
		change := func(plan string) (*apptest.Response, *apptest.Response) {
			path := "/partner/subscriptions/" + id + "/change-plan"
			pv := s.Do(apptest.Request{Method: "GET", Path: path + "/preview?plan_version_id=" + plan, Headers: apptest.Key(storeKey)})
			ap := s.Do(apptest.Request{Method: "POST", Path: path, Headers: apptest.Key(storeKey), Body: map[string]string{"plan_version_id": plan}})
			if ap.Status != 200 {
				t.Fatalf("apply: %d %s", ap.Status, ap.Raw)
			}
			if fmt.Sprint(pv.JSON["one_time_adjustment"]) != fmt.Sprint(ap.JSON["one_time_adjustment"]) {
				t.Fatalf("preview %v != applied %v", pv.JSON["one_time_adjustment"], ap.JSON["one_time_adjustment"])
			}
			return pv, ap
		}
		// Downgrade from Fibre 1000 at its promotional 75.00 (what November was invoiced at) to
		// 60.00 with 10 of 30 days left: 5.00 credited now.
		_, ap := change(planFibre500)
		adj := ap.JSON["one_time_adjustment"].(map[string]any)
		if adj["type"] != "credit" || adj["amount"] != 5.0 || adj["days"] != 10.0 || adj["days_in_period"] != 30.0 || adj["proration_factor"] != 0.3333 {
			t.Fatalf("downgrade adjustment %v", adj)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'open' AND amount_minor = 565`, id); n != 1 {
			t.Fatal("no open credit note of 5.00 + 13% tax = 5.65")
		}
		// Next day, upgrade 60.00 -> 75.00 with 9 days left: 4.50 on the next invoice.
		s.DevClock.Set(time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC))
		_, ap = change(planFibre1000)
		adj = ap.JSON["one_time_adjustment"].(map[string]any)
		if adj["type"] != "next_invoice_line" || adj["amount"] != 4.5 || adj["days"] != 9.0 {
			t.Fatalf("upgrade adjustment %v", adj)
		}
		// A plan 0.10 dearer the day after, on the same promotion: 0.10 x 8/30 = 0.03 is below
		// 0.50: none, carried.
		promo := subprov.Money(7510)
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.UpsertPlanVersion(ctx, &subprov.PlanVersion{ID: "pv-1000-plus", PlanID: "p1000000-0000-4000-8000-000000001000",
				ProviderID: northwind, MonthlyPrice: 8510, DownloadMbps: 1000, UploadMbps: 1000, Sellable: true,
				PromoPrice: &promo, PromoEndsOn: "2027-01-31"}, time.Now())
		})
		if err != nil {
			t.Fatal(err)
		}
		s.DevClock.Set(time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC))
		_, ap = change("pv-1000-plus")
		adj = ap.JSON["one_time_adjustment"].(map[string]any)
		if adj["type"] != "none" || adj["amount"] != 0.0 {
			t.Fatalf("small correction %v", adj)
		}
		// December: 75.10 + the 4.50 line = 79.60 net, 10.35 tax, 89.95, minus the 5.65 credit = 84.30.
		s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
		apptest.Eventually(t, 15*time.Second, "the December invoice", func() bool { return len(invoicesOf(t, s, id)) == 2 })
		dec := invoicesOf(t, s, id)[1]
		if dec.net != 7960 || dec.tax != 1035 || dec.total != 8430 {
			t.Fatalf("December invoice %+v", dec)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'applied' AND remaining_minor = 0`, id); n != 1 {
			t.Fatal("the credit note was not applied")
		}
		// An uninvoiced month: a null adjustment with a note. On 3 January the line's
		// January invoice (billing day 5) does not exist yet.
		s.DevClock.Set(time.Date(2027, 1, 3, 15, 0, 0, 0, time.UTC))
		pv := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriptions/" + id + "/change-plan/preview?plan_version_id=" + planFibre1000,
			Headers: apptest.Key(storeKey)})
		if pv.Status != 200 || pv.JSON["one_time_adjustment"] != nil || pv.JSON["note"] == "" {
			t.Fatalf("uninvoiced month: %s", pv.Raw)
		}
	})
}

// marieInDecember sets the clock to 5 December 2026 and waits for the bill run to invoice
// Marie's line for December; it returns her provider, the line and that invoice's id.
func marieInDecember(t *testing.T, s *apptest.Service) (*subprov.Provider, *subprov.Subscription, string) {
	t.Helper()
	ctx := context.Background()
	s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
	var invoice string
	apptest.Eventually(t, 15*time.Second, "Marie's December invoice", func() bool {
		return s.Store.R().QueryRow(ctx, `SELECT id FROM invoices WHERE subscription_id = ? AND period = '2026-12'`, marieLine).Scan(&invoice) == nil
	})
	p, sub := s.ProviderAndLine(t, northwind, marieLine)
	return p, sub, invoice
}

// TestSubscriberBillingDocuments: invoices newest first, credit notes read live from the
// billing system (502 when it is down, never an empty list; voided notes never listed), and
// PDFs only of the caller's own documents.
func TestSubscriberBillingDocuments(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		p, sub, _ := marieInDecember(t, s)
		var open, voided *subprov.CreditNote
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if open, err = s.Billing.IssueCredit(ctx, tx, p, sub, 1500, "operator goodwill", "", time.Now()); err != nil {
				return err
			}
			if voided, err = s.Billing.IssueCredit(ctx, tx, p, sub, 900, "mistake", "", time.Now()); err != nil {
				return err
			}
			if _, err = tx.Exec(ctx, `UPDATE credit_notes SET state = 'voided' WHERE id = ?`, voided.ID); err != nil {
				return err
			}
			for _, state := range []string{"draft", "archived"} {
				cn, err := s.Billing.IssueCredit(ctx, tx, p, sub, 700, state+" note", "", time.Now())
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE credit_notes SET state = ? WHERE id = ?`, state, cn.ID); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		nobody := s.Login("new.neighbour@example.ca", "demo-password-3")
		op := s.Operator()

		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/invoices", Headers: marie})
		invs := res.JSON["invoices"].([]any)
		if res.Status != 200 || len(invs) == 0 {
			t.Fatalf("invoices: %d %s", res.Status, res.Raw)
		}
		prev := "9999-12-31"
		for _, i := range invs {
			m := i.(map[string]any)
			if m["customer_number"] != "0042-117" || m["invoice_date"].(string) > prev {
				t.Fatalf("invoice %v (must be Marie's, newest first)", m)
			}
			prev = m["invoice_date"].(string)
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/credit-notes", Headers: marie})
		cns := res.JSON["credit_notes"].([]any)
		if res.Status != 200 || len(cns) != 1 || cns[0].(map[string]any)["id"] != open.ID || cns[0].(map[string]any)["amount"] != 15.0 {
			t.Fatalf("credit notes: %s", res.Raw)
		}
		setFault(s, op, "billing_system", "down")
		res = s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/credit-notes", Headers: marie})
		if res.Status != 502 || res.JSON["detail"].(map[string]any)["code"] != "billing_system_unavailable" {
			t.Fatalf("billing system down: %d %s", res.Status, res.Raw)
		}
		setFault(s, op, "billing_system", "up")
		for _, tt := range []struct {
			name   string
			h      map[string]string
			path   string
			status int
		}{
			{"own credit note PDF", marie, "/api/v1/credit-notes/" + open.ID + "/pdf", 200},
			{"own invoice PDF", marie, "/api/v1/invoices/" + invs[0].(map[string]any)["id"].(string) + "/pdf", 200},
			{"a voided note is not served", marie, "/api/v1/credit-notes/" + voided.ID + "/pdf", 404},
			{"another subscriber's credit note", priya, "/api/v1/credit-notes/" + open.ID + "/pdf", 404},
			{"another subscriber's invoice", priya, "/api/v1/invoices/" + invs[0].(map[string]any)["id"].(string) + "/pdf", 404},
			{"no session", nil, "/api/v1/credit-notes/" + open.ID + "/pdf", 401},
			{"account without subscriber record", nobody, "/partner/subscriber/me/invoices", 404},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: tt.path, Headers: tt.h})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %.200s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && (res.Header.Get("Content-Type") != "application/pdf" || string(res.Raw[:5]) != "%PDF-") {
					t.Fatalf("not a PDF: %s", res.Header.Get("Content-Type"))
				}
				if tt.name == "account without subscriber record" && res.JSON["detail"].(map[string]any)["message"] != "No subscriber record found for this account" {
					t.Fatalf("message %s", res.Raw)
				}
			})
		}
	})
}

// TestDocumentPDFsNameTheCustomer: an invoice or credit-note PDF prints the customer number
// the document was issued with (docs/billing.md, PDFs: printed on invoices; already-issued documents
// keep the old one, new ones carry the new one) and a BILL TO block: the billing contact (the
// separate invoice contact once there is one, else the holder) at the address the service
// has, here the line's service address with its suite.
func TestDocumentPDFsNameTheCustomer(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		p, sub, invoice := marieInDecember(t, s)
		credit := func(reason string) string {
			var cn *subprov.CreditNote
			if err := s.Store.InTx(ctx, func(tx *store.Tx) (err error) {
				cn, err = s.Billing.IssueCredit(ctx, tx, p, sub, 1500, reason, invoice, time.Now())
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return cn.ID
		}
		before := credit("operator goodwill")
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		pdfOf := func(path string) string {
			res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: marie})
			if res.Status != 200 || res.Header.Get("Content-Type") != "application/pdf" {
				t.Fatalf("%s: %d %.200s", path, res.Status, res.Raw)
			}
			return pdfText(res.Raw)
		}
		holder := []string{"Marie Tremblay", "marie.tremblay@example.ca", "+1 514-555-0142", "1204-120 Rue King O", "QC  H3C 2B5"}
		check := func(name, path, number string, want, absent []string) {
			t.Run(name, func(t *testing.T) {
				text := pdfOf(path)
				if !strings.Contains(text, "CUSTOMER NUMBER") || !strings.Contains(text, "("+number+")") {
					t.Errorf("customer number %s not printed", number)
				}
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("bill-to lacks %q", w)
					}
				}
				for _, a := range absent {
					if strings.Contains(text, a) {
						t.Errorf("bill-to still shows %q", a)
					}
				}
			})
		}
		invoicePDF, creditPDF := "/api/v1/invoices/"+invoice+"/pdf", "/api/v1/credit-notes/"+before+"/pdf"
		check("invoice: the holder", invoicePDF, "0042-117", holder, nil)
		check("credit note: the holder", creditPDF, "0042-117", append(holder, "Credits invoice", "Credit: operator goodwill"), nil)
		language := func(lang string) {
			t.Helper()
			if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/preferences", Headers: marie,
				Body: map[string]any{"language": lang}}); res.Status != 200 {
				t.Fatalf("language %s: %d %s", lang, res.Status, res.Raw)
			}
		}
		language("fr")
		if text := pdfOf(creditPDF); !strings.Contains(text, "Cr\xe9dit : operator goodwill") {
			t.Errorf("the French credit note's line: %q", text)
		}
		language("en")

		// A separate billing contact takes over the bill-to block of every document.
		if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/invoice-contact", Headers: marie,
			Body: map[string]string{"firstname": "Service", "lastname": "Comptable", "email": "factures@tremblay.example", "company": "Tremblay Design"}}); res.Status != 200 {
			t.Fatalf("invoice contact: %d %s", res.Status, res.Raw)
		}
		billing := []string{"Service Comptable", "Tremblay Design", "factures@tremblay.example", "1204-120 Rue King O"}
		check("invoice: the separate billing contact", invoicePDF, "0042-117", billing, []string{"marie.tremblay@example.ca"})
		check("credit note: the separate billing contact", creditPDF, "0042-117", billing, []string{"marie.tremblay@example.ca"})

		// A new customer number: issued documents keep theirs, a new one carries the new.
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE subscribers SET customer_number = '0042-999' WHERE id = ?`), sub.SubscriberID); err != nil {
			t.Fatal(err)
		}
		after := credit("second goodwill")
		check("issued invoice keeps its number", invoicePDF, "0042-117", nil, []string{"0042-999"})
		check("issued credit note keeps its number", creditPDF, "0042-117", nil, []string{"0042-999"})
		check("a new credit note carries the new number", "/api/v1/credit-notes/"+after+"/pdf", "0042-999", nil, []string{"0042-117"})
		// An invoice issued before the subscriber had a number prints the number it has now.
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE invoices SET customer_number = NULL WHERE id = ?`), invoice); err != nil {
			t.Fatal(err)
		}
		check("an invoice issued without a number", invoicePDF, "0042-999", nil, nil)
	})
}

// pdfText is the text drawn on a PDF's pages: its streams inflated, so a test can look for
// the strings a page shows (in the document's cp1252, between the parentheses of PDF
// strings).
func pdfText(raw []byte) string {
	var out strings.Builder
	for rest := raw; ; {
		i := bytes.Index(rest, []byte("stream\n"))
		if i < 0 {
			return out.String()
		}
		rest = rest[i+len("stream\n"):]
		j := bytes.Index(rest, []byte("\nendstream"))
		if j < 0 {
			return out.String()
		}
		if r, err := zlib.NewReader(bytes.NewReader(rest[:j])); err == nil {
			b, _ := io.ReadAll(r)
			out.Write(b)
		} else {
			out.Write(rest[:j])
		}
		rest = rest[j+len("\nendstream"):]
	}
}

// TestCancellationMoney: the quote equals what the cancellation books. An invoiced month
// gives back the unused days as a credit note refunded to the card; a month not yet invoiced
// gets a final invoice for the days served.
func TestCancellationMoney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC))
		h := &hook{}
		a := h.post(s, platformOrder("lh_7f3a9c1206", "leaver@example.ca", "cus_demo_visa")).JSON["subscription_id"].(string)
		b := h.post(s, platformOrder("lh_7f3a9c1205", "mover@example.ca", "cus_demo_declines")).JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "the first invoices", func() bool {
			return len(invoicesOf(t, s, a)) == 1 && len(invoicesOf(t, s, b)) == 1 && invoicesOf(t, s, a)[0].status == "paid"
		})
		op := s.Operator()
		quote := func(id, end string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscription/" + id + "/cancel/preview?end_date=" + end, Headers: op})
		}
		cancel := func(id, end string) {
			if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscription/" + id + "/cancel", Headers: op, Body: map[string]string{"end_date": end}}); r.Status != 200 {
				t.Fatalf("cancel: %d %s", r.Status, r.Raw)
			}
		}
		// November is invoiced for line a (Fibre 1000 at its promotional 75.00): 25 to 30 Nov
		// unused, 75.00 x 6/30 = 15.00 + 13% = 16.95 back.
		q := quote(a, "2026-11-25")
		lines := q.JSON["lines"].([]any)
		if q.JSON["total"] != -16.95 || len(lines) != 1 || lines[0].(map[string]any)["type"] != "credit_note" {
			t.Fatalf("invoiced-month quote: %s", q.Raw)
		}
		cancel(a, "2026-11-25")
		apptest.Eventually(t, 15*time.Second, "the refund", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND amount_minor = 1695 AND state = 'refunded'`, a) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM processor_charges WHERE status = 'refund' AND amount_minor = 1695`); n != 1 {
			t.Fatal("the refund did not reach the processor")
		}
		// Line b's December is not invoiced on 3 December (billing day 5): 1 and 2 Dec served,
		// 75.00 x 2/31 = 4.84 + 0.63 tax = 5.47 on a final invoice.
		s.DevClock.Set(time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC))
		op = s.Operator()
		q = quote(b, "2026-12-03")
		if q.JSON["total"] != 5.47 || q.JSON["lines"].([]any)[0].(map[string]any)["type"] != "final_invoice" {
			t.Fatalf("uninvoiced-month quote: %s", q.Raw)
		}
		cancel(b, "2026-12-03")
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND total_minor = 547`, b); n != 1 {
			t.Fatal("no final invoice of 5.47")
		}
	})
}

// TestBillingDay: PATCH /me/billing-day changes when money is collected, never what is owed.
func TestBillingDay(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		const marieLine, priyaLine = "c1000000-0000-4000-8000-000000000001", "c1000000-0000-4000-8000-000000000002"
		s.DevClock.Set(time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC))
		apptest.Eventually(t, 15*time.Second, "Marie's December invoice", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND period = '2026-12'`, marieLine) == 1
		})
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		docs := func() int {
			return count(t, s, `SELECT COUNT(*) FROM invoices`) + count(t, s, `SELECT COUNT(*) FROM credit_notes`)
		}
		before := docs()
		tests := []struct {
			name      string
			h         map[string]string
			body      map[string]any
			status    int
			effective string
			next      any
		}{
			{"month already invoiced: from next month", marie, map[string]any{"subscription_id": marieLine, "billing_day": 7}, 200, "2027-01-01", "2027-01-07"},
			{"above 10", marie, map[string]any{"subscription_id": marieLine, "billing_day": 11}, 422, "", nil},
			{"zero", marie, map[string]any{"subscription_id": marieLine, "billing_day": 0}, 422, "", nil},
			{"missing day", marie, map[string]any{"subscription_id": marieLine}, 422, "", nil},
			{"another subscriber's line", marie, map[string]any{"subscription_id": priyaLine, "billing_day": 5}, 404, "", nil},
			{"month not invoiced and the day is past", priya, map[string]any{"subscription_id": priyaLine, "billing_day": 2}, 409, "", nil},
			{"month not invoiced and the day is today", priya, map[string]any{"subscription_id": priyaLine, "billing_day": 3}, 409, "", nil},
			{"month not invoiced and the day ahead; nothing to send for a partner-billed line", priya, map[string]any{"subscription_id": priyaLine, "billing_day": 9}, 200, "2026-12-01", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/billing-day", Headers: tt.h, Body: tt.body})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && (res.JSON["effective_period"] != tt.effective || res.JSON["next_send_date"] != tt.next) {
					t.Fatalf("answer %s", res.Raw)
				}
			})
		}
		if docs() != before {
			t.Fatal("a billing-day change created an invoice or a credit note")
		}
		op := s.Operator()
		setFault(s, op, "billing_system", "down")
		res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/billing-day", Headers: marie, Body: map[string]any{"subscription_id": marieLine, "billing_day": 8}})
		setFault(s, op, "billing_system", "up")
		if res.Status != 502 || count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND billing_day = 8`, marieLine) != 1 {
			t.Fatalf("reschedule failure: %d %s (the day must stay saved)", res.Status, res.Raw)
		}
	})
}

// TestPlanChangePreviewWithoutBillingDocument: an invoice whose billing-document
// row is missing gives a null adjustment with a note and a normal 200.
func TestPlanChangePreviewWithoutBillingDocument(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC))
		id := (&hook{}).post(s, platformOrder("lh_7f3a9c1206", "nodoc@example.ca", "cus_demo_visa")).JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "the first invoice", func() bool { return len(invoicesOf(t, s, id)) == 1 })
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`DELETE FROM ledger_documents WHERE invoice_id IN (SELECT id FROM invoices WHERE subscription_id = ?)`), id); err != nil {
			t.Fatal(err)
		}
		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriptions/" + id + "/change-plan/preview?plan_version_id=" + planFibre500, Headers: apptest.Key(storeKey)})
		if res.Status != 200 || res.JSON["one_time_adjustment"] != nil || res.JSON["note"] == "" || res.JSON["eligible"] != true {
			t.Fatalf("preview: %d %s", res.Status, res.Raw)
		}
	})
}

// TestPlatformLineWithoutProcessorCustomer: a fixture line that is platform-billed and
// names no processor customer. Its invoices are issued and stay open without AutoPay: no
// attempt, no dunning, no charge job failing on every retry, and an operator's retry-charge
// finds nothing to charge either. Once the holder saves a card, the open invoice is paid.
func TestPlatformLineWithoutProcessorCustomer(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		const line = "c-nocard-1"
		f, err := fixture.Parse([]byte(`{"subscribers": [{"id": "s-nocard", "provider_id": "` + northwind + `",
			"holder": {"firstname": "Nora", "lastname": "Card", "email": "nora.card@example.ca", "password": "nora-password-1"},
			"subscriptions": [{"id": "` + line + `", "plan_version_id": "` + planFibre150 + `", "unit_id": "u2000000-0000-4000-8000-000000000102",
				"status": "ACTIVE", "started_at": "2026-01-05", "billing_owner": "platform", "billing_day": 1}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.LoadAtCost(ctx, s.Store, f, s.Clock.Now(), s.Config.PasswordCost); err != nil {
			t.Fatal(err)
		}
		s.DevClock.Set(time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC))
		unavailable := func() int {
			return count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'invoice.autopay_unavailable' AND subject_id = ?`, line)
		}
		// The start-up bill run may also have invoiced the line's November, before the clock moved.
		invoices := func() int { return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, line) }
		apptest.Eventually(t, 15*time.Second, "December's invoice left open without AutoPay", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND period = '2026-12'`, line) == 1 &&
				count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND status = 'open'
					AND next_charge_at IS NULL AND charge_queued_at IS NULL`, line) == invoices() && unavailable() == invoices()
		})
		issued := invoices()
		var december string
		if err := s.Store.R().QueryRow(ctx, `SELECT id FROM invoices WHERE subscription_id = ? AND period = '2026-12'`, line).Scan(&december); err != nil {
			t.Fatal(err)
		}
		op := s.Operator()
		if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/invoices/" + december + "/retry-charge", Headers: op}); r.Status != 202 {
			t.Fatalf("retry-charge: %d %s", r.Status, r.Raw)
		}
		apptest.Eventually(t, 15*time.Second, "the retry found nothing to charge", func() bool { return unavailable() == issued+1 })
		s.Settle(t) // a charge job retrying would be done, and have failed again, by now
		if n := unavailable(); n != issued+1 {
			t.Fatalf("the invoices were looked at %d times, want %d (once per scheduled attempt)", n, issued+1)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM charges c JOIN invoices i ON i.id = c.invoice_id WHERE i.subscription_id = ?`, line); n != 0 {
			t.Fatalf("%d charge attempts recorded without a card", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = 'nora.card@example.ca' AND subject LIKE 'Payment failed%'`); n != 0 {
			t.Fatal("dunned without a card")
		}
		if strings.Contains(s.Logs(), `processor customer \"\"`) {
			t.Fatal("a charge job failed on the missing processor customer")
		}
		nora := s.Login("nora.card@example.ca", "nora-password-1")
		setup := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method/setup", Headers: nora})
		if setup.Status != 200 {
			t.Fatalf("card setup: %d %s", setup.Status, setup.Raw)
		}
		if r := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method/confirm", Headers: nora,
			Body: map[string]string{"setup_intent_id": setup.JSON["setup_intent_id"].(string), "test_card": "4242424242424242"}}); r.Status != 200 {
			t.Fatalf("card confirm: %d %s", r.Status, r.Raw)
		}
		apptest.Eventually(t, 15*time.Second, "the open invoices paid with the saved card", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND status = 'paid'`, line) == issued
		})
	})
}

// awaitBillRun waits until the bill run the sweep queued for the demo provider's local day
// (its marker is written with the job) has run.
func awaitBillRun(t *testing.T, s *apptest.Service, day string) {
	t.Helper()
	apptest.Eventually(t, 15*time.Second, "the bill run of "+day, func() bool {
		return count(t, s, `SELECT COUNT(*) FROM settings WHERE key = ?`, "billrun:"+northwind+":"+day) == 1 &&
			count(t, s, `SELECT COUNT(*) FROM river_job WHERE kind = 'billing.run' AND state IN ('available', 'running', 'scheduled', 'retryable')`) == 0
	})
}

// recurringPeriods lists the periods of a line's recurring invoices in the order they were
// issued.
func recurringPeriods(t *testing.T, s *apptest.Service, subID string) []string {
	t.Helper()
	return testdb.Strings(t, rawdb.Writer(s.Store).QueryContext, s.Store.Dialect.Rebind(`SELECT period FROM invoices
		WHERE subscription_id = ? AND kind = 'recurring' ORDER BY created_at, number`), subID)
}

// TestBillRunsCatchUpAfterAClockJump: a dev-clock jump over whole months, or over the billing
// days of the month it leaves, bills every month it skipped, oldest first, once per line and
// month. A month a line's first invoice covers gets no recurring invoice, nor a month after the
// line ended (its final invoice bills the days it served).
func TestBillRunsCatchUpAfterAClockJump(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := setClock(t, s, s.Operator(), "2027-02-10T15:00:00Z") // through the HTTP route (dev mode)
		h := &hook{}
		stays := h.post(s, platformOrder("lh_7f3a9c1206", "household@example.ca", "cus_demo_visa")).JSON["subscription_id"].(string)
		leaves := h.post(s, platformOrder("lh_7f3a9c1205", "household@example.ca", "cus_demo_visa")).JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "the first invoices", func() bool {
			return len(invoicesOf(t, s, stays)) == 1 && len(invoicesOf(t, s, leaves)) == 1
		})
		cancelLine(t, s, op, leaves, "2027-03-20") // a final invoice bills 1 to 19 March
		// Marie's line, cancelled now for 10 April, runs through March: March is billed as any
		// month, April by the final invoice (1 to 9 April), with no recurring invoice.
		cancelLine(t, s, op, marieLine, "2027-04-10")
		var joins string
		steps := []struct {
			at   string
			do   func() // after the jump, once its bill run is done
			want map[*string][]string
		}{
			// Straight from 10 February to 15 April: March is billed, then April.
			{at: "2027-04-15T15:00:00Z", want: map[*string][]string{&stays: {"2027-03", "2027-04"}, &leaves: nil}},
			// The 3rd of May, before the billing day (the 5th): nothing yet. A line goes live.
			{at: "2027-05-03T15:00:00Z", do: func() {
				apptest.Eventually(t, 15*time.Second, "the ended line's place to be free", func() bool { // the deprovisioner resets its port
					res := h.post(s, platformOrder("lh_7f3a9c1205", "household@example.ca", "cus_demo_visa"))
					joins, _ = res.JSON["subscription_id"].(string)
					return res.Status == 200
				})
				apptest.Eventually(t, 15*time.Second, "the new line's first invoice", func() bool { return len(invoicesOf(t, s, joins)) == 1 })
			}, want: map[*string][]string{&stays: {"2027-03", "2027-04"}, &joins: nil}},
			// To the 2nd of June: May's billing day passed on the way, June's is still ahead.
			{at: "2027-06-02T15:00:00Z", want: map[*string][]string{&stays: {"2027-03", "2027-04", "2027-05"}, &joins: nil}},
			// Over two more months: the new line's first month stays its first invoice's.
			{at: "2027-08-20T15:00:00Z", want: map[*string][]string{
				&stays: {"2027-03", "2027-04", "2027-05", "2027-06", "2027-07", "2027-08"},
				&joins: {"2027-06", "2027-07", "2027-08"}}},
		}
		for i, st := range steps {
			op = setClock(t, s, op, st.at)
			awaitBillRun(t, s, st.at[:10])
			if st.do != nil {
				st.do()
			}
			for line, want := range st.want {
				if got := recurringPeriods(t, s, *line); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("at %s: recurring invoices for %v, want %v", st.at, got, want)
				}
			}
			if i > 0 {
				continue
			}
			for _, tc := range []struct {
				kind, period string
				want         int
			}{{"recurring", "2027-03", 1}, {"recurring", "2027-04", 0}, {"final", "2027-04", 1}} {
				if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = ? AND period = ?`, marieLine, tc.kind, tc.period); n != tc.want {
					t.Fatalf("Marie's line cancelled for 10 April: %d %s invoices for %s, want %d", n, tc.kind, tc.period, tc.want)
				}
			}
		}
		// Moving again within the month, or a second run, adds nothing.
		setClock(t, s, op, "2027-08-21T15:00:00Z")
		awaitBillRun(t, s, "2027-08-21")
		if err := s.Billing.BillRun(context.Background(), jobs.BillRun{ProviderID: northwind, Period: "2027-08", From: "2027-02"}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id IN (?, ?) AND kind = 'recurring'`, stays, joins); n != 9 {
			t.Fatalf("%d recurring invoices after a second run, want 9", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND period = '2027-03'`, leaves); n != 1 {
			t.Fatal("the ended line's final invoice is missing")
		}
	})
}

// TestACancelledLineWaitingForAVisitIsNotBilled: a line cancelled for a later month is
// billed for the months before its end date only if it was running; one waiting for its
// reinstall (a technician reactivation keeps the activation it had) owes nothing until the
// visit, and the visit never comes.
func TestACancelledLineWaitingForAVisitIsNotBilled(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := setClock(t, s, s.Operator(), "2027-02-10T15:00:00Z")
		awaitBillRun(t, s, "2027-02-10")
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE subscriptions SET status = 'PENDING_INSTALL', workflow_state = 'awaiting_install' WHERE id = ?`), marieLine); err != nil {
			t.Fatal(err)
		}
		cancelLine(t, s, op, marieLine, "2027-04-10")
		setClock(t, s, op, "2027-04-15T15:00:00Z")
		awaitBillRun(t, s, "2027-04-15")
		if got := recurringPeriods(t, s, marieLine); slices.Contains(got, "2027-03") || slices.Contains(got, "2027-04") {
			t.Fatalf("recurring invoices %v for a line that waited for its visit until it ended", got)
		}
	})
}

// TestCancellationSettlesPlanChanges: an upgrade in an invoiced month waits as a line for the
// next invoice; a cancellation in that month settles it, since no monthly invoice will come.
// The month then costs the old price up to the change and the new one after it, until the end
// date: the unused days at the new price come back less the upgrade's line, as a credit note
// when that leaves money to give back and as a final invoice when the customer owes.
func TestCancellationSettlesPlanChanges(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := setClock(t, s, s.Operator(), "2027-04-01T15:00:00Z")
		h := &hook{}
		line := func(hash string) string {
			return h.post(s, order(map[string]any{"plan_version_id": planFibre150, "location_hash": hash, "subscriber": person("household@example.ca"),
				"billing": map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa", "billing_day": 5}})).JSON["subscription_id"].(string)
		}
		early, late := line("lh_7f3a9c1206"), line("lh_7f3a9c1205")
		apptest.Eventually(t, 15*time.Second, "April's first invoices paid at 45.00", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id IN (?, ?) AND kind = 'first' AND net_minor = 4500 AND status = 'paid'`, early, late) == 2
		})
		tests := []struct {
			name, line, changeAt, end  string
			adjustment                 float64 // the upgrade's next_invoice_line, 45.00 -> 60.00
			quote                      float64 // the preview's total
			credit, finalNet, finalTax int64
		}{
			// 15.00 x 30/30 = 15.00 on the 1st; for the 30th, 1 unused day at 60.00 = 2.00 comes
			// back: April costs 29 x 2.00 = 58.00, 13.00 more than paid, + 1.69 tax.
			{name: "upgrade on the 1st, cancelled for the 30th: the customer owes", line: early, changeAt: "2027-04-01T15:00:00Z", end: "2027-04-30",
				adjustment: 15, quote: 14.69, finalNet: 1300, finalTax: 169},
			// 15.00 x 6/30 = 3.00 on the 25th; for the 28th, 3 unused days at 60.00 = 6.00: April
			// costs 24 x 1.50 + 3 x 2.00 = 42.00, 3.00 less than paid, + 0.39 tax back.
			{name: "upgrade on the 25th, cancelled for the 28th: money goes back", line: late, changeAt: "2027-04-25T15:00:00Z", end: "2027-04-28",
				adjustment: 3, quote: -3.39, credit: 339},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				op = setClock(t, s, op, tt.changeAt)
				ch := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriptions/" + tt.line + "/change-plan", Headers: apptest.Key(storeKey),
					Body: map[string]string{"plan_version_id": planFibre500}})
				if adj, _ := ch.JSON["one_time_adjustment"].(map[string]any); ch.Status != 200 || adj["type"] != "next_invoice_line" || adj["amount"] != tt.adjustment {
					t.Fatalf("change plan: %d %s", ch.Status, ch.Raw)
				}
				q := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscription/" + tt.line + "/cancel/preview?end_date=" + tt.end, Headers: op})
				if q.Status != 200 || q.JSON["total"] != tt.quote {
					t.Fatalf("preview: %d %s", q.Status, q.Raw)
				}
				cancelLine(t, s, op, tt.line, tt.end)
				if n := count(t, s, `SELECT COUNT(*) FROM billing_adjustments WHERE subscription_id = ? AND consumed_at IS NULL`, tt.line); n != 0 {
					t.Fatalf("%d plan-change lines left open on a cancelled line", n)
				}
				if n := count(t, s, `SELECT COALESCE(SUM(amount_minor), 0) FROM credit_notes WHERE subscription_id = ? AND reason = 'cancellation'`, tt.line); n != int(tt.credit) {
					t.Fatalf("cancellation credit %d, want %d", n, tt.credit)
				}
				var final invoiceRow
				for _, inv := range invoicesOf(t, s, tt.line) {
					if inv.kind == "final" {
						final = inv
					}
				}
				if final.net != tt.finalNet || final.tax != tt.finalTax || final.total != tt.finalNet+tt.finalTax {
					t.Fatalf("final invoice %+v, want net %d tax %d", final, tt.finalNet, tt.finalTax)
				}
				if tt.credit > 0 {
					apptest.Eventually(t, 15*time.Second, "the refund", func() bool {
						return count(t, s, `SELECT COUNT(*) FROM processor_charges WHERE status = 'refund' AND amount_minor = ?`, tt.credit) == 1
					})
				}
			})
		}
	})
}

// TestCancelPreviewIsWhatTheCancelWrites: the preview (a read-only quote)
// and the cancellation run one computation, so the preview's lines and total are the
// documents the cancellation writes, in every case: the credit note for the unused days, the
// final invoice (net plus tax, with any upgrade's pending line folded in as on every invoice),
// and each open credit swept into the refund or spent on the final invoice. Days are at the
// price the plan has on them (a live promotion's), and a correction under 0.50 carried from a
// plan change is settled with the rest.
func TestCancelPreviewIsWhatTheCancelWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		plan, changeTo    string // changeTo: a plan change at changeAt ("" for none)
		orderAt, changeAt string
		cancelAt, end     string
		lines             []string // the preview's lines, "type amount"
	}{
		// 45.00 x 2/31 = 2.90 for 1 and 2 May, + 0.38 tax.
		{name: "month not invoiced", plan: planFibre150, orderAt: "2027-04-20T15:00:00Z", cancelAt: "2027-05-03T15:00:00Z", end: "2027-05-03",
			lines: []string{"final_invoice 3.28"}},
		// 45.00 x 6/30 = 9.00 for 25 to 30 April, + 1.17 tax.
		{name: "month invoiced", plan: planFibre150, orderAt: "2027-04-20T15:00:00Z", cancelAt: "2027-04-21T15:00:00Z", end: "2027-04-25",
			lines: []string{"credit_note -10.17"}},
		// 60.00 x 6/30 = 12.00 back, less the upgrade's 15.00 x 6/30 = 3.00: 9.00 + 1.17 tax.
		{name: "month invoiced, an upgrade pending", plan: planFibre150, changeTo: planFibre500, orderAt: "2027-04-20T15:00:00Z",
			changeAt: "2027-04-25T15:00:00Z", cancelAt: "2027-04-25T16:00:00Z", end: "2027-04-25", lines: []string{"credit_note -10.17"}},
		// The upgrade's 15.00 on the 1st outweighs 1 unused day at 60.00: 13.00 + 1.69 tax owed.
		{name: "month invoiced, an upgrade pending larger than the unused days", plan: planFibre150, changeTo: planFibre500,
			orderAt: "2027-04-01T15:00:00Z", changeAt: "2027-04-01T15:00:00Z", cancelAt: "2027-04-02T15:00:00Z", end: "2027-04-30",
			lines: []string{"final_invoice 14.69"}},
		// May not invoiced yet: 60.00 x 2/31 = 3.87 for 1 and 2 May, + April's upgrade 15.00 x
		// 6/30 = 3.00 = 6.87 + 0.89 tax.
		{name: "month not invoiced, an upgrade pending", plan: planFibre150, changeTo: planFibre500, orderAt: "2027-04-20T15:00:00Z",
			changeAt: "2027-04-25T15:00:00Z", cancelAt: "2027-05-03T15:00:00Z", end: "2027-05-03", lines: []string{"final_invoice 7.76"}},
		// Ended on the 1st, before May's billing day: no day served, April's upgrade 3.00 + 0.39.
		{name: "month not invoiced, no day served, an upgrade pending", plan: planFibre150, changeTo: planFibre500, orderAt: "2027-04-20T15:00:00Z",
			changeAt: "2027-04-25T15:00:00Z", cancelAt: "2027-05-01T15:00:00Z", end: "2027-05-01", lines: []string{"final_invoice 3.39"}},
		// A downgrade credited 15.00 x 6/30 = 3.00 + 0.39 on the 25th; 3 unused days at 45.00 =
		// 4.50 + 0.59 come back beside it.
		{name: "month invoiced, a credit open", plan: planFibre500, changeTo: planFibre150, orderAt: "2027-04-20T15:00:00Z",
			changeAt: "2027-04-25T15:00:00Z", cancelAt: "2027-04-25T16:00:00Z", end: "2027-04-28", lines: []string{"credit_note -5.09", "open_credit -3.39"}},
		// May not invoiced: 45.00 x 2/31 = 2.90 + 0.38, from which the open 3.39 is taken.
		{name: "month not invoiced, a credit open", plan: planFibre500, changeTo: planFibre150, orderAt: "2027-04-20T15:00:00Z",
			changeAt: "2027-04-25T15:00:00Z", cancelAt: "2027-05-03T15:00:00Z", end: "2027-05-03", lines: []string{"final_invoice 3.28", "open_credit -3.39"}},
		// An upgrade on 31 May, 15.00 x 1/31 = 0.48, is below 0.50 and carried to the next
		// change; the cancellation settles it. June not invoiced, no day served: 0.48 + 0.06.
		{name: "month not invoiced, a correction carried", plan: planFibre150, changeTo: planFibre500, orderAt: "2027-05-20T15:00:00Z",
			changeAt: "2027-05-31T15:00:00Z", cancelAt: "2027-05-31T16:00:00Z", end: "2027-06-01", lines: []string{"final_invoice 0.54"}},
		// June invoiced at 60.00: 11 unused days = 22.00, less the carried 0.48 = 21.52 + 2.80.
		{name: "month invoiced, a correction carried", plan: planFibre150, changeTo: planFibre500, orderAt: "2027-05-20T15:00:00Z",
			changeAt: "2027-05-31T15:00:00Z", cancelAt: "2027-06-06T15:00:00Z", end: "2027-06-20", lines: []string{"credit_note -24.32"}},
		// Fibre 1000 (85.00) is on promotion at 75.00 until 31 January 2027, and December was
		// invoiced at it: 11 unused days at 75.00 = 26.61 + 3.46 come back.
		{name: "month invoiced, a promotion live", plan: planFibre1000, orderAt: "2026-12-10T15:00:00Z", cancelAt: "2026-12-11T15:00:00Z",
			end: "2026-12-21", lines: []string{"credit_note -30.07"}},
		// January not invoiced: 1 and 2 January at 75.00 = 4.84 + 0.63.
		{name: "month not invoiced, a promotion live", plan: planFibre1000, orderAt: "2026-12-10T15:00:00Z", cancelAt: "2027-01-03T15:00:00Z",
			end: "2027-01-03", lines: []string{"final_invoice 5.47"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				op := setClock(t, s, s.Operator(), tt.orderAt)
				id := (&hook{}).post(s, order(map[string]any{"plan_version_id": tt.plan, "location_hash": "lh_7f3a9c1206", "subscriber": person("quote@example.ca"),
					"billing": map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa", "billing_day": 5}})).JSON["subscription_id"].(string)
				apptest.Eventually(t, 15*time.Second, "the first invoice paid", func() bool {
					inv := invoicesOf(t, s, id)
					return len(inv) == 1 && inv[0].status == "paid"
				})
				if tt.changeTo != "" {
					op = setClock(t, s, op, tt.changeAt)
					if r := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriptions/" + id + "/change-plan", Headers: apptest.Key(storeKey),
						Body: map[string]string{"plan_version_id": tt.changeTo}}); r.Status != 200 {
						t.Fatalf("change plan: %d %s", r.Status, r.Raw)
					}
				}
				op = setClock(t, s, op, tt.cancelAt)
				awaitBillRun(t, s, tt.cancelAt[:10])
				q := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscription/" + id + "/cancel/preview?end_date=" + tt.end, Headers: op})
				if q.Status != 200 {
					t.Fatalf("preview: %d %s", q.Status, q.Raw)
				}
				var quoted []string
				for _, l := range q.JSON["lines"].([]any) {
					m := l.(map[string]any)
					quoted = append(quoted, fmt.Sprintf("%s %.2f", m["type"], m["amount"]))
				}
				if fmt.Sprint(quoted) != fmt.Sprint(tt.lines) {
					t.Fatalf("preview lines %v, want %v", quoted, tt.lines)
				}
				// What the cancellation writes, line by line as the preview shows it.
				open := count(t, s, `SELECT COALESCE(SUM(remaining_minor), 0) FROM credit_notes WHERE subscription_id = ? AND state = 'open'`, id)
				cancelLine(t, s, op, id, tt.end)
				var written []string
				var sum int
				if n := count(t, s, `SELECT COALESCE(SUM(amount_minor), 0) FROM credit_notes WHERE subscription_id = ? AND reason = 'cancellation'`, id); n != 0 {
					written, sum = append(written, fmt.Sprintf("credit_note %.2f", -float64(n)/100)), sum-n
				}
				if n := count(t, s, `SELECT COALESCE(SUM(net_minor + tax_minor), 0) FROM invoices WHERE subscription_id = ? AND kind = 'final'`, id); n != 0 {
					written, sum = append(written, fmt.Sprintf("final_invoice %.2f", float64(n)/100)), sum+n
				}
				if open != 0 {
					written, sum = append(written, fmt.Sprintf("open_credit %.2f", -float64(open)/100)), sum-open
				}
				if fmt.Sprint(written) != fmt.Sprint(quoted) || q.JSON["total"] != float64(sum)/100 {
					t.Fatalf("the cancellation wrote %v (total %d), the preview quoted %v (total %v)", written, sum, quoted, q.JSON["total"])
				}
				if n := count(t, s, `SELECT COUNT(*) FROM billing_adjustments WHERE subscription_id = ? AND consumed_at IS NULL`, id); n != 0 {
					t.Fatal("an upgrade's line or a carried correction is left open on the cancelled line")
				}
			})
		})
	}
}

// TestCancelPreviewAnswersAsTheCancel: the preview of a cancellation names the month of its
// end date (a 1st included) and refuses what the cancellation refuses, with the same answer:
// a line already cancelled is 409, not a quote of money that would never move.
func TestCancelPreviewAnswersAsTheCancel(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := setClock(t, s, s.Operator(), "2027-03-20T15:00:00Z")
		preview := func(end string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscription/" + marieLine + "/cancel/preview?end_date=" + end, Headers: op})
		}
		for _, tt := range []struct{ end, period string }{{"2027-03-31", "2027-03"}, {"2027-04-01", "2027-04"}, {"2027-05-01", "2027-05"}} {
			if q := preview(tt.end); q.Status != 200 || q.JSON["period"] != tt.period {
				t.Errorf("preview for %s: %d %s, want period %s", tt.end, q.Status, q.Raw, tt.period)
			}
		}
		cancelLine(t, s, op, marieLine, "2027-04-01")
		again := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscription/" + marieLine + "/cancel", Headers: op, Body: map[string]string{"end_date": "2027-04-01"}})
		q := preview("2027-04-01")
		if again.Status != 409 || q.Status != again.Status || detailCode(q) != detailCode(again) || q.JSON["lines"] != nil {
			t.Fatalf("a cancelled line: cancel %d %s, preview %d %s", again.Status, again.Raw, q.Status, q.Raw)
		}
	})
}

// TestFinalInvoiceChargedOnItsDate: a cancellation for a later month writes its final invoice
// at once, dated on the end date, and AutoPay charges it on that date, not before: no days
// are charged weeks before they are served.
func TestFinalInvoiceChargedOnItsDate(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := setClock(t, s, s.Operator(), "2027-04-20T15:00:00Z")
		id := (&hook{}).post(s, order(map[string]any{"plan_version_id": planFibre150, "location_hash": "lh_7f3a9c1206", "subscriber": person("later@example.ca"),
			"billing": map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa", "billing_day": 5}})).JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "the first invoice paid", func() bool {
			inv := invoicesOf(t, s, id)
			return len(inv) == 1 && inv[0].status == "paid"
		})
		// June 1 and 2 served: 45.00 x 2/30 = 3.00 + 0.39, on a final invoice dated 3 June.
		cancelLine(t, s, op, id, "2027-06-03")
		final := func() invoiceRow {
			for _, inv := range invoicesOf(t, s, id) {
				if inv.kind == "final" {
					return inv
				}
			}
			t.Fatal("no final invoice")
			return invoiceRow{}
		}
		if f := final(); f.date != "2027-06-03" || f.total != 339 || f.status != "open" {
			t.Fatalf("final invoice %+v", f)
		}
		for _, at := range []string{"2027-04-21T15:00:00Z", "2027-06-03T03:59:00Z"} { // the last, 23:59 on 2 June in Toronto
			op = setClock(t, s, op, at)
			s.Settle(t)
			if f := final(); f.status != "open" || count(t, s, `SELECT COUNT(*) FROM charges c JOIN invoices i ON i.id = c.invoice_id
				WHERE i.subscription_id = ? AND i.kind = 'final'`, id) != 0 {
				t.Fatalf("the final invoice was charged before its date, at %s: %+v", at, f)
			}
		}
		setClock(t, s, op, "2027-06-03T04:00:00Z") // midnight in Toronto
		apptest.Eventually(t, 15*time.Second, "the final invoice charged on its date", func() bool { return final().status == "paid" })
	})
}
