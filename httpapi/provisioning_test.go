package httpapi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/invariants"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

const (
	planFibre500  = "pv100000-0000-4000-8000-000000000500"
	planFibre150  = "pv100000-0000-4000-8000-000000000150"
	planFibre1000 = "pv100000-0000-4000-8000-000000001000"
	planRetired   = "pv100000-0000-4000-8000-000000000499"
	planMaple300  = "pv200000-0000-4000-8000-000000000300"
	unitQueen102  = "u2000000-0000-4000-8000-000000000102"
	unitQueen103  = "u2000000-0000-4000-8000-000000000103"
	unitMais2B    = "u3000000-0000-4000-8000-00000000002b"
	unitKing1206  = "u1000000-0000-4000-8000-000000001206"
	unitStPaul    = "u4000000-0000-4000-8000-000000000001"
	deviceSecret  = "nwf_device_demo_secret_0001"
)

func person(email string) map[string]any {
	return map[string]any{"firstname": "Amélie", "lastname": "Roy", "email": email, "phonenumber": "+1 514 555 0101"}
}

func order(extra map[string]any) map[string]any {
	o := map[string]any{"plan_version_id": planFibre500, "subscriber": person("amelie.roy@example.ca")}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

func (h *hook) post(s *apptest.Service, body any) *apptest.Response {
	return s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: apptest.Key(storeKey), Body: body})
}

// hook is a webhook receiver on loopback that verifies signatures and keeps the order.
type hook struct {
	answer int // status the receiver answers with; 0 means 200
	mu     sync.Mutex
	events []map[string]any
	bad    int
	srv    *httptest.Server
}

func newHook(t *testing.T, s *apptest.Service, secret string) *hook {
	h := newReceiver(t, secret)
	if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), h.srv.URL, northwind); err != nil {
		t.Fatal(err)
	}
	return h
}

// newReceiver is a hook that no provider points at yet.
func newReceiver(t *testing.T, secret string) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		want := "sha256=" + hex.EncodeToString(m.Sum(nil))
		h.mu.Lock()
		defer h.mu.Unlock()
		if !hmac.Equal([]byte(r.Header.Get("X-Webhook-Signature")), []byte(want)) {
			h.bad++
			w.WriteHeader(400)
			return
		}
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		if ev["id"] != r.Header.Get("X-Webhook-Id") {
			h.bad++
		}
		h.events = append(h.events, ev)
		if h.answer != 0 {
			w.WriteHeader(h.answer)
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// all returns the received events, oldest first.
func (h *hook) all() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.events...)
}

func (h *hook) setAnswer(status int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answer = status
}

// typesFor lists the event types received for a subscription, in order.
func (h *hook) typesFor(subID string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if d, _ := e["data"].(map[string]any); d["subscription_id"] == subID {
			out = append(out, e["type"].(string))
		}
	}
	return out
}

func count(t *testing.T, s *apptest.Service, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.Store.R().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitLine waits (up to 15 s) until line id meets cond, a condition on its subscriptions row.
func awaitLine(t *testing.T, s *apptest.Service, what, id, cond string) {
	t.Helper()
	apptest.Eventually(t, 15*time.Second, what, func() bool {
		return count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND `+cond, id) == 1
	})
}

func setFault(s *apptest.Service, op map[string]string, seam, v string) {
	s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: op, Body: map[string]string{seam: v}})
}

func TestProviderInitiatedRouting(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		tests := []struct {
			name   string
			body   map[string]any
			status int
			route  string
			state  string
			field  string // the 422's offending field
		}{
			{"direct with a first-line port provisions", order(map[string]any{"location_hash": "lh_7f3a9c1205"}), 200, "provision", "ACTIVE", ""},
			{"direct by location_identifier", order(map[string]any{"location_identifier": "MTL-KING-1206", "subscriber": person("b@example.ca")}), 200, "provision", "ACTIVE", ""},
			{"home_drop on a second-line suite installs", order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("c@example.ca")}), 200, "install", "PENDING_INSTALL", ""},
			{"home_drop on a third-line suite installs", order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitMais2B, "subscriber": person("d@example.ca")}), 200, "install", "PENDING_INSTALL", ""},
			{"direct with only a suite is refused", order(map[string]any{"unit_id": unitQueen103}), 422, "", "", "location_hash"},
			{"home_drop without a suite is refused", order(map[string]any{"delivery_mode": "home_drop", "location_hash": "lh_7f3a9c1204"}), 422, "", "", "unit_id"},
			{"neither port nor suite is refused", order(nil), 422, "", "", "location_hash"},
			{"unknown port", order(map[string]any{"location_hash": "lh_nope"}), 422, "", "", "location_hash"},
			{"port of a building the provider does not cover", order(map[string]any{"location_hash": "lh_v6e3002"}), 422, "", "", "location_hash"},
			{"unclassified building", order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitStPaul}), 422, "", "", "unit_id"},
			{"unknown plan version", order(map[string]any{"plan_version_id": "nope", "location_hash": "lh_7f3a9c1205"}), 422, "", "", "plan_version_id"},
			{"plan version no longer sold", order(map[string]any{"plan_version_id": planRetired, "location_hash": "lh_7f3a9c1205"}), 422, "", "", "plan_version_id"},
			{"another provider's plan", order(map[string]any{"plan_version_id": planMaple300, "location_hash": "lh_7f3a9c1205"}), 422, "", "", "plan_version_id"},
			{"bad delivery mode", order(map[string]any{"delivery_mode": "drone", "location_hash": "lh_7f3a9c1205"}), 422, "", "", "delivery_mode"},
			{"bad MAC", order(map[string]any{"location_hash": "lh_7f3a9c1205", "mac_address": "zz:zz"}), 422, "", "", "mac_address"},
			{"no subscriber", map[string]any{"plan_version_id": planFibre500, "location_hash": "lh_7f3a9c1205"}, 422, "", "", "subscriber"},
			{"bad e-mail", order(map[string]any{"location_hash": "lh_7f3a9c1205", "subscriber": person("not-an-email")}), 422, "", "", "subscriber.email"},
			{"billing day out of range", order(map[string]any{"location_hash": "lh_7f3a9c1205", "billing": map[string]any{"billing_day": 11}}), 422, "", "", "billing.billing_day"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
				res := h.post(s, tt.body)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status != 200 {
					if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != before {
						t.Fatalf("a refused order wrote a subscription")
					}
					found := false
					for _, f := range res.JSON["detail"].([]any) {
						loc := f.(map[string]any)["loc"].([]any)
						found = found || fmt.Sprint(loc[1:]) == fmt.Sprint(splitPath(tt.field))
					}
					if !found {
						t.Fatalf("422 does not name %s: %s", tt.field, res.Raw)
					}
					return
				}
				if res.JSON["route"] != tt.route || res.JSON["status"] != tt.state || res.JSON["billing_owner"] != "partner" {
					t.Fatalf("answer %s", res.Raw)
				}
				if (tt.route == "install") != (res.JSON["job_id"] == nil) {
					t.Fatalf("job_id must be null exactly on the install route: %s", res.Raw)
				}
				if cn, _ := res.JSON["customer_number"].(string); len(cn) != 8 {
					t.Fatalf("customer_number %q", cn)
				}
			})
		}
		// The install routes raised install jobs with the booking the line type decides, and tickets.
		for unit, booking := range map[string]string{unitQueen102: "operator", unitMais2B: "customer"} {
			if n := count(t, s, `SELECT COUNT(*) FROM install_jobs j JOIN subscriptions s ON s.id = j.subscription_id
				WHERE s.unit_id = ? AND j.kind = 'install' AND j.booking = ? AND j.state = 'open'`, unit, booking); n != 1 {
				t.Fatalf("unit %s: %d install jobs with booking %s", unit, n, booking)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'install'`); n != 2 {
			t.Fatalf("%d install tickets, want 2", n)
		}
	})
}

