package httpapi_test

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/testdb"
)

// behindProxy starts the service behind a trusted proxy on loopback (SUBPROV_TRUSTED_PROXIES),
// so a test names the client of each request in X-Forwarded-For.
func behindProxy(c *config.Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
}

// loginFrom signs in to email with password; client, when set, is sent as X-Forwarded-For.
func loginFrom(s *apptest.Service, client, email, password string) *apptest.Response {
	var h map[string]string
	if client != "" {
		h = map[string]string{"X-Forwarded-For": client}
	}
	return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login", Headers: h,
		Body: map[string]string{"email": email, "password": password}})
}

// TestOneClientsFailuresDoNotRefuseAnotherLogin: a dozen wrong passwords for one login from one
// address are answered 401 and then 429 (the login is guessed no faster than 10 a minute from
// one address), and the right password of another login from the same address (a NAT, an
// office) signs in at once. Run with the in-process limiter and the one shared through Redis.
func TestOneClientsFailuresDoNotRefuseAnotherLogin(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, s *apptest.Service) {
		got := map[int]int{}
		for range 12 {
			got[loginFrom(s, "", "marie.tremblay@example.ca", "wrong-password").Status]++
		}
		if got[401] != 10 || got[429] != 2 {
			t.Fatalf("12 wrong passwords for one login: %v, want 10 × 401, 2 × 429", got)
		}
		if res := loginFrom(s, "", "priya.patel@example.ca", "demo-password-2"); res.Status != 200 {
			t.Fatalf("another login's right password from the same address: %d %s", res.Status, res.Raw)
		}
		if res := loginFrom(s, "", "marie.tremblay@example.ca", "demo-password-1"); res.Status != 429 || res.Header.Get("Retry-After") == "" {
			t.Fatalf("the guessed login from the guessing address: %d %v %s, want 429 with Retry-After", res.Status, res.Header, res.Raw)
		}
	}
	t.Run("in-process", func(t *testing.T) { apptest.Each(t, run) })
	t.Run("redis", func(t *testing.T) {
		run(t, apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema), sharedLimits(t)))
	})
}

// TestStrangersFailuresSlowGuessingWithoutLockingTheOwnerOut: failures on one login from many
// addresses throttle the login, never lock it. After 10 failures in a row each further attempt
// waits a delay that doubles (1 s, 2 s, …, at most a minute): an attempt before it is answered
// 429 with Retry-After, whatever the password, and checks nothing; the owner's right password
// sent once the Retry-After has passed signs in, seconds later on the service clock, not 15
// minutes. The throttle is kept in the database, so a second process on it sees it too.
func TestStrangersFailuresSlowGuessingWithoutLockingTheOwnerOut(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		s := apptest.Start(t, u, behindProxy)
		other := apptest.Start(t, u, behindProxy) // another process on the same database
		const email, password = "marie.tremblay@example.ca", "demo-password-1"
		stranger := func(i int) string { return "203.0.113." + strconv.Itoa(i) }
		for i := range 10 { // from ten addresses: no address reaches its own limit
			if res := loginFrom(s, stranger(i), email, "wrong-password"); res.Status != 401 {
				t.Fatalf("wrong password #%d: %d %s", i+1, res.Status, res.Raw)
			}
		}
		wait := func(res *apptest.Response, want time.Duration) {
			t.Helper()
			if res.Status != 429 || res.Header.Get("Retry-After") != strconv.Itoa(int(want.Seconds())) {
				t.Fatalf("throttled attempt: %d Retry-After %q %s, want 429 with Retry-After %v", res.Status, res.Header.Get("Retry-After"), res.Raw, want)
			}
		}
		// Throttled for 1 s after the 10th failure, on every process, for the right password too.
		wait(loginFrom(other, stranger(20), email, "wrong-password"), time.Second)
		wait(loginFrom(s, "198.51.100.7", email, password), time.Second)
		advance := func(d time.Duration) { s.DevClock.Advance(d); other.DevClock.Advance(d) } // one service clock
		advance(time.Second)
		if res := loginFrom(other, stranger(21), email, "wrong-password"); res.Status != 401 {
			t.Fatalf("a guess after the delay: %d %s", res.Status, res.Raw)
		}
		// The 11th failure doubles the delay.
		wait(loginFrom(s, "198.51.100.7", email, password), 2*time.Second)
		advance(2 * time.Second)
		if res := loginFrom(s, "198.51.100.7", email, password); res.Status != 200 {
			t.Fatalf("the owner after the delay: %d %s", res.Status, res.Raw)
		}
		// A success ends the run: the next wrong password is a plain 401 again.
		if res := loginFrom(s, stranger(22), email, "wrong-password"); res.Status != 401 {
			t.Fatalf("a wrong password after the owner signed in: %d %s", res.Status, res.Raw)
		}
	})
}

