package httpapi_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
)

// addAuthorizedUser gives Marie's account an authorized user with a portal login.
func addAuthorizedUser(t *testing.T, s *apptest.Service, email string) map[string]string {
	t.Helper()
	hash, _ := identity.TestPasswordCost.Hash("authorized-password")
	ctx := context.Background()
	_, err := rawdb.Writer(s.Store).ExecContext(ctx, s.Store.Dialect.Rebind(`INSERT INTO authorized_users (id, subscriber_id, firstname, lastname, email, created_at)
		VALUES ('au-1', 's1000000-0000-4000-8000-000000000001', 'Luc', 'Tremblay', ?, ?)`), email, time.Now().UTC())
	if err == nil {
		_, err = rawdb.Writer(s.Store).ExecContext(ctx, s.Store.Dialect.Rebind(`INSERT INTO accounts (id, email, provider_id, subscriber_id, authorized_user_id, password_hash, created_at)
			VALUES ('acc-au-1', ?, ?, 's1000000-0000-4000-8000-000000000001', 'au-1', ?, ?)`), email, northwind, hash, time.Now().UTC())
	}
	if err != nil {
		t.Fatal(err)
	}
	return s.Login(email, "authorized-password")
}

func TestInvoiceContact(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		nobody := s.Login("new.neighbour@example.ca", "demo-password-3")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		op := s.Operator()
		patch := func(h map[string]string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/invoice-contact", Headers: h, Body: body})
		}
		useHolder := func(h map[string]string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoice-contact/use-holder", Headers: h})
		}
		mails := func(to string) int { return count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = ?`, to) }

		res := patch(marie, map[string]any{"email": "billing@tremblay.example.ca", "company": "Tremblay Conseil"})
		c, _ := res.JSON["contact"].(map[string]any)
		if res.Status != 200 || res.JSON["state"] != "separate" || c["email"] != "billing@tremblay.example.ca" || c["firstname"] != "Marie" || c["phonenumber"] != "+1 514-555-0142" {
			t.Fatalf("separate contact: %d %s", res.Status, res.Raw)
		}
		if mails("marie.tremblay@example.ca") != 1 || mails("billing@tremblay.example.ca") != 1 {
			t.Fatal("old and new billing addresses must each be told")
		}
		// A field left out keeps its value; an empty string clears it; no e-mail change, no mail.
		res = patch(marie, map[string]any{"company": ""})
		c = res.JSON["contact"].(map[string]any)
		if c["company"] != "" || c["email"] != "billing@tremblay.example.ca" || mails("billing@tremblay.example.ca") != 1 {
			t.Fatalf("clear company: %s", res.Raw)
		}
		// The billing system being down does not undo the change.
		setFault(s, op, "billing_system", "down")
		res = patch(marie, map[string]any{"firstname": "M."})
		setFault(s, op, "billing_system", "up")
		if res.Status != 200 || count(t, s, `SELECT COUNT(*) FROM contacts WHERE role = 'invoice' AND firstname = 'M.'`) != 1 {
			t.Fatalf("billing system down: %d %s", res.Status, res.Raw)
		}
		for _, tt := range []struct {
			name   string
			res    *apptest.Response
			status int
			code   string
		}{
			{"bad e-mail", patch(marie, map[string]any{"email": "not-an-email"}), 422, "validation_error"},
			{"unknown field", patch(marie, map[string]any{"fax": "1"}), 422, "validation_error"},
			{"authorized user", patch(luc, map[string]any{"company": "x"}), 403, "holder_only"},
			{"authorized user use-holder", useHolder(luc), 403, "holder_only"},
			{"authorized user billing day", s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/billing-day", Headers: luc,
				Body: map[string]any{"subscription_id": "c1000000-0000-4000-8000-000000000001", "billing_day": 3}}), 403, "holder_only"},
			{"no subscriber record", patch(nobody, map[string]any{"company": "x"}), 404, "no_subscriber"},
			{"use holder", useHolder(marie), 200, ""},
			{"use holder again", useHolder(marie), 409, "not_separate"},
			{"a provider-split billing contact can be dropped too", useHolder(priya), 200, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", tt.res.Status, tt.status, tt.res.Raw)
				}
				if tt.code != "" && tt.res.JSON["detail"].(map[string]any)["code"] != tt.code {
					t.Fatalf("code: %s", tt.res.Raw)
				}
				if tt.status == 200 && (tt.res.JSON["state"] != "shared" || tt.res.JSON["contact"] == nil) {
					t.Fatalf("answer %s", tt.res.Raw)
				}
			})
		}
		if mails("billing@tremblay.example.ca") != 2 || mails("marie.tremblay@example.ca") != 2 {
			t.Fatal("use-holder must tell both addresses")
		}
	})
}

func TestMeAndDetails(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		nobody := s.Login("new.neighbour@example.ca", "demo-password-3")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		get := func(h map[string]string, path string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: path, Headers: h})
		}
		res := get(marie, "/partner/subscriber/me")
		subs := res.JSON["subscriptions"].([]any)
		if res.Status != 200 || res.JSON["subscriber"].(map[string]any)["customer_number"] != "0042-117" || len(subs) != 1 ||
			subs[0].(map[string]any)["subscription_id"] != "c1000000-0000-4000-8000-000000000001" || res.JSON["provider"].(map[string]any)["name"] != "Northwind Fibre" {
			t.Fatalf("GET /me: %s", res.Raw)
		}
		res = get(nobody, "/partner/subscriber/me")
		if res.Status != 200 || res.JSON["subscriber"] != nil || len(res.JSON["subscriptions"].([]any)) != 0 {
			t.Fatalf("GET /me without subscriber record: %s", res.Raw)
		}
		if res := get(nobody, "/partner/subscriber/me/details"); res.Status != 404 {
			t.Fatalf("details without subscriber record: %d", res.Status)
		}
		res = get(priya, "/partner/subscriber/me/details")
		if res.JSON["billing_contact_differs"] != true || res.JSON["invoice_contact"].(map[string]any)["email"] != "ap@pateldesign.example.ca" ||
			res.JSON["user"].(map[string]any)["contact"].(map[string]any)["email"] != "priya.patel@example.ca" {
			t.Fatalf("Priya's details: %s", res.Raw)
		}
		res = get(marie, "/partner/subscriber/me/details")
		if res.JSON["billing_contact_differs"] != false || res.JSON["invoice_contact"].(map[string]any)["email"] != "marie.tremblay@example.ca" {
			t.Fatalf("Marie's details: %s", res.Raw)
		}
		res = get(luc, "/partner/subscriber/me/details")
		if res.JSON["user"].(map[string]any)["contact"].(map[string]any)["firstname"] != "Luc" || res.JSON["contract_contact"].(map[string]any)["firstname"] != "Marie" {
			t.Fatalf("an authorized user's details: %s", res.Raw)
		}
	})
}

func TestOwnContactAndPassword(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		patch := func(h map[string]string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/contact", Headers: h, Body: body})
		}
		// Marie's billing contact is a copy of herself (same party): it follows her change.
		s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/invoice-contact", Headers: marie, Body: map[string]any{}})
		res := patch(marie, map[string]any{"phonenumber": "+1 514-555-0199"})
		if res.Status != 200 || res.JSON["contact"].(map[string]any)["phonenumber"] != "+1 514-555-0199" || res.JSON["contact"].(map[string]any)["email"] != "marie.tremblay@example.ca" {
			t.Fatalf("holder contact: %s", res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM contacts WHERE subscriber_id = 's1000000-0000-4000-8000-000000000001' AND phonenumber = '+1 514-555-0199'`); n != 2 {
			t.Fatalf("the same-person billing contact did not follow (%d rows)", n)
		}
		// Priya's billing contact was split off by the provider: left alone.
		patch(priya, map[string]any{"lastname": "Patel-Shah"})
		if n := count(t, s, `SELECT COUNT(*) FROM contacts WHERE role = 'invoice' AND lastname = 'Payable'`); n != 1 {
			t.Fatal("a split-off billing contact changed")
		}
		// The e-mail is the login: not a field here.
		if res := patch(marie, map[string]any{"email": "x@example.ca"}); res.Status != 422 {
			t.Fatalf("email in /me/contact: %d", res.Status)
		}
		// An authorized user changes their own record, not the holder's.
		res = patch(luc, map[string]any{"firstname": "Lucas", "company": "Acme"})
		if res.Status != 200 || res.JSON["contact"].(map[string]any)["firstname"] != "Lucas" || res.JSON["contact"].(map[string]any)["company"] != "Acme" ||
			count(t, s, `SELECT COUNT(*) FROM contacts WHERE role = 'holder' AND firstname = 'Marie'`) != 1 {
			t.Fatalf("authorized user contact: %s", res.Raw)
		}
		// Kept, as every field sent: the next read and the next patch of another field show it.
		if res := patch(luc, map[string]any{"lastname": "Tremblay-Roy"}); res.JSON["contact"].(map[string]any)["company"] != "Acme" {
			t.Fatalf("the authorized user's company was not kept: %s", res.Raw)
		}
		pw := func(h map[string]string, cur, next string) *apptest.Response {
			return s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: h,
				Body: map[string]string{"current_password": cur, "new_password": next}})
		}
		if res := pw(marie, "wrong-password!", "another-password-1"); res.Status != 400 || res.JSON["detail"].(map[string]any)["message"] != "Current password is incorrect" {
			t.Fatalf("wrong current password: %d %s", res.Status, res.Raw)
		}
		if res := pw(marie, "demo-password-1", "short"); res.Status != 422 {
			t.Fatalf("short password: %d", res.Status)
		}
		if res := pw(marie, "demo-password-1", "another-password-1"); res.Status != 200 || res.JSON["success"] != true {
			t.Fatalf("change: %d %s", res.Status, res.Raw)
		}
		s.Login("marie.tremblay@example.ca", "another-password-1")
	})
}

