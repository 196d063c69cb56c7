package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/invariants"
)

// TestFaultsLeaveNothingHalfWritten drives every dev fault seam through HTTP: each gives
// documented outcome, the seam is healed, and the invariants checker then
// finds nothing half-written (internal/invariants).
func TestFaultsLeaveNothingHalfWritten(t *testing.T) {
	t.Parallel()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) }))
	t.Cleanup(gw.Close)
	withSMS := func(c *config.Config) {
		c.SMSAPIURL, c.SMSAccountSID, c.SMSAuthToken, c.SMSFrom = gw.URL, "ACtest", "tok", "+15005550006"
	}
	seams := []struct {
		seam, value string
		drive       func(t *testing.T, s *apptest.Service, op map[string]string, h *hook)
	}{
		{"billing_system", "down", func(t *testing.T, s *apptest.Service, op map[string]string, h *hook) {
			marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/credit-notes", Headers: marie})
			if res.Status != 502 || detailCode(res) != "billing_system_unavailable" {
				t.Fatalf("billing system down: %d %s", res.Status, res.Raw)
			}
		}},
		{"processor", "down", func(t *testing.T, s *apptest.Service, op map[string]string, h *hook) {
			before := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
			res := h.post(s, platformOrder("lh_7f3a9c1205", "fault-processor@example.ca", "cus_demo_visa"))
			if d, _ := res.JSON["detail"].(string); res.Status != 502 || len(d) < 21 || d[:21] != "processor_unavailable" {
				t.Fatalf("processor down: %d %s", res.Status, res.Raw)
			}
			if count(t, s, `SELECT COUNT(*) FROM subscriptions`) != before {
				t.Fatal("a refused order wrote a subscription")
			}
		}},
		{"switch", "port_in_use", func(t *testing.T, s *apptest.Service, op map[string]string, h *hook) {
			res := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1206", "subscriber": person("fault-switch@example.ca")}))
			id, _ := res.JSON["subscription_id"].(string)
			apptest.Eventually(t, 15*time.Second, "provisioning.failed", func() bool {
				got := h.typesFor(id)
				return len(got) == 2 && got[1] == "provisioning.failed"
			})
			if count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioning_failed'`, id) != 1 {
				t.Fatal("workflow state is not provisioning_failed")
			}
		}},
		{"smtp", "down", func(t *testing.T, s *apptest.Service, op map[string]string, h *hook) {
			const to = "priya.patel@example.ca"
			if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": to}}); res.Status >= 300 {
				t.Fatalf("password reset: %d %s", res.Status, res.Raw)
			}
			apptest.Eventually(t, 10*time.Second, "a failed, retrying delivery", func() bool { return mailStatus(s, op, to) == "retrying" })
			setFault(s, op, "smtp", "up")
			apptest.Eventually(t, 15*time.Second, "delivery once the relay is back", func() bool { return mailStatus(s, op, to) == "logged" })
		}},
		{"sms", "down", func(t *testing.T, s *apptest.Service, op map[string]string, h *hook) {
			before := count(t, s, `SELECT COUNT(*) FROM verification_codes`)
			agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoOtherProviderKey),
				Body: map[string]string{"customer_id": liamID, "channel": "sms"}}), 502, "upstream_unavailable")
			if count(t, s, `SELECT COUNT(*) FROM verification_codes`) != before {
				t.Fatal("an unsent code was kept")
			}
		}},
		{"cpe", "down", func(t *testing.T, s *apptest.Service, op map[string]string, h *hook) {
			sess := verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail)
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + marieID + "/network-health", Headers: agentHeaders(fixture.DemoAgentKey, sess)})
			if res.Status != 200 {
				t.Fatalf("network health with the CPE server down: %d %s", res.Status, res.Raw)
			}
			for _, l := range res.JSON["subscriptions"].([]any) {
				if m := l.(map[string]any)["modem"].(map[string]any); m["status"] != "unknown" {
					t.Fatalf("modem status %v with the CPE server down, want unknown", m["status"])
				}
			}
		}},
	}
	healthy := map[string]string{"billing_system": "up", "processor": "up", "switch": "ok", "smtp": "up", "sms": "up", "cpe": "up"}
	covered := map[string]bool{}
	for _, c := range seams {
		covered[c.seam] = true
	}
	for _, name := range faults.Names() {
		if !covered[name] {
			t.Errorf("fault seam %s has no case", name)
		}
	}
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		h := newHook(t, s, fixture.DemoWebhookSecret)
		for _, c := range seams {
			t.Run(c.seam, func(t *testing.T) {
				setFault(s, op, c.seam, c.value)
				defer func() {
					setFault(s, op, c.seam, healthy[c.seam])
					invariants.Assert(t, s.Store)
				}()
				c.drive(t, s, op, h)
			})
		}
	}, withSMS)
}

func mailStatus(s *apptest.Service, op map[string]string, to string) string {
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + to, Headers: op})
	msgs, _ := res.JSON["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].(map[string]any)["status"].(string)
}
