package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
)

const (
	marieID   = "s1000000-0000-4000-8000-000000000001"
	priyaID   = "s1000000-0000-4000-8000-000000000002"
	jeanID    = "s1000000-0000-4000-8000-000000000003"
	liamID    = "s2000000-0000-4000-8000-000000000001" // Maple, another provider
	marieLine = "c1000000-0000-4000-8000-000000000001"
	fibre1000 = "pv100000-0000-4000-8000-000000001000"
	fibre150  = "pv100000-0000-4000-8000-000000000150"
)

var codeLine = regexp.MustCompile(`(?m)^(\d{6})$`)

// textedCode finds the code in an SMS, which carries it inside a sentence.
var textedCode = regexp.MustCompile(`\b(\d{6})\b`)

// agentHeaders is the agent key plus, when given, a verified session.
func agentHeaders(key, session string) map[string]string {
	h := apptest.Key(key)
	if session != "" {
		h["X-Verified-Session"] = session
	}
	return h
}

// mailedCode reads the newest verification code mailed to an address.
func mailedCode(t *testing.T, s *apptest.Service, to string) string {
	t.Helper()
	var code string
	apptest.Eventually(t, 5e9, "verification mail to "+to, func() bool {
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + url.QueryEscape(to), Headers: s.Operator()})
		for _, m := range res.JSON["messages"].([]any) {
			msg := m.(map[string]any)
			if msg["subject"] == "Your verification code" {
				if got := codeLine.FindStringSubmatch(msg["body"].(string)); got != nil {
					code = got[1]
					return true
				}
			}
		}
		return false
	})
	return code
}

// verify runs issue and check by e-mail and returns the session token.
func verify(t *testing.T, s *apptest.Service, key, customerID, email string) string {
	t.Helper()
	res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(key), Body: map[string]string{"customer_id": customerID}})
	if res.Status != 202 {
		t.Fatalf("issue: %d %s", res.Status, res.Raw)
	}
	code := mailedCode(t, s, email)
	res = s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/check", Headers: apptest.Key(key), Body: map[string]string{"customer_id": customerID, "code": code}})
	if res.Status != 200 {
		t.Fatalf("check: %d %s", res.Status, res.Raw)
	}
	return res.JSON["verified_session_token"].(string)
}

// TestVerifiedCodesDoNotCountAgainstTheResendLimit: the resend limit (5 codes a customer, 60 a
// key, in 10 minutes) counts only codes that never verified a session (no limit is given for
// this; this one stops flooding a customer with codes). An agent verifying one customer on
// call after call is never refused; codes that are not read out are, whatever was verified
// before them; a key's verified codes leave its allowance whole.
func TestVerifiedCodesDoNotCountAgainstTheResendLimit(t *testing.T) {
	t.Parallel()
	const perCustomer, perKey = 5, 60
	for _, tt := range []struct {
		name   string
		verify int // issue and check this many codes first
		issue  int // then issue this many without checking: the last is refused
	}{
		{"issue and check, more times than the limit", perCustomer + 2, 0},
		{"issue without checking", 0, perCustomer + 1},
		{"verified codes leave the limit for unverified ones whole", perCustomer, perCustomer + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				for range tt.verify {
					verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail) // fails unless 202 and 200
				}
				for i := range tt.issue {
					res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoAgentKey),
						Body: map[string]string{"customer_id": marieID}})
					if want := 202; i == tt.issue-1 {
						if res.Status != 429 || res.Header.Get("Retry-After") == "" || string(res.Raw) != "{\"detail\":\"Rate limit exceeded\"}\n" {
							t.Fatalf("unverified code %d: %d %s %v, want the documented 429", i+1, res.Status, res.Raw, res.Header)
						}
					} else if res.Status != want {
						t.Fatalf("unverified code %d: %d %s, want %d", i+1, res.Status, res.Raw, want)
					}
				}
			})
		})
	}
	// A key's allowance: 60 codes within 10 minutes that verified a session (written directly,
	// since the route allows 60 issues a minute) leave it whole; 60 that did not spend it.
	for _, tt := range []struct {
		name     string
		verified bool
		status   int
	}{
		{"a key's verified codes do not count", true, 202},
		{"a key's unverified codes do", false, 429},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail) // a code of the key, to learn its id
				var keyID string
				var at time.Time
				if err := s.Store.R().QueryRow(t.Context(), `SELECT api_key_id, created_at FROM verification_codes WHERE api_key_id <> ''`).Scan(&keyID, &at); err != nil {
					t.Fatal(err)
				}
				var verifiedAt any
				if tt.verified {
					verifiedAt = at
				}
				for i := range perKey {
					if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`INSERT INTO verification_codes (id, provider_id, subscriber_id, channel, code_hash, expires_at, created_at, api_key_id, consumed_at, verified_at)
						VALUES (?, ?, ?, 'email', 'x', ?, ?, ?, ?, ?)`), fmt.Sprintf("5c0de000-0000-4000-8000-%012d", i), northwind, marieID, at.Add(10*time.Minute), at, keyID, at, verifiedAt); err != nil {
						t.Fatal(err)
					}
				}
				if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoAgentKey),
					Body: map[string]string{"customer_id": priyaID}}); res.Status != tt.status {
					t.Fatalf("a code to another customer: %d %s, want %d", res.Status, res.Raw, tt.status)
				}
			})
		})
	}
}

func agentError(t *testing.T, res *apptest.Response, status int, code string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, res.Raw)
	}
	e, _ := res.JSON["error"].(map[string]any)
	if e == nil || e["code"] != code || e["request_id"] == "" || e["request_id"] == nil {
		t.Fatalf("error %s, want code %s with request_id", res.Raw, code)
	}
	if !agentListedCodes[code] {
		t.Fatalf("code %s is not one of the agent surface's codes", code)
	}
}

func searchIDs(res *apptest.Response) []string {
	var out []string
	for _, r := range res.JSON["results"].([]any) {
		out = append(out, r.(map[string]any)["customer_id"].(string))
	}
	return out
}