func splitPath(f string) []string {
	var out []string
	cur := ""
	for _, r := range f {
		if r == '.' {
			out = append(out, cur)
			cur = ""
			continue
		}
		cur += string(r)
	}
	return append(out, cur)
}

func TestProviderInitiatedIsIdempotent(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		body := order(map[string]any{"location_hash": "lh_7f3a9c1205"})
		first := h.post(s, body)
		again := h.post(s, body)
		if again.Status != 200 || again.JSON["subscription_id"] != first.JSON["subscription_id"] || again.JSON["idempotent_replay"] != true {
			t.Fatalf("replay: %s", again.Raw)
		}
		// The same subscriber and plan at another location is a second line.
		other := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1206"}))
		if other.JSON["subscription_id"] == first.JSON["subscription_id"] || other.JSON["subscriber_id"] != first.JSON["subscriber_id"] {
			t.Fatalf("second location: %s", other.Raw)
		}
		// Another subscriber cannot take a live location.
		if res := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205", "subscriber": person("intruder@example.ca")})); res.Status != 409 {
			t.Fatalf("taken location: %d %s", res.Status, res.Raw)
		}
		// A SUSPENDED line counts as existing: the replay answers it with its real status.
		rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE subscriptions SET status = 'SUSPENDED' WHERE id = ?`), first.JSON["subscription_id"])
		res := h.post(s, body)
		if res.JSON["subscription_id"] != first.JSON["subscription_id"] || res.JSON["status"] != "SUSPENDED" {
			t.Fatalf("suspended replay: %s", res.Raw)
		}
	})
}

// TestAReplayAnswersTheLineAskedFor: an external_subscription_id names one line, so repeating
// it for the same subscriber and plan at another location is 409 external_id_in_use and
// orders nothing there (that would be a second line, under an id of its
// own); and every replay's route is the route of the line it answers, not of the request.
func TestAReplayAnswersTheLineAskedFor(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		bulk := func(body map[string]any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{body}}})
		}
		// shop-2: a direct line at 1205. An install line on a first-line suite with a port. An anonymous install line.
		if res := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205", "external_subscription_id": "shop-2"})); res.Status != 200 || res.JSON["route"] != "provision" {
			t.Fatalf("shop-2: %d %s", res.Status, res.Raw)
		}
		suite := newPlace(t, s, 1380)
		installed := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": suite.unit, "external_subscription_id": "shop-3"}))
		if installed.JSON["route"] != "install" {
			t.Fatalf("shop-3: %d %s", installed.Status, installed.Raw)
		}
		anon := anonymous(s, map[string]any{"external_subscription_id": "anon-route", "service_provider_document_id": "nwf-spd-2026",
			"plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop"})
		if anon.Status != 200 || anon.JSON["route"] != "install" {
			t.Fatalf("anonymous install: %d %s", anon.Status, anon.Raw)
		}
		tests := []struct {
			name   string
			send   func() *apptest.Response
			status int
			code   string // of a refusal
			route  string // of a replay
			line   any    // the line a replay answers
		}{
			{"the external id at another location", func() *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1206", "external_subscription_id": "shop-2"}))
			}, 409, "external_id_in_use", "", nil},
			{"the external id at another location, in bulk", func() *apptest.Response {
				return bulk(order(map[string]any{"location_hash": "lh_7f3a9c1206", "external_subscription_id": "shop-2"}))
			}, 409, "external_id_in_use", "", nil},
			{"the external id with another plan", func() *apptest.Response {
				return h.post(s, order(map[string]any{"plan_version_id": planFibre150, "location_hash": "lh_7f3a9c1205", "external_subscription_id": "shop-2"}))
			}, 409, "external_id_in_use", "", nil},
			{"the external id for another subscriber", func() *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1206", "external_subscription_id": "shop-2", "subscriber": person("else@example.ca")}))
			}, 409, "external_id_in_use", "", nil},
			{"the same order again", func() *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205", "external_subscription_id": "shop-2"}))
			}, 200, "", "provision", nil},
			{"the install line's order again, at its suite's port", func() *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": suite.hash, "external_subscription_id": "shop-3"}))
			}, 200, "", "install", installed.JSON["subscription_id"]},
			{"the install line's order again, at its suite's port, without the external id", func() *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": suite.hash}))
			}, 200, "", "install", installed.JSON["subscription_id"]},
			{"the install line's order again, in bulk", func() *apptest.Response {
				return bulk(order(map[string]any{"location_hash": suite.hash}))
			}, 200, "", "install", installed.JSON["subscription_id"]},
			{"a fixture line's order again (no jobs: a suite without a port)", func() *apptest.Response {
				return h.post(s, order(map[string]any{"plan_version_id": planFibre150, "delivery_mode": "home_drop",
					"unit_id": "u2000000-0000-4000-8000-000000000101", "subscriber": person("priya.patel@example.ca")}))
			}, 200, "", "install", priyaLine},
			{"the anonymous install again, by its external id", func() *apptest.Response {
				return anonymous(s, map[string]any{"external_subscription_id": "anon-route", "service_provider_document_id": "nwf-spd-2026",
					"plan_version_id": planFibre150, "unit_id": unitQueen102, "delivery_mode": "home_drop"})
			}, 200, "", "install", anon.JSON["subscription_id"]},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				lines := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
				res := tt.send()
				status, code := conflictCode(res)
				if status != tt.status || code != tt.code {
					t.Fatalf("%d %s, want %d %s", status, res.Raw, tt.status, tt.code)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != lines {
					t.Fatalf("%d new lines", n-lines)
				}
				if tt.status != 200 {
					return
				}
				answer := res.JSON
				if items, ok := res.JSON["results"].([]any); ok {
					answer = items[0].(map[string]any)
				}
				if answer["idempotent_replay"] != true || answer["route"] != tt.route || (tt.line != nil && answer["subscription_id"] != tt.line) {
					t.Fatalf("replay %s, want route %s for %v", res.Raw, tt.route, tt.line)
				}
				if v, ok := answer["job_id"]; ok && v != nil {
					t.Fatalf("a replay carries job_id %v", v)
				}
			})
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ?`, unitKing1206); n != 0 {
			t.Fatalf("%d lines at 1206", n)
		}
	})
}

