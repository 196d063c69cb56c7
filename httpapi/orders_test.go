package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/apptest"
)

const (
	bldKing        = "b1000000-0000-4000-8000-000000000001"
	bldQueen       = "b1000000-0000-4000-8000-000000000002"
	bldMais        = "b1000000-0000-4000-8000-000000000003"
	bldStPaul      = "b1000000-0000-4000-8000-000000000004"
	bldVancouver   = "b1000000-0000-4000-8000-000000000005"
	bldSandbox     = "b1000000-0000-4000-8000-000000000006"
	unitKing1204   = "u1000000-0000-4000-8000-000000001204"
	priyaLine      = "c1000000-0000-4000-8000-000000000002"
	liamLine       = "c2000000-0000-4000-8000-000000000001"
	orderOptions   = "/partner/subscriber/me/orders/options?building_id="
	orderPreview   = "/partner/subscriber/me/orders/preview?"
	ordersPath     = "/partner/subscriber/me/orders"
	reactivatePath = "/partner/subscriber/me/reactivation"
)

// portalClock puts the service on 21 November 2026, 10:00 in Toronto.
func portalClock(s *apptest.Service) { s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)) }

func detailCode(r *apptest.Response) string {
	d, _ := r.JSON["detail"].(map[string]any)
	c, _ := d["code"].(string)
	return c
}

func portalOrder(building, plan, unit string, extra map[string]any) map[string]any {
	o := map[string]any{"building_id": building, "plan_version_id": plan}
	if unit != "" {
		o["unit_id"] = unit
	}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

func previewQuery(o map[string]any) string {
	var parts []string
	for k, v := range o {
		parts = append(parts, k+"="+v.(string))
	}
	return orderPreview + strings.Join(parts, "&")
}

// TestOrderOptions: served, route, suites with availability, the running line, postal unit;
// a building the provider does not cover (or cannot order through the portal) is not served.
func TestOrderOptions(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		portalClock(s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		liam := s.Login("liam.chen@example.ca", "demo-password-4")
		get := func(h map[string]string, b string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: orderOptions + b, Headers: h})
		}
		r := get(marie, bldKing)
		if r.Status != 200 || r.JSON["served"] != true || r.JSON["route"] != "provision" {
			t.Fatalf("King: %d %s", r.Status, r.Raw)
		}
		avail := map[string]bool{}
		postal := map[string]any{}
		for _, u := range r.JSON["suites"].([]any) {
			row := u.(map[string]any)
			avail[row["unit_number"].(string)] = row["available"].(bool)
			postal[row["unit_number"].(string)] = row["postal_unit"]
		}
		if avail["1204"] || !avail["1205"] || !avail["1206"] || postal["1206"] != "PH-6" {
			t.Fatalf("suites: %v %v", avail, postal)
		}
		if cur := r.JSON["current_subscription"].(map[string]any); cur["subscription_id"] != marieLine {
			t.Fatalf("current subscription: %v", cur)
		}
		if r.JSON["postal_unit"] != nil {
			t.Fatalf("Marie's suite 1204 has no postal label: %v", r.JSON["postal_unit"])
		}
		if q := get(marie, bldQueen); q.JSON["served"] != true || q.JSON["route"] != "install" {
			t.Fatalf("Queen: %s", q.Raw)
		}
		for name, b := range map[string]string{"unclassified": bldStPaul, "another provider's": bldVancouver, "sandbox": bldSandbox, "unknown": "nope"} {
			if r := get(marie, b); r.Status != 200 || r.JSON["served"] != false || len(r.JSON["suites"].([]any)) != 0 {
				t.Fatalf("%s building: %d %s", name, r.Status, r.Raw)
			}
		}
		// Maple's subscriber never sees Northwind's building.
		if r := get(liam, bldKing); r.JSON["served"] != false || len(r.JSON["suites"].([]any)) != 0 {
			t.Fatalf("another provider's building leaked: %s", r.Raw)
		}
		if r := get(marie, ""); r.Status != 422 {
			t.Fatalf("missing building_id: %d", r.Status)
		}
	})
}