// TestPasswordChangeChecksTheCurrentPasswordFirst: PATCH /me/password answers a wrong current
// password with 400 "Current password is incorrect" whatever the new password is
// (docs/http.md); only a caller who knows the current password learns what is wrong with the new
// one (422 naming new_password). A request without the current password is 422 naming every
// missing or invalid field. Nothing changes until it all holds.
func TestPasswordChangeChecksTheCurrentPasswordFirst(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		for _, tt := range []struct {
			name   string
			body   map[string]any
			status int
			code   string
			fields []string // the fields a 422 names
		}{
			{"wrong current, short new", map[string]any{"current_password": "wrong-password", "new_password": "short"}, 400, "incorrect_password", nil},
			{"wrong current, empty new", map[string]any{"current_password": "wrong-password", "new_password": ""}, 400, "incorrect_password", nil},
			{"wrong current, no new", map[string]any{"current_password": "wrong-password"}, 400, "incorrect_password", nil},
			{"wrong current, good new", map[string]any{"current_password": "wrong-password", "new_password": "another-password-1"}, 400, "incorrect_password", nil},
			{"no current, short new", map[string]any{"new_password": "short"}, 422, "validation_error", []string{"current_password", "new_password"}},
			{"empty body", map[string]any{}, 422, "validation_error", []string{"current_password", "new_password"}},
			{"right current, short new", map[string]any{"current_password": "demo-password-1", "new_password": "short"}, 422, "validation_error", []string{"new_password"}},
			{"right current, no new", map[string]any{"current_password": "demo-password-1"}, 422, "validation_error", []string{"new_password"}},
			{"a new password of the wrong type", map[string]any{"current_password": "demo-password-1", "new_password": 12345678901}, 422, "validation_error", []string{"new_password"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: marie, Body: tt.body})
				d, _ := res.JSON["detail"].(map[string]any)
				if res.Status != tt.status || d["code"] != tt.code {
					t.Fatalf("%d %s, want %d %s", res.Status, res.Raw, tt.status, tt.code)
				}
				if tt.status == 400 && d["message"] != "Current password is incorrect" {
					t.Fatalf("message: %s", res.Raw)
				}
				fields, _ := d["fields"].(map[string]any)
				if len(fields) != len(tt.fields) {
					t.Fatalf("fields %v, want %v", fields, tt.fields)
				}
				for _, f := range tt.fields {
					if fields[f] == nil {
						t.Fatalf("fields %v lack %s", fields, f)
					}
				}
			})
		}
		s.Login("marie.tremblay@example.ca", "demo-password-1") // unchanged by every refusal
		if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: marie,
			Body: map[string]string{"current_password": "demo-password-1", "new_password": "another-password-1"}}); res.Status != 200 {
			t.Fatalf("change: %d %s", res.Status, res.Raw)
		}
		s.Login("marie.tremblay@example.ca", "another-password-1")
	})
}

