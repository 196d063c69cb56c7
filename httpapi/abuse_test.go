package httpapi_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

// TestPagesCarrySecurityHeaders: every server-rendered page (and every API answer) forbids
// framing, sniffing, referrers and caching, and runs no inline script (no page has any).
func TestPagesCarrySecurityHeaders(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		want := map[string]string{
			"X-Content-Type-Options": "nosniff",
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "no-referrer",
			"Cache-Control":          "no-store",
		}
		for _, path := range []string{"/book?token=" + fixture.DemoBookingToken, "/book", "/sandbox/checkout", "/docs", "/partner/subscriber/me", "/nope",
			"/portal/reset-password?token=unknown", "/portal/activate?token=unknown"} {
			res := s.Do(apptest.Request{Method: "GET", Path: path})
			for h, v := range want {
				if got := res.Header.Get(h); got != v {
					t.Errorf("%s: %s = %q, want %q", path, h, got, v)
				}
			}
			csp := map[string]string{}
			for _, d := range strings.Split(res.Header.Get("Content-Security-Policy"), ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
				csp[name] = value
			}
			if csp["frame-ancestors"] != "'none'" || csp["default-src"] != "'self'" || csp["script-src"] != "'self'" || csp["object-src"] != "'none'" {
				t.Errorf("%s: Content-Security-Policy %q: want frame-ancestors 'none', default-src and script-src 'self' (no inline script), object-src 'none'",
					path, res.Header.Get("Content-Security-Policy"))
			}
			// No page needs inline script: none would run under this policy.
			if page := strings.ToLower(string(res.Raw)); inlineScript.MatchString(page) {
				t.Errorf("%s: the page has inline script (%q), which its policy refuses", path, inlineScript.FindString(page))
			}
		}
	})
}

// inlineScript finds script in a page: a <script> element (no page has one), an event
// handler attribute, or a javascript: URL.
var inlineScript = regexp.MustCompile(`<script(\s[^>]*)?>|\son[a-z]+\s*=|javascript:`)

// TestRequestSizeLimit: a body over 1 MiB is refused with 413 before anything is decoded or
// written, on every surface.
func TestRequestSizeLimit(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		big := `{"email":"` + strings.Repeat("a", 1<<20) + `@example.ca"}`
		for _, r := range []apptest.Request{
			{Method: "POST", Path: "/partner/subscriber/auth/login", Body: big},
			{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: apptest.Key(storeKey), Body: big},
			{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoAgentKey), Body: big},
			{Method: "POST", Path: "/partner/external-checkout/sessions", Body: big},
			// The operations surface's edits that read a body (the body is read before the id).
			{Method: "POST", Path: "/api/v1/invoices/00000000-0000-4000-8000-00000000dead/credit-notes", Headers: s.Operator(), Body: big},
			{Method: "PATCH", Path: "/api/v1/tickets/00000000-0000-4000-8000-00000000dead", Headers: s.Operator(), Body: big},
			{Method: "POST", Path: "/api/v1/privacy-requests/00000000-0000-4000-8000-00000000dead/reject", Headers: s.Operator(), Body: big},
		} {
			if res := s.Do(r); res.Status != 413 {
				t.Errorf("%s: %d, want 413: %.200s", r.Path, res.Status, res.Raw)
			}
		}
	})
}

// TestLogsCarryNoSecretsOrPersonalData runs a flow through every credential and mail path and
// then searches everything the service logged (every level) for the secrets and personal data
// it handled: passwords, keys, webhook secrets, bearer and verified-session tokens, mailed
// link tokens, e-mail addresses and phone numbers.
func TestLogsCarryNoSecretsOrPersonalData(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		const email, phone = "log.check@example.ca", "514-555-0199"
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login", Body: map[string]string{"email": "marie.tremblay@example.ca", "password": "wrong-password-xyz"}})
		s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": "marie.tremblay@example.ca"}})
		session := verify(t, s, fixture.DemoAgentKey, marieID, "marie.tremblay@example.ca")
		// A code by SMS: in dev mode without a gateway it is logged (masked), not sent.
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoOtherProviderKey),
			Body: map[string]string{"customer_id": liamID, "channel": "sms"}}); res.Status != 202 {
			t.Fatalf("sms code: %d %s", res.Status, res.Raw)
		}
		if !strings.Contains(s.Logs(), `"to":"***-***-0123"`) {
			t.Fatalf("the dev SMS was not logged with its number masked")
		}
		s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + marieID, Headers: agentHeaders(fixture.DemoAgentKey, session)})
		res := (&hook{}).post(s, order(map[string]any{"location_hash": hashKing1206, "subscriber": map[string]any{"firstname": "Lou", "lastname": "Gauthier",
			"email": email, "phonenumber": phone}, "billing": map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa"}}))
		if res.Status != 200 {
			t.Fatalf("order: %d %s", res.Status, res.Raw)
		}
		complete(s, completeBody(map[string]any{"plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop"}))
		rcv := newReceiver(t, sandboxSecret)
		sandboxWebhook(t, s, s.Operator(), rcv.srv.URL)
		apptest.Eventually(t, 15*time.Second, "the order's first invoice paid", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND status = 'paid'`, res.JSON["subscription_id"]) == 1
		})
		awaitPasswordResets(t, s)
		var resetLink string
		for _, m := range s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=marie.tremblay@example.ca", Headers: s.Operator()}).JSON["messages"].([]any) {
			if links, _ := m.(map[string]any)["links"].([]any); len(links) > 0 {
				resetLink = links[0].(string)
			}
		}
		resetToken := resetLink[strings.Index(resetLink, "token=")+len("token="):]

		logs := s.Logs()
		if !strings.Contains(logs, `"msg":"request"`) {
			t.Fatalf("nothing was logged; the check would pass vacuously:\n%.500s", logs)
		}
		for name, secret := range map[string]string{
			"password": "demo-password-1", "wrong password": "wrong-password-xyz", "agent API key": fixture.DemoAgentKey,
			"store API key": storeKey, "webhook secret": northwindSecret, "sandbox secret": sandboxSecret,
			"subscriber JWT": strings.TrimPrefix(marie["Authorization"], "Bearer "), "verified session": session,
			"reset token": resetToken, "holder e-mail": "marie.tremblay@example.ca", "order e-mail": email, "phone": phone,
			"phone digits": "5145550199", "device secret": deviceSecret, "texted phone": "604-555-0123", "texted phone digits": "6045550123",
		} {
			if secret != "" && strings.Contains(logs, secret) {
				t.Errorf("the logs contain the %s", name)
			}
		}
	})
}
