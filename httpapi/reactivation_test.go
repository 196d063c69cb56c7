package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/invariants"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

const marieSubscriber = "s1000000-0000-4000-8000-000000000001"

type reactivation struct {
	t  *testing.T
	s  *apptest.Service
	op map[string]string
}

// newReactivation starts on 21 November 2026 with Marie's November invoiced and paid: the
// demo line carries no card of its own, so the first AutoPay attempt is declined until she
// saves one, which retries the invoice at once.
func newReactivation(t *testing.T, s *apptest.Service) *reactivation {
	portalClock(s)
	x := &reactivation{t: t, s: s, op: s.Operator()}
	if err := s.Billing.BillRun(context.Background(), billRun(northwind, "2026-11")); err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, 15*time.Second, "the first AutoPay attempt", func() bool {
		return count(t, s, `SELECT COUNT(*) FROM charges c JOIN invoices i ON i.id = c.invoice_id WHERE i.subscriber_id = ?`, marieSubscriber) > 0
	})
	x.saveCard(s.Login("marie.tremblay@example.ca", "demo-password-1"), "4242424242424242")
	x.paidUp()
	return x
}

func (x *reactivation) cancel(id, end string) {
	x.t.Helper()
	cancelLine(x.t, x.s, x.op, id, end)
}

func (x *reactivation) preview(h map[string]string) *apptest.Response {
	x.t.Helper()
	r := x.s.Do(apptest.Request{Method: "GET", Path: reactivatePath, Headers: h})
	if r.Status != 200 {
		x.t.Fatalf("preview: %d %s", r.Status, r.Raw)
	}
	return r
}

func (x *reactivation) act(h map[string]string, id string) *apptest.Response {
	return x.s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/subscriptions/" + id + "/reactivation", Headers: h})
}

// portAtRest waits until the line's port has no convergence under way: its latest setting
// confirmed by the switch or failed, and its lease free. An act that meets a convergence a
// previous step queued (the deprovisioner's reset, the port followed back after a failed
// reactivation) finds the port as that job leaves it, under whatever fault is set by then.
func (x *reactivation) portAtRest(lineID string) {
	x.t.Helper()
	apptest.Eventually(x.t, 15*time.Second, "the port at rest", func() bool {
		return count(x.t, x.s, `SELECT COUNT(*) FROM port_states p JOIN subscriptions s ON s.port_id = p.port_id
			WHERE s.id = ? AND p.lease_token = '' AND (p.converged_version >= p.version OR p.failed_version >= p.version)`, lineID) == 1
	})
}

// paidUp waits until the subscriber has no open invoice (AutoPay settled them).
func (x *reactivation) paidUp() {
	x.t.Helper()
	apptest.Eventually(x.t, 15*time.Second, "no open invoice", func() bool {
		return count(x.t, x.s, `SELECT COUNT(*) FROM invoices WHERE subscriber_id = ? AND status = 'open'`, marieSubscriber) == 0
	})
}

func (x *reactivation) status(id string) string {
	var st string
	if err := x.s.Store.R().QueryRow(context.Background(), `SELECT status FROM subscriptions WHERE id = ?`, id).Scan(&st); err != nil {
		x.t.Fatal(err)
	}
	return st
}

// portalLine orders a line from Marie's portal and returns its id.
func (x *reactivation) portalLine(marie map[string]string, building, plan, unit, start string) string {
	x.t.Helper()
	extra := map[string]any{}
	if start != "" {
		extra["requested_start_date"] = start
	}
	r := x.s.Do(apptest.Request{Method: "POST", Path: ordersPath, Headers: marie, Body: portalOrder(building, plan, unit, extra)})
	if r.Status != 201 {
		x.t.Fatalf("portal order: %d %s", r.Status, r.Raw)
	}
	return r.JSON["subscription_id"].(string)
}

// installedQueenLine orders Fibre 150 in suite 102 of the second-line Queen building from
// Marie's portal, completes its install and waits until its first invoice is paid.
func (x *reactivation) installedQueenLine(marie map[string]string) string {
	x.t.Helper()
	queen := x.portalLine(marie, bldQueen, planFibre150, unitQueen102, "")
	x.confirmInstall(queen)
	x.paidUp()
	return queen
}

func (x *reactivation) confirmInstall(id string) {
	x.t.Helper()
	if r := x.s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/confirm-install", Headers: apptest.Key(storeKey),
		Body: map[string]string{"subscription_id": id}}); r.Status != 200 {
		x.t.Fatalf("confirm install: %d %s", r.Status, r.Raw)
	}
}

func (x *reactivation) saveCard(h map[string]string, card string) {
	x.t.Helper()
	setup := x.s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method/setup", Headers: h})
	if r := x.s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method/confirm", Headers: h,
		Body: map[string]string{"setup_intent_id": setup.JSON["setup_intent_id"].(string), "test_card": card}}); r.Status != 200 {
		x.t.Fatalf("save card: %d %s", r.Status, r.Raw)
	}
}

func blockersOf(r *apptest.Response) string {
	var out []string
	for _, b := range r.JSON["blockers"].([]any) {
		out = append(out, b.(string))
	}
	return strings.Join(out, " ")
}

