package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// targetOperator creates (once) a viewer of providerID that no test signs in as, for routes
// that name an operator, and returns its id.
func targetOperator(t *testing.T, s *apptest.Service, providerID string) string {
	t.Helper()
	ctx := context.Background()
	email := fmt.Sprintf("target.%s@ops.test", providerID)
	hash, err := identity.TestPasswordCost.Hash("target-operator-password")
	if err != nil {
		t.Fatal(err)
	}
	op := &subprov.Operator{ID: store.NewID(), Email: email, Role: subprov.RoleViewer, ProviderID: providerID}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.UpsertOperator(ctx, op, hash, s.Clock.Now()) }); err != nil {
		t.Fatal(err)
	}
	o, _, err := s.Store.OperatorByEmail(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

const invalidLogin = "Invalid credentials or second factor"

// operatorLogin signs in over HTTP and returns the status and the bearer header (nil unless 200).
func operatorLogin(t *testing.T, s *apptest.Service, email, password, totp string) (int, map[string]string) {
	t.Helper()
	body := map[string]string{"email": email, "password": password}
	if totp != "" {
		body["totp"] = totp
	}
	res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/auth/login", Body: body})
	if res.Status != 200 {
		if res.Status == 401 && res.JSON["detail"] != invalidLogin {
			t.Errorf("login refusal %s, want %q", res.Raw, invalidLogin)
		}
		return res.Status, nil
	}
	return 200, map[string]string{"Authorization": "Bearer " + res.JSON["access_token"].(string)}
}

func TestOperatorsOverHTTP(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		nwAdmin := s.OperatorAs(subprov.RoleAdmin, northwind)
		create := func(h map[string]string, body map[string]any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators", Headers: h, Body: body})
		}
		tests := []struct {
			name   string
			by     map[string]string
			body   map[string]any
			status int
			fields []string
		}{
			{"every problem listed", admin, map[string]any{"email": "nope", "password": "short", "role": "owner", "provider_id": "nowhere"}, 422,
				[]string{"email", "password", "role", "provider_id"}},
			{"unknown field", admin, map[string]any{"email": "a@ops.test", "password": "long-enough-pass", "role": "viewer", "sudo": true}, 422, []string{"sudo"}},
			{"another provider from a provider's admin", nwAdmin, map[string]any{"email": "a@ops.test", "password": "long-enough-pass", "role": "viewer", "provider_id": mapleProvider}, 422, []string{"provider_id"}},
			{"platform-wide from a provider's admin", nwAdmin, map[string]any{"email": "a@ops.test", "password": "long-enough-pass", "role": "admin"}, 422, []string{"provider_id"}},
			{"own provider", nwAdmin, map[string]any{"email": "Desk@Northwind.test", "password": "long-enough-pass", "role": "support", "provider_id": northwind}, 201, nil},
			{"taken e-mail", admin, map[string]any{"email": "desk@northwind.test", "password": "long-enough-pass", "role": "viewer"}, 409, nil},
			{"platform-wide", admin, map[string]any{"email": "night@ops.test", "password": "long-enough-pass", "role": "admin", "provider_id": nil}, 201, nil},
		}
		ids := map[string]string{}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := create(tt.by, tt.body)
				if res.Status != tt.status {
					t.Fatalf("%d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				for _, f := range tt.fields {
					if !strings.Contains(string(res.Raw), `"`+f+`"`) {
						t.Errorf("422 does not name %s: %s", f, res.Raw)
					}
				}
				if res.Status == 201 {
					if res.JSON["email"] != strings.ToLower(tt.body["email"].(string)) || res.JSON["version"] != 1.0 || res.JSON["totp_enabled"] != false {
						t.Errorf("created %s", res.Raw)
					}
					ids[res.JSON["email"].(string)] = res.JSON["id"].(string)
				}
			})
		}
		desk, night := ids["desk@northwind.test"], ids["night@ops.test"]

		// Scope: Northwind's admin lists, reads and edits Northwind's operators only.
		list := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/operators?limit=1", Headers: nwAdmin})
		if list.Status != 200 || len(list.JSON["operators"].([]any)) != 1 || list.JSON["next_cursor"] == nil {
			t.Fatalf("first page %d %s", list.Status, list.Raw)
		}
		seen := 1
		for cur := list.JSON["next_cursor"]; cur != nil; seen++ {
			page := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/operators?limit=1&cursor=" + cur.(string), Headers: nwAdmin})
			for _, o := range page.JSON["operators"].([]any) {
				if o.(map[string]any)["provider_id"] != northwind {
					t.Errorf("Northwind's admin lists %v", o)
				}
			}
			cur = page.JSON["next_cursor"]
		}
		if seen != 3 { // its own admin, the desk and the fixture's support operator
			t.Errorf("Northwind's admin lists %d operators, want 3", seen)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/operators/" + night, Headers: nwAdmin}); res.Status != 404 {
			t.Errorf("a platform operator read by Northwind's admin: %d", res.Status)
		}

		// Edits: If-Match, a role, disabling, which ends tokens at once, and enabling.
		_, deskToken := operatorLogin(t, s, "desk@northwind.test", "long-enough-pass", "")
		patch := func(h map[string]string, id string, ifMatch string, body any) *apptest.Response {
			hh := map[string]string{"If-Match": ifMatch}
			for k, v := range h {
				hh[k] = v
			}
			return s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/" + id, Headers: hh, Body: body})
		}
		edits := []struct {
			name, ifMatch string
			body          any
			status        int
		}{
			{"nothing named", "", map[string]any{}, 422},
			{"a role that is none", "", map[string]any{"role": "owner"}, 422},
			{"stale", "7", map[string]any{"role": "billing"}, 409},
			{"role", "1", map[string]any{"role": "billing"}, 200},
			{"disable", "2", map[string]any{"disabled": true}, 200},
		}
		for _, e := range edits {
			if res := patch(nwAdmin, desk, e.ifMatch, e.body); res.Status != e.status {
				t.Fatalf("%s: %d, want %d: %s", e.name, res.Status, e.status, res.Raw)
			}
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?limit=1", Headers: deskToken}); res.Status != 401 {
			t.Fatalf("a disabled operator's token: %d", res.Status)
		}
		if st, _ := operatorLogin(t, s, "desk@northwind.test", "long-enough-pass", ""); st != 401 {
			t.Fatalf("a disabled operator's login: %d", st)
		}
		if res := patch(nwAdmin, desk, "", map[string]any{"disabled": false}); res.Status != 200 || res.JSON["disabled_at"] != nil || res.JSON["role"] != "billing" {
			t.Fatalf("enable: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?limit=1", Headers: deskToken}); res.Status != 401 {
			t.Fatalf("a token from before the disabling, once enabled again: %d", res.Status)
		}
		if st, _ := operatorLogin(t, s, "desk@northwind.test", "long-enough-pass", ""); st != 200 {
			t.Fatalf("login once enabled again: %d", st)
		}

		// The last active platform admin: the fixture's and night@ are two; with night@
		// disabled, the fixture's admin can be neither disabled nor demoted.
		if res := patch(admin, night, "", map[string]any{"disabled": true}); res.Status != 200 {
			t.Fatalf("disable one of two platform admins: %d %s", res.Status, res.Raw)
		}
		me := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/operators?limit=200", Headers: admin})
		var adminID string
		for _, o := range me.JSON["operators"].([]any) {
			if o.(map[string]any)["email"] == fixture.DemoOperatorEmail {
				adminID = o.(map[string]any)["id"].(string)
			}
		}
		for _, body := range []map[string]any{{"disabled": true}, {"role": "viewer"}} {
			if res := patch(admin, adminID, "", body); res.Status != 409 || res.JSON["detail"] != "Nobody may disable or demote the last active platform admin" {
				t.Fatalf("%v of the last platform admin: %d %s", body, res.Status, res.Raw)
			}
		}

		// The audit log has each change, the password only as changed.
		for _, action := range []string{"operator.created", "operator.updated"} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + desk + "&action=" + action, Headers: admin})
			if res.Status != 200 || len(res.JSON["entries"].([]any)) == 0 {
				t.Fatalf("audit %s: %s", action, res.Raw)
			}
			e := res.JSON["entries"].([]any)[0].(map[string]any)
			if e["provider_id"] != northwind || e["actor"].(map[string]any)["type"] != "operator" {
				t.Errorf("audit %s: %v", action, e)
			}
			if action == "operator.created" && fmt.Sprint(e["changes"].(map[string]any)["password"]) != "[changed changed]" {
				t.Errorf("created: password %v", e["changes"])
			}
		}
	})
}

