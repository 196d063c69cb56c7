package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/apptest"
)

const (
	northwindSecret = "whsec_northwind_demo_secret_0001"
	mapleSecret     = "whsec_maple_demo_secret_00000001"
	sandboxSecret   = "whsec_sandbox_demo_secret_000001"
	sandboxProvider = "8d0c7f2e-1a3b-4c5d-9e6f-0000000000aa"
	mapleProvider   = "8d0c7f2e-1a3b-4c5d-9e6f-000000000002"
	sandboxBuilding = "b1000000-0000-4000-8000-000000000006"
	sandboxUnitS1   = "u6000000-0000-4000-8000-0000000000s1"
	sandboxUnitS2   = "u6000000-0000-4000-8000-0000000000s2"
	sandboxPlan     = "pv900000-0000-4000-8000-000000000100"
	unitKing1205    = "u1000000-0000-4000-8000-000000001205"
	hashKing1206    = "lh_7f3a9c1206"
	hashKing1205    = "lh_7f3a9c1205"
)

func secret(s string) map[string]string { return map[string]string{"X-Webhook-Secret": s} }

// session creates a checkout session and returns its id.
func session(t *testing.T, s *apptest.Service, body map[string]any) string {
	t.Helper()
	b := map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding}
	for k, v := range body {
		b[k] = v
	}
	res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions", Body: b})
	if res.Status != 201 {
		t.Fatalf("create session: %d %s", res.Status, res.Raw)
	}
	return res.JSON["session_id"].(string)
}

func advance(t *testing.T, s *apptest.Service, op map[string]string, d time.Duration) {
	t.Helper()
	if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]any{"advance_seconds": int(d.Seconds())}}); res.Status != 200 {
		t.Fatalf("advance clock: %d %s", res.Status, res.Raw)
	}
}

func detail(r *apptest.Response) map[string]any {
	d, _ := r.JSON["detail"].(map[string]any)
	return d
}