// TestReactivationPreview: the preview's case, path, blockers and money on the read side, all
// account users, the holder-only list of the orders and reactivation routes, and provider
// isolation.
func TestReactivationPreview(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		liam := s.Login("liam.chen@example.ca", "demo-password-4")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		r := x.preview(marie)
		if r.JSON["case"] != nil || r.JSON["eligible"] != false || r.JSON["path"] != "none" || r.JSON["holder_only"] != false {
			t.Fatalf("nothing cancelled: %s", r.Raw)
		}
		x.paidUp()
		x.cancel(marieLine, "2026-11-25")
		for _, h := range []map[string]string{marie, luc} {
			r = x.preview(h)
			cancellation := r.JSON["cancellation"].(map[string]any)
			billing := r.JSON["billing"].(map[string]any)
			if r.JSON["case"] != "withdraw" || r.JSON["eligible"] != true || r.JSON["path"] != "none" || cancellation["ended_at"] != "2026-11-25T05:00:00Z" ||
				billing["first_charge"] != nil || r.JSON["billing_starts"] != "now" || r.JSON["monthly_price"] != 60.0 || r.JSON["subscription_id"] != marieLine {
				t.Fatalf("withdraw preview: %s", r.Raw)
			}
		}
		if r := x.preview(luc); r.JSON["holder_only"] != true {
			t.Fatalf("an authorized user may read but not act: %s", r.Raw)
		}
		// Every holder-only route of orders and reactivation answers 403 holder_only.
		for _, rq := range []apptest.Request{
			{Method: "GET", Path: orderOptions + bldKing},
			{Method: "GET", Path: previewQuery(portalOrder(bldQueen, planFibre150, unitQueen102, nil))},
			{Method: "POST", Path: ordersPath, Body: portalOrder(bldQueen, planFibre150, unitQueen102, nil)},
			{Method: "POST", Path: "/partner/subscriber/me/subscriptions/" + marieLine + "/reactivation"},
			{Method: "POST", Path: "/api/v1/subscriber/me/subscriptions/" + marieLine + "/reactivation"},
		} {
			rq.Headers = luc
			if r := s.Do(rq); r.Status != 403 || detailCode(r) != "holder_only" {
				t.Fatalf("%s %s as an authorized user: %d %s", rq.Method, rq.Path, r.Status, r.Raw)
			}
		}
		if n := x.status(marieLine); n != "CANCELLED" {
			t.Fatalf("an authorized user changed the line: %s", n)
		}
		// Unpaid invoices block.
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE invoices SET status = 'open' WHERE subscriber_id = ?`), marieSubscriber); err != nil {
			t.Fatal(err)
		}
		if r := x.preview(marie); r.JSON["eligible"] != false || !strings.Contains(blockersOf(r), "unpaid invoices") {
			t.Fatalf("unpaid invoices: %s", r.Raw)
		}
		if r := x.act(marie, marieLine); r.Status != 409 || detailCode(r) != "not_eligible" {
			t.Fatalf("acting while blocked: %d %s", r.Status, r.Raw)
		}
		// A line billed directly by the provider is blocked (docs/portal.md, Reactivation).
		x.cancel(priyaLine, "2026-11-21")
		if r := x.preview(priya); r.JSON["case"] != "reactivate" || r.JSON["eligible"] != false || !strings.Contains(blockersOf(r), "billed directly by the provider") {
			t.Fatalf("partner-billed: %s", r.Raw)
		}
		// Another provider's subscriber sees nothing and cannot act on the line.
		if r := x.preview(liam); r.JSON["case"] != nil || r.JSON["subscription_id"] != nil {
			t.Fatalf("Maple's subscriber sees a Northwind line: %s", r.Raw)
		}
		if r := x.act(liam, marieLine); r.Status != 404 {
			t.Fatalf("Maple's subscriber acting on a Northwind line: %d %s", r.Status, r.Raw)
		}
		if r := x.act(priya, marieLine); r.Status != 404 {
			t.Fatalf("another subscriber's line: %d %s", r.Status, r.Raw)
		}
		if r := x.act(marie, priyaLine); r.Status != 404 {
			t.Fatalf("another subscriber's line: %d %s", r.Status, r.Raw)
		}
	})
}

// TestReactivationWithdraw: the line returns to its status and billing continues; an
// open refund credit is voided, days whose money already went back are invoiced again.
func TestReactivationWithdraw(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND period = '2026-11' AND status = 'paid'`, marieLine); n == 0 {
			t.Fatal("November is not invoiced")
		}
		// The refund cannot reach the processor yet: the credit note stays open, and is voided.
		setFault(s, x.op, "processor", "down")
		x.cancel(marieLine, "2026-11-25")
		r := x.act(marie, marieLine)
		billing, _ := r.JSON["billing"].(map[string]any)
		if r.Status != 200 || r.JSON["case"] != "withdraw" || r.JSON["status"] != "ACTIVE" || len(billing["voided_credit_notes"].([]any)) != 1 || billing["invoiced_again"] != nil {
			t.Fatalf("withdraw with an open credit: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'ACTIVE' AND canceled_at IS NULL AND ended_at IS NULL`, marieLine); n != 1 {
			t.Fatal("the cancellation is still on the line")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'voided'`, marieLine); n != 1 {
			t.Fatal("the open refund credit was not voided")
		}
		setFault(s, x.op, "processor", "up")
		// This time the refund goes out first: the 3 days taken back (60.00 x 3/30) are invoiced again.
		x.cancel(marieLine, "2026-11-28")
		apptest.Eventually(t, 15*time.Second, "the refund", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'refunded'`, marieLine) == 1
		})
		r = x.act(marie, marieLine)
		billing, _ = r.JSON["billing"].(map[string]any)
		again, _ := billing["invoiced_again"].(map[string]any)
		if r.Status != 200 || again["net"] != 6.0 {
			t.Fatalf("withdraw after the refund: %d %s", r.Status, r.Raw)
		}
		apptest.Eventually(t, 15*time.Second, "the days invoiced again to be paid", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'reactivation' AND status = 'paid'`, marieLine) == 1
		})
		// A cancellation in a month not yet invoiced leaves a final invoice; while AutoPay cannot
		// charge it, it stays unpaid: that is no blocker, since withdrawing voids it.
		setFault(s, x.op, "processor", "down")
		x.cancel(marieLine, "2027-02-15")
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status = 'open'`, marieLine); n != 1 {
			t.Fatalf("%d open final invoices, want 1", n)
		}
		if r := x.preview(marie); r.JSON["case"] != "withdraw" || r.JSON["eligible"] != true {
			t.Fatalf("withdraw with its own open final invoice: %s", r.Raw)
		}
		r = x.act(marie, marieLine)
		billing, _ = r.JSON["billing"].(map[string]any)
		if r.Status != 200 || len(billing["voided_invoices"].([]any)) != 1 || billing["invoiced_again"] != nil ||
			count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status = 'void'`, marieLine) != 1 {
			t.Fatalf("withdraw did not void the final invoice: %d %s", r.Status, r.Raw)
		}
		if r := x.preview(marie); r.JSON["case"] != nil {
			t.Fatalf("nothing is cancelled any more: %s", r.Raw)
		}
		if r := x.act(marie, marieLine); r.Status != 409 || detailCode(r) != "not_cancelled" {
			t.Fatalf("a running line: %d %s", r.Status, r.Raw)
		}
		// Cancelled again in the same month, the line gets a final invoice of its own: the days
		// served up to the new end date (60.00 x 19/28), beside the voided one.
		x.cancel(marieLine, "2027-02-20")
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status = 'open' AND net_minor = 4071`, marieLine); n != 1 {
			t.Fatalf("%d open final invoices for the second cancellation, want 1", n)
		}
	})
}