func TestProviderInitiatedConcurrentDuplicatesCreateOneLine(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		body := order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen103, "subscriber": person("rush@example.ca")})
		var wg sync.WaitGroup
		ids := make([]any, 20)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := h.post(s, body)
				if res.Status != 200 {
					t.Errorf("request %d: %d %s", i, res.Status, res.Raw)
				}
				ids[i] = res.JSON["subscription_id"]
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("answers name different lines: %v", ids)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ?`, unitQueen103); n != 1 {
			t.Fatalf("%d subscriptions for 20 identical orders", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscribers WHERE email = 'rush@example.ca'`); n != 1 {
			t.Fatalf("%d subscribers for one e-mail", n)
		}
	})
}

func TestBillingBlock(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		h := &hook{}
		platform := func(customer string) map[string]any {
			return map[string]any{"owner": "platform", "processor_customer_id": customer, "billing_day": 5}
		}
		tests := []struct {
			name   string
			key    string
			fault  string
			body   map[string]any
			status int
			code   string
		}{
			{"processor down writes nothing", storeKey, "down", order(map[string]any{"location_hash": "lh_7f3a9c1205", "billing": platform("cus_demo_visa")}), 502, "processor_unavailable"},
			{"unknown processor customer", storeKey, "", order(map[string]any{"location_hash": "lh_7f3a9c1205", "billing": platform("cus_nope")}), 422, "processor_customer_not_found"},
			{"customer without a card", storeKey, "", order(map[string]any{"location_hash": "lh_7f3a9c1205", "billing": platform("cus_demo_nocard")}), 422, "processor_customer_has_no_payment_method"},
			{"provider without processor connection", mapleKey, "", map[string]any{"plan_version_id": planMaple300, "location_hash": "lh_v6e3002",
				"subscriber": person("m@example.ca"), "billing": platform("cus_demo_visa")}, 409, "billing_not_available"},
			{"platform billing adopts the card", storeKey, "", order(map[string]any{"location_hash": "lh_7f3a9c1205", "billing": platform("cus_demo_visa")}), 200, ""},
			{"a customer already paying for someone else", storeKey, "", order(map[string]any{"location_hash": "lh_7f3a9c1206",
				"subscriber": person("other@example.ca"), "billing": platform("cus_demo_visa")}), 409, "processor_customer_in_use"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.fault != "" {
					setFault(s, op, "processor", tt.fault)
					defer setFault(s, op, "processor", "up")
				}
				before := count(t, s, `SELECT COUNT(*) FROM subscribers`) + count(t, s, `SELECT COUNT(*) FROM subscriptions`)
				res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: apptest.Key(tt.key), Body: tt.body})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.code != "" {
					d, _ := res.JSON["detail"].(string)
					if len(d) < len(tt.code) || d[:len(tt.code)] != tt.code {
						t.Fatalf("detail must start with %s: %s", tt.code, res.Raw)
					}
					if after := count(t, s, `SELECT COUNT(*) FROM subscribers`) + count(t, s, `SELECT COUNT(*) FROM subscriptions`); after != before {
						t.Fatal("a refused billing block wrote rows")
					}
					return
				}
				if res.JSON["billing_owner"] != "platform" {
					t.Fatalf("billing_owner: %s", res.Raw)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND processor_customer_id = 'cus_demo_visa'
					AND payment_method_id = 'pm_demo_visa' AND billing_day = 5`, res.JSON["subscription_id"]); n != 1 {
					t.Fatal("the processor customer and its default card were not adopted")
				}
			})
		}
		_ = h
	})
}

// TestBillingDayOfAnOrder: billing_day is 1 to 10 (Limits); only a billing_day left out (or
// null) takes the default 1. An explicit 0, like any day outside 1-10, is 422 naming
// billing.billing_day, on a single order and on a bulk item, and nothing is written.
func TestBillingDayOfAnOrder(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		tests := []struct {
			name    string
			billing any // the billing block; nil: none
			bulk    bool
			status  int
			day     int
		}{
			{"no billing block", nil, false, 200, 1},
			{"a billing block without billing_day", map[string]any{"owner": "partner"}, false, 200, 1},
			{"billing_day null", map[string]any{"owner": "partner", "billing_day": nil}, false, 200, 1},
			{"billing_day 10", map[string]any{"billing_day": 10}, false, 200, 10},
			{"billing_day 0", map[string]any{"billing_day": 0}, false, 422, 0},
			{"billing_day 0 on a platform-billed order", map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa", "billing_day": 0}, false, 422, 0},
			{"billing_day -1", map[string]any{"billing_day": -1}, false, 422, 0},
			{"billing_day 0 in bulk", map[string]any{"billing_day": 0}, true, 422, 0},
			{"billing_day 3 in bulk", map[string]any{"billing_day": 3}, true, 200, 3},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := newPlace(t, s, 1400+i)
				body := order(map[string]any{"location_hash": p.hash, "subscriber": person(fmt.Sprintf("day%d@example.ca", i))})
				if tt.billing != nil {
					body["billing"] = tt.billing
				}
				lines := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
				var res *apptest.Response
				var answer map[string]any
				var status int
				if tt.bulk {
					res = s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{body}}})
					answer = res.JSON["results"].([]any)[0].(map[string]any)
					status = int(answer["status_code"].(float64))
				} else {
					res = h.post(s, body)
					answer, status = res.JSON, res.Status
				}
				if status != tt.status {
					t.Fatalf("status %d, want %d: %s", status, tt.status, res.Raw)
				}
				if tt.status != 200 {
					named := false
					if tt.bulk {
						fields, _ := answer["error"].(map[string]any)["fields"].(map[string]any)
						_, named = fields["billing.billing_day"]
					} else {
						for _, f := range res.JSON["detail"].([]any) {
							named = named || fmt.Sprint(f.(map[string]any)["loc"]) == "[body billing billing_day]"
						}
					}
					if !named {
						t.Fatalf("the 422 does not name billing.billing_day: %s", res.Raw)
					}
					if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != lines {
						t.Fatal("a refused order wrote a line")
					}
					return
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND billing_day = ?`, answer["subscription_id"], tt.day); n != 1 {
					t.Fatalf("the line's billing_day is not %d", tt.day)
				}
			})
		}
	})
}