func TestAgentSearch(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := apptest.Key(fixture.DemoAgentKey)
		for _, tc := range []struct{ q, want string }{
			{"Marie", marieID}, {"tremblay", marieID}, {"marie tremblay", marieID}, {"Marie T", marieID},
			{"marie.tremblay@example.ca", marieID}, {"MARIE.TREMBLAY@EXAMPLE", marieID},
			{"+1 514-555-0142", marieID}, {"(514) 555-0142", marieID}, {"514.555.0142", marieID}, {"5145550142", marieID}, {"555-0142", marieID},
			{"0042-117", marieID}, {"0042117", marieID}, {"ABCD-1234", marieID}, {"abcd1234", marieID},
			{"120 Rue King", marieID}, {"1204 king", marieID}, {"montreal 1204", marieID}, {"H3C 2B5 1204", marieID},
			{"Patel Design", priyaID}, {"ap@pateldesign.example.ca", priyaID}, {"(416) 555-0100", priyaID}, {"88A Queen 101", priyaID},
			{"Gagnon", jeanID}, {"Maisonneuve 2A", jeanID},
		} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=" + url.QueryEscape(tc.q), Headers: h})
			if res.Status != 200 {
				t.Fatalf("%q: %d %s", tc.q, res.Status, res.Raw)
			}
			if ids := searchIDs(res); len(ids) != 1 || ids[0] != tc.want || res.JSON["ambiguous"] != false || res.JSON["match_count"] != 1.0 {
				t.Errorf("%q: %s, want only %s", tc.q, res.Raw, tc.want)
			}
		}
		// Masked candidates in the documented shape; never a full e-mail or phone.
		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=example", Headers: h})
		if res.Status != 200 || res.JSON["match_count"] != 3.0 || res.JSON["ambiguous"] != true {
			t.Fatalf("example: %s", res.Raw)
		}
		for _, secret := range []string{"marie.tremblay", "priya.patel@", "jean.gagnon@", "555-0142", "5550142", "555-0199", "Tremblay", "liam"} {
			if strings.Contains(strings.ToLower(string(res.Raw)), strings.ToLower(secret)) {
				t.Errorf("search response contains %q: %s", secret, res.Raw)
			}
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=Marie", Headers: h})
		m := res.JSON["results"].([]any)[0].(map[string]any)
		if m["name"] != "Marie T." || m["email"] != "m***@e***.ca" || m["phone"] != "***-***-0142" || m["customer_number"] != "0042-117" {
			t.Errorf("masked candidate: %v", m)
		}
		locs := m["service_locations"].([]any)
		if len(locs) != 1 || locs[0].(map[string]any)["unit_number"] != "1204" || locs[0].(map[string]any)["building_id"] != fixture.DemoBuildingFirst {
			t.Errorf("service_locations: %v", locs)
		}
		// Only the key's provider; limit; bad input.
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=Liam+Chen", Headers: h}); res.JSON["match_count"] != 0.0 {
			t.Errorf("another provider's customer found: %s", res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=example&limit=2", Headers: h}); len(searchIDs(res)) != 2 || res.JSON["match_count"] != 3.0 {
			t.Errorf("limit=2: %s", res.Raw)
		}
		for _, q := range []string{"q=M", "q=", "q=marie&limit=0", "q=marie&limit=101", "q=marie&limit=x"} {
			agentError(t, s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?" + q, Headers: h}), 422, "validation_error")
		}
		agentError(t, s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=marie", Headers: apptest.Key(fixture.DemoStoreKey)}), 403, "forbidden")
		agentError(t, s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=marie"}), 401, "unauthorized")
	})
}

// TestAgentSearchByCustomerID: a query that is a customer id, or its first 8 or more hex
// digits (any case, dashes or none), finds the provider's customer, masked like any match;
// another provider's agent finds nothing, and a shorter prefix is no id.
func TestAgentSearchByCustomerID(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: apptest.Key(fixture.DemoStoreKey),
			Body: map[string]any{"plan_version_id": planFibre500, "location_hash": "lh_7f3a9c1205", "subscriber": map[string]any{
				"firstname": "Noor", "lastname": "Haddad", "email": "noor.haddad@example.ca", "phonenumber": "+1 514 555 0177"}}})
		if res.Status != 200 {
			t.Fatalf("order: %d %s", res.Status, res.Raw)
		}
		id := res.JSON["subscriber_id"].(string)
		search := func(key, q string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=" + url.QueryEscape(q), Headers: apptest.Key(key)})
		}
		for _, q := range []string{id, strings.ToUpper(id), id[:8], id[:13], strings.ReplaceAll(id[:18], "-", ""), " " + id[:8] + "- "} {
			res := search(fixture.DemoAgentKey, q)
			ids := searchIDs(res)
			if res.Status != 200 || len(ids) == 0 || ids[0] != id {
				t.Errorf("%q: %d %s, want %s first", q, res.Status, res.Raw, id)
				continue
			}
			if q == id && (res.JSON["match_count"] != 1.0 || res.JSON["ambiguous"] != false) {
				t.Errorf("the whole id: %s, want exactly one match", res.Raw)
			}
			m := res.JSON["results"].([]any)[0].(map[string]any)
			if m["name"] != "Noor H." || m["email"] != "n***@e***.ca" || m["phone"] != "***-***-0177" || strings.Contains(string(res.Raw), "haddad") {
				t.Errorf("%q: candidate not masked: %v", q, m)
			}
		}
		// A fixture's customer keeps the id its file gave it (docs/fixtures.md), here no UUID.
		if res := search(fixture.DemoAgentKey, marieSubscriber); res.JSON["match_count"] != 1.0 || !slices.Equal(searchIDs(res), []string{marieSubscriber}) {
			t.Errorf("the fixture's id %s: %s, want Marie alone", marieSubscriber, res.Raw)
		}
		for _, tc := range []struct{ key, q, why string }{
			{fixture.DemoOtherProviderKey, marieSubscriber, "another provider's agent, by a fixture's id"},
			{fixture.DemoOtherProviderKey, id, "another provider's agent"},
			{fixture.DemoOtherProviderKey, id[:8], "another provider's agent, by prefix"},
			{fixture.DemoAgentKey, id[:7], "seven hex digits are no id"},
		} {
			if ids := searchIDs(search(tc.key, tc.q)); slices.Contains(ids, id) {
				t.Errorf("%s (%q) found the customer", tc.why, tc.q)
			}
		}
	})
}

// agentRoutes are every customer route with a valid body.
var agentRoutes = []struct{ method, path string }{
	{"GET", ""}, {"GET", "/billing-summary"}, {"GET", "/payments"}, {"GET", "/network-health"}, {"GET", "/tickets"},
	{"POST", "/notes"}, {"PATCH", "/contact"}, {"POST", "/password-reset"}, {"POST", "/invoices/inv-1/resend"},
	{"POST", "/plan-change/preview"}, {"POST", "/plan-change"},
}

func agentBody(path string) any {
	switch path {
	case "/notes":
		return map[string]string{"note": "called about speed"}
	case "/contact":
		return map[string]string{"phonenumber": "514-555-0000"}
	case "/password-reset":
		return map[string]string{}
	case "/plan-change/preview":
		return map[string]string{"plan_version_id": fibre1000}
	case "/plan-change":
		return map[string]any{"plan_version_id": fibre1000, "confirm": true}
	}
	return nil
}

func TestAgentScopingAndSessions(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail)
		liam := verify(t, s, fixture.DemoOtherProviderKey, liamID, "liam.chen@example.ca")
		for _, rt := range agentRoutes {
			name := rt.method + " " + rt.path
			// Another provider's customer is 404 whatever the session says.
			for _, sess := range []string{"", marie, liam} {
				res := s.Do(apptest.Request{Method: rt.method, Path: "/partner/agent/customers/" + liamID + rt.path, Headers: agentHeaders(fixture.DemoAgentKey, sess), Body: agentBody(rt.path)})
				if res.Status != 404 || res.JSON["error"].(map[string]any)["code"] != "not_found" {
					t.Errorf("%s on another provider's customer: %d %s", name, res.Status, res.Raw)
				}
			}
			// A session bound to one customer fails on another; none at all fails too.
			for _, sess := range []string{"", marie, "garbage"} {
				res := s.Do(apptest.Request{Method: rt.method, Path: "/partner/agent/customers/" + priyaID + rt.path, Headers: agentHeaders(fixture.DemoAgentKey, sess), Body: agentBody(rt.path)})
				agentError(t, res, 401, "verification_required")
			}
			// The Maple key with Marie's session (a Northwind customer) sees nothing.
			res := s.Do(apptest.Request{Method: rt.method, Path: "/partner/agent/customers/" + marieID + rt.path, Headers: agentHeaders(fixture.DemoOtherProviderKey, marie), Body: agentBody(rt.path)})
			agentError(t, res, 404, "not_found")
		}
		// verify/issue, verify/check and tickets also scope customer_id.
		for _, c := range []struct {
			path string
			body any
		}{
			{"/partner/agent/verify/issue", map[string]string{"customer_id": liamID}},
			{"/partner/agent/verify/check", map[string]string{"customer_id": liamID, "code": "123456"}},
			{"/partner/agent/tickets", map[string]string{"customer_id": liamID, "ai_summary": "x"}},
		} {
			agentError(t, s.Do(apptest.Request{Method: "POST", Path: c.path, Headers: apptest.Key(fixture.DemoAgentKey), Body: c.body}), 404, "not_found")
		}
		// The session works within 15 minutes of dev clock and not after.
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + marieID, Headers: agentHeaders(fixture.DemoAgentKey, marie)}); res.Status != 200 {
			t.Fatalf("profile: %d %s", res.Status, res.Raw)
		}
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: s.Operator(), Body: map[string]int{"advance_seconds": 14 * 60}})
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + marieID, Headers: agentHeaders(fixture.DemoAgentKey, marie)}); res.Status != 200 {
			t.Fatalf("profile at 14 min: %d %s", res.Status, res.Raw)
		}
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: s.Operator(), Body: map[string]int{"advance_seconds": 61}})
		agentError(t, s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + marieID, Headers: agentHeaders(fixture.DemoAgentKey, marie)}), 401, "verification_required")
	})
}

