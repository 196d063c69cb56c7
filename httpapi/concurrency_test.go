package httpapi_test

import (
	"sync"
	"testing"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/invariants"
)

// duplicates sends n copies of r at once and returns the answers.
func duplicates(s *apptest.Service, n int, r apptest.Request) []*apptest.Response {
	return concurrently(n, func(int) *apptest.Response { return s.Do(r) })
}

// concurrently makes the n calls send(0) … send(n-1) at once and returns their answers in order.
func concurrently(n int, send func(i int) *apptest.Response) []*apptest.Response {
	out := make([]*apptest.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = send(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestConcurrentDuplicatesYieldOneEffect: every idempotent route, hit by concurrent
// duplicates, has one effect (one line, one plan change, one completed install) and no 5xx;
// the invariants hold afterwards. Provider-initiated orders have their own test
// (TestProviderInitiatedConcurrentDuplicatesCreateOneLine).
func TestConcurrentDuplicatesYieldOneEffect(t *testing.T) {
	t.Parallel()
	const n = 6
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		noServerErrors := func(t *testing.T, res []*apptest.Response) {
			t.Helper()
			for _, r := range res {
				if r.Status >= 500 {
					t.Errorf("a duplicate answered %d: %s", r.Status, r.Raw)
				}
			}
		}
		t.Run("bulk item", func(t *testing.T) {
			item := order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen103, "subscriber": person("bulk.dup@example.ca")})
			res := duplicates(s, n, apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{item}}})
			noServerErrors(t, res)
			if got := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ? AND status <> 'CANCELLED'`, unitQueen103); got != 1 {
				t.Errorf("%d live lines on the suite, want 1", got)
			}
		})
		t.Run("complete with a session", func(t *testing.T) {
			sess := session(t, s, map[string]any{"location_hash": hashKing1206})
			res := duplicates(s, n, apptest.Request{Method: "POST", Path: "/partner/external-checkout/complete", Headers: secret(northwindSecret),
				Body: completeBody(map[string]any{"session_id": sess})})
			noServerErrors(t, res)
			if got := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE checkout_session_id = ?`, sess); got != 1 {
				t.Errorf("%d lines for one session, want 1", got)
			}
		})
		t.Run("anonymous-complete", func(t *testing.T) {
			sess := session(t, s, map[string]any{"location_hash": hashKing1205})
			res := duplicates(s, n, apptest.Request{Method: "POST", Path: "/partner/external-checkout/anonymous-complete", Headers: secret(northwindSecret),
				Body: map[string]any{"session_id": sess, "contact_email": "anon.dup@example.ca", "external_subscription_id": "anon-dup-1",
					"service_provider_document_id": "nwf-spd-2026"}})
			noServerErrors(t, res)
			if got := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE checkout_session_id = ?`, sess); got != 1 {
				t.Errorf("%d lines for one session, want 1: %s", got, res[0].Raw)
			}
		})
		t.Run("confirm-install", func(t *testing.T) {
			inst := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: apptest.Key(storeKey),
				Body: order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("confirm.dup@example.ca")})})
			id, _ := inst.JSON["subscription_id"].(string)
			if inst.Status != 200 || id == "" {
				t.Fatalf("install order: %d %s", inst.Status, inst.Raw)
			}
			res := duplicates(s, n, apptest.Request{Method: "POST", Path: "/partner/provisioning/confirm-install", Headers: apptest.Key(storeKey),
				Body: map[string]any{"subscription_id": id, "mac_address": "3c:84:6a:00:09:09"}})
			noServerErrors(t, res)
			if got := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND state = 'done'`, id); got != 1 {
				t.Errorf("%d completed install jobs, want 1", got)
			}
			if got := count(t, s, `SELECT COUNT(*) FROM events WHERE subscription_id = ? AND type = 'subscription.activated'`, id); got > 1 {
				t.Errorf("%d activation events, want at most 1", got)
			}
		})
		t.Run("agent plan change", func(t *testing.T) {
			h := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail))
			res := duplicates(s, n, apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + marieID + "/plan-change", Headers: h,
				Body: map[string]any{"plan_version_id": fibre1000, "confirm": true}})
			noServerErrors(t, res)
			if got := count(t, s, `SELECT COUNT(*) FROM plan_changes WHERE subscription_id = ?`, marieLine); got != 1 {
				t.Errorf("%d plan changes, want 1", got)
			}
		})
		t.Run("portal order", func(t *testing.T) {
			marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
			before := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ?`, unitMais2B)
			res := duplicates(s, n, apptest.Request{Method: "POST", Path: ordersPath, Headers: marie,
				Body: portalOrder(bldMais, planFibre150, unitMais2B, nil)})
			noServerErrors(t, res)
			if got := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ?`, unitMais2B) - before; got != 1 {
				t.Errorf("%d new lines from one order, want 1: %s", got, res[0].Raw)
			}
		})
		invariants.Assert(t, s.Store)
	})
}
