package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

func TestEnvelopesAndBadInput(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		big := `{"address": "` + strings.Repeat("a", 1<<20) + `"}`
		tests := []struct {
			name   string
			req    apptest.Request
			status int
			inBody string // a fragment the body must contain
		}{
			{"unknown partner route", apptest.Request{Method: "GET", Path: "/partner/nope"}, 404, `{"detail":"Not found"}`},
			{"unknown subscriber route", apptest.Request{Method: "GET", Path: "/partner/subscriber/nope"}, 404, `{"detail":{"code":"not_found"`},
			{"unknown agent route", apptest.Request{Method: "GET", Path: "/partner/agent/nope"}, 404, `"error":{"code":"not_found"`},
			{"unknown internal route", apptest.Request{Method: "GET", Path: "/api/v1/nope"}, 404, `{"detail":"Not found"}`},
			{"malformed JSON", apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey), Body: `{"address": `}, 422, `"loc":["body","body"]`},
			{"JSON that is not an object", apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey), Body: `[1,2]`}, 422, `must be a JSON object`},
			{"wrong type names the field", apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey), Body: `{"address": 12}`}, 422, `"loc":["body","address"],"msg":"want a string"`},
			{"unknown fields are all listed", apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey), Body: `{"address": "x", "foo": 1, "bar": 2}`}, 422, `"loc":["body","bar"]`},
			{"body over 1 MiB", apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey), Body: big}, 413, `larger than 1 MiB`},
			{"subscriber envelope for validation", apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login", Body: `{"email": ""}`}, 422, `{"detail":{"code":"validation_error"`},
			{"wrong method is 405", apptest.Request{Method: "DELETE", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey)}, 405, ``},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(tt.req)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %.300s", res.Status, tt.status, res.Raw)
				}
				if !strings.Contains(string(res.Raw), tt.inBody) {
					t.Fatalf("body %.300s lacks %s", res.Raw, tt.inBody)
				}
				if res.Header.Get("X-Request-Id") == "" {
					t.Fatal("no X-Request-Id")
				}
			})
		}
		res := s.Do(apptest.Request{Method: "GET", Path: "/healthz", Headers: map[string]string{"X-Request-Id": "partner-trace-42"}})
		if res.Header.Get("X-Request-Id") != "partner-trace-42" {
			t.Fatalf("request id not echoed: %q", res.Header.Get("X-Request-Id"))
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/healthz", Headers: map[string]string{"X-Request-Id": "bad id with spaces"}})
		if id := res.Header.Get("X-Request-Id"); id == "" || strings.Contains(id, " ") {
			t.Fatalf("unsafe request id kept: %q", id)
		}
	})
}