func TestProvisioningWebhooksAreSignedAndOrdered(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := newHook(t, s, fixture.DemoWebhookSecret)
		res := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205", "mac_address": "AA-BB-CC-00-11-22"}))
		id := res.JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "activated then completed", func() bool { return len(h.typesFor(id)) == 2 })
		if got := h.typesFor(id); got[0] != "subscription.activated" || got[1] != "provisioning.completed" {
			t.Fatalf("events %v", got)
		}
		if h.bad != 0 {
			t.Fatalf("%d deliveries with a bad signature", h.bad)
		}
		// The port is live with the line's VLAN, the plan's bandwidth and the bound MAC.
		sim, _ := switches.AsSim(s.Provisioning.Switch)
		st, err := sim.Read(context.Background(), switches.Port{Switch: "mtl-king-sw1", Name: "ge-0/0/13"})
		if err != nil || st.Mode != switches.ModeService || st.DownloadMbps != 500 || st.MAC != "aa:bb:cc:00:11:22" {
			t.Fatalf("port state %+v, %v", st, err)
		}
		inst := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("i@example.ca")}))
		iid := inst.JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "pending_install", func() bool { return len(h.typesFor(iid)) == 1 })
		if got := h.typesFor(iid); got[0] != "subscription.pending_install" {
			t.Fatalf("install route events %v", got)
		}
		// The receiver sees a delivery just before the sender records the attempt: wait for it.
		apptest.Eventually(t, 5*time.Second, "every attempt recorded", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM webhook_attempts`) >= 3
		})
	})
}

// TestProvisioningJobIDIsAUUID: every id the service creates is a UUID, the
// provisioning job's too, on every route that answers one; and the webhook that reports the
// job's outcome, provisioning.completed or provisioning.failed, names it in data.job_id so a
// partner can match it to the order.
func TestProvisioningJobIDIsAUUID(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := newHook(t, s, fixture.DemoWebhookSecret)
		op := s.Operator()
		tests := []struct {
			name    string
			fault   string // switch fault while the job runs
			outcome string
			send    func(p place) *apptest.Response
		}{
			{"provider-initiated", "", "provisioning.completed", func(p place) *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person("job1@example.ca")}))
			}},
			{"provider-initiated, the port in use", "port_in_use", "provisioning.failed", func(p place) *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person("job2@example.ca")}))
			}},
			{"bulk", "", "provisioning.completed", func(p place) *apptest.Response {
				return s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{
					order(map[string]any{"location_hash": p.hash, "subscriber": person("job3@example.ca")})}}})
			}},
			{"complete", "", "provisioning.completed", func(p place) *apptest.Response {
				return complete(s, map[string]any{"plan_version_id": planFibre500, "location_hash": p.hash, "subscriber": person("job4@example.ca")})
			}},
			{"complete of a session", "", "provisioning.completed", func(p place) *apptest.Response {
				return complete(s, map[string]any{"session_id": session(t, s, map[string]any{"location_hash": p.hash}), "subscriber": person("job5@example.ca")})
			}},
			{"anonymous-complete", "", "provisioning.completed", func(p place) *apptest.Response {
				return anonymous(s, map[string]any{"external_subscription_id": "anon-job", "service_provider_document_id": "nwf-spd-2026",
					"plan_version_id": planFibre500, "location_hash": p.hash, "delivery_mode": "direct"})
			}},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := newPlace(t, s, 1390+i)
				if tt.fault != "" {
					setFault(s, op, "switch", tt.fault)
					defer setFault(s, op, "switch", "ok")
				}
				res := tt.send(p)
				answer := res.JSON
				if items, ok := res.JSON["results"].([]any); ok {
					answer = items[0].(map[string]any)
				}
				jobID, _ := answer["job_id"].(string)
				if res.Status != 200 || answer["route"] != "provision" {
					t.Fatalf("order: %d %s", res.Status, res.Raw)
				}
				if id, err := uuid.Parse(jobID); err != nil || id.String() != jobID {
					t.Fatalf("job_id %q is not a UUID: %s", jobID, res.Raw)
				}
				sub := answer["subscription_id"].(string)
				apptest.Eventually(t, 15*time.Second, tt.outcome, func() bool { return len(h.typesFor(sub)) == 2 })
				for _, e := range h.all() {
					if d := e["data"].(map[string]any); d["subscription_id"] == sub && e["type"] == tt.outcome {
						if d["job_id"] != jobID {
							t.Fatalf("%s names job %v, the order %s", tt.outcome, d["job_id"], jobID)
						}
						return
					}
				}
				t.Fatalf("no %s for %s: %v", tt.outcome, sub, h.typesFor(sub))
			})
		}
	})
}

func TestSwitchFaultsEndInTheDocumentedOutcome(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		h := newHook(t, s, fixture.DemoWebhookSecret)
		for _, tt := range []struct{ fault, hash, reason string }{
			{"port_in_use", "lh_7f3a9c1205", "port_in_use"},
			{"unconfirmed", "lh_7f3a9c1206", "switch_write_unconfirmed"},
		} {
			t.Run(tt.fault, func(t *testing.T) {
				setFault(s, op, "switch", tt.fault)
				defer setFault(s, op, "switch", "ok")
				res := h.post(s, order(map[string]any{"location_hash": tt.hash, "subscriber": person(tt.fault + "@example.ca")}))
				id := res.JSON["subscription_id"].(string)
				apptest.Eventually(t, 15*time.Second, "provisioning.failed", func() bool { return len(h.typesFor(id)) == 2 })
				if got := h.typesFor(id); got[1] != "provisioning.failed" {
					t.Fatalf("events %v", got)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'operator' AND internal_note LIKE ?`, "%"+id+"%"); n != 1 {
					t.Fatal("no operator ticket for the failed line")
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioning_failed'`, id); n != 1 {
					t.Fatal("workflow state not provisioning_failed")
				}
			})
		}
		// A transient failure is retried and completes once the switch answers.
		addPort(t, s, "1207", "lh_extra_1207")
		setFault(s, op, "switch", "fail")
		res := h.post(s, order(map[string]any{"location_hash": "lh_extra_1207", "subscriber": person("retry@example.ca")}))
		id := res.JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "a failed first attempt", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM port_states ps JOIN ports p ON p.id = ps.port_id
				WHERE p.location_hash = 'lh_extra_1207' AND ps.failure = 'switch_unavailable'`) == 1
		})
		setFault(s, op, "switch", "ok")
		// The failures may have opened the switch's breaker meanwhile: the job then waits for
		// its cool-down, without spending its attempts, and the probe finds the switch back.
		apptest.Eventually(t, switches.DefaultCoolDown+20*time.Second, "provisioning.completed after the retry", func() bool { return len(h.typesFor(id)) == 2 })
		if got := h.typesFor(id); got[1] != "provisioning.completed" {
			t.Fatalf("events %v", got)
		}
	})
}

// addPort wires a new suite of the first-line King building to a new port.
func addPort(t *testing.T, s *apptest.Service, unit, hash string) string {
	t.Helper()
	return addPortIn(t, s, kingBuilding, "mtl-king-sw1", unit, hash)
}

// addPortIn wires a new suite of a building to a new port of a switch.
func addPortIn(t *testing.T, s *apptest.Service, building, sw, unit, hash string) string {
	t.Helper()
	return addUnit(t, s, building, unit, &subprov.Port{Switch: sw, Name: "ge-0/0/" + unit, LocationHash: hash})
}

// addUnit adds a suite to a building, wired to port when it is not nil.
func addUnit(t *testing.T, s *apptest.Service, building, unit string, port *subprov.Port) string {
	t.Helper()
	ctx := context.Background()
	unitID := "u-extra-" + unit
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpsertUnit(ctx, &subprov.Unit{ID: unitID, BuildingID: building, UnitNumber: unit}, time.Now()); err != nil {
			return err
		}
		if port == nil {
			return nil
		}
		port.ID, port.BuildingID, port.UnitID = "port-"+unit, building, unitID
		return tx.UpsertPort(ctx, port, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	return unitID
}

func TestConfirmInstallAndDevicePull(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := newHook(t, s, fixture.DemoWebhookSecret)
		confirm := func(key string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/confirm-install", Headers: apptest.Key(key), Body: body})
		}
		inst := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("t@example.ca")}))
		id := inst.JSON["subscription_id"].(string)
		tests := []struct {
			name   string
			key    string
			body   map[string]any
			status int
		}{
			{"another provider's line is not found", mapleKey, map[string]any{"subscription_id": id}, 404},
			{"unknown line", storeKey, map[string]any{"subscription_id": "nope"}, 404},
			{"missing id", storeKey, map[string]any{}, 422},
			{"bad MAC", storeKey, map[string]any{"subscription_id": id, "mac_address": "x"}, 422},
			{"technician completes the install", storeKey, map[string]any{"subscription_id": id, "mac_address": "3c:84:6a:00:01:02"}, 200},
			{"confirming again answers the line as it is", storeKey, map[string]any{"subscription_id": id}, 200},
			{"a line that never waited for an install is refused", storeKey, map[string]any{"subscription_id": "c1000000-0000-4000-8000-000000000001"}, 409},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := confirm(tt.key, tt.body)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && res.JSON["status"] != "ACTIVE" {
					t.Fatalf("answer %s", res.Raw)
				}
			})
		}
		apptest.Eventually(t, 15*time.Second, "pending_install then activated", func() bool { return len(h.typesFor(id)) == 2 })
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND state = 'done'`, id); n != 1 {
			t.Fatal("install job not closed")
		}
		// The CPE's first pull completes a first-line suite's install and switches its port on.
		unit := addPort(t, s, "1208", "lh_extra_1208")
		cpe := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unit, "mac_address": "3c:84:6a:12:08:00", "subscriber": person("cpe@example.ca")}))
		if cpe.JSON["status"] != "PENDING_INSTALL" {
			t.Fatalf("first-line suite by suite only must install: %s", cpe.Raw)
		}
		pull := func(secret, mac string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/cpe/config", Headers: map[string]string{"X-Device-Secret": secret}, Body: map[string]string{"mac_address": mac}})
		}
		if res := pull("wrong-secret", "3c:84:6a:12:08:00"); res.Status != 401 {
			t.Fatalf("wrong device secret: %d", res.Status)
		}
		if res := pull(deviceSecret, "3c:84:6a:99:99:99"); res.Status != 404 {
			t.Fatalf("unknown device: %d", res.Status)
		}
		res := pull(deviceSecret, "3C84.6A12.0800")
		if res.Status != 200 || res.JSON["status"] != "ACTIVE" || res.JSON["download_mbps"] != float64(500) {
			t.Fatalf("device pull: %d %s", res.Status, res.Raw)
		}
		cid := cpe.JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "pending, activated, provisioned", func() bool { return len(h.typesFor(cid)) == 3 })
		if got := h.typesFor(cid); got[2] != "provisioning.completed" {
			t.Fatalf("events %v", got)
		}
	})
}

