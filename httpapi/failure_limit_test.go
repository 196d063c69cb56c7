package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/testdb"
)

// answer is a route's answer, JSON or page alike.
type answer struct {
	status int
	header http.Header
	body   string
}

// TestFailedLoginsAreLimitedNotLogins: the routes that take a password or a mailed link limit
// failed attempts from one client IP, not requests (docs/http.md, Rate limits). A dozen
// successful attempts in a row are all served, and so are a dozen refused for something other
// than a wrong secret (a missing field, a short new password, a form no browser sends); then
// failures refuse the address with the documented 429 (Retry-After; the bare detail, or the
// wait page on a page), a right attempt included: 10 failed links a minute, and 100 failed
// passwords a minute across logins (each failure here on a login of its own, so that no
// login's own limits come first). A password change always checks one login, whose own limit
// of 10 failures a minute from one address refuses first. Each route counts on its own, so
// every row starts afresh after the one before was refused; the subscriber login's /partner
// and /api/v1 forms share one count. Run with the in-process limiter and with the one shared
// through Redis.
func TestFailedLoginsAreLimitedNotLogins(t *testing.T) {
	t.Parallel()
	const linkLimit, clientLimit = 10, 100
	nobody := func(i int) string { return "nobody-" + strconv.Itoa(i) + "@example.ca" }
	run := func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		call := func(method, path string, h map[string]string, body any) answer {
			res := s.Do(apptest.Request{Method: method, Path: path, Headers: h, Body: body})
			return answer{res.Status, res.Header, string(res.Raw)}
		}
		page := func(path, contentType, form string) answer {
			status, h, body := postToPage(t, s.URL+path, contentType, form)
			return answer{status, h, body}
		}
		login := func(i int, email, password string) answer {
			path := "/partner/subscriber/auth/login"
			if i%2 == 1 {
				path = "/api/v1/subscriber/auth/login"
			}
			return call("POST", path, nil, map[string]string{"email": email, "password": password})
		}
		// Priya changes her password back and forth; the password a change starts from is
		// whichever she has now.
		const priya = "priya.patel@example.ca"
		priyaPasswords := []string{"demo-password-2", "priyas-new-password"}
		priyaHas := 0
		priyaBearer := s.Login(priya, priyaPasswords[0])
		change := func(current, next string) answer {
			return call("PATCH", "/partner/subscriber/me/password", priyaBearer, map[string]string{"current_password": current, "new_password": next})
		}
		const neighbour = "new.neighbour@example.ca" // a login of its own, so the other rows' accounts are untouched
		tests := []struct {
			name    string
			page    bool
			succeed func(i int) answer // nil when a success costs a mailed link of a kind a test cannot ask for a dozen times
			ok      int
			other   func() answer // refused for something other than a wrong secret
			refused int
			fail    func(i int) answer
			failed  int
			limit   int
		}{
			{
				// First: a success signs in again, which the login rows' failures would refuse.
				name: "password change",
				succeed: func(int) answer {
					res := change(priyaPasswords[priyaHas], priyaPasswords[1-priyaHas])
					if res.status == 200 { // the change ended the token it was made with
						priyaHas = 1 - priyaHas
						priyaBearer = s.Login(priya, priyaPasswords[priyaHas])
					}
					return res
				}, ok: 200,
				other: func() answer { return change("", "another-password") }, refused: 422,
				fail: func(int) answer { return change("wrong-password", "another-password") }, failed: 400, limit: 10,
			},
			{
				name:    "subscriber login, both forms",
				succeed: func(i int) answer { return login(i, fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass) }, ok: 200,
				other: func() answer { return login(0, fixture.DemoSubscriberEmail, "") }, refused: 422,
				// Unknown e-mails, one each: a login's own limits are not what is tested here.
				fail: func(i int) answer { return login(i, nobody(i), "wrong-password") }, failed: 401, limit: clientLimit,
			},
			{
				name: "operator login",
				succeed: func(int) answer {
					return call("POST", "/api/v1/auth/login", nil, map[string]string{"email": fixture.DemoOperatorEmail, "password": fixture.DemoOperatorPassword})
				}, ok: 200,
				other: func() answer {
					return call("POST", "/api/v1/auth/login", nil, map[string]string{"email": fixture.DemoOperatorEmail})
				}, refused: 422,
				fail: func(i int) answer {
					return call("POST", "/api/v1/auth/login", nil, map[string]string{"email": nobody(i), "password": "wrong-password"})
				}, failed: 401, limit: clientLimit,
			},
			{
				name: "password-reset confirm",
				succeed: func(int) answer {
					token := tokenOf(resetLink(t, s, op, neighbour))
					return call("POST", "/partner/subscriber/auth/password-reset/confirm", nil, map[string]string{"token": token, "new_password": "neighbours-new-password"})
				}, ok: 200,
				other: func() answer {
					return call("POST", "/partner/subscriber/auth/password-reset/confirm", nil, map[string]string{"token": "nope", "new_password": "short"})
				}, refused: 422,
				fail: func(int) answer {
					return call("POST", "/partner/subscriber/auth/password-reset/confirm", nil, map[string]string{"token": "nope", "new_password": "neighbours-new-password"})
				}, failed: 400,
			},
			{
				name: "activate",
				other: func() answer {
					return call("POST", "/partner/subscriber/auth/activate", nil, map[string]string{"token": "nope", "password": "short"})
				}, refused: 422,
				fail: func(int) answer {
					return call("POST", "/partner/subscriber/auth/activate", nil, map[string]string{"token": "nope", "password": "a-long-password"})
				}, failed: 400,
			},
			{
				name: "reset page", page: true,
				other: func() answer { return page("/portal/reset-password", "application/json", `{"token": "nope"}`) }, refused: 400,
				fail: func(int) answer {
					return page("/portal/reset-password", "application/x-www-form-urlencoded", "token=nope")
				}, failed: 410,
			},
			{
				name: "activation page", page: true,
				other: func() answer { return page("/portal/activate", "application/json", `{"token": "nope"}`) }, refused: 400,
				fail: func(int) answer { return page("/portal/activate", "application/x-www-form-urlencoded", "token=nope") }, failed: 410,
			},
		}
		for _, tt := range tests {
			limit := tt.limit
			if limit == 0 {
				limit = linkLimit
			}
			expect := func(what string, i int, got answer, want int) {
				t.Helper()
				if got.status != want {
					t.Fatalf("%s: %s #%d: %d, want %d: %.300s", tt.name, what, i+1, got.status, want, got.body)
				}
			}
			if tt.succeed != nil {
				for i := range limit + 2 {
					expect("success", i, tt.succeed(i), tt.ok)
				}
			}
			for i := range limit + 2 {
				expect("refusal that is no guess", i, tt.other(), tt.refused)
			}
			for i := range limit {
				expect("failure", i, tt.fail(i), tt.failed)
			}
			next := tt.fail
			if tt.succeed != nil {
				next = tt.succeed // the right secret is refused too
			}
			res := next(limit)
			expect("attempt after the failures", limit, res, 429)
			if res.header.Get("Retry-After") == "" {
				t.Fatalf("%s: 429 without Retry-After", tt.name)
			}
			if tt.page {
				if !strings.Contains(res.body, "<h1>Please wait a moment</h1>") {
					t.Fatalf("%s: 429 page %s", tt.name, res.body)
				}
			} else if res.body != "{\"detail\":\"Rate limit exceeded\"}\n" {
				t.Fatalf("%s: 429 %s", tt.name, res.body)
			}
		}
	}
	t.Run("in-process", func(t *testing.T) { apptest.Each(t, run) })
	t.Run("redis", func(t *testing.T) {
		run(t, apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema), sharedLimits(t)))
	})
}