// TestOrderPreview: nothing charged on the install route; the provision route shows the first
// invoice (net); problems, a missing card included, are a blockers sentence with 200.
func TestOrderPreview(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		portalClock(s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		pv := func(h map[string]string, o map[string]any) *apptest.Response {
			r := s.Do(apptest.Request{Method: "GET", Path: previewQuery(o), Headers: h})
			if r.Status != 200 {
				t.Fatalf("preview %v: %d %s", o, r.Status, r.Raw)
			}
			return r
		}
		// Provision: promo 75.00 until 31 Jan 2027, which the first invoice bills: 50.00 setup +
		// 75.00 x 10/30 = 25.00.
		r := pv(marie, portalOrder(bldKing, planFibre1000, unitKing1205, nil))
		promo, _ := r.JSON["promo"].(map[string]any)
		if r.JSON["eligible"] != true || r.JSON["blockers"] != nil || r.JSON["route"] != "provision" || r.JSON["first_charge"] != 75.0 ||
			r.JSON["billing_starts"] != "now" || promo["price"] != 75.0 || promo["ends_on"] != "2027-01-31" || r.JSON["booking"] != nil {
			t.Fatalf("provision preview: %s", r.Raw)
		}
		r = pv(marie, portalOrder(bldQueen, planFibre150, unitQueen102, nil))
		if r.JSON["route"] != "install" || r.JSON["first_charge"] != nil || r.JSON["billing_starts"] != "activation" || r.JSON["promo"] != nil ||
			r.JSON["booking"] != "operator" {
			t.Fatalf("install preview: %s", r.Raw)
		}
		if r = pv(marie, portalOrder(bldMais, planFibre150, unitMais2B, map[string]any{"requested_start_date": "2027-03-05"})); r.JSON["booking"] != "customer" || r.JSON["eligible"] != true {
			t.Fatalf("third-line preview: %s", r.Raw)
		}
		for name, tt := range map[string]struct {
			h map[string]string
			o map[string]any
		}{
			"held suite":       {marie, portalOrder(bldKing, planFibre1000, unitKing1204, nil)},
			"no card":          {priya, portalOrder(bldQueen, planFibre150, unitQueen102, nil)},
			"no suite":         {marie, portalOrder(bldQueen, planFibre150, "", nil)},
			"outside window":   {marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"requested_start_date": "2027-06-01"})},
			"unknown plan":     {marie, portalOrder(bldQueen, "nope", unitQueen102, nil)},
			"not served":       {marie, portalOrder(bldStPaul, planFibre150, unitStPaul, nil)},
			"line not running": {marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"end_current_subscription_id": priyaLine})},
		} {
			r := pv(tt.h, tt.o)
			if b, _ := r.JSON["blockers"].(string); r.JSON["eligible"] != false || b == "" {
				t.Fatalf("%s: want a blockers sentence: %s", name, r.Raw)
			}
		}
	})
}

// TestOrderPreviewNamesWhatIsMissing: the preview answers problems as a blockers sentence with
// 200, and a sentence that names what is missing or malformed, the
// same fields the order itself would refuse, never a bare "Request validation failed".
func TestOrderPreviewNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		portalClock(s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		for _, tt := range []struct {
			name   string
			query  string
			names  []string // what the blockers sentence must mention
			absent []string
		}{
			{"no parameters", "", []string{"building_id", "plan_version_id", "unit_id"}, nil},
			{"only the building", "building_id=" + bldQueen, []string{"plan_version_id", "unit_id"}, []string{"building_id"}},
			{"only the plan", "plan_version_id=" + planFibre150, []string{"building_id", "unit_id"}, []string{"plan_version_id"}},
			{"building and plan, no suite", "building_id=" + bldQueen + "&plan_version_id=" + planFibre150, []string{"unit_id"}, []string{"building_id", "plan_version_id"}},
			{"a start date that is no date, and no plan", "building_id=" + bldQueen + "&unit_id=" + unitQueen102 + "&requested_start_date=soon",
				[]string{"plan_version_id", "requested_start_date"}, []string{"building_id", "unit_id"}},
			{"a start date that is no date", "building_id=" + bldQueen + "&plan_version_id=" + planFibre150 + "&unit_id=" + unitQueen102 + "&requested_start_date=soon",
				[]string{"requested_start_date"}, []string{"building_id", "plan_version_id", "unit_id"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := s.Do(apptest.Request{Method: "GET", Path: orderPreview + tt.query, Headers: marie})
				b, _ := r.JSON["blockers"].(string)
				if r.Status != 200 || r.JSON["eligible"] != false || b == "" || strings.Contains(b, "Request validation failed") {
					t.Fatalf("want 200, not eligible, a blockers sentence naming the problems: %d %s", r.Status, r.Raw)
				}
				for _, n := range tt.names {
					if !strings.Contains(b, n) {
						t.Errorf("blockers %q do not name %s", b, n)
					}
				}
				for _, n := range tt.absent {
					if strings.Contains(b, n) {
						t.Errorf("blockers %q name %s, which was given", b, n)
					}
				}
			})
		}
		// The order itself refuses the same fields, all of them in one 422.
		r := s.Do(apptest.Request{Method: "POST", Path: ordersPath, Headers: marie, Body: map[string]any{"requested_start_date": "soon"}})
		fields, _ := r.JSON["detail"].(map[string]any)["fields"].(map[string]any)
		if r.Status != 422 || detailCode(r) != "validation_error" || len(fields) != 4 ||
			fields["building_id"] == nil || fields["plan_version_id"] == nil || fields["unit_id"] == nil || fields["requested_start_date"] == nil {
			t.Fatalf("order without its fields: %d %s", r.Status, r.Raw)
		}
	})
}