func TestPartnerPlanChange(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		line := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205"}))
		id := line.JSON["subscription_id"].(string)
		awaitLine(t, s, "the port to be live", id, `workflow_state = 'provisioned'`)
		pending := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("p@example.ca")}))
		path := func(sub string) string { return "/partner/subscriptions/" + sub + "/change-plan" }
		preview := func(key, sub, plan string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: path(sub) + "/preview?plan_version_id=" + plan, Headers: apptest.Key(key)})
		}
		apply := func(key, sub, plan string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: path(sub), Headers: apptest.Key(key), Body: map[string]string{"plan_version_id": plan}})
		}
		if res := preview(storeKey, id, planFibre1000); res.Status != 200 || res.JSON["eligible"] != true || res.JSON["recurring_change"] != 25.0 ||
			res.JSON["one_time_adjustment"] != nil {
			t.Fatalf("preview: %s", res.Raw)
		}
		tests := []struct {
			name   string
			key    string
			sub    string
			plan   string
			status int
		}{
			{"another provider's line", mapleKey, id, planFibre1000, 404},
			{"unknown plan", storeKey, id, "nope", 422},
			{"the same plan", storeKey, id, planFibre500, 422},
			{"a pending line cannot change plan", storeKey, pending.JSON["subscription_id"].(string), planFibre1000, 409},
			{"upgrade applies at once", storeKey, id, planFibre1000, 200},
			{"a second change the same UTC day", storeKey, id, planFibre150, 409},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := apply(tt.key, tt.sub, tt.plan)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && (res.JSON["bandwidth_updated"] != true || res.JSON["plan_version_id"] != tt.plan) {
					t.Fatalf("answer %s", res.Raw)
				}
			})
		}
		if res := preview(storeKey, id, planFibre150); res.JSON["eligible"] != false || len(res.JSON["blockers"].([]any)) != 1 {
			t.Fatalf("preview after a change: %s", res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'subscription.plan_changed' AND subject_id = ?`, id); n != 1 {
			t.Fatal("no audit entry")
		}
		// Next UTC day: allowed again; an unconfirmed bandwidth write still applies and says so.
		s.DevClock.Advance(24 * time.Hour)
		op := s.Operator() // a token from before the day would have expired with it
		setFault(s, op, "switch", "unconfirmed")
		res := apply(storeKey, id, planFibre150)
		setFault(s, op, "switch", "ok")
		if res.Status != 200 || res.JSON["bandwidth_updated"] != false {
			t.Fatalf("unconfirmed bandwidth: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE subject = 'Confirm bandwidth after plan change'`); n != 1 {
			t.Fatal("no operator ticket for the unconfirmed bandwidth")
		}
	})
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		h := &hook{}
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)) // 10:00 in Toronto
		line := h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205"}))
		id := line.JSON["subscription_id"].(string)
		awaitLine(t, s, "the port to be live", id, `workflow_state = 'provisioned'`)
		cancel := func(h map[string]string, sub string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscription/" + sub + "/cancel", Headers: h, Body: body})
		}
		preview := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscription/" + id + "/cancel/preview?end_date=2026-11-25", Headers: op})
		if preview.Status != 200 || preview.JSON["total"] != 0.0 || len(preview.JSON["lines"].([]any)) != 0 ||
			preview.JSON["ended_at"] != "2026-11-25T05:00:00Z" || preview.JSON["period"] != "2026-11" {
			t.Fatalf("partner-billed preview: %s", preview.Raw)
		}
		tests := []struct {
			name   string
			h      map[string]string
			sub    string
			body   any
			status int
		}{
			{"needs a dashboard JWT", apptest.Key(storeKey), id, map[string]string{"end_date": "2026-11-25"}, 401},
			{"a date in the past", op, id, map[string]string{"end_date": "2026-11-20"}, 422},
			{"not a date", op, id, map[string]string{"end_date": "soon"}, 422},
			{"unknown line", op, "nope", map[string]string{"end_date": "2026-11-25"}, 404},
			{"cancel for the 25th", op, id, map[string]string{"end_date": "2026-11-25", "reason": "moving"}, 200},
			{"cancelling twice", op, id, map[string]string{"end_date": "2026-11-26"}, 409},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := cancel(tt.h, tt.sub, tt.body)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 && (res.JSON["status"] != "CANCELLED" || res.JSON["ended_at"] != "2026-11-25T05:00:00Z" || res.JSON["canceled_at"] == nil) {
					t.Fatalf("answer %s", res.Raw)
				}
			})
		}
		got := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscription/" + id + "/cancel", Headers: op})
		if got.JSON["ended_at"] != "2026-11-25T05:00:00Z" || got.JSON["reason"] != "moving" {
			t.Fatalf("GET cancellation: %s", got.Raw)
		}
		sim, _ := switches.AsSim(s.Provisioning.Switch)
		port := switches.Port{Switch: "mtl-king-sw1", Name: "ge-0/0/13"}
		mode := func() switches.Mode { st, _ := sim.Read(context.Background(), port); return st.Mode }
		// Service stays up until ended_at, then the deprovisioner resets the port.
		s.DevClock.Set(time.Date(2026, 11, 25, 4, 59, 0, 0, time.UTC))
		s.Settle(t)
		if mode() != switches.ModeService {
			t.Fatalf("port %s before ended_at", mode())
		}
		s.DevClock.Set(time.Date(2026, 11, 25, 5, 0, 1, 0, time.UTC))
		apptest.Eventually(t, 15*time.Second, "the port back on the captive portal", func() bool { return mode() == switches.ModeCaptive })
		apptest.Eventually(t, 5*time.Second, "deprovisioned", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND deprovisioned_at IS NOT NULL`, id) == 1
		})
		invariants.Assert(t, s.Store) // a deprovisioned line is a consistent one
	})
}

func TestBulk(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		bulk := func(body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: body})
		}
		res := bulk(map[string]any{"orders": []any{
			order(map[string]any{"location_hash": "lh_7f3a9c1205", "billing": map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa"}}),
			order(map[string]any{"location_hash": "lh_nope", "subscriber": person("x@example.ca")}),
			map[string]any{"plan_version_id": planFibre150, "delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("y@example.ca"), "colour": "red"},
			order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("y@example.ca")}),
		}})
		if res.Status != 200 {
			t.Fatalf("bulk: %d %s", res.Status, res.Raw)
		}
		want := []struct {
			ok     bool
			status int
			owner  string
		}{{true, 200, "platform"}, {false, 422, ""}, {false, 422, ""}, {true, 200, "partner"}}
		items := res.JSON["results"].([]any)
		for i, w := range want {
			it := items[i].(map[string]any)
			if it["index"] != float64(i) || it["ok"] != w.ok || it["status_code"] != float64(w.status) {
				t.Fatalf("item %d: %v", i, it)
			}
			if w.ok && it["billing_owner"] != w.owner {
				t.Fatalf("item %d billing_owner %v", i, it["billing_owner"])
			}
			if !w.ok && it["error"].(map[string]any)["code"] != "validation_error" {
				t.Fatalf("item %d error %v", i, it["error"])
			}
		}
		many := make([]any, 501)
		for i := range many {
			many[i] = order(nil)
		}
		if res := bulk(map[string]any{"orders": many}); res.Status != 422 {
			t.Fatalf("501 orders: %d", res.Status)
		}
		if res := bulk(map[string]any{"orders": []any{}}); res.Status != 422 {
			t.Fatalf("no orders: %d", res.Status)
		}
	})
}

// TestWebhookSurvivesARestart stops the service while a webhook delivery hangs and starts a
// new process on the same database: the event is delivered after the start.
func TestWebhookSurvivesARestart(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		var mu sync.Mutex
		hang := true
		var got []string
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			first := hang
			hang = false
			mu.Unlock()
			if first {
				select { // the first delivery hangs until the sender gives up
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			var ev map[string]any
			_ = json.NewDecoder(r.Body).Decode(&ev)
			mu.Lock()
			got = append(got, ev["type"].(string))
			mu.Unlock()
		}))
		defer srv.Close()
		defer close(release)
		a := apptest.Start(t, u)
		rawdb.Writer(a.Store).Exec(a.Store.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), srv.URL, northwind)
		res := (&hook{}).post(a, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102}))
		if res.Status != 200 {
			t.Fatalf("order: %s", res.Raw)
		}
		apptest.Eventually(t, 10*time.Second, "the delivery to be in flight", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return !hang
		})
		if err := a.Shutdown(); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		mu.Lock()
		if len(got) != 0 {
			t.Fatalf("delivered before the restart: %v", got)
		}
		mu.Unlock()
		b := apptest.Start(t, u)
		// The new process loads the demo fixture again, which has no webhook URL: set it back.
		rawdb.Writer(b.Store).Exec(b.Store.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), srv.URL, northwind)
		b.DevClock.Advance(10 * time.Minute) // past any retry a failed attempt scheduled
		apptest.Eventually(t, 20*time.Second, "delivery after the restart", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) == 1 && got[0] == "subscription.pending_install"
		})
		apptest.Eventually(t, 5*time.Second, "the event marked delivered", func() bool {
			return count(t, b, `SELECT COUNT(*) FROM events WHERE delivery_state = 'delivered'`) == 1
		})
	})
}

// TestNoOrderOnANonOrderableBuilding: a classified building the operator marked orderable false
// answers serviceable false, and every way of ordering re-checks it, fail-closed:
// provider-initiated direct and home_drop, a bulk item, complete with a session and without,
// anonymous-complete with a session and without, and a new checkout session are each refused
// with 422 saying the building is not orderable, writing nothing.
func TestNoOrderOnANonOrderableBuilding(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		// Sessions opened while the building still took orders.
		portSession := session(t, s, map[string]any{"location_hash": hashKing1206})
		suiteSession := session(t, s, map[string]any{"unit_id": unitKing1205, "delivery_mode": "home_drop"})
		anonSession := session(t, s, map[string]any{"location_hash": hashKing1206, "delivery_mode": "direct"})
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE buildings SET orderable = ? WHERE id = ?`), false, kingBuilding); err != nil {
			t.Fatal(err)
		}
		check := s.Do(apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey),
			Body: map[string]any{"address": "120 Rue King O, Montreal QC H3C 2B5"}})
		if check.Status != 200 || check.JSON["serviceable"] != false || check.JSON["building_id"] != kingBuilding {
			t.Fatalf("serviceability of the closed building: %d %s", check.Status, check.Raw)
		}
		anon := func(extra map[string]any) map[string]any {
			b := map[string]any{"external_subscription_id": "anon-closed", "service_provider_document_id": "nwf-spd-2026"}
			for k, v := range extra {
				b[k] = v
			}
			return b
		}
		cases := []struct {
			name    string
			path    string
			headers map[string]string
			body    map[string]any
			field   string
		}{
			{"provider-initiated direct", "/partner/provisioning/provider-initiated", apptest.Key(storeKey),
				order(map[string]any{"location_hash": hashKing1205}), "location_hash"},
			{"provider-initiated home_drop", "/partner/provisioning/provider-initiated", apptest.Key(storeKey),
				order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitKing1205}), "unit_id"},
			{"complete, session with a port", "/partner/external-checkout/complete", secret(northwindSecret),
				completeBody(map[string]any{"session_id": portSession}), "location_hash"},
			{"complete, session with a suite", "/partner/external-checkout/complete", secret(northwindSecret),
				completeBody(map[string]any{"session_id": suiteSession}), "unit_id"},
			{"complete without a session, port", "/partner/external-checkout/complete", secret(northwindSecret),
				completeBody(map[string]any{"plan_version_id": planFibre500, "delivery_mode": "direct", "location_hash": hashKing1205}), "location_hash"},
			{"complete without a session, suite", "/partner/external-checkout/complete", secret(northwindSecret),
				completeBody(map[string]any{"plan_version_id": planFibre500, "delivery_mode": "home_drop", "unit_id": unitKing1205}), "unit_id"},
			{"anonymous-complete, session", "/partner/external-checkout/anonymous-complete", secret(northwindSecret),
				anon(map[string]any{"session_id": anonSession}), "location_hash"},
			{"anonymous-complete without a session", "/partner/external-checkout/anonymous-complete", secret(northwindSecret),
				anon(map[string]any{"plan_version_id": planFibre500, "delivery_mode": "home_drop", "unit_id": unitKing1205}), "unit_id"},
			{"checkout session", "/partner/external-checkout/sessions", nil,
				map[string]any{"provider_id": northwind, "plan_version_id": planFibre500, "building_id": kingBuilding, "unit_id": unitKing1205, "delivery_mode": "home_drop"}, "building_id"},
		}
		tables := []string{"subscriptions", "subscribers", "install_jobs", "tickets", "events", "checkout_sessions"}
		written := func() map[string]int {
			n := map[string]int{"open sessions": count(t, s, `SELECT COUNT(*) FROM checkout_sessions WHERE status IN ('pending', 'redirected') AND subscription_id IS NULL`)}
			for _, tb := range tables {
				n[tb] = count(t, s, `SELECT COUNT(*) FROM `+tb)
			}
			return n
		}
		before := written()
		for _, tt := range cases {
			res := s.Do(apptest.Request{Method: "POST", Path: tt.path, Headers: tt.headers, Body: tt.body})
			if res.Status != 422 || !strings.Contains(string(res.Raw), `"loc":["body","`+tt.field+`"],"msg":"the building is not orderable`) {
				t.Errorf("%s: %d %s, want 422 naming %s as not orderable", tt.name, res.Status, res.Raw, tt.field)
			}
		}
		// A bulk item is refused on its own, in the bulk answer.
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{
			order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitKing1205})}}})
		item, _ := res.JSON["results"].([]any)
		if res.Status != 200 || len(item) != 1 || item[0].(map[string]any)["status_code"] != float64(422) ||
			!strings.Contains(fmt.Sprint(item[0].(map[string]any)["error"]), "unit_id:the building is not orderable") {
			t.Errorf("bulk item: %d %s, want the item refused with 422 naming unit_id", res.Status, res.Raw)
		}
		if after := written(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("refused orders wrote rows: before %v, after %v", before, after)
		}
	})
}