func TestAgentVerificationCodes(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := apptest.Key(fixture.DemoAgentKey)
		issue := func(body map[string]string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: h, Body: body})
		}
		check := func(code string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/check", Headers: h, Body: map[string]string{"customer_id": marieID, "code": code}})
		}
		res := issue(map[string]string{"customer_id": marieID, "channel": "email"})
		if res.Status != 202 || res.JSON["channel"] != "email" || res.JSON["destination"] != "m***@e***.ca" || res.JSON["expires_in"] != 600.0 {
			t.Fatalf("issue: %d %s", res.Status, res.Raw)
		}
		if strings.Contains(string(res.Raw), "code") {
			t.Fatalf("the code is returned: %s", res.Raw)
		}
		code := mailedCode(t, s, fixture.DemoSubscriberEmail)
		if n := count(t, s, `SELECT COUNT(*) FROM verification_codes WHERE code_hash = ? OR code_hash LIKE ?`, code, "%"+code+"%"); n != 0 {
			t.Fatal("the code is stored in clear")
		}
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		// Four wrong checks leave the code alive; the fifth check ends it, even if right.
		for i := 0; i < 4; i++ {
			agentError(t, check(wrong), 401, "verification_failed")
		}
		agentError(t, check(wrong), 401, "verification_failed")
		agentError(t, check(code), 401, "verification_failed")

		// A fresh code works once; the session is bound to (provider, customer).
		issue(map[string]string{"customer_id": marieID})
		code = mailedCode(t, s, fixture.DemoSubscriberEmail)
		res = check(code)
		if res.Status != 200 || res.JSON["customer_id"] != marieID || res.JSON["verified_session_token"] == "" || res.JSON["expires_at"] == nil {
			t.Fatalf("check: %d %s", res.Status, res.Raw)
		}
		agentError(t, check(code), 401, "verification_failed")

		// A code lives 10 minutes.
		issue(map[string]string{"customer_id": priyaID})
		code = mailedCode(t, s, "priya.patel@example.ca")
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: s.Operator(), Body: map[string]int{"advance_seconds": 601}})
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/check", Headers: h,
			Body: map[string]string{"customer_id": priyaID, "code": code}}), 401, "verification_failed")

		// Resends are limited per customer (TestVerifiedCodesDoNotCountAgainstTheResendLimit)...
		for i := 0; i < 5; i++ {
			if res := issue(map[string]string{"customer_id": jeanID}); res.Status != 202 {
				t.Fatalf("issue %d: %d %s", i, res.Status, res.Raw)
			}
		}
		res = issue(map[string]string{"customer_id": jeanID})
		if res.Status != 429 || res.Header.Get("Retry-After") == "" {
			t.Fatalf("6th issue: %d %s", res.Status, res.Raw)
		}
		// ...and per API key: 60 unverified codes from one key within 10 minutes, whoever they
		// went to.
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: s.Operator(), Body: map[string]int{"advance_seconds": 601}})
		now := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/clock", Headers: s.Operator()}).JSON["now"].(string)
		at, _ := time.Parse(time.RFC3339Nano, now)
		var keyID string
		if err := s.Store.R().QueryRow(t.Context(), `SELECT api_key_id FROM verification_codes WHERE api_key_id <> '' LIMIT 1`).Scan(&keyID); err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`INSERT INTO verification_codes (id, provider_id, subscriber_id, channel, code_hash, expires_at, created_at, api_key_id)
				VALUES (?, ?, ?, 'email', 'x', ?, ?, ?)`), fmt.Sprintf("5c0de000-0000-4000-8000-%012d", i), northwind, marieID, at.Add(10*time.Minute), at, keyID); err != nil {
				t.Fatal(err)
			}
		}
		if res := issue(map[string]string{"customer_id": priyaID}); res.Status != 429 {
			t.Fatalf("61st code from one key: %d %s", res.Status, res.Raw)
		}
		// SMS: Northwind has no SMS configured. Maple has; with no gateway set up, dev mode (the
		// tests', the demo's) writes the text to the outbox instead, where the code can be read.
		agentError(t, issue(map[string]string{"customer_id": marieID, "channel": "sms"}), 503, "dependency_unconfigured")
		maple := apptest.Key(fixture.DemoOtherProviderKey)
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: maple, Body: map[string]string{"customer_id": liamID, "channel": "sms"}})
		if res.Status != 202 || res.JSON["channel"] != "sms" || res.JSON["destination"] != "***-***-0123" {
			t.Fatalf("sms in dev mode: %d %s", res.Status, res.Raw)
		}
		texts := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=604-555-0123", Headers: s.Operator()}).JSON["messages"].([]any)
		text, _ := texts[0].(map[string]any)
		smsCode := textedCode.FindStringSubmatch(fmt.Sprint(text["body"]))
		if len(texts) != 1 || text["subject"] != "SMS" || text["status"] != "logged" || smsCode == nil {
			t.Fatalf("the SMS in the outbox: %v", texts)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/check", Headers: maple, Body: map[string]string{"customer_id": liamID, "code": smsCode[1]}}); res.Status != 200 {
			t.Fatalf("check the SMS code: %d %s", res.Status, res.Raw)
		}
		agentError(t, issue(map[string]string{"customer_id": marieID, "channel": "fax"}), 422, "validation_error")
		agentError(t, issue(map[string]string{"customer_id": marieID, "extra": "x"}), 422, "validation_error")
	})
}

// TestAgentSMSNeedsAGatewayOutsideDevMode: a provider with sms_configured and no gateway
// configured in the process answers 503 outside dev mode (nothing pretends to send).
func TestAgentSMSNeedsAGatewayOutsideDevMode(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoOtherProviderKey),
			Body: map[string]string{"customer_id": liamID, "channel": "sms"}}), 503, "dependency_unconfigured")
	}, func(c *config.Config) { c.Dev = false })
}