func TestCheckoutSessionCreate(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions",
			Body: map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding, "unit_id": unitKing1206, "delivery_mode": "home_drop"}})
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Raw)
		}
		id := res.JSON["session_id"].(string)
		if want := "https://shop.northwind.example/checkout?session_id=" + id; res.JSON["checkout_url"] != want {
			t.Errorf("checkout_url %v, want %s", res.JSON["checkout_url"], want)
		}
		if res.JSON["status"] != "pending" || res.JSON["expires_at"] == nil {
			t.Errorf("create answer %s", res.Raw)
		}
		// A sandbox provider's checkout URL is subprov's own payment page.
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions",
			Body: map[string]any{"provider_id": sandboxProvider, "plan_version_id": sandboxPlan, "building_id": sandboxBuilding, "unit_id": sandboxUnitS1}})
		if res.Status != 201 || !strings.HasPrefix(res.JSON["checkout_url"].(string), "http://subprov.test/sandbox/checkout?session_id=") {
			t.Errorf("sandbox create: %d %s", res.Status, res.Raw)
		}
		// A signed-in shopper's session is linked to the account and listed by GET /me.
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions", Headers: marie,
			Body: map[string]any{"provider_id": northwind, "plan_version_id": planFibre150, "building_id": queenBuilding, "unit_id": unitQueen103, "delivery_mode": "home_drop"}})
		if res.Status != 201 {
			t.Fatalf("create signed in: %d %s", res.Status, res.Raw)
		}
		linked := res.JSON["session_id"]
		me := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me", Headers: marie})
		list, _ := me.JSON["checkout_sessions"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["session_id"] != linked {
			t.Errorf("GET /me checkout_sessions = %v, want the linked session", me.JSON["checkout_sessions"])
		}

		bad := []struct {
			name   string
			body   map[string]any
			status int
			field  string
		}{
			{"no checkout URL configured", map[string]any{"provider_id": mapleProvider, "plan_version_id": planMaple300, "building_id": georgiaBuilding}, 503, ""},
			{"unknown provider", map[string]any{"provider_id": "nope", "plan_version_id": planFibre500, "building_id": kingBuilding}, 404, ""},
			{"another provider's plan", map[string]any{"provider_id": northwind, "plan_version_id": planMaple300, "building_id": kingBuilding}, 422, "plan_version_id"},
			{"retired plan", map[string]any{"provider_id": northwind, "plan_version_id": planRetired, "building_id": kingBuilding}, 422, "plan_version_id"},
			{"uncovered building", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": sandboxBuilding}, 404, ""},
			{"unknown building", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": "b9999999-0000-4000-8000-000000000001"}, 404, ""},
			{"uncovered building with a suite of it", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": sandboxBuilding, "unit_id": sandboxUnitS1, "delivery_mode": "home_drop"}, 404, ""},
			{"unit of another building", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding, "unit_id": unitQueen103}, 422, "unit_id"},
			{"port of another building", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": queenBuilding, "location_hash": hashKing1206}, 422, "location_hash"},
			{"bad delivery mode", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding, "delivery_mode": "drone"}, 422, "delivery_mode"},
			{"bad MAC", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding, "mac_address": "zz"}, 422, "mac_address"},
			{"unknown field", map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding, "price": 1}, 422, "price"},
			{"missing fields", map[string]any{}, 422, "plan_version_id"},
		}
		before := count(t, s, `SELECT COUNT(*) FROM checkout_sessions`)
		for _, tt := range bad {
			res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions", Body: tt.body})
			if res.Status != tt.status || (tt.field != "" && !strings.Contains(string(res.Raw), `"`+tt.field+`"`)) {
				t.Errorf("%s: %d %s, want %d naming %s", tt.name, res.Status, res.Raw, tt.status, tt.field)
			}
			// A 404 is the partner envelope with a message: the same for unknown and uncovered.
			if msg, _ := res.JSON["detail"].(string); tt.status == 404 && !strings.HasSuffix(msg, " not found") {
				t.Errorf("%s: 404 body %s, want {\"detail\": \"… not found\"}", tt.name, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM checkout_sessions`); n != before {
			t.Errorf("refused sessions wrote %d rows", n-before)
		}
	})
}

func TestCheckoutSessionReadExpiryAndPatch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		id := session(t, s, map[string]any{"location_hash": hashKing1206, "mac_address": "AA-BB-CC-00-11-22"})
		path := "/partner/external-checkout/sessions/" + id

		for _, tt := range []struct {
			name    string
			headers map[string]string
			status  int
		}{
			{"no secret", nil, 401},
			{"wrong secret", secret("whsec_wrong"), 401},
			{"another provider's secret", secret(mapleSecret), 404},
		} {
			if res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: tt.headers}); res.Status != tt.status {
				t.Errorf("%s: %d %s, want %d", tt.name, res.Status, res.Raw, tt.status)
			}
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/sessions/5b0c0000-0000-4000-8000-000000000000", Headers: secret(northwindSecret)}); res.Status != 404 {
			t.Errorf("unknown session: %d", res.Status)
		}
		res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: secret(northwindSecret)})
		if res.Status != 200 || res.JSON["status"] != "redirected" {
			t.Fatalf("first read: %d %s", res.Status, res.Raw)
		}
		plan, _ := res.JSON["plan"].(map[string]any)
		units, _ := res.JSON["units"].(map[string]any)
		b, _ := units["buildings"].(map[string]any)
		prov, _ := res.JSON["provider"].(map[string]any)
		if plan["store_product_id"] != "nwf-sku-500" || plan["monthly_price"] != 60.0 || units["unit_number"] != "1206" ||
			b["street"] != "120 Rue King O" || b["city"] != "Montréal" || b["postal_code"] == nil || b["province"] != "QC" || b["country"] != "CA" ||
			prov["name"] != "Northwind Fibre" || res.JSON["mac_address"] != "aa:bb:cc:00:11:22" || res.JSON["service_provider_document_id"] != "nwf-spd-2026" ||
			res.JSON["expires_at"] != nil {
			t.Errorf("session body: %s", res.Raw)
		}
		// A read session never expires.
		advance(t, s, op, 3*time.Hour)
		if res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: secret(northwindSecret)}); res.Status != 200 || res.JSON["status"] != "redirected" {
			t.Errorf("read session after 3h: %d %s", res.Status, res.Raw)
		}

		// An unread session expires after 2 hours: 410 before authentication, marked expired.
		stale := session(t, s, nil)
		advance(t, s, op, 2*time.Hour)
		for _, h := range []map[string]string{nil, secret("whsec_wrong"), secret(northwindSecret)} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/sessions/" + stale, Headers: h})
			inner := detail(res)
			if res.Status != 410 || inner["detail"] == nil || inner["expired_at"] == nil {
				t.Errorf("expired session with %v: %d %s", h, res.Status, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM checkout_sessions WHERE id = ? AND status = 'expired'`, stale); n != 1 {
			t.Error("the expired session was not marked expired")
		}
		// Any endpoint touching it answers 410 too.
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/complete", Body: map[string]any{"session_id": stale, "subscriber": person("late@example.ca")}}); res.Status != 410 {
			t.Errorf("complete on expired session: %d %s", res.Status, res.Raw)
		}

		// PATCH changes exactly the plan and the partner's reference.
		patch := func(body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: secret(northwindSecret), Body: body})
		}
		res = patch(map[string]any{"plan_version_id": planFibre1000, "partner_reference_id": "order-42"})
		if res.Status != 200 || res.JSON["plan_version_id"] != planFibre1000 || res.JSON["partner_reference_id"] != "order-42" ||
			res.JSON["plan"].(map[string]any)["store_product_id"] != "nwf-sku-1000" {
			t.Errorf("patch: %d %s", res.Status, res.Raw)
		}
		for _, body := range []map[string]any{{"unit_id": unitKing1205}, {"delivery_mode": "home_drop"}, {"service_provider_document_id": "x"},
			{"plan_version_id": planMaple300}, {"plan_version_id": planFibre150, "location_hash": "lh"}} {
			if res := patch(body); res.Status != 422 {
				t.Errorf("patch %v: %d %s, want 422", body, res.Status, res.Raw)
			}
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: secret(northwindSecret)}); res.JSON["plan_version_id"] != planFibre1000 {
			t.Errorf("refused patches changed the session: %s", res.Raw)
		}

		// A cancelled session answers 410 with the nested body (its message only) to its
		// provider; the age check alone comes before authentication, so any other caller gets
		// what a live session would give it.
		cancelled := session(t, s, nil)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/sessions/" + cancelled + "/cancel", Headers: secret(northwindSecret)}); res.Status != 200 {
			t.Fatalf("cancel: %d %s", res.Status, res.Raw)
		}
		for _, c := range []struct {
			name    string
			headers map[string]string
			want    int
		}{{"no secret", nil, 401}, {"a wrong secret", secret("whsec_wrong"), 401}, {"another provider's secret", secret(mapleSecret), 404}, {"its provider's secret", secret(northwindSecret), 410}} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/sessions/" + cancelled, Headers: c.headers})
			if res.Status != c.want {
				t.Errorf("cancelled session, %s: %d %s, want %d", c.name, res.Status, res.Raw, c.want)
			}
			if inner := detail(res); c.want == 410 && (len(inner) != 1 || inner["detail"] != "Checkout session was cancelled") {
				t.Errorf("cancelled session's body: %s", res.Raw)
			}
		}
		if res := patch(map[string]any{"partner_reference_id": "x"}); res.Status != 200 {
			t.Errorf("patch a redirected session: %d", res.Status)
		}
	})
}