// TestReactivationWithdrawAfterPaidFinalInvoice: a cancellation in a month not yet invoiced
// bills the days served by a final invoice dated on the end date, which AutoPay charges only
// then; an operator's retry charges it at once. Withdrawing the cancellation keeps those days
// paid and invoices the rest of the month, so the month costs its price once and the bill run
// adds no recurring invoice on top.
func TestReactivationWithdrawAfterPaidFinalInvoice(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		december := func(kind, status string) int {
			return count(t, s, `SELECT COALESCE(SUM(net_minor), 0) FROM invoices WHERE subscription_id = ? AND period = '2026-12' AND kind = ? AND status = ?`,
				marieLine, kind, status)
		}
		x.cancel(marieLine, "2026-12-15")
		chargeFinalNow(t, s, x.op, marieLine)
		apptest.Eventually(t, 15*time.Second, "the final invoice charged", func() bool { return december("final", "paid") > 0 })
		if got := december("final", "paid"); got != 2710 { // 60.00 x 14/31, 1 to 14 December
			t.Fatalf("final invoice net %d, want 2710", got)
		}
		r := x.act(marie, marieLine)
		billing, _ := r.JSON["billing"].(map[string]any)
		again, _ := billing["invoiced_again"].(map[string]any)
		if r.Status != 200 || r.JSON["case"] != "withdraw" || len(billing["voided_invoices"].([]any)) != 0 || again["net"] != 32.9 { // 60.00 x 17/31
			t.Fatalf("withdraw after a paid final invoice: %d %s", r.Status, r.Raw)
		}
		if err := s.Billing.BillRun(context.Background(), billRun(northwind, "2026-12")); err != nil {
			t.Fatal(err)
		}
		if n := december("recurring", "open") + december("recurring", "paid"); n != 0 {
			t.Fatalf("December billed again by the bill run: %d", n)
		}
		if n := count(t, s, `SELECT COALESCE(SUM(net_minor), 0) FROM invoices WHERE subscription_id = ? AND period = '2026-12' AND status <> 'void'`, marieLine); n != 6000 {
			t.Fatalf("December bills %d, want its price 6000", n)
		}
		// In December the month counts as invoiced wherever that matters: a plan change is
		// adjusted now (no recurring invoice is coming to carry the new price), and a new billing
		// day applies from January.
		s.DevClock.Set(time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC))
		marie, x.op = s.Login("marie.tremblay@example.ca", "demo-password-1"), s.Operator() // the earlier tokens expired
		pv := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriptions/" + marieLine + "/change-plan/preview?plan_version_id=" + planFibre1000,
			Headers: apptest.Key(storeKey)})
		if adj, _ := pv.JSON["one_time_adjustment"].(map[string]any); pv.Status != 200 || adj["type"] != "next_invoice_line" {
			t.Fatalf("plan change in a month billed by the withdrawal: %d %s", pv.Status, pv.Raw)
		}
		bd := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/billing-day", Headers: marie, Body: map[string]any{"subscription_id": marieLine, "billing_day": 2}})
		if bd.Status != 200 || bd.JSON["effective_period"] != "2027-01-01" {
			t.Fatalf("billing day in a month billed by the withdrawal: %d %s", bd.Status, bd.Raw)
		}
		// Cancelled again within December, the month counts as invoiced: the unused days come
		// back as a credit note (60.00 x 11/31 gross of tax, 21 to 31 December), nothing is billed twice.
		x.cancel(marieLine, "2026-12-21")
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status <> 'void'`, marieLine); n != 1 {
			t.Fatalf("%d final invoices, want only the first cancellation's", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND reason = 'cancellation'`, marieLine); n != 1 {
			t.Fatalf("%d cancellation credit notes, want 1", n)
		}
	})
}

// chargeFinalNow has an operator retry a line's final invoice, which AutoPay leaves until its
// date (the end date): it must still be waiting for it, not yet claimed.
func chargeFinalNow(t *testing.T, s *apptest.Service, op map[string]string, line string) {
	t.Helper()
	var id string
	if err := s.Store.R().QueryRow(context.Background(), `SELECT id FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status = 'open'
		AND charge_queued_at IS NULL`, line).Scan(&id); err != nil {
		t.Fatalf("the final invoice waiting for its date: %v", err)
	}
	if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/invoices/" + id + "/retry-charge", Headers: op}); r.Status != 202 {
		t.Fatalf("retry-charge: %d %s", r.Status, r.Raw)
	}
}