// TestAnswersBeforeARouteUseThePathsEnvelope: a wrong method on any served path is 405 with
// Allow in the envelope of the routes at that path, so every subscriber-route path
// (/partner/subscriber/..., /api/v1/invoices/{id}/pdf, /api/v1/credit-notes/{id}/pdf) answers
// {"detail": {"code": "method_not_allowed", "message"}}, while the dashboard's
// /api/v1/invoices/{id}/retry-charge keeps the partner envelope; and an unknown path under a
// subscriber prefix is 404 {"detail": {"code": "not_found", …}}. Every route is probed.
func TestAnswersBeforeARouteUseThePathsEnvelope(t *testing.T) {
	t.Parallel()
	routes := httpapi.Routes()
	served := map[string]map[string]bool{} // path -> methods
	for _, rt := range routes {
		if served[rt.Path] == nil {
			served[rt.Path] = map[string]bool{}
		}
		served[rt.Path][rt.Method] = true
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		probed := map[string]bool{}
		for _, rt := range routes {
			if probed[rt.Path] {
				continue
			}
			probed[rt.Path] = true
			method := ""
			for _, m := range []string{"PUT", "DELETE", "PATCH", "POST", "GET"} {
				if !served[rt.Path][m] {
					method = m
					break
				}
			}
			path := param.ReplaceAllString(rt.Path, "x")
			t.Run(method+" "+rt.Path, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: method, Path: path})
				if res.Status != 405 || res.Header.Get("Allow") == "" {
					t.Fatalf("%d (Allow %q) %.200s, want 405 with Allow", res.Status, res.Header.Get("Allow"), res.Raw)
				}
				checkEnvelope(t, res, rt.Surface, "method_not_allowed")
			})
		}
		// A body over 1 MiB on a subscriber route: 413 in the subscriber envelope too.
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: marie,
			Body: `{"current_password": "` + strings.Repeat("a", 1<<20) + `"}`})
		if res.Status != 413 {
			t.Fatalf("body over 1 MiB: %d %.200s", res.Status, res.Raw)
		}
		checkEnvelope(t, res, "subscriber", "too_large")
		for _, tt := range []struct {
			path    string
			surface string
		}{
			{"/partner/subscriber/me/nope", "subscriber"},
			{"/api/v1/subscriber/me/nope", "subscriber"},
			{"/api/v1/invoices/x/nope", "subscriber"},
			{"/api/v1/invoices/x", "subscriber"},
			{"/api/v1/credit-notes/x/nope", "subscriber"},
			{"/partner/agent/customers/x/nope", "agent"},
			{"/partner/provisioning/nope", "partner"},
			{"/api/v1/nope", "partner"},
		} {
			t.Run("GET "+tt.path, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: tt.path})
				if res.Status != 404 {
					t.Fatalf("%d %.200s, want 404", res.Status, res.Raw)
				}
				checkEnvelope(t, res, tt.surface, "not_found")
			})
		}
	})
}

// checkEnvelope checks that an error answer is in a surface's envelope, with code where the
// envelope carries one.
func checkEnvelope(t *testing.T, res *apptest.Response, surface, code string) {
	t.Helper()
	switch surface {
	case "subscriber":
		d, _ := res.JSON["detail"].(map[string]any)
		if d["code"] != code || d["message"] == "" || d["message"] == nil {
			t.Fatalf("want the subscriber envelope with code %s: %s", code, res.Raw)
		}
	case "agent":
		e, _ := res.JSON["error"].(map[string]any)
		if e["code"] != code || e["message"] == nil || e["request_id"] == nil {
			t.Fatalf("want the agent envelope with code %s: %s", code, res.Raw)
		}
	case "page":
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("want a page: %s %.200s", res.Header.Get("Content-Type"), res.Raw)
		}
	default:
		if d, ok := res.JSON["detail"].(string); !ok || d == "" {
			t.Fatalf("want {\"detail\": \"…\"}: %s", res.Raw)
		}
	}
}

func TestLogins(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		tests := []struct {
			name   string
			path   string
			email  string
			pw     string
			status int
		}{
			{"subscriber", "/partner/subscriber/auth/login", fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass, 200},
			{"subscriber e-mail is case-insensitive", "/partner/subscriber/auth/login", "Marie.Tremblay@Example.ca", fixture.DemoSubscriberPass, 200},
			{"subscriber on the internal surface", "/api/v1/subscriber/auth/login", fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass, 200},
			{"account without subscriber record", "/partner/subscriber/auth/login", "new.neighbour@example.ca", "demo-password-3", 200},
			{"wrong password", "/partner/subscriber/auth/login", fixture.DemoSubscriberEmail, "wrong-password", 401},
			{"unknown e-mail", "/partner/subscriber/auth/login", "nobody@example.ca", "whatever-password", 401},
			{"holder without a portal login", "/partner/subscriber/auth/login", "jean.gagnon@example.ca", "whatever-password", 401},
			{"operator", "/api/v1/auth/login", fixture.DemoOperatorEmail, fixture.DemoOperatorPassword, 200},
			{"operator wrong password", "/api/v1/auth/login", fixture.DemoOperatorEmail, "nope-nope-nope", 401},
			{"subscriber cannot log in as operator", "/api/v1/auth/login", fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass, 401},
		}
		var bodies []string
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "POST", Path: tt.path, Body: map[string]string{"email": tt.email, "password": tt.pw}})
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status == 200 {
					if res.JSON["token_type"] != "Bearer" || res.JSON["access_token"] == "" {
						t.Fatalf("token response %s", res.Raw)
					}
					return
				}
				if strings.HasPrefix(tt.path, "/partner/") {
					bodies = append(bodies, string(res.Raw))
					if !strings.Contains(string(res.Raw), `"code":"invalid_credentials"`) {
						t.Fatalf("body %s", res.Raw)
					}
				}
			})
		}
		for _, b := range bodies[1:] {
			if b != bodies[0] {
				t.Fatalf("wrong e-mail and wrong password must answer alike: %s vs %s", bodies[0], b)
			}
		}
		// Expiry: a subscriber token lives one hour of (dev) clock.
		h := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		op := s.Operator()
		s.DevClock.Advance(61 * time.Minute)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: h, Body: map[string]int{"advance_seconds": 1}}); res.Status != 401 {
			t.Fatalf("a subscriber token on a dashboard route: %d", res.Status)
		}
		_ = op
	})
}