// TestCheckoutBadBodyAnswersTheSessionFirst: a checkout call whose body does not decode is
// answered as its session and secret call for before the body's problems. An expired session
// answers 410 and is marked expired (the age check runs before authentication), a caller
// without the secret gets 401 and another provider 404 (an anonymous caller learns nothing of
// the request's shape), and only the session's own provider sees the 422.
func TestCheckoutBadBodyAnswersTheSessionFirst(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		live := session(t, s, nil)
		s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/sessions/" + live, Headers: secret(northwindSecret)}) // read: never expires
		tests := []struct {
			name    string
			method  string
			path    string // "{id}" stands for the case's session
			body    map[string]any
			expired bool // the case's session is unread and expires before the call
			headers map[string]string
			status  int
		}{
			{"patch, expired, unknown field, no secret", "PATCH", "/partner/external-checkout/sessions/{id}", map[string]any{"unit_id": "x"}, true, nil, 410},
			{"patch, expired, unknown field, right secret", "PATCH", "/partner/external-checkout/sessions/{id}", map[string]any{"unit_id": "x"}, true, secret(northwindSecret), 410},
			{"complete, expired, no subscriber", "POST", "/partner/external-checkout/complete", map[string]any{"session_id": "{id}"}, true, secret(northwindSecret), 410},
			{"complete, expired, no subscriber, no secret", "POST", "/partner/external-checkout/complete", map[string]any{"session_id": "{id}"}, true, nil, 410},
			{"anonymous-complete, expired, unknown field", "POST", "/partner/external-checkout/anonymous-complete", map[string]any{"session_id": "{id}", "foo": 1}, true, secret(northwindSecret), 410},
			{"patch, live, unknown field, no secret", "PATCH", "/partner/external-checkout/sessions/{id}", map[string]any{"unit_id": "x"}, false, nil, 401},
			{"patch, live, unknown field, wrong secret", "PATCH", "/partner/external-checkout/sessions/{id}", map[string]any{"unit_id": "x"}, false, secret("whsec_wrong"), 401},
			{"patch, live, unknown field, another provider", "PATCH", "/partner/external-checkout/sessions/{id}", map[string]any{"unit_id": "x"}, false, secret(mapleSecret), 404},
			{"patch, live, unknown field, its provider", "PATCH", "/partner/external-checkout/sessions/{id}", map[string]any{"unit_id": "x"}, false, secret(northwindSecret), 422},
			{"complete, live, no subscriber, no secret", "POST", "/partner/external-checkout/complete", map[string]any{"session_id": "{id}"}, false, nil, 401},
			{"complete, live, no subscriber, another provider", "POST", "/partner/external-checkout/complete", map[string]any{"session_id": "{id}"}, false, secret(mapleSecret), 404},
			{"complete, live, no subscriber, its provider", "POST", "/partner/external-checkout/complete", map[string]any{"session_id": "{id}"}, false, secret(northwindSecret), 422},
			{"complete, no session, no subscriber, no secret", "POST", "/partner/external-checkout/complete", map[string]any{}, false, nil, 401},
			{"complete, a session id that is not text, its provider", "POST", "/partner/external-checkout/complete", map[string]any{"session_id": 7}, false, secret(northwindSecret), 422},
		}
		ids := make([]string, len(tests))
		for i, tt := range tests {
			ids[i] = live
			if tt.expired {
				ids[i] = session(t, s, nil)
			}
		}
		advance(t, s, s.Operator(), 2*time.Hour)
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				body := map[string]any{}
				for k, v := range tt.body {
					if v == "{id}" {
						v = ids[i]
					}
					body[k] = v
				}
				res := s.Do(apptest.Request{Method: tt.method, Path: strings.ReplaceAll(tt.path, "{id}", ids[i]), Headers: tt.headers, Body: body})
				if res.Status != tt.status {
					t.Fatalf("%d %s, want %d", res.Status, res.Raw, tt.status)
				}
				if tt.status == 410 && detail(res)["expired_at"] == nil {
					t.Errorf("410 without the nested expired_at: %s", res.Raw)
				}
				wantStatus := "redirected"
				if tt.expired {
					wantStatus = "expired"
				}
				if n := count(t, s, `SELECT COUNT(*) FROM checkout_sessions WHERE id = ? AND status = ?`, ids[i], wantStatus); n != 1 {
					t.Errorf("the session is not %s after the call", wantStatus)
				}
			})
		}
	})
}