// TestThrottleCountsLoginsAndPasswordChanges: the current password at PATCH /me/password
// counts like a login toward the login's throttle (docs/security.md): a wrong one is a failure,
// a right one ends the run. So a stolen access token guesses no faster than the login form.
// After ten failures in a row the next attempt waits 1 s, at both routes and for the right
// password too, and then succeeds; nothing is locked. The failures come from addresses of their
// own (behind a trusted proxy), so no address reaches its own limit.
func TestThrottleCountsLoginsAndPasswordChanges(t *testing.T) {
	t.Parallel()
	const email, password = "marie.tremblay@example.ca", "demo-password-1"
	type step struct {
		name   string
		times  int
		do     string // "login", "change", "change-short" with password, or "clock"
		with   string
		status int
	}
	wrongLogins := step{"five wrong logins", 5, "login", "wrong-password", 401}
	for _, sc := range []struct {
		name  string
		steps []step
		after string // the password that signs in at the end
	}{
		{"ten failures throttle both", []step{
			wrongLogins,
			{"five wrong current passwords: ten failures in a row", 5, "change", "wrong-password", 400},
			{"throttled: the right login waits", 1, "login", password, 429},
			{"throttled: the right current password waits", 1, "change", password, 429},
			{"a second later", 1, "clock", "", 200},
			{"the password changes", 1, "change", password, 200},
		}, "another-password-1"},
		{"a right current password starts the count again", []step{
			wrongLogins,
			{"four wrong current passwords: nine failures", 4, "change", "wrong-password", 400},
			{"the right current password, a new one too short", 1, "change-short", password, 422},
			{"five more wrong current passwords", 5, "change", "wrong-password", 400},
			{"not throttled: the right login signs in", 1, "login", password, 200},
		}, password},
	} {
		t.Run(sc.name, func(t *testing.T) {
			apptest.Each(t, func(t *testing.T, s *apptest.Service) {
				marie := s.Login(email, password)
				n := 0
				do := func(st step) int {
					n++
					client := "203.0.113." + strconv.Itoa(n) // an address of its own for each attempt
					switch st.do {
					case "login":
						return loginFrom(s, client, email, st.with).Status
					case "clock":
						s.DevClock.Advance(time.Second)
						return 200
					}
					next := "another-password-1"
					if st.do == "change-short" {
						next = "short"
					}
					return s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password",
						Headers: map[string]string{"Authorization": marie["Authorization"], "X-Forwarded-For": client},
						Body:    map[string]string{"current_password": st.with, "new_password": next}}).Status
				}
				for _, st := range sc.steps {
					for i := 0; i < st.times; i++ {
						if got := do(st); got != st.status {
							t.Fatalf("%s (#%d): %d, want %d", st.name, i+1, got, st.status)
						}
					}
				}
				s.Login(email, sc.after)
			}, behindProxy)
		})
	}
}