func TestOperatorPasswordAndSecondFactorOverHTTP(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		email, password := "two.factors@ops.test", "first-long-password"
		res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators", Headers: admin,
			Body: map[string]any{"email": email, "password": password, "role": "viewer", "provider_id": mapleProvider}})
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Raw)
		}
		id := res.JSON["id"].(string)
		_, h := operatorLogin(t, s, email, password, "")

		// Password change: the current one first (a wrong one counts as a failed login),
		// then the new one; the change ends the caller's own token.
		changes := []struct {
			name   string
			body   map[string]string
			status int
		}{
			{"nothing", map[string]string{}, 422},
			{"wrong current", map[string]string{"current_password": "not-my-password", "new_password": "second-long-password"}, 400},
			{"short new", map[string]string{"current_password": password, "new_password": "short"}, 422},
			{"changed", map[string]string{"current_password": password, "new_password": "second-long-password"}, 204},
		}
		for _, c := range changes {
			if res := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/me/password", Headers: h, Body: c.body}); res.Status != c.status {
				t.Fatalf("%s: %d, want %d: %s", c.name, res.Status, c.status, res.Raw)
			}
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp", Headers: h}); res.Status != 401 {
			t.Fatalf("the token from before the password change: %d", res.Status)
		}
		if st, _ := operatorLogin(t, s, email, password, ""); st != 401 {
			t.Fatalf("the old password: %d", st)
		}
		password = "second-long-password"
		_, h = operatorLogin(t, s, email, password, "")

		// Second factor: start, confirm with a current code of the dev clock, then the login
		// needs a code, each accepted once, or a recovery code, each accepted once.
		code := startSecondFactor(t, s, "/api/v1/operators/me/totp", h)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp/confirm", Headers: h, Body: map[string]string{"code": "000000"}}); res.Status != 422 {
			t.Fatalf("confirm with a wrong code: %d %s", res.Status, res.Raw)
		}
		confirmed := code()
		res = s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp/confirm", Headers: h, Body: map[string]string{"code": confirmed}})
		if res.Status != 200 || len(res.JSON["recovery_codes"].([]any)) != 10 {
			t.Fatalf("confirm: %d %s", res.Status, res.Raw)
		}
		recovery := res.JSON["recovery_codes"].([]any)[3].(string)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp", Headers: h}); res.Status != 409 {
			t.Fatalf("start while on: %d", res.Status)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/operators/" + id, Headers: admin}); res.JSON["totp_enabled"] != true {
			t.Fatalf("read after enrolment: %s", res.Raw)
		}
		tryTOTPLogins(t, s, code, []totpLogin{
			{"wrong password and a right code", "wrong-long-password", "", 0, 401},
			{"no code", password, "", 0, 401},
			{"the code the confirmation used", password, confirmed, 0, 401},
			{"a wrong code", password, "123456", 0, 401},
			{"a code of the next step", password, "next", 30 * time.Second, 200},
			{"that code again", password, "again", 0, 401},
			{"a recovery code", password, recovery, 0, 200},
			{"that recovery code again", password, recovery, 0, 401},
		}, func(_, pw, c string) (int, string) {
			st, _ := operatorLogin(t, s, email, pw, c)
			return st, ""
		})
		s.DevClock.Advance(30 * time.Second)
		_, h = operatorLogin(t, s, email, password, code())

		// Reset by an admin: the operator's tokens end and its login needs no code.
		for _, by := range []map[string]string{s.OperatorAs(subprov.RoleAdmin, northwind), h} {
			if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/" + id + "/totp/reset", Headers: by}); res.Status != 404 && res.Status != 403 {
				t.Fatalf("reset by another provider's admin or by itself: %d", res.Status)
			}
		}
		res = s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/" + id + "/totp/reset", Headers: admin})
		if res.Status != 200 || res.JSON["totp_enabled"] != false {
			t.Fatalf("reset: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp", Headers: h}); res.Status != 401 {
			t.Fatalf("a token from before the reset: %d", res.Status)
		}
		if st, _ := operatorLogin(t, s, email, password, ""); st != 200 {
			t.Fatalf("login after the reset: %d", st)
		}

		// Each login is in the audit log, a failure for an unknown e-mail too.
		operatorLogin(t, s, "nobody.here@ops.test", "whatever-password", "")
		for _, q := range []string{"actor_id=" + id + "&action=operator.logged_in", "actor_id=" + id + "&action=operator.login_failed",
			"object_id=" + id + "&action=operator.totp_enrolled", "object_id=" + id + "&action=operator.totp_reset",
			"object_id=" + id + "&action=operator.password_changed", "action=operator.login_failed"} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?" + q, Headers: admin})
			if res.Status != 200 || len(res.JSON["entries"].([]any)) == 0 {
				t.Fatalf("audit %s: %s", q, res.Raw)
			}
		}
		res = s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?action=operator.login_failed&limit=1", Headers: admin})
		e := res.JSON["entries"].([]any)[0].(map[string]any)
		if a := e["actor"].(map[string]any); a["email"] != "nobody.here@ops.test" || a["id"] != nil || e["provider_id"] != nil {
			t.Fatalf("the unknown e-mail's failure: %v", e)
		}
	})
}