// TestPlaceOrder: every error code of the row, writing nothing; then the install route (with
// the move that ends the running line), the third-line booking, the provision route charged at
// once, and a declined card that leaves nothing behind.
func TestPlaceOrder(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		portalClock(s)
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		liam := s.Login("liam.chen@example.ca", "demo-password-4")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		post := func(h map[string]string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: ordersPath, Headers: h, Body: body})
		}
		lines := func() int { return count(t, s, `SELECT COUNT(*) FROM subscriptions`) }
		before := lines()
		for _, tt := range []struct {
			name   string
			h      map[string]string
			body   map[string]any
			status int
			code   string
		}{
			{"authorized user", luc, portalOrder(bldQueen, planFibre150, unitQueen102, nil), 403, "holder_only"},
			{"no saved card", priya, portalOrder(bldQueen, planFibre150, unitQueen103, nil), 409, "no_payment_method"},
			{"unclassified building", marie, portalOrder(bldStPaul, planFibre150, unitStPaul, nil), 409, "not_served"},
			{"another provider's building", marie, portalOrder(bldVancouver, planFibre150, "u5000000-0000-4000-8000-000000003002", nil), 404, "not_served"},
			{"building nobody serves", marie, portalOrder("b9999999-0000-4000-8000-000000000000", planFibre150, unitQueen102, nil), 404, "no_provider"},
			{"Maple subscriber in a Northwind-only building", liam, portalOrder(bldKing, planMaple300, unitKing1205, nil), 404, "not_served"},
			{"Maple subscriber with a Northwind plan", liam, portalOrder(bldQueen, planFibre150, unitQueen102, nil), 404, "plan_not_found"},
			{"Maple has no processor, so no saved card", liam, portalOrder(bldQueen, planMaple300, unitQueen102, nil), 409, "no_payment_method"},
			{"no suite", marie, portalOrder(bldQueen, planFibre150, "", nil), 422, "suite_required"},
			{"suite of another building", marie, portalOrder(bldQueen, planFibre150, unitKing1205, nil), 422, "suite_mismatch"},
			{"unknown plan", marie, portalOrder(bldQueen, "nope", unitQueen102, nil), 404, "plan_not_found"},
			{"retired plan", marie, portalOrder(bldQueen, planRetired, unitQueen102, nil), 404, "plan_not_found"},
			{"another provider's plan", marie, portalOrder(bldQueen, planMaple300, unitQueen102, nil), 404, "plan_not_found"},
			{"unknown suite", marie, portalOrder(bldQueen, planFibre150, "u-nope", nil), 404, "suite_not_found"},
			{"held suite", marie, portalOrder(bldKing, planFibre1000, unitKing1204, nil), 409, "suite_held"},
			{"start after the window", marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"requested_start_date": "2027-02-20"}), 422, "order_window"},
			{"start in the past", marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"requested_start_date": "2026-11-20"}), 422, "order_window"},
			{"presale building before its first day", marie, portalOrder(bldMais, planFibre150, unitMais2B, map[string]any{"requested_start_date": "2027-01-10"}), 422, "order_window"},
			{"another subscriber's line to end", marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"end_current_subscription_id": priyaLine}), 404, "not_found"},
			{"another provider's line to end", marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"end_current_subscription_id": liamLine}), 404, "not_found"},
			{"unknown field", marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"payment": "cash"}), 422, "validation_error"},
			{"missing plan", marie, map[string]any{"building_id": bldQueen, "unit_id": unitQueen102}, 422, "validation_error"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := post(tt.h, tt.body)
				if r.Status != tt.status || detailCode(r) != tt.code {
					t.Fatalf("status %d %s, want %d %s", r.Status, r.Raw, tt.status, tt.code)
				}
			})
		}
		if lines() != before {
			t.Fatal("a refused order wrote a line")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'ACTIVE'`, marieLine); n != 1 {
			t.Fatal("a failed order ended the running line")
		}

		// Install route, moving out of the running line on 1 December.
		r := post(marie, portalOrder(bldQueen, planFibre150, unitQueen102, map[string]any{"requested_start_date": "2026-12-01", "end_current_subscription_id": marieLine}))
		if r.Status != 201 || r.JSON["status"] != "PENDING_INSTALL" || r.JSON["route"] != "install" || r.JSON["first_charge"] != nil ||
			r.JSON["booking"] != "operator" || r.JSON["install_job"].(map[string]any)["kind"] != "install" {
			t.Fatalf("install order: %d %s", r.Status, r.Raw)
		}
		queen := r.JSON["subscription_id"].(string)
		ended := r.JSON["ended_subscription"].(map[string]any)
		if ended["subscription_id"] != marieLine || ended["status"] != "CANCELLED" || ended["ended_at"] != "2026-12-01T05:00:00Z" {
			t.Fatalf("the running line was not cancelled for the move-in date: %v", ended)
		}
		for q, want := range map[string]int{
			`SELECT COUNT(*) FROM subscriptions WHERE id = ? AND cancel_reason = 'moving'`:                                                                      1,
			`SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND kind = 'install' AND booking = 'operator' AND state = 'open'`:                      1,
			`SELECT COUNT(*) FROM tickets t JOIN subscriptions s ON s.subscriber_id = t.subscriber_id WHERE s.id = ? AND t.kind = 'install'`:                    1,
			`SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = 'subscription.ordered_from_portal'`:                                               1,
			`SELECT COUNT(*) FROM subscriptions WHERE id = ? AND source = 'portal' AND billing_owner = 'platform' AND processor_customer_id = 'cus_demo_marie'`: 1,
			`SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`:                                                                                           0,
			// The subscriber surface emits no events (docs/portal.md): no pending_install.
			`SELECT COUNT(*) FROM events WHERE subscription_id = ?`: 0,
		} {
			id := queen
			if strings.Contains(q, "moving") {
				id = marieLine
			}
			if n := count(t, s, q, id); n != want {
				t.Fatalf("%s: %d, want %d", q, n, want)
			}
		}
		// The line just ordered is not running, so it cannot be the one a move ends.
		if r := post(marie, portalOrder(bldQueen, planFibre150, unitQueen103, map[string]any{"end_current_subscription_id": queen})); r.Status != 409 || detailCode(r) != "not_running" {
			t.Fatalf("not running: %d %s", r.Status, r.Raw)
		}
		// Third-line building: the customer books the visit.
		r = post(marie, portalOrder(bldMais, planFibre150, unitMais2B, map[string]any{"requested_start_date": "2027-03-05"}))
		if r.Status != 201 || r.JSON["booking"] != "customer" {
			t.Fatalf("third-line order: %d %s", r.Status, r.Raw)
		}
		// Provision route: 75.00 net + 9.75 tax charged at once, the port switched on.
		r = post(marie, portalOrder(bldKing, planFibre1000, unitKing1205, nil))
		fc, _ := r.JSON["first_charge"].(map[string]any)
		if r.Status != 201 || r.JSON["route"] != "provision" || r.JSON["booking"] != nil || r.JSON["status"] != "ACTIVE" ||
			fc["net"] != 75.0 || fc["total"] != 84.75 || fc["status"] != "paid" {
			t.Fatalf("provision order: %d %s", r.Status, r.Raw)
		}
		king := r.JSON["subscription_id"].(string)
		awaitLine(t, s, "the port switched on", king, `workflow_state = 'provisioned'`)
		if n := count(t, s, `SELECT COUNT(*) FROM events WHERE subscription_id = ?`, king); n != 0 {
			t.Fatalf("a portal order and its port job recorded %d events, want none (the subscriber surface emits none)", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, king); n != 1 {
			t.Fatalf("the provisioning job billed again: %d invoices", n)
		}
		// A declined card: 409 card_declined, nothing written.
		setup := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method/setup", Headers: marie})
		s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method/confirm", Headers: marie,
			Body: map[string]string{"setup_intent_id": setup.JSON["setup_intent_id"].(string), "test_card": "4000000000000002"}})
		before, invoices := lines(), count(t, s, `SELECT COUNT(*) FROM invoices`)
		if r := post(marie, portalOrder(bldKing, planFibre150, unitKing1206, nil)); r.Status != 409 || detailCode(r) != "card_declined" {
			t.Fatalf("declined card: %d %s", r.Status, r.Raw)
		}
		if lines() != before || count(t, s, `SELECT COUNT(*) FROM invoices`) != invoices {
			t.Fatal("a declined order left documents behind")
		}
	})
}
