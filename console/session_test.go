package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// sessionCookieOf is the Set-Cookie of the session cookie in an answer.
func sessionCookieOf(t *testing.T, p *apptest.Page) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == "subprov_console" {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", p.Header.Values("Set-Cookie"))
	return nil
}

func TestConsoleSessionCookie(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.NewConsole(t)
		p := c.SignIn(fixture.DemoSupportEmail, fixture.DemoSupportPassword, "")
		if p.Status != http.StatusSeeOther || p.Location() != "/console/" {
			t.Fatalf("sign-in: %d %q", p.Status, p.Location())
		}
		ck := sessionCookieOf(t, p)
		raw := strings.Join(p.Header.Values("Set-Cookie"), "\n")
		if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/console/" || ck.Secure {
			t.Errorf("session cookie over plain HTTP: %+v", ck)
		}
		if ck.MaxAge != 0 || !ck.Expires.IsZero() {
			t.Errorf("session cookie outlives the browser session: %s", raw)
		}
		var stored int
		if err := s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM console_sessions WHERE id_hash = ?`, ck.Value).Scan(&stored); err != nil || stored != 0 {
			t.Errorf("the cookie's value is stored as it is (%d, %v)", stored, err)
		}
		if home := c.Get("/console/"); home.Status != 200 || !strings.Contains(home.Body, fixture.DemoSupportEmail) {
			t.Errorf("home: %d", home.Status)
		}
	})
}

func TestConsoleSessionCookieSecureOverHTTPS(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		p := s.NewConsole(t).SignIn(fixture.DemoSupportEmail, fixture.DemoSupportPassword, "")
		if ck := sessionCookieOf(t, p); !ck.Secure {
			t.Errorf("session cookie of a service served at an https:// public URL is not Secure: %+v", ck)
		}
	}, func(c *config.Config) { c.PublicURL = "https://console.subprov.test" })
}

// TestConsoleCSRF: a form without its session's token, or with another's, is 403 and changes
// nothing; so is a sign-in without the sign-in form's token.
func TestConsoleCSRF(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.ConsoleAs(t, subprov.RoleSupport, "")
		other := s.ConsoleAs(t, subprov.RoleViewer, "")
		change := url.Values{"current_password": {apptest.OperatorPassword}, "new_password": {"a-brand-new-password"}}
		for name, token := range map[string][]string{"missing": nil, "empty": {""}, "wrong": {"x" + c.CSRF}, "another session's": {other.CSRF}} {
			f := url.Values{}
			for k, v := range change {
				f[k] = v
			}
			if token != nil {
				f["csrf"] = token
			}
			if p := c.PostRaw("/console/account/password", f); p.Status != http.StatusForbidden {
				t.Errorf("%s token: %d, want 403", name, p.Status)
			}
		}
		// Nothing changed: the old password still signs in, and the session still works.
		s.ConsoleSignIn(t, "support.platform@ops.test", apptest.OperatorPassword, "")
		if p := c.Get("/console/"); p.Status != 200 {
			t.Errorf("the session ended: %d", p.Status)
		}
		// The sign-in form's own token.
		anon := s.NewConsole(t)
		anon.Get("/console/sign-in")
		if p := anon.PostRaw("/console/sign-in", url.Values{"email": {fixture.DemoSupportEmail}, "password": {fixture.DemoSupportPassword}}); p.Status != http.StatusForbidden {
			t.Errorf("sign-in without its token: %d, want 403", p.Status)
		}
		if p := anon.PostRaw("/console/sign-in", url.Values{"csrf": {"guess"}, "email": {fixture.DemoSupportEmail}, "password": {fixture.DemoSupportPassword}}); p.Status != http.StatusForbidden {
			t.Errorf("sign-in with a wrong token: %d, want 403", p.Status)
		}
		if anon.Cookie("subprov_console") != "" {
			t.Error("a sign-in refused for its token signed in")
		}
	})
}

// TestConsoleSessionExpiry: a session ends after 30 minutes without a request, and 12 hours
// after its sign-in however busy, on the service's clock.
func TestConsoleSessionExpiry(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		idle := s.ConsoleAs(t, subprov.RoleViewer, "")
		busy := s.ConsoleAs(t, subprov.RoleSupport, "")
		signedIn := s.Clock.Now()
		s.DevClock.Advance(29 * time.Minute)
		for _, c := range []*apptest.Console{idle, busy} {
			if p := c.Get("/console/"); p.Status != 200 {
				t.Fatalf("after 29 minutes: %d", p.Status)
			}
		}
		s.DevClock.Advance(15 * time.Minute)
		if p := busy.Get("/console/"); p.Status != 200 {
			t.Fatalf("busy after 44 minutes: %d", p.Status)
		}
		s.DevClock.Advance(15*time.Minute + time.Second)
		if p := idle.Get("/console/"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/console/sign-in") {
			t.Errorf("after 30 minutes idle: %d %q, want the sign-in page", p.Status, p.Location())
		}
		if p := busy.Get("/console/"); p.Status != 200 {
			t.Fatalf("busy after 59 minutes: %d", p.Status)
		}
		// The busy session, seen every 25 minutes, lives until 12 hours after its sign-in.
		for s.Clock.Now().Sub(signedIn) < 12*time.Hour-25*time.Minute {
			s.DevClock.Advance(25 * time.Minute)
			if p := busy.Get("/console/"); p.Status != 200 {
				t.Fatalf("%s after sign-in: %d", s.Clock.Now().Sub(signedIn), p.Status)
			}
		}
		s.DevClock.Set(signedIn.Add(12 * time.Hour))
		if p := busy.Get("/console/"); p.Status != http.StatusSeeOther {
			t.Errorf("12 hours after sign-in: %d, want a redirect to the sign-in page", p.Status)
		}
	})
}

// TestConsoleSessionsSwept: the scheduler's sweep removes the sessions that ended and that no
// request came back to (idle too long, past their lifetime), and keeps the live one.
func TestConsoleSessionsSwept(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		sessions := func() int {
			var n int
			if err := s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM console_sessions`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		s.ConsoleAs(t, subprov.RoleViewer, "")
		busy := s.ConsoleAs(t, subprov.RoleSupport, "")
		if n := sessions(); n != 2 {
			t.Fatalf("%d sessions, want 2", n)
		}
		s.DevClock.Advance(31 * time.Minute) // the viewer's session is idle too long: nobody comes back to it
		if p := busy.Get("/console/"); p.Status != http.StatusSeeOther {
			t.Fatalf("busy after 31 minutes: %d, want the sign-in page", p.Status) // it ended too, and its request dropped it
		}
		busy = s.ConsoleAs(t, subprov.RoleSupport, "")
		apptest.Eventually(t, 15*time.Second, "the idle session removed", func() bool { return sessions() == 1 })
		if p := busy.Get("/console/"); p.Status != 200 {
			t.Fatalf("the live session: %d", p.Status)
		}
		s.DevClock.Advance(20 * time.Minute)
		busy.Get("/console/")
		s.DevClock.Advance(20 * time.Minute)
		if p := busy.Get("/console/"); p.Status != 200 {
			t.Fatalf("the live session after 40 minutes in use: %d", p.Status)
		}
		s.Settle(t)
		if n := sessions(); n != 1 {
			t.Errorf("%d sessions after the sweeps, want the live one", n)
		}
	})
}