// TestOperatorTokensEndOnEveryProcess: two processes on one PostgreSQL database; disabling an
// operator, a change of its password and a reset of its second factor on one refuse its token
// on the other at once (each request reads the operator).
func TestOperatorTokensEndOnEveryProcess(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		if !strings.HasPrefix(s.Config.DatabaseURL, "postgres") {
			t.Skip("one SQLite file serves one process")
		}
		other := apptest.Start(t, s.Config.DatabaseURL)
		admin := s.Operator()
		const password = "process-long-password"
		tests := []struct {
			name string
			end  func(t *testing.T, id string, h map[string]string) *apptest.Response
		}{
			{"disabled", func(t *testing.T, id string, _ map[string]string) *apptest.Response {
				return s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/" + id, Headers: admin, Body: map[string]any{"disabled": true}})
			}},
			{"password changed", func(t *testing.T, _ string, h map[string]string) *apptest.Response {
				return s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/me/password", Headers: h,
					Body: map[string]string{"current_password": password, "new_password": "process-new-password"}})
			}},
			{"second factor reset", func(t *testing.T, id string, _ map[string]string) *apptest.Response {
				return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/" + id + "/totp/reset", Headers: admin})
			}},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				email := fmt.Sprintf("process%d@ops.test", i)
				res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators", Headers: admin,
					Body: map[string]any{"email": email, "password": password, "role": "viewer", "provider_id": northwind}})
				if res.Status != 201 {
					t.Fatalf("create: %d %s", res.Status, res.Raw)
				}
				id := res.JSON["id"].(string)
				_, here := operatorLogin(t, s, email, password, "")
				_, there := operatorLogin(t, other, email, password, "")
				if res := other.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?limit=1", Headers: there}); res.Status != 200 {
					t.Fatalf("before: %d", res.Status)
				}
				if res := tt.end(t, id, here); res.Status >= 300 {
					t.Fatalf("%s: %d %s", tt.name, res.Status, res.Raw)
				}
				if res := other.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?limit=1", Headers: there}); res.Status != 401 {
					t.Fatalf("the other process's token after the change: %d", res.Status)
				}
			})
		}
	})
}