func TestAuthorizedUsers(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		op := s.Operator()
		add := func(h map[string]string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/authorized-users", Headers: h, Body: body})
		}
		person := func(email string) map[string]string {
			return map[string]string{"firstname": "Élodie", "lastname": "Tremblay", "email": email, "phonenumber": "514-555-0123"}
		}
		res := add(marie, person("Elodie.Tremblay@example.ca"))
		if res.Status != 201 || res.JSON["invitation_sent"] != true || res.JSON["email"] != "elodie.tremblay@example.ca" || res.JSON["id"] == "" {
			t.Fatalf("add: %d %s", res.Status, res.Raw)
		}
		elodie := res.JSON["id"].(string)
		// The set-up link (14 days) activates the login.
		out := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=elodie.tremblay@example.ca", Headers: op})
		link := out.JSON["messages"].([]any)[0].(map[string]any)["links"].([]any)[0].(string)
		token := link[len("http://subprov.test/portal/activate?token="):]
		for _, tt := range []struct {
			name   string
			res    *apptest.Response
			status int
			code   string
		}{
			{"e-mail with a portal login", add(marie, person("priya.patel@example.ca")), 409, "email_has_portal_account"},
			{"the same person twice", add(marie, person("elodie.tremblay@example.ca")), 409, "email_has_portal_account"},
			{"missing e-mail", add(marie, map[string]string{"firstname": "A", "lastname": "B"}), 422, "validation_error"},
			{"invalid e-mail", add(marie, person("nope")), 422, "validation_error"},
			{"resend while not activated", s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/authorized-users/" + elodie + "/resend-invite", Headers: marie}), 200, ""},
			{"another account's user is not found", s.Do(apptest.Request{Method: "DELETE", Path: "/partner/subscriber/me/authorized-users/" + elodie, Headers: priya}), 404, "not_found"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", tt.res.Status, tt.status, tt.res.Raw)
				}
				if tt.code != "" && tt.res.JSON["detail"].(map[string]any)["code"] != tt.code {
					t.Fatalf("code: %s", tt.res.Raw)
				}
			})
		}
		// The first link still works after a resend until it expires; activate with it.
		if r := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/activate", Body: map[string]string{"token": token, "password": "elodie-password-1"}}); r.Status != 200 {
			t.Fatalf("activate: %d %s", r.Status, r.Raw)
		}
		el := s.Login("elodie.tremblay@example.ca", "elodie-password-1")
		if r := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/authorized-users/" + elodie + "/resend-invite", Headers: marie}); r.Status != 409 ||
			r.JSON["detail"].(map[string]any)["code"] != "already_activated" {
			t.Fatalf("resend after activation: %d %s", r.Status, r.Raw)
		}
		// An authorized user reads the list but cannot manage it.
		if r := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/authorized-users", Headers: el}); r.Status != 200 || len(r.JSON["authorized_users"].([]any)) != 1 {
			t.Fatalf("list as authorized user: %d %s", r.Status, r.Raw)
		}
		for _, req := range []apptest.Request{
			{Method: "POST", Path: "/partner/subscriber/me/authorized-users", Headers: el, Body: person("x@example.ca")},
			{Method: "POST", Path: "/partner/subscriber/me/authorized-users/" + elodie + "/resend-invite", Headers: el},
			{Method: "DELETE", Path: "/partner/subscriber/me/authorized-users/" + elodie, Headers: el},
		} {
			if r := s.Do(req); r.Status != 403 || r.JSON["detail"].(map[string]any)["code"] != "holder_only" {
				t.Fatalf("%s %s as authorized user: %d %s", req.Method, req.Path, r.Status, r.Raw)
			}
		}
		// At most five.
		for i := 2; i <= 5; i++ {
			if r := add(marie, person(fmt.Sprintf("user%d@example.ca", i))); r.Status != 201 {
				t.Fatalf("user %d: %d %s", i, r.Status, r.Raw)
			}
		}
		if r := add(marie, person("user6@example.ca")); r.Status != 409 || r.JSON["detail"].(map[string]any)["code"] != "limit_reached" {
			t.Fatalf("sixth: %d %s", r.Status, r.Raw)
		}
		// Removing deletes the login: the person's token stops working.
		if r := s.Do(apptest.Request{Method: "DELETE", Path: "/partner/subscriber/me/authorized-users/" + elodie, Headers: marie}); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Raw)
		}
		if r := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me", Headers: el}); r.Status != 401 {
			t.Fatalf("a removed user's token: %d", r.Status)
		}
		if r := s.Do(apptest.Request{Method: "DELETE", Path: "/partner/subscriber/me/authorized-users/" + elodie, Headers: marie}); r.Status != 404 {
			t.Fatalf("delete twice: %d", r.Status)
		}
	})
}