// TestConsoleSessionEndsWithTheOperator: disabling the operator, a change of its password and
// a reset of its second factor, through the API, end its console session at its next request.
func TestConsoleSessionEndsWithTheOperator(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		for _, tc := range []struct {
			role   subprov.Role
			change func(id string)
		}{
			{subprov.RoleViewer, func(id string) {
				if r := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/" + id, Headers: admin, Body: map[string]any{"disabled": true}}); r.Status != 200 {
					t.Fatalf("disable: %d %s", r.Status, r.Raw)
				}
			}},
			{subprov.RoleBilling, func(string) {
				h := s.OperatorAs(subprov.RoleBilling, "")
				if r := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/me/password", Headers: h,
					Body: map[string]string{"current_password": apptest.OperatorPassword, "new_password": "another-long-password"}}); r.Status != 204 {
					t.Fatalf("password: %d %s", r.Status, r.Raw)
				}
			}},
			{subprov.RoleInstaller, func(id string) {
				if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/" + id + "/totp/reset", Headers: admin, Body: map[string]any{}}); r.Status != 200 {
					t.Fatalf("reset: %d %s", r.Status, r.Raw)
				}
			}},
		} {
			c := s.ConsoleAs(t, tc.role, "")
			op, _, err := s.Store.OperatorByEmail(context.Background(), string(tc.role)+".platform@ops.test")
			if err != nil {
				t.Fatal(err)
			}
			tc.change(op.ID)
			if p := c.Get("/console/"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/console/sign-in") {
				t.Errorf("%s: after the change %d %q, want the sign-in page", tc.role, p.Status, p.Location())
			}
		}
	})
}

// TestConsoleSignInFailureIsGeneric: an unknown e-mail, a wrong password and a missing second
// factor get one answer, with the e-mail kept and the password not.
func TestConsoleSignInFailureIsGeneric(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		var bodies []string
		for _, tc := range []struct{ email, password string }{
			{"nobody@ops.test", "whatever-password"},
			{fixture.DemoSupportEmail, "wrong-password-1"},
		} {
			p := s.NewConsole(t).SignIn(tc.email, tc.password, "123456")
			if p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, "The e-mail, password or code is not right.") {
				t.Errorf("%s: %d %s", tc.email, p.Status, p.Body)
			}
			if !strings.Contains(p.Body, `value="`+tc.email+`"`) || !strings.Contains(p.Body, `value="123456"`) || strings.Contains(p.Body, tc.password) {
				t.Errorf("%s: the e-mail and code are not kept, or the password is", tc.email)
			}
			bodies = append(bodies, strings.ReplaceAll(strings.ReplaceAll(p.Body, tc.email, ""), csrfOf(p.Body), ""))
		}
		if bodies[0] != bodies[1] {
			t.Error("an unknown e-mail and a wrong password answer differently")
		}
	})
}