// completeBody is a completion with subscriber data.
func completeBody(extra map[string]any) map[string]any {
	b := map[string]any{"subscriber": person("shopper@example.ca")}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func complete(s *apptest.Service, body map[string]any) *apptest.Response {
	return s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/complete", Headers: secret(northwindSecret), Body: body})
}

// Each case runs on a fresh service: several cases order the same suite.
func TestCheckoutCompleteRouting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		session  map[string]any // nil: no session
		body     map[string]any
		status   int
		route    string // "" on refusal
		wantUnit string
	}{
		{"session, first-line port provisions", map[string]any{"location_hash": hashKing1206}, nil, 200, "provision", unitKing1206},
		{"session, first-line suite only installs", map[string]any{"unit_id": unitKing1205, "delivery_mode": "home_drop"}, nil, 200, "install", unitKing1205},
		{"session, second-line suite installs", map[string]any{"building_id": queenBuilding, "unit_id": unitQueen102, "delivery_mode": "home_drop"}, nil, 200, "install", unitQueen102},
		{"session, third-line suite installs whatever the mode", map[string]any{"building_id": maisonneuve, "unit_id": unitMais2B, "delivery_mode": "direct"}, nil, 200, "install", unitMais2B},
		{"session with neither port nor suite", map[string]any{"building_id": queenBuilding}, nil, 422, "", ""},
		{"no session, direct with a port", nil, map[string]any{"plan_version_id": planFibre500, "delivery_mode": "direct", "location_hash": hashKing1205}, 200, "provision", unitKing1205},
		{"no session, direct with a first-line suite only installs", nil, map[string]any{"plan_version_id": planFibre500, "delivery_mode": "direct", "unit_id": unitKing1205}, 200, "install", unitKing1205},
		{"no session, home_drop without a suite", nil, map[string]any{"plan_version_id": planFibre500, "delivery_mode": "home_drop", "location_hash": hashKing1206}, 422, "", ""},
		{"no session, neither port nor suite", nil, map[string]any{"plan_version_id": planFibre500, "delivery_mode": "direct"}, 422, "", ""},
		{"no session, wrong document id", nil, map[string]any{"plan_version_id": planFibre500, "unit_id": unitKing1205, "service_provider_document_id": "mpl-spd-2026"}, 422, "", ""},
	}
	for i, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				body := completeBody(tt.body)
				body["subscriber"] = person(fmt.Sprintf("shopper%d@example.ca", i))
				if tt.session != nil {
					body["session_id"] = session(t, s, tt.session)
				}
				before := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
				res := complete(s, body)
				if res.Status != tt.status {
					t.Fatalf("complete: %d %s, want %d", res.Status, res.Raw, tt.status)
				}
				if tt.route == "" {
					if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != before {
						t.Errorf("a refused completion wrote %d lines", n-before)
					}
					return
				}
				_, hasJob := res.JSON["job_id"]
				wantStatus := map[string]string{"provision": "ACTIVE", "install": "PENDING_INSTALL"}[tt.route]
				if res.JSON["route"] != tt.route || res.JSON["status"] != wantStatus || hasJob != (tt.route == "provision") || res.JSON["subscriber_id"] == nil {
					t.Errorf("answer %s, want route %s status %s", res.Raw, tt.route, wantStatus)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND unit_id = ? AND source = 'checkout'`, res.JSON["subscription_id"], tt.wantUnit); n != 1 {
					t.Errorf("line not at unit %s", tt.wantUnit)
				}
				if tt.session != nil {
					if n := count(t, s, `SELECT COUNT(*) FROM checkout_sessions WHERE id = ? AND status = 'completed' AND subscription_id = ?`, body["session_id"], res.JSON["subscription_id"]); n != 1 {
						t.Error("session not completed with the line")
					}
				}
			})
		})
	}
}

func TestCheckoutCompleteSessionWinsAndReplays(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		id := session(t, s, map[string]any{"location_hash": hashKing1206, "mac_address": "aa:bb:cc:00:11:22"})
		s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/sessions/" + id, Headers: secret(northwindSecret)})
		body := completeBody(map[string]any{"session_id": id, "location_hash": hashKing1205, "mac_address": "11:11:11:11:11:11",
			"delivery_mode": "home_drop", "plan_version_id": planFibre150, "external_subscription_id": "mkt-1"})
		res := complete(s, body)
		if res.Status != 200 || res.JSON["route"] != "provision" {
			t.Fatalf("complete: %d %s", res.Status, res.Raw)
		}
		subID, subscriberID := res.JSON["subscription_id"], res.JSON["subscriber_id"]
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND unit_id = ? AND mac_address = 'aa:bb:cc:00:11:22' AND plan_version_id = ?`,
			subID, unitKing1206, planFibre500); n != 1 {
			t.Error("the payload's location, MAC or plan won over the session's")
		}
		// Replays on the same session answer the line with the replay shape.
		for range 2 {
			res := complete(s, body)
			msg := res.JSON["message"]
			if res.Status != 200 || res.JSON["subscription_id"] != subID || res.JSON["subscriber_id"] != subscriberID ||
				(msg != "Subscription already exists (idempotent replay)" && msg != "Provisioning already in progress") {
				t.Errorf("replay: %d %s", res.Status, res.Raw)
			}
			if _, ok := res.JSON["job_id"]; ok {
				t.Errorf("a replay carries no job_id: %s", res.Raw)
			}
		}
		// anonymous-complete replays the completed session's line as it is: with a subscriber,
		// so not anonymous (and, as every anonymous-complete answer, without subscriber_id).
		res = anonymous(s, map[string]any{"session_id": id, "external_subscription_id": "mkt-1", "service_provider_document_id": "nwf-spd-2026"})
		if _, ok := res.JSON["subscriber_id"]; res.Status != 200 || res.JSON["subscription_id"] != subID || res.JSON["idempotent_replay"] != true ||
			res.JSON["anonymous"] != false || ok {
			t.Errorf("anonymous replay of a completion with a subscriber: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE checkout_session_id = ?`, id); n != 1 {
			t.Errorf("%d lines for one session", n)
		}
		// Another provider's secret cannot complete this provider's session.
		other := session(t, s, map[string]any{"unit_id": unitKing1205})
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/complete", Headers: secret(mapleSecret), Body: completeBody(map[string]any{"session_id": other})})
		if res.Status != 404 {
			t.Errorf("maple completing a northwind session: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/complete", Body: completeBody(map[string]any{"session_id": other})}); res.Status != 401 {
			t.Errorf("complete without secret: %d", res.Status)
		}
		if res := complete(s, map[string]any{"session_id": other}); res.Status != 422 {
			t.Errorf("complete without subscriber: %d", res.Status)
		}
	})
}