func TestPasswordResetMailsASingleUseLink(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		// Unknown and known e-mails answer alike.
		for _, e := range []string{"nobody@example.ca", fixture.DemoSubscriberEmail} {
			res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": e}})
			if res.Status != 202 {
				t.Fatalf("reset for %s: %d", e, res.Status)
			}
		}
		var link string
		apptest.Eventually(t, 10*time.Second, "the reset mail to be delivered by the job", func() bool {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + fixture.DemoSubscriberEmail, Headers: op})
			msgs := res.JSON["messages"].([]any)
			if len(msgs) == 0 {
				return false
			}
			m := msgs[0].(map[string]any)
			link = m["links"].([]any)[0].(string)
			return m["status"] == "logged" && m["sent_at"] != nil
		})
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=nobody@example.ca", Headers: op})
		if n := len(res.JSON["messages"].([]any)); n != 0 {
			t.Fatalf("mailed an address without an account")
		}
		if !strings.HasPrefix(link, "http://subprov.test/portal/reset-password?token=") {
			t.Fatalf("link %q", link)
		}
		token := tokenOf(link)
		confirm := func(tok, pw string) int {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset/confirm",
				Body: map[string]string{"token": tok, "new_password": pw}}).Status
		}
		if st := confirm(token, "short"); st != 422 {
			t.Fatalf("short password: %d", st)
		}
		if st := confirm(token, "a-brand-new-password"); st != 200 {
			t.Fatalf("confirm: %d", st)
		}
		if st := confirm(token, "another-new-password"); st != 400 {
			t.Fatalf("second use of the token: %d", st)
		}
		s.Login(fixture.DemoSubscriberEmail, "a-brand-new-password")
		// An expired token (15 minutes) is refused.
		s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": fixture.DemoSubscriberEmail}})
		awaitPasswordResets(t, s)
		res = s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + fixture.DemoSubscriberEmail, Headers: op})
		link = res.JSON["messages"].([]any)[0].(map[string]any)["links"].([]any)[0].(string)
		s.DevClock.Advance(16 * time.Minute)
		if st := confirm(tokenOf(link), "yet-another-password"); st != 400 {
			t.Fatalf("expired token: %d", st)
		}
	})
}