// TestPasswordResetRequestsAreCountedPerAddress: a password-reset request has no failure to
// count (it answers 202 whether or not the e-mail has a login), and each may send a mail, so
// every request counts: 30 a minute from one client IP, the /partner and /api/v1 forms
// together, then the documented 429.
func TestPasswordResetRequestsAreCountedPerAddress(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		calls := 0
		reset := func() *apptest.Response {
			calls++
			path := "/partner/subscriber/auth/password-reset"
			if calls%2 == 0 {
				path = "/api/v1/subscriber/auth/password-reset"
			}
			return s.Do(apptest.Request{Method: "POST", Path: path, Body: map[string]string{"email": "nobody@example.ca"}})
		}
		if served := spendUntilLimited(t, "password-reset requests", reset, 202, 60); served != 30 {
			t.Fatalf("limited after %d requests, want 30", served)
		}
	})
}

// TestFailedLoginsSentAtOnceAreLimited: attempts sent at the same instant cannot all pass
// while none has failed yet. Each takes its place in the client's window for the login before
// the password is checked and keeps it when it fails, so of 30 wrong logins sent at once 10 are
// answered 401 and 20 are refused with 429, and the address is then refused that login, the
// right password too, until the failures leave the window; another login's right password from
// the address signs in. Run with the in-process limiter and with the one shared through Redis.
func TestFailedLoginsSentAtOnceAreLimited(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, s *apptest.Service) {
		const sent = 30
		statuses := make(chan int, sent)
		var wg sync.WaitGroup
		for range sent {
			wg.Go(func() {
				statuses <- loginFrom(s, "", fixture.DemoSubscriberEmail, "wrong-password").Status
			})
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for st := range statuses {
			got[st]++
		}
		if got[401] != 10 || got[429] != sent-10 {
			t.Fatalf("30 wrong logins at once: %v, want 10 × 401 and 20 × 429", got)
		}
		if res := loginFrom(s, "", fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass); res.Status != 429 {
			t.Fatalf("the right password after 10 failures: %d %s, want 429", res.Status, res.Raw)
		}
		if res := loginFrom(s, "", "priya.patel@example.ca", "demo-password-2"); res.Status != 200 {
			t.Fatalf("another login's right password from the address: %d %s, want 200", res.Status, res.Raw)
		}
	}
	t.Run("in-process", func(t *testing.T) { apptest.Each(t, run) })
	t.Run("redis", func(t *testing.T) {
		run(t, apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema), sharedLimits(t)))
	})
}