// TestReactivationWithdrawKeepsAFinalInvoiceBeingCharged: an unpaid final invoice whose
// AutoPay attempt is under way is not voided (the charge may still land on it): it stands as a
// paid one does, and the rest of the month is invoiced.
func TestReactivationWithdrawKeepsAFinalInvoiceBeingCharged(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		// The processor does not answer: AutoPay's attempt on the final invoice, claimed by its
		// sweep (store.ClaimCharge), stays in flight, retried with the same key.
		setFault(s, x.op, "processor", "down")
		x.cancel(marieLine, "2026-12-15")
		chargeFinalNow(t, s, x.op, marieLine)
		apptest.Eventually(t, 15*time.Second, "AutoPay to claim the final invoice", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status = 'open' AND charge_queued_at IS NOT NULL`, marieLine) == 1
		})
		r := x.act(marie, marieLine)
		billing, _ := r.JSON["billing"].(map[string]any)
		again, _ := billing["invoiced_again"].(map[string]any)
		if r.Status != 200 || len(billing["voided_invoices"].([]any)) != 0 || again["net"] != 32.9 {
			t.Fatalf("withdraw while the final invoice is being charged: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'final' AND status = 'open'`, marieLine); n != 1 {
			t.Fatal("the final invoice being charged was voided")
		}
	})
}

// TestReactivateRemote: the port is written first; port_in_use and an
// unconfirmed write raise an operator ticket and change nothing; a confirmed write makes the
// line ACTIVE and the rest of the month is invoiced and charged through AutoPay.
func TestReactivateRemote(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		x.paidUp()
		x.cancel(marieLine, "2026-11-21")
		awaitLine(t, s, "the port reset by the deprovisioner", marieLine, `deprovisioned_at IS NOT NULL`)
		r := x.preview(marie)
		if r.JSON["case"] != "reactivate" || r.JSON["path"] != "remote" || r.JSON["eligible"] != true ||
			r.JSON["billing"].(map[string]any)["first_charge"] != 20.0 || r.JSON["billing_starts"] != "now" {
			t.Fatalf("remote preview: %s", r.Raw)
		}
		tickets := func() int {
			return count(t, s, `SELECT COUNT(*) FROM tickets WHERE subscriber_id = ? AND kind = 'operator'`, marieSubscriber)
		}
		for i, f := range []struct{ fault, code string }{{"port_in_use", "port_in_use"}, {"unconfirmed", "provisioning_failed"}} {
			x.portAtRest(marieLine)
			setFault(s, x.op, "switch", f.fault)
			if r := x.act(marie, marieLine); r.Status != 409 || detailCode(r) != f.code {
				t.Fatalf("switch %s: %d %s", f.fault, r.Status, r.Raw)
			}
			if x.status(marieLine) != "CANCELLED" || tickets() != i+1 {
				t.Fatalf("switch %s: status %s, %d operator tickets", f.fault, x.status(marieLine), tickets())
			}
		}
		setFault(s, x.op, "switch", "ok")
		r = x.act(marie, marieLine)
		if r.Status != 200 || r.JSON["status"] != "ACTIVE" || r.JSON["provisioned"] != true || r.JSON["path"] != "remote" {
			t.Fatalf("remote: %d %s", r.Status, r.Raw)
		}
		apptest.Eventually(t, 15*time.Second, "the rest of November charged", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'reactivation' AND net_minor = 2000 AND status = 'paid'`, marieLine) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioned' AND canceled_at IS NULL`, marieLine); n != 1 {
			t.Fatal("the line is not provisioned")
		}
		// The subscriber surface emits no events: neither the failed attempts nor the one that
		// switched the port on recorded provisioning.failed or provisioning.completed.
		if n := count(t, s, `SELECT COUNT(*) FROM events WHERE subscription_id = ?`, marieLine); n != 0 {
			t.Fatalf("the reactivation recorded %d events, want none", n)
		}
	})
}

