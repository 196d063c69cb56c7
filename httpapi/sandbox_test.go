package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
	"github.com/subprov/subprov/internal/rawdb"
)

func sandboxWebhook(t *testing.T, s *apptest.Service, op map[string]string, url string) *apptest.Response {
	t.Helper()
	return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/sandbox/webhook-config", Headers: op, Body: map[string]string{"webhook_url": url}})
}

func TestSandboxDashboard(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/sandbox/provider-info", Headers: op})
		if res.Status != 200 || res.JSON["sandbox_provider_id"] != sandboxProvider || res.JSON["sandbox_webhook_secret"] != sandboxSecret {
			t.Fatalf("provider-info: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/sandbox/provider-info"}); res.Status != 401 {
			t.Errorf("provider-info without a dashboard login: %d", res.Status)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/sandbox/provider-info", Headers: s.Login("marie.tremblay@example.ca", "demo-password-1")}); res.Status != 401 {
			t.Errorf("provider-info with a subscriber token: %d", res.Status)
		}

		for _, url := range []string{"http://example.com/hook", "ftp://127.0.0.1/hook", "https://10.0.0.5/hook", "https://169.254.169.254/latest",
			"https://192.168.1.10/x", "https://[fe80::1]/x", "http://localhost.example.com/x", "https://0x0a.0.0.1/x", "not a url", ""} {
			if res := sandboxWebhook(t, s, op, url); res.Status != 422 {
				t.Errorf("webhook_url %q: %d %s, want 422", url, res.Status, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM providers WHERE id = ? AND webhook_url <> ''`, sandboxProvider); n != 0 {
			t.Error("a refused webhook URL was saved")
		}

		// Saving a URL pings it synchronously, signed with the sandbox secret.
		rcv := newReceiver(t, sandboxSecret)
		res = sandboxWebhook(t, s, op, rcv.srv.URL+"/hook")
		ping, _ := res.JSON["ping"].(map[string]any)
		if res.Status != 200 || ping["delivered"] != true || ping["status_code"] != 200.0 || ping["type"] != "service.sandbox.ping" {
			t.Fatalf("webhook-config: %d %s", res.Status, res.Raw)
		}
		if got := rcv.all(); len(got) != 1 || got[0]["type"] != "service.sandbox.ping" || rcv.bad != 0 {
			t.Fatalf("receiver got %v (bad signatures %d)", got, rcv.bad)
		}
		// A failing receiver is reported, not retried; the URL is saved anyway.
		rcv.setAnswer(500)
		res = sandboxWebhook(t, s, op, rcv.srv.URL+"/hook")
		if ping, _ := res.JSON["ping"].(map[string]any); res.Status != 200 || ping["delivered"] != false || ping["status_code"] != 500.0 {
			t.Errorf("ping to a failing receiver: %d %s", res.Status, res.Raw)
		}
		failedPing := res.JSON["ping"].(map[string]any)["event_id"].(string)
		// Redirects are not followed: a 3xx is the receiver's answer, not a new URL to call.
		rcv.setAnswer(http.StatusFound)
		if res := sandboxWebhook(t, s, op, rcv.srv.URL+"/hook"); res.JSON["ping"].(map[string]any)["delivered"] != false ||
			res.JSON["ping"].(map[string]any)["status_code"] != 302.0 || !strings.Contains(fmt.Sprint(res.JSON["ping"].(map[string]any)["error"]), "redirect") {
			t.Errorf("ping to a redirecting receiver: %s", res.Raw)
		}
		advance(t, s, op, time.Hour)
		s.Settle(t)
		if n := len(rcv.all()); n != 3 {
			t.Errorf("receiver got %d deliveries, want 3 (no retries)", n)
		}

		// Replay sends the stored event once more, to the URL configured now.
		rcv.setAnswer(0)
		res = s.Do(apptest.Request{Method: "POST", Path: "/api/v1/sandbox/webhook-events/" + failedPing + "/replay", Headers: op})
		if res.Status != 200 || res.JSON["delivered"] != true || res.JSON["event_id"] != failedPing {
			t.Errorf("replay: %d %s", res.Status, res.Raw)
		}
		if got := rcv.all(); len(got) != 4 || got[3]["id"] != failedPing {
			t.Errorf("replay delivered %v", got)
		}
		// Another provider's event is not the sandbox's.
		var northwindEvent string
		complete(s, completeBody(map[string]any{"plan_version_id": planFibre500, "unit_id": unitKing1205}))
		if err := s.Store.R().QueryRow(t.Context(), `SELECT id FROM events WHERE provider_id = ? LIMIT 1`, northwind).Scan(&northwindEvent); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{northwindEvent, "5b0c0000-0000-4000-8000-000000000000"} {
			if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/sandbox/webhook-events/" + id + "/replay", Headers: op}); res.Status != 404 {
				t.Errorf("replay %s: %d", id, res.Status)
			}
		}

		// Listing: newest first; limit default 20, 1 to 200 accepted, above 100 clamped.
		for i := range 110 {
			if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`INSERT INTO events (id, provider_id, type, payload, sandbox, delivery_state, seq, created_at)
				VALUES (?, ?, 'service.sandbox.ping', '{}', TRUE, 'delivered', ?, ?)`), fmt.Sprintf("5b0c0000-0000-4000-8000-%012d", i), sandboxProvider, 1000+i, time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range []struct {
			query  string
			status int
			n      int
		}{{"", 200, 20}, {"?limit=1", 200, 1}, {"?limit=100", 200, 100}, {"?limit=150", 200, 100}, {"?limit=200", 200, 100},
			{"?limit=201", 422, 0}, {"?limit=0", 422, 0}, {"?limit=-3", 422, 0}, {"?limit=ten", 422, 0}} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/sandbox/webhook-events" + tt.query, Headers: op})
			list, _ := res.JSON["events"].([]any)
			if res.Status != tt.status || len(list) != tt.n {
				t.Errorf("events%s: %d with %d events, want %d with %d", tt.query, res.Status, len(list), tt.status, tt.n)
			}
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/api/v1/sandbox/webhook-events?limit=2", Headers: op})
		list := res.JSON["events"].([]any)
		if list[0].(map[string]any)["id"] != "5b0c0000-0000-4000-8000-000000000109" || list[1].(map[string]any)["id"] != "5b0c0000-0000-4000-8000-000000000108" {
			t.Errorf("not newest first: %s", res.Raw)
		}
	})
}

func TestSandboxPipeline(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		rcv := newReceiver(t, sandboxSecret)
		sandboxWebhook(t, s, op, rcv.srv.URL)
		sb := func(body map[string]any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/complete", Headers: secret(sandboxSecret), Body: body})
		}
		// A session-based sandbox completion never provisions, even with a port: it installs.
		id := session(t, s, map[string]any{"provider_id": sandboxProvider, "plan_version_id": sandboxPlan, "building_id": sandboxBuilding, "location_hash": "lh_sandbox_s1"})
		res := sb(completeBody(map[string]any{"session_id": id}))
		if res.Status != 200 || res.JSON["status"] != "PENDING_INSTALL" || res.JSON["route"] != "install" {
			t.Fatalf("sandbox session complete: %d %s", res.Status, res.Raw)
		}
		installed := res.JSON["subscription_id"].(string)
		// A session with neither port nor suite is refused.
		if res := sb(completeBody(map[string]any{"session_id": session(t, s, map[string]any{"provider_id": sandboxProvider, "plan_version_id": sandboxPlan, "building_id": sandboxBuilding})})); res.Status != 422 {
			t.Errorf("sandbox session without port or suite: %d %s", res.Status, res.Raw)
		}
		// The legacy no-session direct completion queues a real provisioning job that fails. (At a
		// suite of its own: the session's line holds s1 and its port.)
		addPortIn(t, s, sandboxBuilding, "sbx-sw1", "9", "lh_sandbox_legacy")
		res = sb(completeBody(map[string]any{"plan_version_id": sandboxPlan, "delivery_mode": "direct", "location_hash": "lh_sandbox_legacy", "subscriber": person("legacy@example.ca")}))
		if res.Status != 200 || res.JSON["route"] != "provision" || res.JSON["job_id"] == nil {
			t.Fatalf("legacy direct complete: %d %s", res.Status, res.Raw)
		}
		legacy := res.JSON["subscription_id"].(string)
		// Each sandbox event is its own one-attempt delivery, so the two may arrive in either order.
		apptest.Eventually(t, 10*time.Second, "provisioning.failed delivered to the sandbox receiver", func() bool {
			types := rcv.typesFor(legacy)
			slices.Sort(types)
			return slices.Equal(types, []string{"provisioning.failed", "subscription.activated"})
		})
		if got := rcv.typesFor(installed); len(got) != 1 || got[0] != "subscription.pending_install" || rcv.bad != 0 {
			t.Errorf("install events %v, bad signatures %d", got, rcv.bad)
		}
		// One attempt, no retries: a failing receiver gets the event once, even as time passes.
		rcv.setAnswer(503)
		res = sb(completeBody(map[string]any{"plan_version_id": sandboxPlan, "delivery_mode": "home_drop", "unit_id": sandboxUnitS2, "subscriber": person("once@example.ca")}))
		once := res.JSON["subscription_id"].(string)
		apptest.Eventually(t, 10*time.Second, "one attempt", func() bool { return len(rcv.typesFor(once)) == 1 })
		advance(t, s, op, 2*time.Hour)
		s.Settle(t)
		if n := len(rcv.typesFor(once)); n != 1 {
			t.Errorf("a failed sandbox event was sent %d times", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM events WHERE subscription_id = ? AND delivery_state = 'failed' AND attempts = 1`, once); n != 1 {
			t.Error("the failed sandbox event is not recorded as one failed attempt")
		}
	})
}

