package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/apptest"
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
		// Setup fee 50.00 + 85.00 x 10/30 = 28.33 -> net 78.33, tax 13% = 10.18, total 88.51.
		first := invoicesOf(t, s, id)[0]
		if first.kind != "first" || first.period != "2026-11" || first.date != "2026-11-21" || first.net != 7833 || first.tax != 1018 || first.total != 8851 {
			t.Fatalf("first invoice %+v", first)
		}
		lines := count(t, s, `SELECT COUNT(*) FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id
			WHERE i.subscription_id = ? AND ((l.kind = 'setup_fee' AND l.amount_minor = 5000) OR (l.kind = 'plan' AND l.days = 10 AND l.days_in_period = 30 AND l.unit_price_minor = 8500 AND l.amount_minor = 2833))`, id)
		if lines != 2 {
			t.Fatal("first invoice lines do not show unit price, days and days_in_period")
		}
		// December: nothing before the billing day (the 5th), the full month on it.
		s.DevClock.Set(time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC))
		time.Sleep(1500 * time.Millisecond)
		if n := len(invoicesOf(t, s, id)); n != 1 {
			t.Fatalf("%d invoices before the billing day", n)
		}
		s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
		apptest.Eventually(t, 15*time.Second, "the December invoice to be paid", func() bool {
			inv := invoicesOf(t, s, id)
			return len(inv) == 2 && inv[1].status == "paid"
		})
		dec := invoicesOf(t, s, id)[1]
		if dec.kind != "recurring" || dec.period != "2026-12" || dec.date != "2026-12-05" || dec.net != 8500 || dec.total != 9605 {
			t.Fatalf("recurring invoice %+v", dec)
		}
		// A second bill run for the same period adds nothing.
		charges := count(t, s, `SELECT COUNT(*) FROM charges`)
		if err := s.Billing.BillRun(context.Background(), billRun(northwind, "2026-12")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		if n := len(invoicesOf(t, s, id)); n != 2 {
			t.Fatalf("%d invoices after a second run", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM charges`); n != charges {
			t.Fatal("a second run charged again")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM processor_charges WHERE status = 'succeeded'`); n != 2 {
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
		s.Store.DB.Exec(`UPDATE processor_payment_methods SET behaviour = 'succeeds' WHERE id = 'pm_demo_declines'`)
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
