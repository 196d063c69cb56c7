package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
)

// TestPreferences: the signed-in person's preferences start at the defaults, a PATCH changes
// only the fields sent, each person has their own, and a refused PATCH changes nothing.
func TestPreferences(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		luc := addAuthorizedUser(t, s, "luc.prefs@example.ca")
		get := func(h map[string]string) string {
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/preferences", Headers: h})
			if res.Status != 200 {
				t.Fatalf("GET: %d %s", res.Status, res.Raw)
			}
			return string(res.Raw)
		}
		const defaults = `{"language":"en","notifications":{"billing":true,"service":true}}`
		if got := get(marie); got != defaults+"\n" && got != defaults {
			t.Fatalf("defaults: %s", got)
		}
		changes := []struct {
			name string
			body any
			want string
		}{
			{"language only", map[string]any{"language": "fr"}, `{"language":"fr","notifications":{"billing":true,"service":true}}`},
			{"one notification", map[string]any{"notifications": map[string]any{"service": false}}, `{"language":"fr","notifications":{"billing":true,"service":false}}`},
			{"nothing", map[string]any{}, `{"language":"fr","notifications":{"billing":true,"service":false}}`},
			{"back to English", map[string]any{"language": "en", "notifications": map[string]any{"billing": false}}, `{"language":"en","notifications":{"billing":false,"service":false}}`},
		}
		for _, c := range changes {
			res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/preferences", Headers: marie, Body: c.body})
			if res.Status != 200 || strings.TrimSpace(string(res.Raw)) != c.want {
				t.Fatalf("%s: %d %s, want %s", c.name, res.Status, res.Raw, c.want)
			}
		}
		refusals := []struct {
			name  string
			body  any
			field string
		}{
			{"another language", map[string]any{"language": "de"}, "language"},
			{"an empty language", map[string]any{"language": ""}, "language"},
			{"a notification not a boolean", map[string]any{"notifications": map[string]any{"billing": "no"}}, "billing"},
			{"an unknown notification", map[string]any{"notifications": map[string]any{"sms": true}}, "sms"},
			{"an unknown field", map[string]any{"language": "fr", "theme": "dark"}, "theme"},
		}
		before := get(marie)
		for _, r := range refusals {
			t.Run(r.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/preferences", Headers: marie, Body: r.body})
				if res.Status != 422 || !strings.Contains(string(res.Raw), r.field) {
					t.Fatalf("%d %s, want 422 naming %s", res.Status, res.Raw, r.field)
				}
				if got := get(marie); got != before {
					t.Fatalf("a refusal changed the preferences: %s", got)
				}
			})
		}
		if got := get(luc); strings.TrimSpace(got) != defaults {
			t.Fatalf("the authorized user has the holder's preferences: %s", got)
		}
	})
}

// TestPrivacyExport: the export link holds the person's data and nobody else's (the holder's
// not the authorized user's, and the other way round), never a hash; it works once, and not
// after 72 hours.
func TestPrivacyExport(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		const lucEmail = "luc.export@example.ca"
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		luc := addAuthorizedUser(t, s, lucEmail)
		request := func(h map[string]string, to string) string {
			t.Helper()
			if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/privacy/export", Headers: h}); res.Status != 202 {
				t.Fatalf("request: %d %s", res.Status, res.Raw)
			}
			return localURL(s, newestLink(t, s, op, to, "Your personal data"))
		}
		download := func(link string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: strings.TrimPrefix(link, s.URL)})
		}
		people := []struct {
			name      string
			headers   map[string]string
			email     string
			person    string
			holds     []string
			holdsNone []string
		}{
			{"the holder", marie, fixture.DemoSubscriberEmail, "holder",
				[]string{fixture.DemoSubscriberEmail, "Marie", `"invoices"`, `"lines"`},
				[]string{lucEmail, "Luc", "password_hash", "$argon2"}},
			{"an authorized user", luc, lucEmail, "authorized_user",
				[]string{lucEmail, "Luc"},
				[]string{fixture.DemoSubscriberEmail, "Marie", `"invoices"`, `"lines"`, `"notes"`, "password_hash", "$argon2"}},
		}
		for _, p := range people {
			t.Run(p.name, func(t *testing.T) {
				link := request(p.headers, p.email)
				res := download(link)
				if res.Status != 200 || !strings.Contains(res.Header.Get("Content-Disposition"), "attachment") {
					t.Fatalf("download: %d %s", res.Status, res.Raw)
				}
				var doc map[string]any
				if err := json.Unmarshal(res.Raw, &doc); err != nil || doc["person"] != p.person {
					t.Fatalf("export %v: %s", err, res.Raw)
				}
				for _, w := range p.holds {
					if !strings.Contains(string(res.Raw), w) {
						t.Errorf("the export lacks %q: %s", w, res.Raw)
					}
				}
				for _, w := range p.holdsNone {
					if strings.Contains(string(res.Raw), w) {
						t.Errorf("the export holds %q: %s", w, res.Raw)
					}
				}
				if again := download(link); again.Status != 410 {
					t.Fatalf("the link used twice: %d", again.Status)
				}
			})
		}
		late := request(marie, fixture.DemoSubscriberEmail)
		s.DevClock.Advance(72*time.Hour + time.Second)
		if res := download(late); res.Status != 410 {
			t.Fatalf("after 72 hours: %d", res.Status)
		}
		if res := download(s.URL + "/portal/privacy/export?token=unknown"); res.Status != 410 {
			t.Fatalf("an unknown token: %d", res.Status)
		}
	})
}