// TestReactivateTechnician: PENDING_INSTALL, suite held, job reinstall, nothing
// charged; and a suite served by someone else since blocks.
func TestReactivateTechnician(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		queen := x.installedQueenLine(marie)
		x.cancel(queen, "2026-11-21")
		r := x.preview(marie)
		if r.JSON["case"] != "reactivate" || r.JSON["path"] != "technician" || r.JSON["billing"].(map[string]any)["first_charge"] != nil ||
			r.JSON["billing_starts"] != "activation" || r.JSON["subscription_id"] != queen {
			t.Fatalf("technician preview: %s", r.Raw)
		}
		invoices := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, queen)
		r = x.act(marie, queen)
		if r.Status != 200 || r.JSON["status"] != "PENDING_INSTALL" || r.JSON["path"] != "technician" {
			t.Fatalf("technician: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND kind = 'reinstall' AND booking = 'operator' AND state = 'open'`, queen); n != 1 { // second-line: the operator books
			t.Fatal("no reinstall job")
		}
		if count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, queen) != invoices {
			t.Fatal("something was charged")
		}
		// Cancelled again before the visit and withdrawn, the line waits for its reinstall
		// again, not for a first install. Billed nothing since its service ended, it has no
		// money to settle either way.
		credits := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ?`, queen)
		x.cancel(queen, "2026-11-30")
		if count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ?`, queen) != credits ||
			count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, queen) != invoices {
			t.Fatal("cancelling a line that waits for its reinstall credited or billed it")
		}
		if r := x.act(marie, queen); r.Status != 200 || r.JSON["case"] != "withdraw" || r.JSON["status"] != "PENDING_INSTALL" {
			t.Fatalf("withdraw before the reinstall: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND state = 'open' AND kind = 'reinstall'`, queen); n != 1 {
			t.Fatalf("%d open reinstall jobs after the withdrawal, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND state = 'open' AND kind = 'install'`, queen); n != 0 {
			t.Fatal("the withdrawal opened a first install")
		}
		// The technician's visit makes it ACTIVE: billing resumes with the rest of the period
		// (no setup fee, not a first invoice) and the holder gets the reactivation mail.
		x.confirmInstall(queen)
		if x.status(queen) != "ACTIVE" {
			t.Fatal("the reinstall did not make the line ACTIVE")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'reactivation'`, queen); n != 1 {
			t.Errorf("%d reactivation invoices after the reinstall, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id WHERE i.subscription_id = ? AND i.kind = 'reactivation' AND l.kind = 'setup_fee'`, queen); n != 0 {
			t.Error("the reinstall charged a setup fee")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = 'marie.tremblay@example.ca' AND subject = 'Your internet service is active again'`); n != 1 {
			t.Error("no reactivation mail after the reinstall")
		}
		// Suite 103: cancelled, then someone else orders it — the line cannot come back.
		other := x.portalLine(marie, bldQueen, planFibre150, unitQueen103, "")
		x.confirmInstall(other)
		x.paidUp()
		x.cancel(other, "2026-11-21")
		// Its service ended at midnight: the suite is free once the deprovisioner has run.
		awaitLine(t, s, "the line deprovisioned", other, `deprovisioned_at IS NOT NULL`)
		h := &hook{}
		if res := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen103, "plan_version_id": planFibre150,
			"subscriber": person("next.tenant@example.ca")})); res.Status != 200 {
			t.Fatalf("someone else's order: %d %s", res.Status, res.Raw)
		}
		if r := x.preview(marie); r.JSON["eligible"] != false || !strings.Contains(blockersOf(r), "served by someone else") {
			t.Fatalf("suite taken: %s", r.Raw)
		}
		if r := x.act(marie, other); r.Status != 409 || detailCode(r) != "not_eligible" || x.status(other) != "CANCELLED" {
			t.Fatalf("suite taken: %d %s", r.Status, r.Raw)
		}
	})
}

// TestResume: a line that never went live comes back as PENDING_INSTALL
// (install job, requested start kept while ahead); on a wired first-line suite it is charged at
// once: card_declined and no_payment_method change nothing, a port that will not switch on
// after the money moved answers provisioned false.
func TestResume(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		queen := x.portalLine(marie, bldQueen, planFibre150, unitQueen103, "2026-12-10")
		x.cancel(queen, "2026-11-21")
		r := x.preview(marie)
		if r.JSON["case"] != "resume" || r.JSON["path"] != "technician" || r.JSON["billing_starts"] != "activation" || r.JSON["billing"].(map[string]any)["first_charge"] != nil {
			t.Fatalf("resume preview: %s", r.Raw)
		}
		if r = x.act(marie, queen); r.Status != 200 || r.JSON["status"] != "PENDING_INSTALL" || r.JSON["subscription"].(map[string]any)["requested_start_date"] != "2026-12-10" {
			t.Fatalf("resume: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND kind = 'install' AND state = 'open'`, queen); n != 1 {
			t.Fatal("no install job")
		}
		// First-line suites ordered for a later day wait as install orders; cancelled, they resume by activation.
		king5 := x.portalLine(marie, bldKing, planFibre1000, unitKing1205, "2026-12-01")
		x.cancel(king5, "2026-11-21")
		r = x.preview(marie)
		if r.JSON["case"] != "resume" || r.JSON["path"] != "activate" || r.JSON["billing"].(map[string]any)["first_charge"] != 75.0 || r.JSON["billing_starts"] != "now" {
			t.Fatalf("activate preview: %s", r.Raw)
		}
		x.saveCard(marie, "4000000000000002")
		if r := x.act(marie, king5); r.Status != 409 || detailCode(r) != "card_declined" {
			t.Fatalf("declined: %d %s", r.Status, r.Raw)
		}
		if x.status(king5) != "CANCELLED" || count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, king5) != 0 {
			t.Fatal("a declined card left something behind")
		}
		x.saveCard(marie, "4242424242424242")
		setFault(s, x.op, "switch", "fail")
		r = x.act(marie, king5)
		if r.Status != 200 || r.JSON["status"] != "ACTIVE" || r.JSON["provisioned"] != false {
			t.Fatalf("activate with a failing switch: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'first' AND status = 'paid' AND total_minor = 8475`, king5); n != 1 {
			t.Fatal("the first invoice is not paid")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE subscriber_id = ? AND kind = 'operator'`, marieSubscriber); n != 1 {
			t.Fatal("the provider got no ticket")
		}
		setFault(s, x.op, "switch", "ok")
		king6 := x.portalLine(marie, bldKing, planFibre150, unitKing1206, "2026-12-01")
		x.cancel(king6, "2026-11-21")
		// Without a card on file: no_payment_method, nothing changed.
		exec := func(q string, args ...any) {
			if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		exec(`UPDATE subscribers SET processor_customer_id = NULL, payment_method_id = NULL WHERE id = ?`, marieSubscriber)
		exec(`UPDATE subscriptions SET processor_customer_id = NULL, payment_method_id = NULL WHERE subscriber_id = ?`, marieSubscriber)
		if r := x.act(marie, king6); r.Status != 409 || detailCode(r) != "no_payment_method" || x.status(king6) != "CANCELLED" {
			t.Fatalf("no card: %d %s", r.Status, r.Raw)
		}
		x.saveCard(marie, "4242424242424242")
		r = x.act(marie, king6)
		if r.Status != 200 || r.JSON["provisioned"] != true {
			t.Fatalf("activate: %d %s", r.Status, r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'ACTIVE' AND workflow_state = 'provisioned'`, king6); n != 1 {
			t.Fatal("the port is not live")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = 'marie.tremblay@example.ca' AND subject LIKE 'Welcome%'`); n != 2 {
			t.Fatalf("welcome mails: %d", n)
		}
	})
}

// TestReactivationInstallUnavailable: when the reinstall job cannot be opened (the
// install queue refuses the row: a trigger stands in for that failure on each engine), the
// answer is install_unavailable and the line is left as it was.
func TestReactivationInstallUnavailable(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		queen := x.installedQueenLine(marie)
		x.cancel(queen, "2026-11-21")
		refuse := []string{`CREATE TRIGGER refuse_install BEFORE INSERT ON install_jobs BEGIN SELECT RAISE(ABORT, 'install queue down'); END`}
		if s.Store.Dialect == store.Postgres {
			refuse = []string{`CREATE FUNCTION refuse_install() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'install queue down'; END $$ LANGUAGE plpgsql`,
				`CREATE TRIGGER refuse_install BEFORE INSERT ON install_jobs FOR EACH ROW EXECUTE FUNCTION refuse_install()`}
		}
		for _, q := range refuse {
			if _, err := rawdb.Writer(s.Store).Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		jobs := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ?`, queen)
		r := x.act(marie, queen)
		if r.Status != 503 || detailCode(r) != "install_unavailable" {
			t.Fatalf("reactivation whose reinstall job cannot be opened: %d %s", r.Status, r.Raw)
		}
		if x.status(queen) != "CANCELLED" || count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ?`, queen) != jobs {
			t.Fatal("the refused reactivation changed the line")
		}
	})
}

// TestEveryReactivationIsInvoiced: state table "recurring billing resumes; rest of current period
// invoiced" and the remote reactivation's invoice hold for each reactivation, not only the first of
// a month: a line cancelled and brought back twice in November gets two reactivation invoices, each
// charged through AutoPay, on every path that invoices (withdraw after the refund went out, remote,
// technician). Acting again on a line that is back, or confirming its install again, invoices
// nothing more: one invoice per reactivation.
func TestEveryReactivationIsInvoiced(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		queen := x.installedQueenLine(marie)
		tests := []struct {
			name, line, endDate string
			settle              func()                           // what must have happened before the holder acts
			invoiced            func(r *apptest.Response) string // the invoice the reactivation issued ("" when it comes later)
			after               func()                           // what completes the reactivation
			net                 float64                          // the rest of November (21st to 30th), or the days given back
		}{
			{
				name: "withdraw after the refund went out", line: marieLine, endDate: "2026-11-25",
				settle: func() {
					apptest.Eventually(t, 15*time.Second, "the refund", func() bool {
						return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'open'`, marieLine) == 0
					})
				},
				invoiced: func(r *apptest.Response) string { return invoiceID(r, "invoiced_again") },
				net:      12.00, // 60.00 x 6/30: the 25th to the 30th
			},
			{
				name: "remote", line: marieLine, endDate: "2026-11-21",
				settle: func() {
					awaitLine(t, s, "the port reset by the deprovisioner", marieLine, `deprovisioned_at IS NOT NULL`)
				},
				invoiced: func(r *apptest.Response) string { return invoiceID(r, "invoice") },
				net:      20.00, // 60.00 x 10/30
			},
			{
				name: "technician", line: queen, endDate: "2026-11-21",
				settle:   func() {},
				invoiced: func(*apptest.Response) string { return "" },
				after:    func() { x.confirmInstall(queen) },
				net:      15.00, // 45.00 x 10/30, after the reinstall
			},
		}
		reactivationInvoices := func(line string) []string {
			ids, err := store.QueryStrings(context.Background(), s.Store.R(), "reactivation invoices",
				`SELECT id FROM invoices WHERE subscription_id = ? AND kind = 'reactivation' AND period = '2026-11' ORDER BY created_at`, line)
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for round := 1; round <= 2; round++ {
					before := reactivationInvoices(tt.line)
					x.cancel(tt.line, tt.endDate)
					tt.settle()
					r := x.act(marie, tt.line)
					if r.Status != 200 || r.JSON["status"] != "ACTIVE" && r.JSON["status"] != "PENDING_INSTALL" {
						t.Fatalf("round %d: %d %s", round, r.Status, r.Raw)
					}
					issued := tt.invoiced(r)
					if tt.after != nil {
						tt.after()
					}
					after := reactivationInvoices(tt.line)
					if len(after) != len(before)+1 {
						t.Fatalf("round %d: %d reactivation invoices in November, want %d: %s", round, len(after), len(before)+1, r.Raw)
					}
					id := after[len(after)-1]
					if issued != "" && issued != id {
						t.Fatalf("round %d: the answer names invoice %s, the new one is %s", round, issued, id)
					}
					if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND net_minor = ?`, id, int64(tt.net*100)); n != 1 {
						t.Fatalf("round %d: invoice %s does not bill %.2f", round, id, tt.net)
					}
					apptest.Eventually(t, 15*time.Second, "the reactivation invoice charged", func() bool {
						return count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND status = 'paid'`, id) == 1
					})
					// Once back, the line cannot be reactivated again, and nothing more is invoiced.
					if r := x.act(marie, tt.line); r.Status != 409 || detailCode(r) != "not_cancelled" {
						t.Fatalf("round %d: acting again: %d %s", round, r.Status, r.Raw)
					}
					if tt.after != nil {
						tt.after()
					}
					if got := reactivationInvoices(tt.line); len(got) != len(after) {
						t.Fatalf("round %d: acting again invoiced again: %v", round, got)
					}
				}
			})
		}
	})
}