// TestSettingAPasswordRetiresItsOtherLinks: mailed links are single use (docs/security.md), and
// once an account's password is set — by a set-up link, a reset link or a change in the
// portal — every other link of that account that would set it (set-up, activation, reset)
// stops working: an older set-up link cannot take over an account activated with a newer one.
func TestSettingAPasswordRetiresItsOtherLinks(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		// token is the token of the newest mail to addr whose link goes to path.
		token := func(t *testing.T, addr, path string) string {
			t.Helper()
			for _, m := range outboxTo(s, op, addr) {
				for _, l := range m["links"].([]any) {
					if link := l.(string); strings.Contains(link, path+"?token=") {
						return tokenOf(link)
					}
				}
			}
			t.Fatalf("no mail to %s links to %s", addr, path)
			return ""
		}
		post := func(path string, body any, h map[string]string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: path, Headers: h, Body: body})
		}
		activate := func(tok string) *apptest.Response {
			return post("/partner/subscriber/auth/activate", map[string]string{"token": tok, "password": "a-chosen-password-1"}, nil)
		}
		confirm := func(tok string) *apptest.Response {
			return post("/partner/subscriber/auth/password-reset/confirm", map[string]string{"token": tok, "new_password": "a-chosen-password-2"}, nil)
		}
		invite := func(t *testing.T, email string) (first, second string) {
			t.Helper()
			res := post("/partner/subscriber/me/authorized-users", map[string]string{"firstname": "Invitée", "lastname": "Tremblay", "email": email}, marie)
			if res.Status != 201 {
				t.Fatalf("add %s: %d %s", email, res.Status, res.Raw)
			}
			first = token(t, email, "/portal/activate")
			if r := post("/partner/subscriber/me/authorized-users/"+res.JSON["id"].(string)+"/resend-invite", nil, marie); r.Status != 200 {
				t.Fatalf("resend: %d %s", r.Status, r.Raw)
			}
			return first, token(t, email, "/portal/activate")
		}
		reset := func(t *testing.T, email string) string {
			t.Helper()
			if r := post("/partner/subscriber/auth/password-reset", map[string]string{"email": email}, nil); r.Status != 202 {
				t.Fatalf("reset %s: %d", email, r.Status)
			}
			awaitPasswordResets(t, s)
			return token(t, email, "/portal/reset-password")
		}
		for _, tt := range []struct {
			name string
			// links mails the links, sets the password with one of them (or otherwise) and
			// returns that answer and the call that tries another one of the account's links.
			links func(t *testing.T) (set *apptest.Response, other func() *apptest.Response)
		}{
			{"an older set-up link, once a newer one activated the account", func(t *testing.T) (*apptest.Response, func() *apptest.Response) {
				older, newer := invite(t, "ines@example.ca")
				return activate(newer), func() *apptest.Response { return activate(older) }
			}},
			{"a newer set-up link, once the older one activated the account", func(t *testing.T) (*apptest.Response, func() *apptest.Response) {
				older, newer := invite(t, "jules@example.ca")
				return activate(older), func() *apptest.Response { return activate(newer) }
			}},
			{"a set-up link, once a reset link set the password", func(t *testing.T) (*apptest.Response, func() *apptest.Response) {
				_, setup := invite(t, "karim@example.ca")
				return confirm(reset(t, "karim@example.ca")), func() *apptest.Response { return activate(setup) }
			}},
			{"an older reset link, once a newer one was used", func(t *testing.T) (*apptest.Response, func() *apptest.Response) {
				older := reset(t, "priya.patel@example.ca")
				newer := reset(t, "priya.patel@example.ca")
				return confirm(newer), func() *apptest.Response { return confirm(older) }
			}},
			{"a reset link, once the password was changed in the portal", func(t *testing.T) (*apptest.Response, func() *apptest.Response) {
				link := reset(t, "marie.tremblay@example.ca")
				return s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: marie,
						Body: map[string]string{"current_password": "demo-password-1", "new_password": "a-chosen-password-3"}}),
					func() *apptest.Response { return confirm(link) }
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				set, other := tt.links(t)
				if set.Status != 200 {
					t.Fatalf("setting the password: %d %s", set.Status, set.Raw)
				}
				res := other()
				if d, _ := res.JSON["detail"].(map[string]any); res.Status != 400 || d["code"] != "invalid_token" {
					t.Fatalf("the other link: %d %s, want 400 invalid_token", res.Status, res.Raw)
				}
			})
		}
		// The account activated with the newer link keeps the password it chose.
		s.Login("ines@example.ca", "a-chosen-password-1")
	})
}