// TestSandboxPaymentPageInBrowser pays on the sandbox page as a person would: the page shows
// plan, address and price; a declined card changes nothing; a good card completes the
// session, shows the confirmation, and emits checkout.session.completed in the processor's shape.
func TestSandboxPaymentPageInBrowser(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		rcv := newReceiver(t, sandboxSecret)
		sandboxWebhook(t, s, op, rcv.srv.URL)
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions",
			Body: map[string]any{"provider_id": sandboxProvider, "plan_version_id": sandboxPlan, "building_id": sandboxBuilding, "unit_id": sandboxUnitS2, "delivery_mode": "home_drop"}})
		id := res.JSON["session_id"].(string)
		page := localURL(s, res.JSON["checkout_url"].(string))

		ctx := browsertest.New(t, 90*time.Second)
		fill := func(card string) error {
			steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(page)}
			for sel, v := range map[string]string{"#firstname": "Ada", "#lastname": "Lovelace", "#email": "ada@example.ca",
				"#phonenumber": "514 555 0199", "#card_number": card, "#expiry": "12/39", "#cvc": "123"} {
				steps = append(steps, chromedp.SendKeys(chromedp.CSS(sel), v))
			}
			if err := chromedp.Do(ctx, steps...); err != nil {
				return err
			}
			_, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#pay")))
			return err
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
			t.Fatal(err)
		}
		body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Sandbox 100", "1 Sandbox Ave", "unit S2", "40.00", "Due today", "4242 4242 4242 4242"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q:\n%s", want, body)
			}
		}
		if err := fill("4000 0000 0000 0002"); err != nil {
			t.Fatal(err)
		}
		alert, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[role="alert"]`)))
		if err != nil || !strings.Contains(alert, "declined") {
			t.Fatalf("declined card: alert %q, %v", alert, err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE checkout_session_id = ?`, id); n != 0 {
			t.Fatal("a declined card created a subscription")
		}
		if err := fill("4242 4242 4242 4242"); err != nil {
			t.Fatal(err)
		}
		confirmation, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#confirmation")))
		if err != nil || !strings.Contains(confirmation, "Sandbox 100") {
			t.Fatalf("confirmation %q, %v", confirmation, err)
		}
		subID, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#subscription-id")))
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND checkout_session_id = ? AND status = 'PENDING_INSTALL'`, subID, id); n != 1 {
			t.Fatalf("no subscription %s for the paid session", subID)
		}
		apptest.Eventually(t, 10*time.Second, "checkout.session.completed delivered", func() bool {
			for _, ev := range rcv.all() {
				if ev["type"] == "checkout.session.completed" {
					obj, _ := ev["data"].(map[string]any)["object"].(map[string]any)
					meta, _ := obj["metadata"].(map[string]any)
					return obj["object"] == "checkout.session" && obj["payment_status"] == "paid" && obj["amount_total"] == 4000.0 &&
						obj["client_reference_id"] == id && meta["subscription_id"] == subID && ev["object"] == "event"
				}
			}
			return false
		})
		// Its id is the event's own, the one the sandbox listing shows (and replays by), and
		// X-Webhook-Id repeats it (the receiver counts a mismatch as bad).
		listed := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/sandbox/webhook-events", Headers: op})
		listedIDs := map[any]bool{}
		for _, e := range listed.JSON["events"].([]any) {
			if e := e.(map[string]any); e["type"] == "checkout.session.completed" {
				listedIDs[e["id"]] = true
			}
		}
		for _, ev := range rcv.all() {
			if ev["type"] == "checkout.session.completed" && !listedIDs[ev["id"]] {
				t.Errorf("delivered id %v is not a listed event's: %s", ev["id"], listed.Raw)
			}
		}
		rcv.mu.Lock()
		bad := rcv.bad
		rcv.mu.Unlock()
		if bad != 0 {
			t.Errorf("%d deliveries with a bad signature or an X-Webhook-Id other than the body's id", bad)
		}
		// The partner's checkout page reads the completed session as completed.
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/sessions/" + id, Headers: secret(sandboxSecret)}); res.JSON["status"] != "completed" {
			t.Errorf("session after payment: %s", res.Raw)
		}
		// A live provider's session has no sandbox page.
		live := session(t, s, nil)
		if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/sandbox/checkout?session_id="+live)); err != nil {
			t.Fatal(err)
		}
		if h1, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"))); h1 != "Link not found" {
			t.Errorf("live session on the sandbox page: %q", h1)
		}
	})
}