// invoiceID returns the id of the invoice named field in a reactivation answer's billing.
func invoiceID(r *apptest.Response, field string) string {
	billing, _ := r.JSON["billing"].(map[string]any)
	inv, _ := billing[field].(map[string]any)
	id, _ := inv["invoice_id"].(string)
	return id
}

// TestNewCardSettlesWhatACancelledLineOwes: a card the holder saves is the one AutoPay
// charges on every platform-billed line of the account, cancelled ones included, so it pays
// what a cancelled line still owes (saving retries unpaid invoices at once; the dashboard's
// retry and dunning run the same attempt) and the reactivation that the unpaid invoice blocked
// becomes possible. And a cancellation's credit first settles what the line still owes: the
// days of a reactivation invoice that was never paid are taken off that invoice, not refunded
// out of money that was never received.
func TestNewCardSettlesWhatACancelledLineOwes(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		refunds := func() int { return count(t, s, `SELECT COUNT(*) FROM processor_charges WHERE status = 'refund'`) }
		x.saveCard(marie, "4000000000000002")
		x.cancel(marieLine, "2026-11-21")
		apptest.Eventually(t, 15*time.Second, "the refund and the port reset", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'refunded'`, marieLine) == 1 &&
				count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND deprovisioned_at IS NOT NULL`, marieLine) == 1
		})
		refunded := refunds()
		// Reactivated, the rest of November (20.00 + 13% = 22.60) meets the declining card.
		r := x.act(marie, marieLine)
		inv := invoiceID(r, "invoice")
		if r.Status != 200 || inv == "" {
			t.Fatalf("remote reactivation: %d %s", r.Status, r.Raw)
		}
		apptest.Eventually(t, 15*time.Second, "the declined attempt", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM charges WHERE invoice_id = ? AND status = 'declined'`, inv) == 1
		})
		// Cancelled again for the 25th: the 6 days given back (12.00 + 13% = 13.56) were never
		// paid, so they come off the unpaid invoice (22.60 - 13.56 = 9.04) and nothing is refunded.
		x.cancel(marieLine, "2026-11-25")
		apptest.Eventually(t, 15*time.Second, "the cancellation's credit spent", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'open'`, marieLine) == 0
		})
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'applied' AND amount_minor = 1356 AND applied_to_invoice_id = ?`, marieLine, inv); n != 1 {
			t.Errorf("the credit for the 25th to the 30th was not applied to the unpaid invoice")
		}
		if n := refunds(); n != refunded {
			t.Errorf("%d refunds, want %d: days never paid for were refunded", n, refunded)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND status = 'open' AND total_minor = 904`, inv); n != 1 {
			t.Fatalf("the unpaid invoice does not owe 9.04")
		}
		if r := x.preview(marie); r.JSON["case"] != "withdraw" || r.JSON["eligible"] != false || !strings.Contains(blockersOf(r), "unpaid invoices") {
			t.Fatalf("withdraw while the invoice is unpaid: %s", r.Raw)
		}
		// A new card: it is the cancelled line's AutoPay card too, and pays what is owed at once.
		x.saveCard(marie, "4242424242424242")
		var card string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT payment_method_id FROM subscribers WHERE id = ?`, marieSubscriber).Scan(&card); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND payment_method_id = ?`, marieLine, card); n != 1 {
			t.Errorf("the cancelled line does not pay with the account's card %s", card)
		}
		apptest.Eventually(t, 15*time.Second, "the unpaid invoice paid", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND status = 'paid'`, inv) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM charges c JOIN processor_charges p ON p.id = c.processor_ref
			WHERE c.invoice_id = ? AND c.status = 'succeeded' AND p.payment_method_id = ? AND p.amount_minor = 904`, inv, card); n != 1 {
			t.Errorf("the invoice was not paid with the new card")
		}
		if r := x.preview(marie); r.JSON["eligible"] != true {
			t.Fatalf("still blocked once paid: %s", r.Raw)
		}
		if r := x.act(marie, marieLine); r.Status != 200 || r.JSON["case"] != "withdraw" || r.JSON["status"] != "ACTIVE" {
			t.Fatalf("withdraw once paid: %d %s", r.Status, r.Raw)
		}
		invariants.Assert(t, s.Store)
	})
}