func TestDevMode(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		sub := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		tests := []struct {
			name   string
			req    apptest.Request
			status int
		}{
			{"clock needs a dashboard JWT", apptest.Request{Method: "GET", Path: "/api/v1/dev/clock"}, 401},
			{"subscriber JWT is not a dashboard JWT", apptest.Request{Method: "GET", Path: "/api/v1/dev/clock", Headers: sub}, 401},
			{"read clock", apptest.Request{Method: "GET", Path: "/api/v1/dev/clock", Headers: op}, 200},
			{"advance", apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]int{"advance_seconds": 7200}}, 200},
			{"set garbage", apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]string{"set": "tomorrow"}}, 422},
			{"neither", apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]string{}}, 422},
			{"backwards", apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]int{"advance_seconds": -5}}, 422},
			{"faults", apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: op, Body: map[string]string{"switch": "port_in_use", "smtp": "down"}}, 200},
			{"unknown seam changes nothing", apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: op, Body: map[string]string{"switch": "ok", "toaster": "on"}}, 422},
			{"bad value", apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: op, Body: map[string]string{"processor": "sideways"}}, 422},
			{"outbox", apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox", Headers: op}, 200},
			{"set", apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]string{"set": "2030-01-01T00:00:00Z"}}, 200},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if res := s.Do(tt.req); res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
			})
		}
		if got := s.DevClock.Now(); got.Year() != 2030 {
			t.Fatalf("clock = %v", got)
		}
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/faults", Headers: s.Operator()})
		if res.JSON["switch"] != "port_in_use" || res.JSON["smtp"] != "down" {
			t.Fatalf("faults = %s (the refused change must not have applied)", res.Raw)
		}
	})
}

func TestDevRoutesAbsentWithoutDevMode(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		for _, p := range []string{"/api/v1/dev/clock", "/api/v1/dev/outbox", "/api/v1/dev/faults"} {
			if res := s.Do(apptest.Request{Method: "GET", Path: p, Headers: s.Operator()}); res.Status != 404 {
				t.Fatalf("%s without dev mode: %d", p, res.Status)
			}
		}
	}, func(c *config.Config) { c.Dev = false })
}

func TestSMTPFaultIsRetriedUntilDelivered(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: op, Body: map[string]string{"smtp": "down"}})
		s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": fixture.DemoSubscriberEmail}})
		status := func() string {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + fixture.DemoSubscriberEmail, Headers: op})
			msgs := res.JSON["messages"].([]any)
			if len(msgs) == 0 {
				return ""
			}
			return msgs[0].(map[string]any)["status"].(string)
		}
		apptest.Eventually(t, 10*time.Second, "a failed attempt", func() bool { return status() == "retrying" })
		s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: op, Body: map[string]string{"smtp": "up"}})
		apptest.Eventually(t, 15*time.Second, "delivery after the relay is back", func() bool { return status() == "logged" })
	})
}

func TestHealthReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		if res := s.Do(apptest.Request{Method: "GET", Path: "/healthz"}); res.Status != 200 {
			t.Fatalf("healthz %d", res.Status)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/readyz"}); res.Status != 200 || res.JSON["status"] != "ready" {
			t.Fatalf("readyz %d %s", res.Status, res.Raw)
		}
		s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=king", Headers: apptest.Key(storeKey)})
		res := s.Do(apptest.Request{Method: "GET", Path: "/metrics"})
		body := string(res.Raw)
		for _, want := range []string{
			`subprov_http_requests_total{route="GET /partner/serviceability/autocomplete",status="200"} 1`,
			`subprov_http_request_duration_seconds_bucket{route="GET /partner/serviceability/autocomplete"`,
			`subprov_jobs{state=`,
			`go_goroutines`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		// Secrets are stored hashed: no API key or password appears in the database.
		var n int
		_ = s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM api_keys WHERE key_hash = ? OR prefix = ?`, storeKey, storeKey).Scan(&n)
		if n != 0 {
			t.Fatal("an API key is stored in plaintext")
		}
		_ = s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM accounts WHERE password_hash NOT LIKE '$argon2id$%'`).Scan(&n)
		if n != 0 {
			t.Fatal("a password is not stored as an argon2id hash")
		}
	})
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ask := func(path, key string) func() *apptest.Response {
			return func() *apptest.Response {
				return s.Do(apptest.Request{Method: "POST", Path: path, Headers: apptest.Key(key), Body: map[string]string{"address": "120 King"}})
			}
		}
		// The /api/v1 mirror shares the route's bucket: calls alternating between the two forms
		// are limited after 120, not 240; the 121st within the minute is refused.
		calls := 0
		both := func() *apptest.Response {
			calls++
			if calls%2 == 0 {
				return ask("/api/v1/serviceability/check", storeKey)()
			}
			return ask("/partner/serviceability/check", storeKey)()
		}
		if served := spendUntilLimited(t, "check", both, 200, 180); served != 120 {
			t.Fatalf("limited after %d checks, want 120", served)
		}
		// Another key has its own bucket.
		if res := ask("/partner/serviceability/check", mapleKey)(); res.Status != 200 {
			t.Fatalf("another key was limited: %d", res.Status)
		}
		// Autocomplete has its own limit (300/min) and is still open.
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=king", Headers: apptest.Key(storeKey)}); res.Status != 200 {
			t.Fatalf("autocomplete limited by check's bucket: %d", res.Status)
		}
	})
}