func TestAgentVerificationBySMS(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, _ := r.BasicAuth(); u != "ACtest" || p != "tok" || r.URL.Path != "/2010-04-01/Accounts/ACtest/Messages.json" {
			w.WriteHeader(401)
			return
		}
		_ = r.ParseForm()
		mu.Lock()
		bodies = append(bodies, r.PostForm.Get("To")+"|"+r.PostForm.Get("Body"))
		mu.Unlock()
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"sid":"SM1"}`))
	}))
	t.Cleanup(gw.Close)
	withSMS := func(c *config.Config) {
		c.SMSAPIURL, c.SMSAccountSID, c.SMSAuthToken, c.SMSFrom = gw.URL, "ACtest", "tok", "+15005550006"
	}
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := apptest.Key(fixture.DemoOtherProviderKey)
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: h, Body: map[string]string{"customer_id": liamID, "channel": "sms"}})
		if res.Status != 202 || res.JSON["destination"] != "***-***-0123" {
			t.Fatalf("issue sms: %d %s", res.Status, res.Raw)
		}
		mu.Lock()
		last := bodies[len(bodies)-1]
		mu.Unlock()
		code := textedCode.FindStringSubmatch(last)
		if !strings.HasPrefix(last, "604-555-0123|") || code == nil {
			t.Fatalf("gateway got %q", last)
		}
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/check", Headers: h, Body: map[string]string{"customer_id": liamID, "code": code[1]}})
		if res.Status != 200 {
			t.Fatalf("check: %d %s", res.Status, res.Raw)
		}
		// The dev fault sms: down makes the gateway unreachable: 502, and no code is left behind.
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: s.Operator(), Body: map[string]string{"sms": "down"}})
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: h,
			Body: map[string]string{"customer_id": liamID, "channel": "sms"}}), 502, "upstream_unavailable")
		// Northwind still has sms_configured false: 503 even with a gateway.
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoAgentKey),
			Body: map[string]string{"customer_id": marieID, "channel": "sms"}}), 503, "dependency_unconfigured")
	}, withSMS)
}

func TestAgentReadsAndWrites(t *testing.T) {
	t.Parallel()
	acs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/devices" && strings.Contains(r.URL.Query().Get("query"), marieLine) {
			_, _ = w.Write([]byte(`[{"_id":"CPE-1","_lastInform":"` + time.Now().UTC().Format(time.RFC3339) + `"}]`))
			return
		}
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(acs.Close)
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		payer := (&hook{}).post(s, platformOrder("lh_7f3a9c1206", "payer@example.ca", "cus_demo_visa"))
		payerLine := payer.JSON["subscription_id"].(string)
		apptest.Eventually(t, 15*time.Second, "the first invoice to be paid", func() bool {
			inv := invoicesOf(t, s, payerLine)
			return len(inv) == 1 && inv[0].status == "paid"
		})
		res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=payer@example.ca", Headers: apptest.Key(fixture.DemoAgentKey)})
		if ids := searchIDs(res); len(ids) != 1 {
			t.Fatalf("new subscriber not indexed: %s", res.Raw)
		}
		payerID := searchIDs(res)[0]
		ph := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, payerID, "payer@example.ca"))
		get := func(h map[string]string, id, path string) *apptest.Response {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + id + path, Headers: h})
			if res.Status != 200 {
				t.Fatalf("GET %s: %d %s", path, res.Status, res.Raw)
			}
			return res
		}
		pay := get(ph, payerID, "/payments").JSON["payments"].([]any)
		if len(pay) != 1 || pay[0].(map[string]any)["amount"] == nil || pay[0].(map[string]any)["paid_at"] == nil {
			t.Fatalf("payments: %v", pay)
		}
		sum := get(ph, payerID, "/billing-summary").JSON
		last := sum["last_invoice"].(map[string]any)
		if sum["currency"] != "CAD" || sum["balance_due"] != 0.0 || last["status"] != "paid" || sum["monthly_recurring"] != 85.0 {
			t.Fatalf("billing summary: %v", sum)
		}
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + payerID + "/invoices/" + last["invoice_id"].(string) + "/resend", Headers: ph})
		if res.Status != 202 || res.JSON["sent_to"] != "p***@e***.ca" {
			t.Fatalf("resend: %d %s", res.Status, res.Raw)
		}
		mh := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail))
		// Another customer's invoice is not found, even with a valid session.
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + marieID + "/invoices/" + last["invoice_id"].(string) + "/resend", Headers: mh}), 404, "not_found")

		// The slim profile never carries processor ids, notes, MAC addresses or user ids.
		prof := get(mh, marieID, "")
		for _, banned := range []string{"processor", "cus_", "pm_", "mac", "user_id", "note", "account_id"} {
			if strings.Contains(strings.ToLower(string(prof.Raw)), banned) {
				t.Errorf("profile contains %q: %s", banned, prof.Raw)
			}
		}
		if prof.JSON["contract_contact"].(map[string]any)["email"] != fixture.DemoSubscriberEmail || len(prof.JSON["subscriptions"].([]any)) != 1 || prof.JSON["invoice_address"] == nil {
			t.Errorf("profile: %s", prof.Raw)
		}
		// Network health: modem status from the GenieACS NBI; the dev fault cpe: down gives unknown.
		line := get(mh, marieID, "/network-health").JSON["subscriptions"].([]any)[0].(map[string]any)
		if line["modem"].(map[string]any)["status"] != "online" || line["status"] != "ACTIVE" {
			t.Errorf("health: %v", line)
		}
		if l := get(ph, payerID, "/network-health").JSON["subscriptions"].([]any)[0].(map[string]any); l["modem"].(map[string]any)["status"] != "not_found" {
			t.Errorf("health of a line without a device: %v", l)
		}
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: s.Operator(), Body: map[string]string{"cpe": "down"}})
		line = get(mh, marieID, "/network-health").JSON["subscriptions"].([]any)[0].(map[string]any)
		if line["modem"].(map[string]any)["status"] != "unknown" {
			t.Errorf("health with cpe down: %v", line)
		}

		// Notes: stored for operators, attributed to the AI.
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + marieID + "/notes", Headers: mh, Body: map[string]string{"note": "Caller reports slow Wi-Fi"}})
		if res.Status != 201 || res.JSON["author"] != "ai_agent" {
			t.Fatalf("note: %d %s", res.Status, res.Raw)
		}
		if notes, _ := s.Store.NotesOf(context.Background(), "8d0c7f2e-1a3b-4c5d-9e6f-000000000001", marieID); len(notes) != 1 || notes[0].Author != "ai_agent" {
			t.Errorf("notes: %+v", notes)
		}
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + marieID + "/notes", Headers: mh, Body: map[string]string{"note": " "}}), 422, "validation_error")

		// Contact patch: only the fields sent change, and search follows at once.
		res = s.Do(apptest.Request{Method: "PATCH", Path: "/partner/agent/customers/" + marieID + "/contact", Headers: mh, Body: map[string]string{"phonenumber": "438 555 7777"}})
		c := res.JSON["contact"].(map[string]any)
		if res.Status != 200 || c["phonenumber"] != "438 555 7777" || c["firstname"] != "Marie" || c["email"] != fixture.DemoSubscriberEmail {
			t.Fatalf("contact patch: %d %s", res.Status, res.Raw)
		}
		for q, want := range map[string]int{"(438) 555-7777": 1, "514-555-0142": 0} {
			if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=" + url.QueryEscape(q), Headers: apptest.Key(fixture.DemoAgentKey)}); len(searchIDs(res)) != want {
				t.Errorf("search %q after patch: %s", q, res.Raw)
			}
		}
		res = s.Do(apptest.Request{Method: "PATCH", Path: "/partner/agent/customers/" + marieID + "/contact", Headers: mh,
			Body: map[string]string{"contact_type": "invoice", "email": "billing@tremblay.example.ca"}})
		if res.Status != 200 || res.JSON["contact"].(map[string]any)["email"] != "billing@tremblay.example.ca" || res.JSON["contact"].(map[string]any)["lastname"] != "Tremblay" {
			t.Fatalf("invoice patch: %d %s", res.Status, res.Raw)
		}
		agentError(t, s.Do(apptest.Request{Method: "PATCH", Path: "/partner/agent/customers/" + marieID + "/contact", Headers: mh,
			Body: map[string]string{"contact_type": "contract", "email": "priya.patel@example.ca"}}), 422, "validation_error")
		agentError(t, s.Do(apptest.Request{Method: "PATCH", Path: "/partner/agent/customers/" + marieID + "/contact", Headers: mh, Body: map[string]string{}}), 422, "validation_error")

		// Account links: Marie has a password (409 for activation); reset mails a link.
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + marieID + "/password-reset", Headers: mh,
			Body: map[string]string{"action": "resend_activation"}}), 409, "already_activated")
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + marieID + "/password-reset", Headers: mh}); res.Status != 202 || res.JSON["expires_in"] != 900.0 {
			t.Fatalf("password reset: %d %s", res.Status, res.Raw)
		}
		jh := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, jeanID, "jean.gagnon@example.ca"))
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + jeanID + "/password-reset", Headers: jh,
			Body: map[string]string{"action": "resend_activation"}}); res.Status != 202 || res.JSON["expires_in"] != 259200.0 {
			t.Fatalf("activation: %d %s", res.Status, res.Raw)
		}

		// Tickets: opened without a session, listed for the customer with one.
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/tickets", Headers: apptest.Key(fixture.DemoAgentKey), Body: map[string]string{
			"customer_id": marieID, "priority": "high", "ai_summary": "No internet since this morning", "ai_diagnosis": "Modem offline", "transcript": "Agent: hello"}})
		if res.Status != 201 || res.JSON["group"] != "Northwind Tier 1" || res.JSON["status"] != "open" || res.JSON["number"] == nil || res.JSON["ticket_id"] == nil {
			t.Fatalf("ticket: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/tickets", Headers: apptest.Key(fixture.DemoAgentKey),
			Body: map[string]string{"contact_email": "walk.in@example.ca", "priority": "normal", "ai_summary": "Asks about coverage"}}); res.Status != 201 {
			t.Fatalf("ticket by e-mail: %d %s", res.Status, res.Raw)
		}
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/tickets", Headers: apptest.Key(fixture.DemoAgentKey),
			Body: map[string]string{"ai_summary": "x", "priority": "urgent"}}), 422, "validation_error")
		ts := get(mh, marieID, "/tickets").JSON["tickets"].([]any)
		if len(ts) != 1 || ts[0].(map[string]any)["priority"] != "high" || strings.Contains(fmt.Sprint(ts), "Agent: hello") {
			t.Errorf("tickets: %v", ts)
		}
	}, func(c *config.Config) { c.CPEACSURL = acs.URL })
}

func TestAgentPlanChange(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.AwaitStartupBillRun(t) // the quote's proration depends on this month's invoice
		mh := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail))
		path := "/partner/agent/customers/" + marieID + "/plan-change"
		res := s.Do(apptest.Request{Method: "POST", Path: path + "/preview", Headers: mh, Body: map[string]string{"plan_version_id": fibre1000}})
		if res.Status != 200 || res.JSON["eligible"] != true || res.JSON["subscription_id"] != marieLine || res.JSON["recurring_change"] != 25.0 {
			t.Fatalf("preview: %d %s", res.Status, res.Raw)
		}
		// A signed quote token is planned and not shipped: the preview gives none.
		if _, ok := res.JSON["quote_id"]; ok {
			t.Fatalf("the preview carries a quote_id: %s", res.Raw)
		}
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: path, Headers: mh, Body: map[string]any{"plan_version_id": fibre1000}}), 400, "confirmation_required")
		// Only the JSON value true confirms: anything else is unconfirmed, not malformed.
		for _, confirm := range []any{false, "true", 1, nil, map[string]any{}} {
			agentError(t, s.Do(apptest.Request{Method: "POST", Path: path, Headers: mh, Body: map[string]any{"plan_version_id": fibre1000, "confirm": confirm}}), 400, "confirmation_required")
		}
		// The preview takes the apply call's body as it is (confirm and quote_id are ignored).
		if res := s.Do(apptest.Request{Method: "POST", Path: path + "/preview", Headers: mh,
			Body: map[string]any{"plan_version_id": fibre1000, "confirm": true, "quote_id": "q_echoed"}}); res.Status != 200 || res.JSON["quote_id"] != nil {
			t.Fatalf("preview with the apply body: %d %s", res.Status, res.Raw)
		}

		// A quote_id a client echoes is accepted and ignored, whatever it says; an
		// Idempotency-Key (not shipped either) changes nothing.
		keyed := agentHeaders(fixture.DemoAgentKey, mh["X-Verified-Session"])
		keyed["Idempotency-Key"] = "call-42"
		body := map[string]any{"plan_version_id": fibre1000, "confirm": true, "quote_id": "q_from_another_price"}
		first := s.Do(apptest.Request{Method: "POST", Path: path, Headers: keyed, Body: body})
		if _, quoted := first.JSON["quote_id"]; first.Status != 200 || first.JSON["plan_version_id"] != fibre1000 || first.JSON["status"] != "ACTIVE" || quoted {
			t.Fatalf("apply: %d %s", first.Status, first.Raw)
		}
		// Once per calendar day: a second apply is refused, the same one sent again included,
		// with its Idempotency-Key or without; the agent cannot override.
		for _, tt := range []struct {
			name    string
			headers map[string]string
			body    map[string]any
		}{
			{"the same apply with the same Idempotency-Key", keyed, body},
			{"the same apply without a key", mh, map[string]any{"plan_version_id": fibre1000, "confirm": true}},
			{"another plan with the same key", keyed, map[string]any{"plan_version_id": fibre150, "confirm": true}},
			{"another plan", mh, map[string]any{"plan_version_id": fibre150, "confirm": true}},
		} {
			res := s.Do(apptest.Request{Method: "POST", Path: path, Headers: tt.headers, Body: tt.body})
			if res.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%s: a replay header: %v", tt.name, res.Header)
			}
			agentError(t, res, 409, "plan_change_limit")
		}
		agentError(t, s.Do(apptest.Request{Method: "POST", Path: path + "/preview", Headers: mh, Body: map[string]any{"plan_version_id": fibre1000}}), 409, "plan_change_limit")
		var audits int
		if err := s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = 'subscription.plan_changed'`, marieLine).Scan(&audits); err != nil || audits != 1 {
			t.Errorf("audit entries: %d %v", audits, err)
		}
	})
}