// TestReactivationAnswersTheLineAsItIs: on every case and path, the reactivation's answer
// shows the line as it now is, the same as GET /me: its new status, and no cancellation
// (canceled_at and ended_at null), not the cancellation it undid.
func TestReactivationAnswersTheLineAsItIs(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		deprovisioned := func(line string) func() {
			return func() {
				awaitLine(t, s, "the port reset by the deprovisioner", line, `deprovisioned_at IS NOT NULL`)
			}
		}
		tests := []struct {
			name, path, status string
			line               func() string
			endDate            string
			settle             func(line string) func()
		}{
			{name: "withdraw", path: "none", status: "ACTIVE", line: func() string { return marieLine }, endDate: "2026-11-25"},
			{name: "reactivate remote", path: "remote", status: "ACTIVE", line: func() string { return marieLine }, endDate: "2026-11-21", settle: deprovisioned},
			{name: "reactivate technician", path: "technician", status: "PENDING_INSTALL", line: func() string { return x.installedQueenLine(marie) }, endDate: "2026-11-21"},
			{name: "resume", path: "technician", status: "PENDING_INSTALL", endDate: "2026-11-21",
				line: func() string { return x.portalLine(marie, bldQueen, planFibre150, unitQueen103, "2026-12-10") }},
			{name: "resume activate", path: "activate", status: "ACTIVE", endDate: "2026-11-21",
				line: func() string { return x.portalLine(marie, bldKing, planFibre1000, unitKing1205, "2026-12-01") }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				line := tt.line()
				x.paidUp()
				x.cancel(line, tt.endDate)
				if tt.settle != nil {
					tt.settle(line)()
				}
				r := x.act(marie, line)
				if r.Status != 200 || r.JSON["path"] != tt.path || r.JSON["status"] != tt.status {
					t.Fatalf("%d %s, want path %s and status %s", r.Status, r.Raw, tt.path, tt.status)
				}
				answered := r.JSON["subscription"].(map[string]any)
				if answered["status"] != tt.status || answered["canceled_at"] != nil || answered["ended_at"] != nil {
					t.Errorf("the answer's line: %v, want %s with no cancellation", answered, tt.status)
				}
				me := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me", Headers: marie})
				var listed map[string]any
				for _, l := range me.JSON["subscriptions"].([]any) {
					if l := l.(map[string]any); l["subscription_id"] == line {
						listed = l
					}
				}
				for _, f := range []string{"status", "canceled_at", "ended_at"} {
					if listed == nil || listed[f] != answered[f] {
						t.Errorf("%s: the answer says %v, GET /me %v", f, answered[f], listed)
					}
				}
			})
		}
	})
}