// problemList is a partner 422's field list as "loc.joined: msg" lines, in the order given.
func problemList(t *testing.T, r *apptest.Response) []string {
	t.Helper()
	list, ok := r.JSON["detail"].([]any)
	if !ok {
		t.Fatalf("422 without a field list: %s", r.Raw)
	}
	var out []string
	for _, f := range list {
		p := f.(map[string]any)
		var loc []string
		for _, l := range p["loc"].([]any) {
			loc = append(loc, l.(string))
		}
		out = append(out, strings.Join(loc, ".")+": "+p["msg"].(string))
	}
	return out
}

// TestValidationListsEveryFieldByItsPath: a 422 names every offending field at once (docs/http.md),
// each by its full path: unknown fields and wrong types inside nested objects are named
// there, and the order's own rules still run beside them (a field with a wrong type is not
// also "required"). Bulk items list theirs, by their path in the item.
func TestValidationListsEveryFieldByItsPath(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		full := person("paths@example.ca")
		withSub := func(extra map[string]any) map[string]any {
			p := map[string]any{}
			for k, v := range full {
				p[k] = v
			}
			for k, v := range extra {
				p[k] = v
			}
			return p
		}
		pi, co := "/partner/provisioning/provider-initiated", "/partner/external-checkout/complete"
		cases := []struct {
			name string
			path string
			body any
			want []string
		}{
			{"empty order", pi, map[string]any{}, []string{"body.plan_version_id: required", "body.subscriber: required"}},
			{"empty body", pi, "", []string{"body.plan_version_id: required", "body.subscriber: required"}},
			{"unknown nested field", pi, order(map[string]any{"location_hash": hashKing1205, "subscriber": withSub(map[string]any{"extra": 1})}),
				[]string{"body.subscriber.extra: unknown field"}},
			{"wrong nested type, other subscriber fields missing", pi, map[string]any{"plan_version_id": planFibre500, "subscriber": map[string]any{"firstname": 5}},
				[]string{"body.subscriber.email: required", "body.subscriber.firstname: want a string", "body.subscriber.lastname: required", "body.subscriber.phonenumber: required"}},
			{"billing day as a string", pi, order(map[string]any{"location_hash": hashKing1205, "billing": map[string]any{"billing_day": "5"}}),
				[]string{"body.billing.billing_day: want a whole number"}},
			{"subscriber that is not an object", pi, map[string]any{"plan_version_id": planFibre500, "subscriber": "Amélie"},
				[]string{"body.subscriber: want an object"}},
			{"every kind at once", pi, map[string]any{"plan_version_id": 5, "colour": "red", "delivery_mode": "drone",
				"subscriber": map[string]any{"email": "nope", "extra": true}, "billing": map[string]any{"owner": "me", "billing_day": 1.5}},
				[]string{"body.billing.billing_day: want a whole number", "body.billing.owner: want partner or platform", "body.colour: unknown field",
					"body.delivery_mode: want direct or home_drop", "body.plan_version_id: want a string", "body.subscriber.email: not a valid e-mail address",
					"body.subscriber.extra: unknown field", "body.subscriber.firstname: required", "body.subscriber.lastname: required", "body.subscriber.phonenumber: required"}},
			{"complete without a session", co, map[string]any{}, []string{"body.plan_version_id: required", "body.subscriber: required"}},
			{"complete, unknown nested field", co, completeBody(map[string]any{"plan_version_id": planFibre500, "unit_id": unitKing1205,
				"subscriber": withSub(map[string]any{"fax": "1"})}), []string{"body.subscriber.fax: unknown field"}},
			{"bulk orders that are not an array", "/partner/provisioning/bulk", map[string]any{"orders": map[string]any{"a": 1}}, []string{"body.orders: want an array"}},
		}
		before := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
		for _, tt := range cases {
			headers := apptest.Key(storeKey)
			if tt.path == co {
				headers = secret(northwindSecret)
			}
			res := s.Do(apptest.Request{Method: "POST", Path: tt.path, Headers: headers, Body: tt.body})
			if res.Status != 422 {
				t.Errorf("%s: %d %s, want 422", tt.name, res.Status, res.Raw)
				continue
			}
			if got := problemList(t, res); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s: 422 lists\n%q\nwant\n%q", tt.name, got, tt.want)
			}
		}
		// Bulk items: each refused item lists its own fields, by their path in the item.
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{
			map[string]any{},
			order(map[string]any{"location_hash": hashKing1205, "subscriber": withSub(map[string]any{"extra": 1})}),
			order(map[string]any{"location_hash": hashKing1205, "subscriber": map[string]any{"firstname": 5, "lastname": "Roy", "email": "a@example.ca", "phonenumber": "1"}}),
		}}})
		items, _ := res.JSON["results"].([]any)
		wantItems := []map[string]any{
			{"plan_version_id": "required", "subscriber": "required"},
			{"subscriber.extra": "unknown field"},
			{"subscriber.firstname": "want a string"},
		}
		if res.Status != 200 || len(items) != len(wantItems) {
			t.Fatalf("bulk: %d %s", res.Status, res.Raw)
		}
		for i, want := range wantItems {
			e, _ := items[i].(map[string]any)["error"].(map[string]any)
			if fmt.Sprint(e["fields"]) != fmt.Sprint(want) {
				t.Errorf("bulk item %d: %v, want fields %v", i, items[i], want)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != before {
			t.Errorf("refused orders wrote %d lines", n-before)
		}
	})
}