// agentListedCodes are the agent error codes of docs/agent.md: invalid_state (a plan change on
// a line that is not ACTIVE) and the 405 of a wrong method.
var agentListedCodes = map[string]bool{
	"unauthorized": true, "forbidden": true, "verification_required": true, "verification_failed": true,
	"not_found": true, "validation_error": true, "confirmation_required": true, "plan_change_limit": true,
	"already_activated": true, "dependency_unconfigured": true, "upstream_unavailable": true, "internal": true,
	"invalid_state": true, "method_not_allowed": true,
}

func TestAgentErrorsCarryAListedCode(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := apptest.Key(fixture.DemoAgentKey)
		tests := []struct {
			name   string
			req    apptest.Request
			status int
			code   string
		}{
			{"wrong method on a customer", apptest.Request{Method: "DELETE", Path: "/partner/agent/customers/" + marieID, Headers: h}, 405, "method_not_allowed"},
			{"wrong method on the internal copy", apptest.Request{Method: "DELETE", Path: "/api/v1/agent/customers/" + marieID, Headers: h}, 405, "method_not_allowed"},
			{"wrong method on tickets", apptest.Request{Method: "PUT", Path: "/partner/agent/tickets", Headers: h, Body: map[string]string{}}, 405, "method_not_allowed"},
			{"wrong method on verify", apptest.Request{Method: "GET", Path: "/partner/agent/verify/issue", Headers: h}, 405, "method_not_allowed"},
			{"wrong method without a key", apptest.Request{Method: "DELETE", Path: "/partner/agent/customers/" + marieID}, 405, "method_not_allowed"},
			{"unknown agent path", apptest.Request{Method: "GET", Path: "/partner/agent/nope", Headers: h}, 404, "not_found"},
			{"unknown path under a customer", apptest.Request{Method: "GET", Path: "/api/v1/agent/customers/" + marieID + "/nope", Headers: h}, 404, "not_found"},
			{"body over 1 MiB", apptest.Request{Method: "POST", Path: "/partner/agent/tickets", Headers: h,
				Body: `{"ai_summary": "` + strings.Repeat("a", 1<<20) + `"}`}, 413, "validation_error"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(tt.req)
				agentError(t, res, tt.status, tt.code)
				if tt.status == 405 && res.Header.Get("Allow") == "" {
					t.Errorf("405 without Allow")
				}
			})
		}
	})
}