func TestUsageAndStatusHistory(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC))
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		nobody := s.Login("new.neighbour@example.ca", "demo-password-3")
		get := func(h map[string]string, path string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: path, Headers: h})
		}
		// Marie's line started 2026-01-05: January to November, oldest first, with traffic.
		res := get(marie, "/partner/subscriber/me/usage")
		months := res.JSON["months"].([]any)
		if res.Status != 200 || res.JSON["status"] != "ok" || len(months) != 11 || months[0].(map[string]any)["month"] != "2026-01" ||
			months[10].(map[string]any)["month"] != "2026-11" {
			t.Fatalf("usage: %d %.400s", res.Status, res.Raw)
		}
		if months[3].(map[string]any)["download_gb"].(float64) <= 0 {
			t.Fatalf("a month in service has no traffic: %v", months[3])
		}
		// At most 60 months.
		rawdb.Writer(s.Store).Exec(`UPDATE subscriptions SET started_at = '2015-03-01' WHERE id = 'c1000000-0000-4000-8000-000000000001'`)
		res = get(marie, "/partner/subscriber/me/usage")
		months = res.JSON["months"].([]any)
		if len(months) != 60 || months[0].(map[string]any)["month"] != "2021-12" {
			t.Fatalf("capped usage: %d months from %v", len(months), months[0])
		}
		// A line without a switch port has no data and no months.
		if res := get(priya, "/partner/subscriber/me/usage"); res.JSON["status"] != "no_data" || len(res.JSON["months"].([]any)) != 0 {
			t.Fatalf("no port: %s", res.Raw)
		}
		if res := get(nobody, "/partner/subscriber/me/usage"); res.Status != 404 {
			t.Fatalf("no subscriber record: %d", res.Status)
		}
		// Status history: newest first, each with the four fields; never an error.
		res = get(marie, "/partner/subscriber/status-history")
		evs := res.JSON["events"].([]any)
		if res.Status != 200 {
			t.Fatalf("status history: %d", res.Status)
		}
		prev := "9999"
		for _, e := range evs {
			m := e.(map[string]any)
			if m["started_at"].(string) > prev || m["id"] == "" || (m["ongoing"] == true) != (m["resolved_at"] == nil) {
				t.Fatalf("event %v", m)
			}
			prev = m["started_at"].(string)
		}
		for _, h := range []map[string]string{priya, nobody} {
			if res := get(h, "/partner/subscriber/status-history"); res.Status != 200 || len(res.JSON["events"].([]any)) != 0 {
				t.Fatalf("status history without a port: %d %s", res.Status, res.Raw)
			}
		}
	})
}