// TestForwardedForIsBelievedOnlyFromTrustedProxies: the limits count by the client address,
// which is the peer's unless the peer is a trusted proxy (SUBPROV_TRUSTED_PROXIES); then it is
// the right-most address of X-Forwarded-For that is not a trusted proxy. Without trusted
// proxies a client cannot pick a fresh address by writing the header.
func TestForwardedForIsBelievedOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		opts    []apptest.Option
		first   string // X-Forwarded-For of the 10 failures
		then    string // X-Forwarded-For of the next attempt
		believe bool
	}{
		{"no trusted proxy: the header is ignored", nil, "203.0.113.1", "203.0.113.2", false},
		{"a trusted proxy: the client it names counts", []apptest.Option{behindProxy}, "203.0.113.1", "203.0.113.2", true},
		{"a trusted proxy: a client's own header left of the real address is ignored", []apptest.Option{behindProxy},
			"198.51.100.1, 203.0.113.1", "198.51.100.2, 203.0.113.1", false},
		{"a trusted proxy: the right-most untrusted address past a chain of trusted ones", []apptest.Option{behindProxy},
			"203.0.113.1, 127.0.0.1", "203.0.113.2, 127.0.0.1", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				for i := range 10 {
					if res := loginFrom(s, tt.first, "nobody@example.ca", "wrong-password"); res.Status != 401 {
						t.Fatalf("failure #%d: %d %s", i+1, res.Status, res.Raw)
					}
				}
				s.DevClock.Advance(time.Second) // past the login's throttle, which counts every address
				res := loginFrom(s, tt.then, "nobody@example.ca", "wrong-password")
				if want := map[bool]int{true: 401, false: 429}[tt.believe]; res.Status != want {
					t.Fatalf("next attempt from X-Forwarded-For %q: %d, want %d", tt.then, res.Status, want)
				}
			}, tt.opts...)
		})
	}
}

// TestPasswordChangesEndOlderTokens: a password change, a password reset and an authorized
// user's removal end every access token of the login issued before, on the process that made
// the change and, within a second, on another process on the same database; a token issued
// after the change works. Both kinds of subscriber route are checked: GET /me (which reads the
// login with the account record) and any other.
func TestPasswordChangesEndOlderTokens(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		s := apptest.Start(t, u)
		other := apptest.Start(t, u)
		op := s.Operator()
		works := func(svc *apptest.Service, h map[string]string) bool {
			me := svc.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me", Headers: h}).Status
			users := svc.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/details", Headers: h}).Status
			if me != users {
				t.Fatalf("GET /me %d, GET /me/details %d: the two routes disagree", me, users)
			}
			return me == 200
		}
		// ended checks that h stops working on s at once and on other within a second.
		ended := func(what string, h map[string]string) {
			t.Helper()
			start := time.Now()
			if works(s, h) {
				t.Fatalf("%s: the older token still works", what)
			}
			apptest.Eventually(t, time.Second, what+": the older token refused on another process", func() bool { return !works(other, h) })
			if d := time.Since(start); d > time.Second {
				t.Fatalf("%s: another process refused the older token after %v, want within 1 s", what, d)
			}
		}
		const marie, priya = "marie.tremblay@example.ca", "priya.patel@example.ca"

		old := s.Login(marie, "demo-password-1")
		if !works(other, old) {
			t.Fatal("a fresh token does not work on another process")
		}
		if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: old,
			Body: map[string]string{"current_password": "demo-password-1", "new_password": "another-password-1"}}); res.Status != 200 {
			t.Fatalf("change: %d %s", res.Status, res.Raw)
		}
		ended("password change", old)
		marieNow := s.Login(marie, "another-password-1")
		if !works(s, marieNow) || !works(other, marieNow) {
			t.Fatal("a token issued after the change does not work")
		}

		old = s.Login(priya, "demo-password-2")
		if !works(other, old) {
			t.Fatal("a fresh token does not work on another process")
		}
		token := tokenOf(resetLink(t, s, op, priya))
		if res := other.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset/confirm",
			Body: map[string]string{"token": token, "new_password": "priyas-new-password"}}); res.Status != 200 {
			t.Fatalf("reset: %d %s", res.Status, res.Raw)
		}
		ended("password reset", old)
		s.Login(priya, "priyas-new-password")

		const elodie = "elodie.tremblay@example.ca"
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/authorized-users", Headers: marieNow, Body: person(elodie)})
		if res.Status != 201 {
			t.Fatalf("add authorized user: %d %s", res.Status, res.Raw)
		}
		id := res.JSON["id"].(string)
		setup := tokenOf(localURL(s, newestLink(t, s, op, elodie, "You have been added to an internet account")))
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/activate",
			Body: map[string]string{"token": setup, "password": "elodies-password"}}); res.Status != 200 {
			t.Fatalf("activate: %d %s", res.Status, res.Raw)
		}
		old = s.Login(elodie, "elodies-password")
		if !works(other, old) {
			t.Fatal("the authorized user's token does not work on another process")
		}
		if res := other.Do(apptest.Request{Method: "DELETE", Path: "/partner/subscriber/me/authorized-users/" + id, Headers: marieNow}); res.Status != 204 && res.Status != 200 {
			t.Fatalf("remove: %d %s", res.Status, res.Raw)
		}
		ended("authorized user removal", old)
	})
}