// A line that is not ACTIVE cannot change plan: the preview says why, and apply is a conflict
// with the line's state, 409 as at the partner endpoint (state conflicts
// are 409), with the agent code invalid_state and a message naming the state, never 422 or an
// unlisted code. Nothing changes.
func TestAgentPlanChangeOnALineThatIsNotActive(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		const jeanLine = "c1000000-0000-4000-8000-000000000003" // PENDING_INSTALL
		jh := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, jeanID, "jean.gagnon@example.ca"))
		path := "/partner/agent/customers/" + jeanID + "/plan-change"
		res := s.Do(apptest.Request{Method: "POST", Path: path + "/preview", Headers: jh, Body: map[string]string{"plan_version_id": fibre1000}})
		if res.Status != 200 || res.JSON["eligible"] != false || !strings.Contains(fmt.Sprint(res.JSON["blockers"]), "PENDING_INSTALL") {
			t.Fatalf("preview: %d %s", res.Status, res.Raw)
		}
		for _, tt := range []struct {
			name string
			path string
			body map[string]any
		}{
			{"the only line", path, map[string]any{"plan_version_id": fibre1000, "confirm": true}},
			{"the line named", path, map[string]any{"plan_version_id": fibre1000, "confirm": true, "subscription_id": jeanLine}},
			{"on /api/v1", "/api/v1/agent/customers/" + jeanID + "/plan-change", map[string]any{"plan_version_id": fibre1000, "confirm": true}},
		} {
			res = s.Do(apptest.Request{Method: "POST", Path: tt.path, Headers: jh, Body: tt.body})
			agentError(t, res, 409, "invalid_state")
			if e := res.JSON["error"].(map[string]any); !strings.Contains(fmt.Sprint(e["message"]), "PENDING_INSTALL") || e["fields"] != nil {
				t.Fatalf("%s: %s", tt.name, res.Raw)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM plan_changes WHERE subscription_id = ?`, jeanLine); n != 0 {
			t.Fatalf("%d plan changes recorded on the pending line", n)
		}
		// The partner endpoint answers the same case 409 too.
		res = s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriptions/" + jeanLine + "/change-plan",
			Headers: apptest.Key(storeKey), Body: map[string]string{"plan_version_id": fibre1000}})
		if res.Status != 409 {
			t.Fatalf("partner change-plan on a pending line: %d %s", res.Status, res.Raw)
		}
	})
}

// docs/agent.md, Scoping first: provider scoping is checked first (another provider's customer is
// 404 whatever the session says), then the verified session of a sensitive route (401); only then
// is a body that does not decode or validate answered 422. Each case runs on /partner and /api/v1.
func TestAgentChecksComeBeforeTheBody(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail)
		liam := verify(t, s, fixture.DemoOtherProviderKey, liamID, "liam.chen@example.ca")
		// Bodies that fail on a customer route: broken JSON, unknown field, wrong type, bad value.
		bad := []struct {
			method, path string
			body         any
		}{
			{"POST", "/notes", `{"note": `},
			{"POST", "/notes", map[string]any{"note": 5}},
			{"PATCH", "/contact", map[string]string{"foo": "x"}},
			{"PATCH", "/contact", map[string]string{}},
			{"POST", "/plan-change", map[string]any{"plan_version_id": 5, "confirm": true}},
			{"POST", "/plan-change", map[string]any{"plan_version_id": fibre1000, "confirm": true, "surprise": 1}},
			{"POST", "/plan-change/preview", map[string]any{"plan_version_id": 1000}},
			{"POST", "/password-reset", map[string]string{"action": "bogus"}},
			{"POST", "/password-reset", `[1, 2]`},
			{"POST", "/invoices/inv-1/resend", map[string]int{"copies": 2}},
		}
		type call struct {
			name    string
			key     string
			session string
			method  string
			path    string // after the surface prefix
			body    any
			status  int
			code    string
		}
		var calls []call
		for _, b := range bad {
			route := b.method + " " + b.path + fmt.Sprintf(" %v", b.body)
			calls = append(calls,
				call{"another provider's customer, no session: " + route, fixture.DemoAgentKey, "", b.method, "/customers/" + liamID + b.path, b.body, 404, "not_found"},
				call{"another provider's customer, its own session: " + route, fixture.DemoAgentKey, liam, b.method, "/customers/" + liamID + b.path, b.body, 404, "not_found"},
				call{"another key's customer with its session: " + route, fixture.DemoOtherProviderKey, marie, b.method, "/customers/" + marieID + b.path, b.body, 404, "not_found"},
				call{"own customer without a session: " + route, fixture.DemoAgentKey, "", b.method, "/customers/" + priyaID + b.path, b.body, 401, "verification_required"},
				call{"own customer, another customer's session: " + route, fixture.DemoAgentKey, marie, b.method, "/customers/" + priyaID + b.path, b.body, 401, "verification_required"},
				call{"own customer, verified: " + route, fixture.DemoAgentKey, marie, b.method, "/customers/" + marieID + b.path, b.body, 422, "validation_error"},
			)
		}
		// Routes that name the customer in the body (no session needed).
		for _, c := range []struct {
			path   string
			body   any
			status int
			code   string
		}{
			{"/verify/issue", map[string]any{"customer_id": liamID, "channel": 5}, 404, "not_found"},
			{"/verify/issue", map[string]any{"customer_id": liamID, "channel": "fax"}, 404, "not_found"},
			{"/verify/issue", map[string]any{"customer_id": liamID, "extra": "x"}, 404, "not_found"},
			{"/verify/issue", map[string]any{"customer_id": marieID, "channel": 5}, 422, "validation_error"},
			{"/verify/check", map[string]any{"customer_id": liamID, "code": 123456}, 404, "not_found"},
			{"/verify/check", map[string]any{"customer_id": liamID}, 404, "not_found"},
			{"/verify/check", map[string]any{"customer_id": marieID, "code": 123456}, 422, "validation_error"},
			{"/tickets", map[string]any{"customer_id": liamID, "priority": "urgent", "ai_summary": "x"}, 404, "not_found"},
			{"/tickets", map[string]any{"customer_id": liamID, "priority": "low", "ai_summary": "x", "foo": 1}, 404, "not_found"},
			{"/tickets", map[string]any{"customer_id": liamID, "priority": 3}, 404, "not_found"},
			{"/tickets", map[string]any{"customer_id": marieID, "priority": "urgent", "ai_summary": "x"}, 422, "validation_error"},
			{"/tickets", map[string]any{"contact_email": "walk.in@example.ca", "priority": "low", "ai_summary": "x", "foo": 1}, 422, "validation_error"},
		} {
			calls = append(calls, call{fmt.Sprintf("POST %s %v", c.path, c.body), fixture.DemoAgentKey, "", "POST", c.path, c.body, c.status, c.code})
		}
		for _, c := range calls {
			for _, prefix := range []string{"/partner/agent", "/api/v1/agent"} {
				res := s.Do(apptest.Request{Method: c.method, Path: prefix + c.path, Headers: agentHeaders(c.key, c.session), Body: c.body})
				if e, _ := res.JSON["error"].(map[string]any); res.Status != c.status || e == nil || e["code"] != c.code {
					t.Errorf("%s on %s: %d %s, want %d %s", c.name, prefix, res.Status, res.Raw, c.status, c.code)
				}
			}
		}
	})
}

// docs/agent.md: verify/issue {customer_id, channel}, verify/check {customer_id, code} and
// the ticket {customer_id | contact_email, priority, ai_summary, …} answer a missing field
// with 422 validation_error listing every offending field, never a 404 for an absent id.
func TestAgentRequiredFields(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		tests := []struct {
			name   string
			path   string
			body   any
			fields []string // all offending fields, exactly
		}{
			{"issue with an empty body", "/verify/issue", map[string]string{}, []string{"customer_id"}},
			{"issue with no body at all", "/verify/issue", "", []string{"customer_id"}},
			{"issue with null", "/verify/issue", "null", []string{"customer_id"}},
			{"issue with a channel only", "/verify/issue", map[string]string{"channel": "email"}, []string{"customer_id"}},
			{"issue with a blank customer_id", "/verify/issue", map[string]string{"customer_id": " "}, []string{"customer_id"}},
			{"issue with a bad channel and no customer", "/verify/issue", map[string]string{"channel": "fax"}, []string{"channel", "customer_id"}},
			{"check with an empty body", "/verify/check", map[string]string{}, []string{"code", "customer_id"}},
			{"check with null", "/verify/check", "null", []string{"code", "customer_id"}},
			{"check with a code only", "/verify/check", map[string]string{"code": "123456"}, []string{"customer_id"}},
			{"check without a code", "/verify/check", map[string]string{"customer_id": marieID}, []string{"code"}},
			{"ticket without priority", "/tickets", map[string]string{"customer_id": marieID, "ai_summary": "No internet"}, []string{"priority"}},
			{"ticket by e-mail without priority", "/tickets", map[string]string{"contact_email": "walk.in@example.ca", "ai_summary": "Coverage"}, []string{"priority"}},
			{"ticket without summary", "/tickets", map[string]string{"customer_id": marieID, "priority": "low"}, []string{"ai_summary"}},
			{"ticket with a blank summary", "/tickets", map[string]string{"customer_id": marieID, "priority": "low", "ai_summary": "  "}, []string{"ai_summary"}},
			{"empty ticket", "/tickets", map[string]string{}, []string{"ai_summary", "customer_id", "priority"}},
			{"ticket with a bad priority", "/tickets", map[string]string{"contact_email": "walk.in@example.ca", "priority": "urgent", "ai_summary": "x"}, []string{"priority"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, prefix := range []string{"/partner/agent", "/api/v1/agent"} {
					res := s.Do(apptest.Request{Method: "POST", Path: prefix + tt.path, Headers: apptest.Key(fixture.DemoAgentKey), Body: tt.body})
					agentError(t, res, 422, "validation_error")
					var got []string
					for f := range res.JSON["error"].(map[string]any)["fields"].(map[string]any) {
						got = append(got, f)
					}
					sort.Strings(got)
					if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
						t.Fatalf("%s: fields %v, want %v: %s", prefix, got, tt.fields, res.Raw)
					}
				}
			})
		}
		// Each of the three priorities opens a ticket.
		for _, p := range []string{"low", "normal", "high"} {
			res := s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/tickets", Headers: apptest.Key(fixture.DemoAgentKey),
				Body: map[string]string{"customer_id": marieID, "priority": p, "ai_summary": "Asks about " + p}})
			if res.Status != 201 {
				t.Fatalf("priority %s: %d %s", p, res.Status, res.Raw)
			}
		}
	})
}

// newestLink is the link of the newest mail to an address with the given subject.
func newestLink(t *testing.T, s *apptest.Service, op map[string]string, to, subject string) string {
	t.Helper()
	m := mailWithSubject(s, op, to, subject)
	if m == nil {
		t.Fatalf("no mail %q to %s: %v", subject, to, outboxTo(s, op, to))
	}
	return m["links"].([]any)[0].(string)
}

// tokenOf is the token a mailed link carries.
func tokenOf(link string) string { return link[strings.Index(link, "token=")+len("token="):] }

// localURL points a link the service wrote (SUBPROV_PUBLIC_URL is http://subprov.test in
// tests) at the test server.
func localURL(s *apptest.Service, link string) string {
	return strings.Replace(link, "http://subprov.test", s.URL, 1)
}

// docs/agent.md, Writes: password-reset's action password_reset (the default) is a 15-minute token,
// whether or not the holder has a portal login or a password yet (password reset
// 15 minutes, activation link 72 hours). A holder without a login gets one, so the reset link
// works at the portal's reset-confirm; a holder whose e-mail another login uses is refused,
// and that login is left alone.
func TestAgentPasswordResetIsAFifteenMinuteLink(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1205"}))
		h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1206", "plan_version_id": planFibre1000, "subscriber": person("new.neighbour@example.ca")}))
		idOf := func(email string) string {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/search?q=" + url.QueryEscape(email), Headers: apptest.Key(fixture.DemoAgentKey)})
			if ids := searchIDs(res); len(ids) == 1 {
				return ids[0]
			}
			t.Fatalf("search %s: %s", email, res.Raw)
			return ""
		}
		amelieID, neighbourID := idOf("amelie.roy@example.ca"), idOf("new.neighbour@example.ca")
		sessions := map[string]string{}
		send := func(id, email, action string) *apptest.Response {
			if sessions[id] == "" {
				sessions[id] = verify(t, s, fixture.DemoAgentKey, id, email)
			}
			body := map[string]string{}
			if action != "" {
				body["action"] = action
			}
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/customers/" + id + "/password-reset",
				Headers: agentHeaders(fixture.DemoAgentKey, sessions[id]), Body: body})
		}
		op := s.Operator()
		tests := []struct {
			name      string
			id, email string
			action    string
			expiresIn float64
			subject   string
		}{
			{"a holder without a portal login gets the reset link", jeanID, "jean.gagnon@example.ca", "", 900, "Reset your password"},
			{"a second holder without a login too", amelieID, "amelie.roy@example.ca", "password_reset", 900, "Reset your password"},
			{"resend_activation is the 72-hour link", amelieID, "amelie.roy@example.ca", "resend_activation", 259200, "Activate your internet account"},
			{"a login without a password gets the reset link", amelieID, "amelie.roy@example.ca", "", 900, "Reset your password"},
			{"a holder with a password gets the reset link", marieID, fixture.DemoSubscriberEmail, "", 900, "Reset your password"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := send(tt.id, tt.email, tt.action)
				if res.Status != 202 || res.JSON["expires_in"] != tt.expiresIn {
					t.Fatalf("%d %s, want 202 expires_in %v", res.Status, res.Raw, tt.expiresIn)
				}
				want := map[float64]string{900: "/portal/reset-password?token=", 259200: "/portal/activate?token="}[tt.expiresIn]
				if link := newestLink(t, s, op, tt.email, tt.subject); !strings.Contains(link, want) {
					t.Fatalf("link %s, want %s", link, want)
				}
			})
		}
		// Jean's reset link sets his first password at the portal's reset-confirm, and he logs in.
		link := newestLink(t, s, op, "jean.gagnon@example.ca", "Reset your password")
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset/confirm",
			Body: map[string]string{"token": tokenOf(link), "new_password": "jeans-new-password"}})
		if res.Status != 200 {
			t.Fatalf("reset-confirm: %d %s", res.Status, res.Raw)
		}
		s.Login("jean.gagnon@example.ca", "jeans-new-password")
		// Jean chose a password: activation is refused now.
		agentError(t, send(jeanID, "jean.gagnon@example.ca", "resend_activation"), 409, "already_activated")
		// Another login (without a subscriber record) already uses this holder's e-mail: 422
		// naming email, and that login keeps its password and its (absent) subscriber.
		res = send(neighbourID, "new.neighbour@example.ca", "")
		agentError(t, res, 422, "validation_error")
		if f := res.JSON["error"].(map[string]any)["fields"].(map[string]any); f["email"] == nil {
			t.Fatalf("fields: %s", res.Raw)
		}
		me := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me", Headers: s.Login("new.neighbour@example.ca", "demo-password-3")})
		if me.Status != 200 || me.JSON["subscriber"] != nil {
			t.Fatalf("the other login changed: %d %s", me.Status, me.Raw)
		}
		// The reset link lives 15 minutes of (dev) clock.
		link = newestLink(t, s, op, "amelie.roy@example.ca", "Reset your password")
		advance(t, s, op, 15*time.Minute+time.Second)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset/confirm",
			Body: map[string]string{"token": tokenOf(link), "new_password": "amelies-new-password"}}); res.Status != 400 {
			t.Fatalf("reset-confirm after 15 minutes: %d %s", res.Status, res.Raw)
		}
	})
}

// docs/provisioning.md, Plan change: once per calendar day, UTC for the partner endpoint,
// the provider's day for the agent (Northwind: America/Toronto, UTC-5 in
// November). A change through either surface counts against the other, each in its own
// calendar; both take effect on the provider's day, whose month the money is prorated in.
// Times are set on the dev clock.
func TestPlanChangeDayIsTheCallersCalendar(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		plans := []string{fibre1000, fibre150}
		next := 0 // the plan each change moves to, alternating
		agentPath := "/partner/agent/customers/" + marieID + "/plan-change"
		partnerPath := "/partner/subscriptions/" + marieLine + "/change-plan"
		steps := []struct {
			name     string
			at       string
			surface  string // agent or partner
			status   int
			day      string // the preview's effective_date: the provider's day, whichever calendar limits the surface
			eligible bool
		}{
			{"agent at 22:17 Toronto, Nov 26", "2026-11-27T03:17:00Z", "agent", 200, "2026-11-26", true},
			{"agent at 00:30 Toronto: a new local day", "2026-11-27T05:30:00Z", "agent", 200, "2026-11-27", true},
			{"partner the same UTC day as both", "2026-11-27T06:00:00Z", "partner", 409, "2026-11-27", false},
			{"agent at 18:00 Toronto, Nov 28", "2026-11-28T23:00:00Z", "agent", 200, "2026-11-28", true},
			{"agent at 19:30 Toronto, still Nov 28 (Nov 29 UTC)", "2026-11-29T00:30:00Z", "agent", 409, "2026-11-28", false},
			{"partner on Nov 29 UTC: the agent's change was Nov 28 UTC", "2026-11-29T00:45:00Z", "partner", 200, "2026-11-28", true},
			{"agent at 00:10 Toronto Nov 29: the partner's change is Nov 28 in Toronto", "2026-11-29T05:10:00Z", "agent", 200, "2026-11-29", true},
			{"partner on Dec 3 UTC (Dec 2 in Toronto)", "2026-12-03T01:00:00Z", "partner", 200, "2026-12-02", true},
			{"agent on Dec 3 in Toronto (Dec 4 UTC): the partner's change was Dec 2 there", "2026-12-04T02:00:00Z", "agent", 200, "2026-12-03", true},
			{"partner on Dec 4 UTC: the agent's change falls on it", "2026-12-04T04:00:00Z", "partner", 409, "2026-12-03", false},
		}
		for _, st := range steps {
			res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]string{"set": st.at}})
			if res.Status == 401 { // the operator's 8-hour token expired on the dev clock
				op = s.Operator()
				res = s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]string{"set": st.at}})
			}
			if res.Status != 200 {
				t.Fatalf("set clock: %d %s", res.Status, res.Raw)
			}
			to := plans[next%2]
			var preview *apptest.Response
			if st.surface == "agent" {
				// A fresh verified session, as verify/check gives, at this moment of dev clock.
				session, _, err := s.App.Auth.IssueVerifiedSession(fixture.DemoProviderID, marieID)
				if err != nil {
					t.Fatal(err)
				}
				h := agentHeaders(fixture.DemoAgentKey, session)
				preview = s.Do(apptest.Request{Method: "POST", Path: agentPath + "/preview", Headers: h, Body: map[string]string{"plan_version_id": to}})
				res = s.Do(apptest.Request{Method: "POST", Path: agentPath, Headers: h, Body: map[string]any{"plan_version_id": to, "confirm": true}})
			} else {
				preview = s.Do(apptest.Request{Method: "GET", Path: partnerPath + "/preview?plan_version_id=" + to, Headers: apptest.Key(storeKey)})
				res = s.Do(apptest.Request{Method: "POST", Path: partnerPath, Headers: apptest.Key(storeKey), Body: map[string]string{"plan_version_id": to}})
			}
			if preview.Status != 200 || preview.JSON["effective_date"] != st.day || preview.JSON["eligible"] != st.eligible {
				t.Errorf("%s: preview %d %s, want effective_date %s eligible %t", st.name, preview.Status, preview.Raw, st.day, st.eligible)
			}
			if !st.eligible && !strings.Contains(fmt.Sprint(preview.JSON["blockers"]), map[string]string{"agent": "America/Toronto", "partner": "UTC"}[st.surface]) {
				t.Errorf("%s: blockers %v do not name the calendar", st.name, preview.JSON["blockers"])
			}
			if res.Status != st.status {
				t.Errorf("%s: apply %d %s, want %d", st.name, res.Status, res.Raw, st.status)
			}
			if st.status == 409 && st.surface == "agent" {
				agentError(t, res, 409, "plan_change_limit")
			}
			if res.Status == 200 {
				next++
			}
		}
		if got := count(t, s, `SELECT COUNT(*) FROM plan_changes WHERE subscription_id = ?`, marieLine); got != 7 {
			t.Errorf("%d plan changes recorded, want 7", got)
		}
		// Racing calls through both surfaces on one day of both calendars record one change.
		setClock(t, s, op, "2026-12-10T17:00:00Z")
		session, _, _ := s.App.Auth.IssueVerifiedSession(fixture.DemoProviderID, marieID)
		to := plans[next%2]
		results := concurrently(8, func(i int) *apptest.Response {
			if i%2 == 0 {
				return s.Do(apptest.Request{Method: "POST", Path: agentPath, Headers: agentHeaders(fixture.DemoAgentKey, session),
					Body: map[string]any{"plan_version_id": to, "confirm": true}})
			}
			return s.Do(apptest.Request{Method: "POST", Path: partnerPath, Headers: apptest.Key(storeKey), Body: map[string]string{"plan_version_id": to}})
		})
		applied := 0
		for _, res := range results {
			switch {
			case res.Status == 200:
				applied++
			case res.Status >= 500:
				t.Errorf("racing plan change: %d %s", res.Status, res.Raw)
			}
		}
		if got := count(t, s, `SELECT COUNT(*) FROM plan_changes WHERE subscription_id = ?`, marieLine); applied != 1 || got != 8 {
			t.Errorf("racing plan changes: %d applied, %d recorded in all; want 1 and 8", applied, got)
		}
	})
}