// TestUsageMonthsAreInTheProvidersTimeZone: the months of GET /me/usage are the provider's
// calendar months, Toronto for Marie's Northwind line: at 03:00 UTC on
// 1 December it is still 30 November there, so the list ends with a November still to date;
// December starts at Toronto's midnight, 05:00 UTC.
func TestUsageMonthsAreInTheProvidersTimeZone(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		var novemberSoFar float64
		for _, tt := range []struct {
			name     string
			at       time.Time
			last     string
			months   int    // Marie's line started 2026-01-05
			november string // how November's traffic compares with its value at the row before
		}{
			{"evening of 30 November in Toronto, already December in UTC", time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), "2026-11", 11, ""},
			{"a minute before Toronto's midnight: November still counting", time.Date(2026, 12, 1, 4, 59, 0, 0, time.UTC), "2026-11", 11, "more"},
			{"Toronto's midnight: December begins and November is complete", time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC), "2026-12", 12, "more"},
			{"later on 1 December: November no longer grows", time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), "2026-12", 12, "same"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				s.DevClock.Set(tt.at)
				marie := s.Login("marie.tremblay@example.ca", "demo-password-1") // a token of the clock's hour
				res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/usage", Headers: marie})
				months, _ := res.JSON["months"].([]any)
				if res.Status != 200 || len(months) != tt.months || months[len(months)-1].(map[string]any)["month"] != tt.last {
					t.Fatalf("want %d months ending %s: %d %.600s", tt.months, tt.last, res.Status, res.Raw)
				}
				nov := months[10].(map[string]any)
				got := nov["download_gb"].(float64)
				if nov["month"] != "2026-11" {
					t.Fatalf("11th month %v", nov)
				}
				switch tt.november {
				case "more":
					if got <= novemberSoFar {
						t.Fatalf("November's traffic %v did not grow from %v before Toronto's month ended", got, novemberSoFar)
					}
				case "same":
					if got != novemberSoFar {
						t.Fatalf("November's traffic %v changed from %v after it ended in Toronto", got, novemberSoFar)
					}
				}
				novemberSoFar = got
			})
		}
	})
}