func anonymous(s *apptest.Service, body map[string]any) *apptest.Response {
	return s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/anonymous-complete", Headers: secret(northwindSecret), Body: body})
}

func TestAnonymousComplete(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		subscribers := count(t, s, `SELECT COUNT(*) FROM subscribers`)
		// Option A: the session's delivery mode routes; payload location fields are ignored.
		direct := session(t, s, map[string]any{"location_hash": hashKing1206, "delivery_mode": "direct"})
		body := map[string]any{"session_id": direct, "external_subscription_id": "anon-1", "service_provider_document_id": "nwf-spd-2026",
			"contact_email": "night.owl@example.ca", "plan_version_id": planFibre150, "unit_id": unitKing1205, "delivery_mode": "home_drop"}
		res := anonymous(s, body)
		if res.Status != 200 || res.JSON["status"] != "ACTIVE" || res.JSON["job_id"] == nil || res.JSON["idempotent_replay"] != false || res.JSON["anonymous"] != true {
			t.Fatalf("option A direct: %d %s", res.Status, res.Raw)
		}
		if _, ok := res.JSON["subscriber_id"]; ok {
			t.Errorf("anonymous answer carries subscriber_id: %s", res.Raw)
		}
		subID := res.JSON["subscription_id"]
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND subscriber_id IS NULL AND anonymous = TRUE
			AND contact_email = 'night.owl@example.ca' AND plan_version_id = ? AND unit_id = ?`, subID, planFibre500, unitKing1206); n != 1 {
			t.Error("the anonymous line is not the session's, or holds subscriber data")
		}
		// Replays (by external id or by the completed session) carry the real status and no job.
		for _, replay := range []map[string]any{body, {"external_subscription_id": "anon-1", "service_provider_document_id": "nwf-spd-2026",
			"plan_version_id": planFibre500, "location_hash": hashKing1206}} {
			res := anonymous(s, replay)
			if res.Status != 200 || res.JSON["subscription_id"] != subID || res.JSON["idempotent_replay"] != true || res.JSON["job_id"] != nil || res.JSON["status"] != "ACTIVE" {
				t.Errorf("replay: %d %s", res.Status, res.Raw)
			}
		}
		// complete on the anonymously completed session replays its line, without a subscriber_id.
		res = complete(s, completeBody(map[string]any{"session_id": direct}))
		if _, ok := res.JSON["subscriber_id"]; res.Status != 200 || res.JSON["subscription_id"] != subID || ok {
			t.Errorf("complete replaying an anonymous completion: %d %s", res.Status, res.Raw)
		}
		// Option B, home_drop on a third-line suite: PENDING_INSTALL.
		res = anonymous(s, map[string]any{"external_subscription_id": "anon-2", "service_provider_document_id": "nwf-spd-2026",
			"plan_version_id": planFibre150, "unit_id": unitMais2B, "delivery_mode": "home_drop"})
		if res.Status != 200 || res.JSON["status"] != "PENDING_INSTALL" || res.JSON["job_id"] != nil {
			t.Fatalf("option B home_drop: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ?`, res.JSON["subscription_id"]); n != 1 {
			t.Error("no install job for the anonymous install")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscribers`); n != subscribers {
			t.Errorf("anonymous completions created %d subscriber records", n-subscribers)
		}
		// No subscriber record means no invoices, ever: activate the direct line and look.
		apptest.Eventually(t, 10*time.Second, "the anonymous line provisioned", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioned'`, subID) == 1
		})
		if n := count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, subID); n != 0 {
			t.Errorf("%d invoices for an anonymous line", n)
		}

		bad := []struct {
			name string
			body map[string]any
		}{
			{"no external id", map[string]any{"service_provider_document_id": "nwf-spd-2026", "plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop"}},
			{"no document id", map[string]any{"external_subscription_id": "anon-3", "plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop"}},
			{"another provider's document id", map[string]any{"external_subscription_id": "anon-3", "service_provider_document_id": "mpl-spd-2026", "plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop"}},
			{"direct without a port", map[string]any{"external_subscription_id": "anon-3", "service_provider_document_id": "nwf-spd-2026", "plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "direct"}},
			{"home_drop without a suite", map[string]any{"external_subscription_id": "anon-3", "service_provider_document_id": "nwf-spd-2026", "plan_version_id": planFibre150, "location_hash": hashKing1205, "delivery_mode": "home_drop"}},
			{"bad contact e-mail", map[string]any{"external_subscription_id": "anon-3", "service_provider_document_id": "nwf-spd-2026", "plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop", "contact_email": "nope"}},
			{"session with direct but only a suite", map[string]any{"session_id": "", "external_subscription_id": "anon-3", "service_provider_document_id": "nwf-spd-2026"}},
		}
		bad[len(bad)-1].body["session_id"] = session(t, s, map[string]any{"building_id": queenBuilding, "unit_id": unitQueen102, "delivery_mode": "direct"})
		before := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
		for _, tt := range bad {
			if res := anonymous(s, tt.body); res.Status != 422 {
				t.Errorf("%s: %d %s, want 422", tt.name, res.Status, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != before {
			t.Errorf("refused anonymous completions wrote %d lines", n-before)
		}
	})
}

// TestAnonymousThirdLineContact: a third-line install without contact_email waits in the
// operator queue flagged "No contact e-mail"; with it the booking link is mailed to that address
// once the booking window opens (the building opens on 2027-03-01, the window is 21 days).
func TestAnonymousThirdLineContact(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := setClock(t, s, s.Operator(), "2027-01-04T15:00:00Z")
		res := anonymous(s, map[string]any{"external_subscription_id": "anon-nomail", "service_provider_document_id": "nwf-spd-2026",
			"plan_version_id": planFibre150, "unit_id": unitMais2B, "delivery_mode": "home_drop"})
		if res.Status != 200 {
			t.Fatalf("anonymous without e-mail: %d %s", res.Status, res.Raw)
		}
		if job := installJobOf(t, s, op, res.JSON["subscription_id"].(string)); !strings.Contains(fmt.Sprint(job["flags"]), "No contact e-mail") {
			t.Errorf("install job without contact e-mail: %v", job)
		}
		res = anonymous(s, map[string]any{"external_subscription_id": "anon-mail", "service_provider_document_id": "nwf-spd-2026",
			"plan_version_id": planFibre150, "unit_id": "u3000000-0000-4000-8000-00000000003a", "delivery_mode": "home_drop", "contact_email": "night.owl@example.ca"})
		if res.Status != 200 {
			t.Fatalf("anonymous with e-mail: %d %s", res.Status, res.Raw)
		}
		if job := installJobOf(t, s, op, res.JSON["subscription_id"].(string)); strings.Contains(fmt.Sprint(job["flags"]), "No contact e-mail") {
			t.Errorf("install job with contact e-mail is flagged: %v", job)
		}
		op = setClock(t, s, op, "2027-02-08T15:00:00Z")
		apptest.Eventually(t, 15*time.Second, "the booking link mailed to the contact address", func() bool {
			return mailWithSubject(s, op, "night.owl@example.ca", "Book your installation appointment") != nil
		})
		if n := count(t, s, `SELECT COUNT(*) FROM subscribers WHERE provider_id = ? AND id IN (SELECT subscriber_id FROM contacts WHERE email = 'night.owl@example.ca')`, northwind); n != 0 {
			t.Error("the contact e-mail became a subscriber record")
		}
	})
}