// TestReactivationWithdrawPutsBackANettedPlanChange: a cancellation in an invoiced month nets
// the upgrade's pending line against the unused days; withdrawing it before the credit went
// back voids the credit and the upgrade is billed on the next invoice after all.
func TestReactivationWithdrawPutsBackANettedPlanChange(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		x := newReactivation(t, s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		// 60.00 -> Fibre 1000 at its promotional 75.00 on 21 November, 10 of 30 days left: 5.00
		// for December's invoice.
		if r := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriptions/" + marieLine + "/change-plan", Headers: apptest.Key(storeKey),
			Body: map[string]string{"plan_version_id": planFibre1000}}); r.Status != 200 {
			t.Fatalf("change plan: %d %s", r.Status, r.Raw)
		}
		// Cancelled for the 25th: 6 unused days at 75.00 = 15.00, less 5.00 = 10.00 + 1.30 tax.
		setFault(s, x.op, "processor", "down") // the credit stays open
		x.cancel(marieLine, "2026-11-25")
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND reason = 'cancellation' AND amount_minor = 1130`, marieLine); n != 1 {
			t.Fatal("no cancellation credit of 11.30")
		}
		r := x.act(marie, marieLine)
		if billing, _ := r.JSON["billing"].(map[string]any); r.Status != 200 || len(billing["voided_credit_notes"].([]any)) != 1 {
			t.Fatalf("withdraw: %d %s", r.Status, r.Raw)
		}
		setFault(s, x.op, "processor", "up")
		if err := s.Billing.BillRun(context.Background(), billRun(northwind, "2026-12")); err != nil {
			t.Fatal(err)
		}
		// December: 75.00 + the upgrade's 5.00.
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND period = '2026-12' AND kind = 'recurring' AND net_minor = 8000`, marieLine); n != 1 {
			t.Fatalf("December does not carry the upgrade: %+v", invoicesOf(t, s, marieLine))
		}
	})
}

// TestReactivationWithdrawAfterThePartlyUsedCredit: the cancellation's credit note paid part
// of another unpaid invoice of the line and the rest could not be refunded yet. Withdrawing
// bills the days taken back again, and what is left of the note goes onto that invoice: the
// customer pays for the month once and for the other invoice once, nothing twice.
func TestReactivationWithdrawAfterThePartlyUsedCredit(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		x := newReactivation(t, s) // 21 November; November paid, 60.00 + 7.80 = 67.80
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		x.saveCard(marie, "4000000000000002")
		// Another invoice of the line the card declines: 21 to 30 November at 45.00, 15.00 +
		// 1.95 = 16.95.
		p, sub := s.ProviderAndLine(t, northwind, marieLine)
		plan, err := s.Store.PlanVersion(ctx, northwind, planFibre150)
		if err != nil {
			t.Fatal(err)
		}
		var other string
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			inv, err := s.Billing.InvoiceRestOfPeriod(ctx, tx, p, sub, plan, "test:another invoice")
			other = inv.ID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		apptest.Eventually(t, 15*time.Second, "the declined attempt", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND status = 'open' AND total_minor = 1695 AND charge_attempts = 1 AND charge_queued_at IS NULL`, other) == 1
		})
		// Cancelled for the 22nd: 9 days at 60.00 = 18.00 + 2.34 = 20.34 back. 16.95 of it pays
		// the other invoice; the processor is down, so the 3.39 left stays on the open note.
		setFault(s, x.op, "processor", "down")
		x.cancel(marieLine, "2026-11-22")
		apptest.Eventually(t, 15*time.Second, "the credit partly spent", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND reason = 'cancellation' AND state = 'open'
				AND amount_minor = 2034 AND remaining_minor = 339`, marieLine) == 1 &&
				count(t, s, `SELECT COUNT(*) FROM invoices WHERE id = ? AND status = 'paid' AND total_minor = 0`, other) == 1
		})
		r := x.act(marie, marieLine)
		billing, _ := r.JSON["billing"].(map[string]any)
		if r.Status != 200 || r.JSON["case"] != "withdraw" || len(billing["voided_credit_notes"].([]any)) != 0 {
			t.Fatalf("withdraw: %d %s", r.Status, r.Raw)
		}
		setFault(s, x.op, "processor", "up")
		// By hand: November 67.80 and the other invoice 16.95, each once = 84.75. The credit paid
		// 16.95 of the other invoice, so the days taken back cost 20.34 - 3.39 = 16.95 now.
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND kind = 'reactivation' AND occasion LIKE 'cancellation:%'
			AND net_minor = 1800 AND tax_minor = 234 AND total_minor = 1695`, marieLine); n != 1 {
			t.Fatalf("the days taken back are not invoiced at 20.34 less the 3.39 left: %+v", invoicesOf(t, s, marieLine))
		}
		if n := count(t, s, `SELECT COALESCE(SUM(total_minor), 0) FROM invoices WHERE subscription_id = ? AND status <> 'void'`, marieLine); n != 8475 {
			t.Fatalf("the customer pays %d, want 8475", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes WHERE subscription_id = ? AND state = 'applied' AND remaining_minor = 0`, marieLine); n != 1 {
			t.Fatal("the credit note is not used up")
		}
	})
}