// TestOperatorFailuresShareTheLoginLimits: a wrong current password at a password change and a
// wrong second factor at the login count as failed logins of the operator, under the limits of
// its login: after 10 of them from one address, the 11th attempt is 429 whatever it sends.
func TestOperatorFailuresShareTheLoginLimits(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		email, password := "limited@ops.test", "limited-long-password"
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators", Headers: admin,
			Body: map[string]any{"email": email, "password": password, "role": "support"}}); res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Raw)
		}
		_, h := operatorLogin(t, s, email, password, "")
		secret := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp", Headers: h}).JSON["secret"].(string)
		c, _ := identity.TOTPCode(secret, s.Clock.Now())
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/me/totp/confirm", Headers: h, Body: map[string]string{"code": c}}); res.Status != 200 {
			t.Fatalf("confirm: %d %s", res.Status, res.Raw)
		}
		for i := range 5 {
			if res := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/operators/me/password", Headers: h,
				Body: map[string]string{"current_password": "not-the-password", "new_password": "whatever-long-password"}}); res.Status != 400 {
				t.Fatalf("wrong current password %d: %d %s", i, res.Status, res.Raw)
			}
			if st, _ := operatorLogin(t, s, email, password, "000000"); st != 401 {
				t.Fatalf("wrong second factor %d: %d", i, st)
			}
		}
		s.DevClock.Advance(30 * time.Second)
		c, _ = identity.TOTPCode(secret, s.Clock.Now())
		if st, _ := operatorLogin(t, s, email, password, c); st != 429 {
			t.Fatalf("the right password and code after 10 failures: %d, want 429", st)
		}
	})
}

// A second-factor key the service cannot open (sealed under an earlier SUBPROV_SECRET) refuses
// the login as a wrong code does, 401, never a 500: the operator gets back in once an admin, or
// subprov operator add --reset-second-factor, resets it.
func TestOperatorSecondFactorUnderAnotherSecret(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		id := targetOperator(t, s, "")
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetSecondFactor(ctx, store.OperatorFactor(id), store.SecondFactor{Sealed: "v1.sealed-under-another-secret", Enabled: true})
		})
		if err != nil {
			t.Fatal(err)
		}
		email := "target.@ops.test"
		if status, _ := operatorLogin(t, s, email, "target-operator-password", "123456"); status != 401 {
			t.Fatalf("login with an unreadable key: %d, want 401", status)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/operators/" + id + "/totp/reset", Headers: s.Operator()}); res.Status != 200 {
			t.Fatalf("reset: %d %s", res.Status, res.Raw)
		}
		if status, _ := operatorLogin(t, s, email, "target-operator-password", ""); status != 200 {
			t.Fatalf("login after the reset: %d, want 200", status)
		}
	})
}