func status(s *apptest.Service, sec, action, external string) *apptest.Response {
	return s.Do(apptest.Request{Method: "POST", Path: "/partner/external-checkout/subscription-status", Headers: secret(sec),
		Body: map[string]any{"action": action, "external_subscription_id": external, "service_provider_document_id": "nwf-spd-2026"}})
}

func TestSubscriptionStatusGuards(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		live := liveLineAt(t, s, hashKing1206, "mkt-live")
		res := complete(s, completeBody(map[string]any{"plan_version_id": planFibre150, "unit_id": unitMais2B, "delivery_mode": "home_drop", "external_subscription_id": "mkt-install"}))
		if res.Status != 200 || res.JSON["status"] != "PENDING_INSTALL" {
			t.Fatalf("complete install: %d %s", res.Status, res.Raw)
		}

		steps := []struct {
			name, action, external string
			fault                  string // switch fault during the step
			status                 int
			subStatus              string
			portChanged, onHold    bool
		}{
			{"suspend an active line", "suspend", "mkt-live", "", 200, "SUSPENDED", true, false},
			{"suspend again", "suspend", "mkt-live", "", 409, "", false, false},
			{"restore while the port will not re-open", "restore", "mkt-live", "unconfirmed", 409, "", false, false},
			{"restore", "restore", "mkt-live", "", 200, "ACTIVE", true, false},
			{"restore an active line", "restore", "mkt-live", "", 409, "", false, false},
			{"hold an install", "suspend", "mkt-install", "", 200, "PENDING_INSTALL", false, true},
			{"hold again", "suspend", "mkt-install", "", 200, "PENDING_INSTALL", false, true},
			{"lift the hold", "restore", "mkt-install", "", 200, "PENDING_INSTALL", false, false},
			{"lift a hold that is not there", "restore", "mkt-install", "", 409, "", false, false},
			{"unknown line", "suspend", "mkt-nope", "", 404, "", false, false},
			{"bad action", "pause", "mkt-live", "", 422, "", false, false},
		}
		for _, st := range steps {
			if st.fault != "" {
				setFault(s, op, "switch", st.fault)
			}
			res := status(s, northwindSecret, st.action, st.external)
			setFault(s, op, "switch", "ok")
			if res.Status != st.status {
				t.Fatalf("%s: %d %s, want %d", st.name, res.Status, res.Raw, st.status)
			}
			if st.status == 200 && (res.JSON["subscription_status"] != st.subStatus || res.JSON["port_changed"] != st.portChanged || res.JSON["on_hold"] != st.onHold) {
				t.Errorf("%s: %s", st.name, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'ACTIVE'`, live); n != 1 {
			t.Error("the live line is not ACTIVE after restore")
		}
		// The partner's view by its own id; another provider's secret or a wrong document id finds nothing.
		res = s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/subscriptions/mkt-install", Headers: secret(northwindSecret)})
		for _, k := range []string{"subscription_id", "subscriber_id", "status", "anonymous", "workflow_state", "appointment_at", "on_hold", "booking_link_sent", "billing_owner", "canceled_at", "ended_at"} {
			if _, ok := res.JSON[k]; !ok {
				t.Errorf("partner view lacks %s: %s", k, res.Raw)
			}
		}
		if res.JSON["status"] != "PENDING_INSTALL" || res.JSON["billing_owner"] != "partner" {
			t.Errorf("partner view: %s", res.Raw)
		}
		for _, r := range []apptest.Request{
			{Method: "GET", Path: "/partner/external-checkout/subscriptions/mkt-install", Headers: secret(mapleSecret)},
			{Method: "GET", Path: "/partner/external-checkout/subscriptions/mkt-nope", Headers: secret(northwindSecret)},
			{Method: "POST", Path: "/partner/external-checkout/subscription-status", Headers: secret(mapleSecret),
				Body: map[string]any{"action": "suspend", "external_subscription_id": "mkt-live", "service_provider_document_id": "mpl-spd-2026"}},
			{Method: "POST", Path: "/partner/external-checkout/subscription-status", Headers: secret(northwindSecret),
				Body: map[string]any{"action": "suspend", "external_subscription_id": "mkt-live", "service_provider_document_id": "mpl-spd-2026"}},
		} {
			if res := s.Do(r); res.Status != 404 {
				t.Errorf("%s %s with %v: %d, want 404", r.Method, r.Path, r.Body, res.Status)
			}
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/subscriptions/mkt-live"}); res.Status != 401 {
			t.Errorf("no secret: %d", res.Status)
		}
	})
}

func TestMarketplacePlan(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/marketplace/plans/" + planFibre500})
		if res.Status != 200 || res.JSON["name"] != "Fibre 500" || res.JSON["monthly_price"] != 60.0 || res.JSON["currency"] != "CAD" || res.JSON["store_product_id"] != "nwf-sku-500" {
			t.Errorf("plan: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/marketplace/plans/nope"}); res.Status != 404 {
			t.Errorf("unknown plan: %d", res.Status)
		}
	})
}

// TestSubscriptionStatusHoldsABookedInstall: on PENDING_INSTALL, suspend is a hold that cancels
// the booked visit, releases its place and stops the booking link (the old link says the
// booking is paused); restore lifts the hold and mails a fresh link.
func TestSubscriptionStatusHoldsABookedInstall(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		const email, subject = "hold.test@example.ca", "Book your installation appointment"
		// The building opens on 2027-03-01 and Northwind books 21 days ahead: invitations go out at once.
		op := setClock(t, s, s.Operator(), "2027-02-10T15:00:00Z")
		res := complete(s, map[string]any{"plan_version_id": planFibre150, "unit_id": unitMais2B, "delivery_mode": "home_drop",
			"external_subscription_id": "mkt-hold", "subscriber": person(email)})
		if res.Status != 200 || res.JSON["status"] != "PENDING_INSTALL" {
			t.Fatalf("complete: %d %s", res.Status, res.Raw)
		}
		subID := res.JSON["subscription_id"].(string)
		var link string
		apptest.Eventually(t, 10*time.Second, "the booking invitation", func() bool {
			if m := mailWithSubject(s, op, email, subject); m != nil {
				link = localURL(s, m["links"].([]any)[0].(string))
				return true
			}
			return false
		})
		job := installJobOf(t, s, op, subID)
		slots := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs/" + job["id"].(string) + "/slots", Headers: op})
		slot := slots.JSON["slots"].([]any)[0].(map[string]any)["slot_id"].(string)
		booked, err := http.PostForm(s.URL+"/book", url.Values{"token": {link[strings.Index(link, "token=")+len("token="):]}, "slot": {slot}})
		if err != nil || booked.StatusCode != 200 {
			t.Fatalf("customer booking: %v %v", booked, err)
		}
		booked.Body.Close()
		view := func() map[string]any {
			return s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/subscriptions/mkt-hold", Headers: secret(northwindSecret)}).JSON
		}
		placesTaken := func() int { return count(t, s, `SELECT COALESCE(SUM(booked), 0) FROM install_slots`) }
		if v := view(); v["appointment_at"] == nil || v["booking_link_sent"] != true || placesTaken() != 1 {
			t.Fatalf("before the hold: %v, %d places taken", v, placesTaken())
		}

		res = status(s, northwindSecret, "suspend", "mkt-hold")
		if res.Status != 200 || res.JSON["subscription_status"] != "PENDING_INSTALL" || res.JSON["on_hold"] != true {
			t.Fatalf("hold: %d %s", res.Status, res.Raw)
		}
		if v := view(); v["appointment_at"] != nil || v["on_hold"] != true || placesTaken() != 0 || installJobOf(t, s, op, subID)["state"] != "held" {
			t.Errorf("after the hold: %v, %d places taken", v, placesTaken())
		}
		if code, body := getPage(t, link); code != http.StatusConflict || !strings.Contains(body, "Booking paused") {
			t.Errorf("the old link during the hold: %d", code)
		}

		res = status(s, northwindSecret, "restore", "mkt-hold")
		if res.Status != 200 || res.JSON["on_hold"] != false {
			t.Fatalf("restore: %d %s", res.Status, res.Raw)
		}
		apptest.Eventually(t, 10*time.Second, "a fresh booking link", func() bool {
			n := 0
			for _, m := range outboxTo(s, op, email) {
				if m["subject"] == subject {
					n++
				}
			}
			return n == 2
		})
		if installJobOf(t, s, op, subID)["state"] != "open" {
			t.Error("the job did not open again")
		}
	})
}

// TestRestoreAfterAnOperatorBooking: restoring a held PENDING_INSTALL line leaves it bookable
// again even when an operator had booked the visit (which made the job's booking "operator")
// before the hold cancelled it. The job goes back to the building's own booking: on a
// customer-booked (third-line) building the customer gets a fresh booking link, at once inside
// the booking window and when it opens otherwise, or, with no address to mail, the job is
// flagged for the operator; on an operator-booked (second-line) building it is open in the
// operator's queue, no link, and the operator books again.
func TestRestoreAfterAnOperatorBooking(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		const subject = "Book your installation appointment"
		tests := []struct {
			name      string
			clock     string // when it happens; Mais opens 2027-03-01 and Northwind books 21 days ahead
			unit      string
			anonymous bool   // no subscriber and no contact e-mail
			booking   string // the job's booking after the restore
			link      bool   // a fresh link is mailed at the restore
			dueOn     string // or when the booking window opens
			flagged   bool   // the job is flagged No contact e-mail
		}{
			{"third-line, outside the booking window", "2027-01-04T15:00:00Z", "3B", false, "customer", false, "2027-02-08", false},
			{"third-line, inside the booking window", "2027-02-10T15:00:00Z", "3C", false, "customer", true, "", false},
			{"third-line, nobody to mail", "2027-02-10T15:00:00Z", "3D", true, "customer", false, "", true},
			{"second-line", "2027-02-10T15:00:00Z", "", false, "operator", false, "", false},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				op := setClock(t, s, s.Operator(), tt.clock)
				external, email := fmt.Sprintf("mkt-opbook-%d", i), fmt.Sprintf("opbook%d@example.ca", i)
				unit := unitQueen103
				if tt.unit != "" {
					unit = addUnit(t, s, bldMais, tt.unit, nil)
				}
				var res *apptest.Response
				if tt.anonymous {
					res = anonymous(s, map[string]any{"external_subscription_id": external, "service_provider_document_id": "nwf-spd-2026",
						"plan_version_id": planFibre150, "unit_id": unit, "delivery_mode": "home_drop"})
				} else {
					res = complete(s, map[string]any{"plan_version_id": planFibre150, "unit_id": unit, "delivery_mode": "home_drop",
						"external_subscription_id": external, "subscriber": person(email)})
				}
				if res.Status != 200 || res.JSON["status"] != "PENDING_INSTALL" {
					t.Fatalf("order: %d %s", res.Status, res.Raw)
				}
				subID := res.JSON["subscription_id"].(string)
				jobPath := "/api/v1/install-jobs/" + installJobOf(t, s, op, subID)["id"].(string)
				book := func() *apptest.Response {
					slots := s.Do(apptest.Request{Method: "GET", Path: jobPath + "/slots", Headers: op})
					slot := slots.JSON["slots"].([]any)[0].(map[string]any)["slot_id"].(string)
					return s.Do(apptest.Request{Method: "POST", Path: jobPath + "/book", Headers: op, Body: map[string]string{"slot_id": slot}})
				}
				if r := book(); r.Status != 200 || r.JSON["booking"] != "operator" {
					t.Fatalf("operator booking: %d %s", r.Status, r.Raw)
				}
				links := func() int {
					n := 0
					for _, m := range outboxTo(s, op, email) {
						if m["subject"] == subject {
							n++
						}
					}
					return n
				}
				mailed := links()
				if r := status(s, northwindSecret, "suspend", external); r.Status != 200 || r.JSON["on_hold"] != true {
					t.Fatalf("hold: %d %s", r.Status, r.Raw)
				}
				if r := status(s, northwindSecret, "restore", external); r.Status != 200 || r.JSON["on_hold"] != false {
					t.Fatalf("restore: %d %s", r.Status, r.Raw)
				}
				view := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/subscriptions/" + external, Headers: secret(northwindSecret)}).JSON
				job := installJobOf(t, s, op, subID)
				if view["appointment_at"] != nil || view["on_hold"] != false || view["booking_link_sent"] != tt.link ||
					job["state"] != "open" || job["booking"] != tt.booking || job["appointment_at"] != nil {
					t.Fatalf("after the restore: line %v, job %v", view, job)
				}
				if tt.link {
					apptest.Eventually(t, 10*time.Second, "a fresh booking link", func() bool { return links() == mailed+1 })
				} else if n := links(); n != mailed {
					t.Fatalf("%d booking links mailed at the restore", n-mailed)
				}
				if due, _ := job["invitation_due_on"].(string); due != tt.dueOn {
					t.Fatalf("invitation due on %q, want %q", due, tt.dueOn)
				}
				if flagged := strings.Contains(fmt.Sprint(job["flags"]), "No contact e-mail"); flagged != tt.flagged {
					t.Fatalf("job flags %v", job["flags"])
				}
				if tt.dueOn != "" {
					op = setClock(t, s, op, tt.dueOn+"T15:00:00Z")
					apptest.Eventually(t, 15*time.Second, "the booking link when the window opens", func() bool { return links() == mailed+1 })
				}
				if tt.booking == "operator" || tt.flagged {
					if r := book(); r.Status != 200 || r.JSON["state"] != "booked" {
						t.Fatalf("the operator books again: %d %s", r.Status, r.Raw)
					}
				}
			})
		}
	})
}