// TestSubscriberSecondFactor: a portal login enrols a second factor; its login then needs a
// code (each accepted once, one step of drift) or a recovery code (each once), and answers a
// missing or wrong one as a wrong password; turning it off takes a right code and ends the
// login's tokens.
func TestSubscriberSecondFactor(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		email, password := fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass
		h := s.Login(email, password)
		code := startSecondFactor(t, s, "/partner/subscriber/me/totp", h)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/totp/confirm", Headers: h, Body: map[string]string{"code": "000000"}}); res.Status != 422 {
			t.Fatalf("confirm with a wrong code: %d %s", res.Status, res.Raw)
		}
		confirmed := code()
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/totp/confirm", Headers: h, Body: map[string]string{"code": confirmed}})
		if res.Status != 200 || len(res.JSON["recovery_codes"].([]any)) != 10 {
			t.Fatalf("confirm: %d %s", res.Status, res.Raw)
		}
		recovery := res.JSON["recovery_codes"].([]any)[4].(string)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/totp", Headers: h}); res.Status != 409 {
			t.Fatalf("start while on: %d", res.Status)
		}
		login := func(pw, totp string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login", Body: map[string]string{"email": email, "password": pw, "totp": totp}})
		}
		wrongPassword := login("wrong-long-password", "")
		tryTOTPLogins(t, s, code, []totpLogin{
			{"no code", password, "", 0, 401},
			{"the code the confirmation used", password, confirmed, 0, 401},
			{"a wrong code", password, "123456", 0, 401},
			{"a right code and a wrong password", "wrong-long-password", "next", 30 * time.Second, 401},
			{"a code of the next step", password, "next", 0, 200},
			{"that code again", password, "again", 0, 401},
			{"a code one step old", password, "previous", 30 * time.Second, 401}, // its step was accepted already
			{"a recovery code", password, recovery, 0, 200},
			{"that recovery code again", password, recovery, 0, 401},
		}, func(name, pw, c string) (int, string) {
			res := login(pw, c)
			if res.Status == 401 && string(res.Raw) != string(wrongPassword.Raw) {
				t.Fatalf("%s: %s, want the wrong password's answer %s", name, res.Raw, wrongPassword.Raw)
			}
			return res.Status, string(res.Raw)
		})
		s.DevClock.Advance(30 * time.Second)
		h = map[string]string{"Authorization": "Bearer " + login(password, code()).JSON["access_token"].(string)}
		off := func(c string) *apptest.Response {
			return s.Do(apptest.Request{Method: "DELETE", Path: "/partner/subscriber/me/totp", Headers: h, Body: map[string]string{"code": c}})
		}
		if res := off("123456"); res.Status != 400 || !strings.Contains(string(res.Raw), "invalid_code") {
			t.Fatalf("off with a wrong code: %d %s", res.Status, res.Raw)
		}
		s.DevClock.Advance(30 * time.Second)
		if res := off(code()); res.Status != 204 {
			t.Fatalf("off: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/preferences", Headers: h}); res.Status != 401 {
			t.Fatalf("a token from before turning it off: %d", res.Status)
		}
		if res := login(password, ""); res.Status != 200 {
			t.Fatalf("the password alone after turning it off: %d %s", res.Status, res.Raw)
		}
	})
}