func TestPaymentMethod(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		liam := s.Login("liam.chen@example.ca", "demo-password-4")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		do := func(h map[string]string, method, path string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: method, Path: "/partner/subscriber/me/payment-method" + path, Headers: h, Body: body})
		}
		if r := do(marie, "GET", "", nil); r.Status != 200 || r.JSON["payment_method"].(map[string]any)["last4"] != "4444" {
			t.Fatalf("Marie's card: %d %s", r.Status, r.Raw)
		}
		if r := do(priya, "GET", "", nil); r.Status != 200 || r.JSON["payment_method"] != nil {
			t.Fatalf("no card yet: %d %s", r.Status, r.Raw)
		}
		// Save a card: setup, then confirm with a test card; it becomes the line's AutoPay card.
		setup := do(marie, "POST", "/setup", nil)
		if setup.Status != 200 || setup.JSON["setup_intent_id"] == "" {
			t.Fatalf("setup: %d %s", setup.Status, setup.Raw)
		}
		conf := do(marie, "POST", "/confirm", map[string]string{"setup_intent_id": setup.JSON["setup_intent_id"].(string), "test_card": "4242424242424242"})
		if conf.Status != 200 {
			t.Fatalf("confirm: %d %s", conf.Status, conf.Raw)
		}
		pm := conf.JSON["payment_method"].(map[string]any)["id"].(string)
		if r := do(marie, "GET", "", nil); r.JSON["payment_method"].(map[string]any)["id"] != pm {
			t.Fatalf("saved card not returned: %s", r.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = 'c1000000-0000-4000-8000-000000000001' AND payment_method_id = ?`, pm); n != 1 {
			t.Fatal("the new card is not the line's AutoPay card")
		}
		// A subscriber without a processor customer gets one created at setup.
		if r := do(priya, "POST", "/setup", nil); r.Status != 200 {
			t.Fatalf("setup creating a customer: %d %s", r.Status, r.Raw)
		}
		for _, tt := range []struct {
			name   string
			res    *apptest.Response
			status int
			code   string
		}{
			{"provider without processor connection", do(liam, "GET", "", nil), 409, "no_processor_connection"},
			{"setup without processor connection", do(liam, "POST", "/setup", nil), 409, "no_processor_connection"},
			{"authorized user", do(luc, "GET", "", nil), 403, "holder_only"},
			{"confirm without an id", do(marie, "POST", "/confirm", map[string]string{}), 422, "validation_error"},
			{"confirm an unknown setup", do(marie, "POST", "/confirm", map[string]string{"setup_intent_id": "seti_nope"}), 404, "not_found"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.res.Status != tt.status || tt.res.JSON["detail"].(map[string]any)["code"] != tt.code {
					t.Fatalf("status %d, want %d %s: %s", tt.res.Status, tt.status, tt.code, tt.res.Raw)
				}
			})
		}
	})
}

// TestCardSetupBelongsToItsAccount: a setup intent is confirmed only by the account whose
// processor customer it was opened for. Another account's intent (by id or client secret, with
// or without a processor customer of the caller's own) answers exactly like an unknown one, 404
// in the subscriber envelope, and changes nothing: no card on either customer, no card on
// either account or line, no audit entry, no charge retried.
func TestCardSetupBelongsToItsAccount(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		do := func(h map[string]string, path string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/payment-method" + path, Headers: h, Body: body})
		}
		confirm := func(h map[string]string, id string) *apptest.Response {
			return do(h, "/confirm", map[string]string{"setup_intent_id": id, "test_card": "4242424242424242"})
		}
		unknown := confirm(marie, "seti_nope")
		if unknown.Status != 404 || detailCode(unknown) != "not_found" {
			t.Fatalf("an unknown setup intent: %d %s", unknown.Status, unknown.Raw)
		}
		setup := do(marie, "/setup", nil)
		if setup.Status != 200 {
			t.Fatalf("Marie's setup: %d %s", setup.Status, setup.Raw)
		}
		maries := map[string]string{"id": setup.JSON["setup_intent_id"].(string), "client secret": setup.JSON["client_secret"].(string)}
		// What a confirmation would change, all of which must stay as it is.
		state := func() string {
			return fmt.Sprint(
				count(t, s, `SELECT COUNT(*) FROM processor_payment_methods`),
				count(t, s, `SELECT COUNT(*) FROM subscribers WHERE payment_method_id IS NOT NULL`),
				count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE payment_method_id IS NOT NULL`),
				count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'payment_method.saved'`))
		}
		before := state()
		check := func(t *testing.T, r *apptest.Response) {
			t.Helper()
			if r.Status != 404 || string(r.Raw) != string(unknown.Raw) {
				t.Fatalf("another account's setup intent: %d %s, want the unknown intent's 404 %s", r.Status, r.Raw, unknown.Raw)
			}
			if got := state(); got != before {
				t.Fatalf("cards, lines and audit changed: %s, was %s", got, before)
			}
			if r := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/payment-method", Headers: priya}); r.Status != 200 || r.JSON["payment_method"] != nil {
				t.Fatalf("Priya's card: %d %s", r.Status, r.Raw)
			}
		}
		// Priya has no processor customer yet.
		for name, id := range maries {
			t.Run("caller without a processor customer, by "+name, func(t *testing.T) { check(t, confirm(priya, id)) })
		}
		// Her own setup creates one: Marie's intent is still not hers.
		if r := do(priya, "/setup", nil); r.Status != 200 {
			t.Fatalf("Priya's setup: %d %s", r.Status, r.Raw)
		}
		before = state()
		for name, id := range maries {
			t.Run("caller with a processor customer of her own, by "+name, func(t *testing.T) { check(t, confirm(priya, id)) })
		}
		// Marie's own intent is still good for Marie.
		if r := confirm(marie, maries["id"]); r.Status != 200 || r.JSON["payment_method"].(map[string]any)["last4"] != "4242" {
			t.Fatalf("Marie confirming her own setup: %d %s", r.Status, r.Raw)
		}
	})
}