// spendUntilLimited calls do until it answers 429 and returns how many calls were served
// before; every other answer must be want, and the 429 must come within max calls. A limit of
// N a minute serves exactly N calls in any minute, however slowly the run makes them (unless
// it takes a whole minute). The 429 must be the documented one: the bare detail, Retry-After,
// no X-RateLimit-* headers.
func spendUntilLimited(t *testing.T, what string, do func() *apptest.Response, want, max int) int {
	t.Helper()
	for i := range max {
		res := do()
		if res.Status == 429 {
			if string(res.Raw) != "{\"detail\":\"Rate limit exceeded\"}\n" || res.Header.Get("Retry-After") == "" {
				t.Fatalf("%s: 429 %s without its body or Retry-After", what, res.Raw)
			}
			for k := range res.Header {
				if strings.HasPrefix(strings.ToLower(k), "x-ratelimit") {
					t.Fatalf("%s: 429 carries %s", what, k)
				}
			}
			return i
		}
		if res.Status != want {
			t.Fatalf("%s, call %d: %d %s, want %d", what, i+1, res.Status, res.Raw, want)
		}
	}
	t.Fatalf("%s: no 429 within %d calls", what, max)
	return max
}

// TestRateLimitsSharedThroughRedis runs two replicas against one Redis: a key's calls through
// either draw from one bucket.
func TestRateLimitsSharedThroughRedis(t *testing.T) {
	t.Parallel()
	withRedis := sharedLimits(t)
	a := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema), withRedis)
	c := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema), withRedis)
	// Calls alternate between the replicas: one shared bucket is spent after 120, two
	// separate ones would serve 240.
	calls := 0
	both := func() *apptest.Response {
		calls++
		replica := a
		if calls%2 == 0 {
			replica = c
		}
		return replica.Do(apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey), Body: map[string]string{"address": "x"}})
	}
	if served := spendUntilLimited(t, "two replicas", both, 200, 180); served != 120 {
		t.Fatalf("limited after %d checks, want 120", served)
	}
}