// TestNotificationsHoldBackOnlyOptionalMail: with billing notifications off, the notices of a
// changed billing address are not sent (to the holder's address, and to a new address that is
// no login, for which the holder's choice stands), while a link the person asked for still is.
func TestNotificationsHoldBackOnlyOptionalMail(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		for _, tt := range []struct {
			name    string
			billing bool
			to      string
			sent    bool
		}{
			{"billing notices on", true, "accounts.on@example.ca", true},
			{"billing notices off", false, "accounts.off@example.ca", false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/preferences", Headers: marie,
					Body: map[string]any{"notifications": map[string]any{"billing": tt.billing}}}); res.Status != 200 {
					t.Fatalf("preferences: %d %s", res.Status, res.Raw)
				}
				if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/invoice-contact", Headers: marie,
					Body: map[string]any{"email": tt.to}}); res.Status != 200 {
					t.Fatalf("invoice contact: %d %s", res.Status, res.Raw)
				}
				if got := mailWithSubject(s, op, tt.to, "You now receive the invoices of an internet account") != nil; got != tt.sent {
					t.Errorf("notice to the new address sent: %v, want %v", got, tt.sent)
				}
				before := mailsWithSubject(s, op, fixture.DemoSubscriberEmail, "You now receive the invoices of an internet account")
				if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoice-contact/use-holder", Headers: marie}); res.Status != 200 {
					t.Fatalf("use holder: %d %s", res.Status, res.Raw)
				}
				after := mailsWithSubject(s, op, fixture.DemoSubscriberEmail, "You now receive the invoices of an internet account")
				if got := after > before; got != tt.sent {
					t.Errorf("notice to the holder sent: %v, want %v", got, tt.sent)
				}
				if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/privacy/export", Headers: marie}); res.Status != 202 {
					t.Fatalf("export: %d", res.Status)
				}
				if mailWithSubject(s, op, fixture.DemoSubscriberEmail, "Your personal data") == nil {
					t.Errorf("a link the person asked for was held back")
				}
			})
		}
	})
}

// mailsWithSubject counts the mails to an address with the given subject.
func mailsWithSubject(s *apptest.Service, op map[string]string, addr, subject string) int {
	n := 0
	for _, m := range outboxTo(s, op, addr) {
		if m["subject"] == subject {
			n++
		}
	}
	return n
}

// totpLogin is a login of a second factor's table: its password and code, how far the dev
// clock moves before it, and the status it is answered with. The code "next" is the current
// code after the move; "again" and "previous" are the code the login before sent.
type totpLogin struct {
	name, password, totp string
	advance              time.Duration
	status               int
}

// tryTOTPLogins sends the logins in order through login, which answers with the status and
// the body, and fails at the first answered with another status than its own.
func tryTOTPLogins(t *testing.T, s *apptest.Service, code func() string, logins []totpLogin, login func(name, password, totp string) (int, string)) {
	t.Helper()
	var last string
	for _, l := range logins {
		s.DevClock.Advance(l.advance)
		c := l.totp
		switch c {
		case "next":
			c = code()
		case "again", "previous":
			c = last
		}
		last = c
		if status, body := login(l.name, l.password, c); status != l.status {
			t.Fatalf("%s: %d %s, want %d", l.name, status, body, l.status)
		}
	}
}

// startSecondFactor starts enrolling a second factor at path (the operator's or the portal's)
// and returns what gives a current code of the key on the service's clock.
func startSecondFactor(t *testing.T, s *apptest.Service, path string, h map[string]string) func() string {
	t.Helper()
	enrol := s.Do(apptest.Request{Method: "POST", Path: path, Headers: h})
	secret, _ := enrol.JSON["secret"].(string)
	if enrol.Status != 200 || !strings.HasPrefix(enrol.JSON["otpauth_url"].(string), "otpauth://totp/") {
		t.Fatalf("start: %d %s", enrol.Status, enrol.Raw)
	}
	return func() string {
		c, err := identity.TOTPCode(secret, s.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}