// TestConsoleSignInSharesTheLoginsFailureLimit: the sign-in form and POST /api/v1/auth/login
// share one budget of 100 failures a minute per client IP. Failures at either count, each
// audited as operator.login_failed with the client's address; once the budget is spent the
// form answers 429 with the page saying how long to wait, checks nothing (the right password
// does not sign in, nothing is audited, no session starts), and so does the API.
func TestConsoleSignInSharesTheLoginsFailureLimit(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		counted := func(q string) int {
			var n int
			if err := s.Store.R().QueryRow(ctx, q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		failed := func() int {
			return counted(`SELECT COUNT(*) FROM audit_log WHERE action = 'operator.login_failed' AND ip = '127.0.0.1'`)
		}
		apiLogin := func(email, password string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/auth/login", Body: map[string]string{"email": email, "password": password}})
		}
		// Each e-mail once: the limits on each login (10 failures) are not what is reached.
		for i := range 60 {
			if res := apiLogin(fmt.Sprintf("nobody-%d@ops.test", i), "wrong-password"); res.Status != http.StatusUnauthorized {
				t.Fatalf("API failure #%d: %d %s", i+1, res.Status, res.Raw)
			}
		}
		form := s.NewConsole(t)
		for i := range 40 {
			if p := form.SignIn(fmt.Sprintf("stranger-%d@ops.test", i), "wrong-password", ""); p.Status != http.StatusUnauthorized {
				t.Fatalf("console failure #%d: %d", i+1, p.Status)
			}
		}
		if n := failed(); n != 100 {
			t.Fatalf("%d failures audited with the client's address, want 100, the API's and the form's alike", n)
		}
		sessions, logins := counted(`SELECT COUNT(*) FROM console_sessions`), counted(`SELECT COUNT(*) FROM audit_log WHERE action = 'operator.logged_in'`)
		p := form.SignIn(fixture.DemoOperatorEmail, fixture.DemoOperatorPassword, "")
		if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
			t.Fatalf("the right password over the budget: %d Retry-After %q, want 429 with Retry-After", p.Status, p.Header.Get("Retry-After"))
		}
		for _, want := range []string{"Too many failed sign-ins. Wait ", "before trying again", `value="` + fixture.DemoOperatorEmail + `"`, `<h1>Sign in</h1>`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("the refused sign-in's page does not show %q", want)
			}
		}
		if strings.Contains(p.Body, fixture.DemoOperatorPassword) || form.Cookie("subprov_console") != "" {
			t.Error("the refused sign-in kept the password or started a session")
		}
		if n := failed(); n != 100 || counted(`SELECT COUNT(*) FROM console_sessions`) != sessions ||
			counted(`SELECT COUNT(*) FROM audit_log WHERE action = 'operator.logged_in'`) != logins {
			t.Error("the refused sign-in was checked: audited or a session started")
		}
		if res := apiLogin(fixture.DemoOperatorEmail, fixture.DemoOperatorPassword); res.Status != http.StatusTooManyRequests {
			t.Errorf("the API's login after the form's failures: %d, want 429 (one budget)", res.Status)
		}
	})
}

func csrfOf(body string) string {
	_, after, _ := strings.Cut(body, `name="csrf" value="`)
	v, _, _ := strings.Cut(after, `"`)
	return v
}

// TestConsoleHeaders: every console answer carries the policy and the other headers, pages,
// redirects, errors and assets alike.
func TestConsoleHeaders(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		signedIn := s.ConsoleAs(t, subprov.RoleViewer, "")
		anon := s.NewConsole(t)
		home := signedIn.Get("/console/")
		asset := match(home.Body, `href="(/console/assets/[^"]+)"`)
		pages := map[string]*apptest.Page{
			"home": home, "sign-in": anon.Get("/console/sign-in"), "redirect": anon.Get("/console/"),
			"not found": signedIn.Get("/console/nowhere"), "asset": signedIn.Get(asset),
			"refused form": signedIn.PostRaw("/console/account/password", url.Values{}),
		}
		for name, p := range pages {
			h := p.Header
			if h.Get("Content-Security-Policy") != "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'" ||
				h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
				t.Errorf("%s (%d): headers %v", name, p.Status, h)
			}
			if name != "asset" && h.Get("Cache-Control") != "no-store" {
				t.Errorf("%s: Cache-Control %q", name, h.Get("Cache-Control"))
			}
		}
		if pages["asset"].Status != 200 || !strings.Contains(pages["asset"].Header.Get("Cache-Control"), "immutable") {
			t.Errorf("asset %s: %d %v", asset, pages["asset"].Status, pages["asset"].Header)
		}
		if strings.Contains(home.Body, "style=") || strings.Contains(home.Body, "<style") || strings.Contains(home.Body, "<script>") {
			t.Error("inline style or script in the page")
		}
		if p := s.NewConsole(t).Get("/console"); p.Status != http.StatusPermanentRedirect || p.Location() != "/console/" {
			t.Errorf("/console: %d %q", p.Status, p.Location())
		}
	})
}

// match is the first submatch of pattern in body, "" if none.
func match(body, pattern string) string {
	if m := regexp.MustCompile(pattern).FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}