// TestRateLimitBucketsArePerKey: each API key is its own bucket (docs/http.md, Rate
// limits), whatever its first characters: a provider's store key using up its allowance leaves
// the same provider's agent key, which starts alike (nwf_live_…), untouched. A key that is not
// valid draws from its client IP's bucket: it is answered 401, not the 429 of a key it
// resembles, and guessing keys from one address is still bounded (429 once the address's
// allowance is spent), without touching the valid keys sent from the same address. Run with
// the in-process limiter and with the one shared through Redis.
func TestRateLimitBucketsArePerKey(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, s *apptest.Service) {
		check := func(key string) func() *apptest.Response {
			return func() *apptest.Response {
				return s.Do(apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(key),
					Body: map[string]string{"address": "120 King"}})
			}
		}
		if served := spendUntilLimited(t, "the store key", check(storeKey), 200, 180); served != 120 {
			t.Fatalf("the store key was limited after %d checks, want 120", served)
		}
		nearMiss := storeKey[:len(storeKey)-1] + "9"
		for _, tt := range []struct {
			name   string
			key    string
			status int
		}{
			{"the same provider's agent key has its own bucket", fixture.DemoAgentKey, 200},
			{"a bogus key with the provider's prefix is unauthorized, not limited", "nwf_live_bogus", 401},
			{"a bogus key one character off the spent key is unauthorized", nearMiss, 401},
		} {
			if res := check(tt.key)(); res.Status != tt.status {
				t.Fatalf("%s: %d %s, want %d", tt.name, res.Status, res.Raw, tt.status)
			}
		}
		// Guessing from one address is bounded by that address's allowance.
		guesses := 0
		guess := func() *apptest.Response {
			guesses++
			return check(fmt.Sprintf("nwf_live_guess_%04d", guesses))()
		}
		if served := spendUntilLimited(t, "guessed keys", guess, 401, 180); served != 118 { // the two bogus keys above counted
			t.Fatalf("guessing was limited after %d calls, want 118", served)
		}
		for _, tt := range []struct {
			name string
			key  string
		}{
			{"a valid key from the guessing address is still served", fixture.DemoAgentKey},
			{"and another provider's", mapleKey},
		} {
			if res := check(tt.key)(); res.Status != 200 {
				t.Fatalf("%s: %d %s", tt.name, res.Status, res.Raw)
			}
		}
	}
	t.Run("in-process", func(t *testing.T) { apptest.Each(t, run) })
	t.Run("redis", func(t *testing.T) {
		run(t, apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema), sharedLimits(t)))
	})
}

// sharedLimits has a service keep its rate limits in the Redis of SUBPROV_TEST_REDIS_URL,
// under a prefix of its own test; the test is skipped without one.
func sharedLimits(t *testing.T) apptest.Option {
	t.Helper()
	redisURL := os.Getenv("SUBPROV_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("SUBPROV_TEST_REDIS_URL is not set")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "subprov-test-" + hex.EncodeToString(b) + ":"
	return func(c *config.Config) { c.RedisURL, c.RedisPrefix = redisURL, prefix }
}

// TestGracefulShutdownFinishesInFlightRequests cancels the service while a request is still
// sending its body; the request completes and Serve returns without error.
func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		s := apptest.Start(t, u)
		pr, pw := io.Pipe()
		req, _ := http.NewRequest("POST", s.URL+"/partner/location/", pr)
		req.Header.Set("Content-Type", "application/json")
		done := make(chan *http.Response, 1)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("in-flight request failed: %v", err)
				done <- nil
				return
			}
			done <- res
		}()
		_, _ = pw.Write([]byte(`{"location_hash": `))
		time.Sleep(200 * time.Millisecond)
		stopped := make(chan struct{})
		go func() { s.Shutdown(); close(stopped) }()
		time.Sleep(200 * time.Millisecond)
		_, _ = pw.Write([]byte(`"lh_7f3a9c1205"}`))
		pw.Close()
		res := <-done
		if res == nil || res.StatusCode != 200 {
			t.Fatalf("in-flight request: %+v", res)
		}
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Fatal("shutdown did not finish")
		}
	})
}

// TestGracefulShutdownFinishesInFlightJobs stops the service while a job (a webhook
// delivery) is running: the job completes before the process exits, so the event is
// delivered, not left for the next process.
func TestGracefulShutdownFinishesInFlightJobs(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		started := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(800 * time.Millisecond) // the delivery is in flight when shutdown begins
		}))
		defer srv.Close()
		s := apptest.Start(t, u)
		rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), srv.URL, northwind)
		res := (&hook{}).post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102}))
		if res.Status != 200 {
			t.Fatalf("order: %s", res.Raw)
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the delivery never started")
		}
		if err := s.Shutdown(); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		st, err := store.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var state string
		_ = st.R().QueryRow(context.Background(), `SELECT delivery_state FROM events WHERE type = 'subscription.pending_install'`).Scan(&state)
		if state != "delivered" {
			t.Fatalf("event %q after shutdown: the running job was cut short", state)
		}
	})
}
