package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// call sends a JSON request and returns the status and the body.
func call(t *testing.T, method, url string, headers map[string]string, body any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

var accessToken = regexp.MustCompile(`"access_token":"([^"]+)"`)

// startDemo runs `subprov demo` on databaseURL until stop is called, and returns its base URL.
func startDemo(t *testing.T, databaseURL string) (base string, stop func()) {
	t.Helper()
	e := env(map[string]string{"DATABASE_URL": databaseURL, "SUBPROV_LOG_FORMAT": "json"})
	return startServer(t, []string{"demo", "--addr", "127.0.0.1:0"}, e, regexp.MustCompile(`running at (http://127\.0\.0\.1:\d+)`))
}

// startServer runs a server command until stop is called, and returns the base URL it prints
// (listening, on stdout or in its logs).
func startServer(t *testing.T, args []string, e func(string) string, listening *regexp.Regexp) (base string, stop func()) {
	t.Helper()
	base, _, stop = startServerOut(t, args, e, listening)
	return base, stop
}

// startServerOut is startServer that also returns what the command prints on stdout.
func startServerOut(t *testing.T, args []string, e func(string) string, listening *regexp.Regexp) (base string, stdout *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, e, &out, &errOut) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s returned %v", args[0], err)
			}
		case <-time.After(40 * time.Second):
			t.Fatalf("%s did not stop", args[0])
		}
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(out.String() + errOut.String()); m != nil {
			return m[1], &out, stop
		}
		select {
		case err := <-done:
			t.Fatalf("%s stopped: %v\n%s", args[0], err, errOut.String())
		default:
		}
	}
	stop()
	t.Fatalf("%s printed no base URL:\n%s", args[0], errOut.String())
	return "", nil, nil
}

func login(t *testing.T, base, email, password string) (int, map[string]string) {
	t.Helper()
	status, body := call(t, "POST", base+"/partner/subscriber/auth/login", nil, map[string]string{"email": email, "password": password})
	if m := accessToken.FindStringSubmatch(body); status == 200 && m != nil {
		return status, map[string]string{"Authorization": "Bearer " + m[1]}
	}
	return status, nil
}

// TestDemoRestartKeepsWhatWasDoneInIt: `subprov demo` loads its fixture at every start; a
// restart keeps a password the holder changed, a billing day and a plan changed through the
// API, and the demo's outage credit policy turned off, instead of putting the fixture's back.
func TestDemoRestartKeepsWhatWasDoneInIt(t *testing.T) {
	keepGCPercent(t)
	const marieLine, newPlan, newPassword = "c1000000-0000-4000-8000-000000000001", "pv100000-0000-4000-8000-000000001000", "marie-own-password-1"
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		base, stop := startDemo(t, u)
		status, marie := login(t, base, fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		if status != 200 {
			t.Fatalf("login: %d", status)
		}
		if status, body := call(t, "PATCH", base+"/partner/subscriber/me/password", marie,
			map[string]string{"current_password": fixture.DemoSubscriberPass, "new_password": newPassword}); status != 200 {
			t.Fatalf("change password: %d %s", status, body)
		}
		if _, marie = login(t, base, fixture.DemoSubscriberEmail, newPassword); marie == nil {
			t.Fatal("the new password does not log in")
		}
		// The demo's start invoices the month in the background; until it has, a day already
		// past is refused (409 billing_day_passed).
		var body string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			status, body = call(t, "PATCH", base+"/partner/subscriber/me/billing-day", marie,
				map[string]any{"subscription_id": marieLine, "billing_day": 7})
			if status != 409 || !strings.Contains(body, "billing_day_passed") || time.Now().After(deadline) {
				break
			}
		}
		if status != 200 {
			t.Fatalf("billing day: %d %s", status, body)
		}
		if status, body := call(t, "POST", base+"/partner/subscriptions/"+marieLine+"/change-plan", map[string]string{"X-API-Key": fixture.DemoStoreKey},
			map[string]any{"plan_version_id": newPlan}); status != 200 {
			t.Fatalf("change plan: %d %s", status, body)
		}
		stop()
		// The demo gives Northwind its outage credit policy on its first start; turned off, it
		// stays off after a restart.
		ctx := context.Background()
		s := testdb.Open(t, u)
		err := s.InTx(ctx, func(tx *store.Tx) error {
			p, err := tx.ProviderForUpdate(ctx, fixture.DemoProviderID)
			if err != nil {
				return err
			}
			if p.OutageCredit == nil || p.OutageCredit.MinHours != fixture.DemoOutageCreditHours {
				t.Errorf("the demo's outage credit policy is %+v, want %v hours", p.OutageCredit, fixture.DemoOutageCreditHours)
			}
			p.OutageCredit = nil
			return tx.UpdateProvider(ctx, p)
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}

		base, stop = startDemo(t, u)
		if status, _ := login(t, base, fixture.DemoSubscriberEmail, newPassword); status != 200 {
			t.Errorf("after a restart the password Marie set does not log in: %d", status)
		}
		if status, _ := login(t, base, fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass); status == 200 {
			t.Error("after a restart the fixture's password logs in again")
		}
		stop()
		s = testdb.Open(t, u)
		defer s.Close()
		if p, err := s.Provider(ctx, fixture.DemoProviderID); err != nil || p.OutageCredit != nil {
			t.Errorf("after a restart the outage credit policy turned off is %+v (%v)", p.OutageCredit, err)
		}
		line := testdb.Strings(t, s.R().Query, `SELECT plan_version_id || ' ' || CAST(billing_day AS TEXT) FROM subscriptions WHERE id = ?`, marieLine)
		if len(line) != 1 || line[0] != newPlan+" 7" {
			t.Errorf("after a restart Marie's line is %q, want plan %s and billing day 7", line, newPlan)
		}
	})
}

// TestSeedUpdate: seed loaded again keeps what changed since; seed --update overwrites it with
// the file's values and prints every change, row by row, on stdout, but never changes a
// password a login's owner set.
func TestSeedUpdate(t *testing.T) {
	const doc = `{"providers": [{"id": "p1", "name": "P", "time_zone": "America/Toronto", "currency": "CAD", "webhook_secret": "whsec_seed_update"}],
		"buildings": [{"id": "b1", "provider_ids": ["p1"], "street": "1 Main St", "line_type": "third"}],
		"units": [{"id": "u1", "building_id": "b1", "unit_number": "1"}],
		"plans": [{"id": "pl1", "provider_id": "p1", "name": "Fibre", "versions": [{"id": "pv1", "monthly_price": "50.00", "download_mbps": 100, "upload_mbps": 100}]}],
		"accounts": [{"provider_id": "p1", "email": "login@example.ca", "password": "%s"}],
		"subscribers": [{"id": "s1", "provider_id": "p1", "holder": {"firstname": "Ann", "lastname": "Holder", "email": "holder@example.ca", "password": "holder-fixture-pass"},
			"subscriptions": [{"id": "c1", "plan_version_id": "pv1", "unit_id": "u1", "status": "ACTIVE", "started_at": "2026-01-05"}]}]}`
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		e := env(map[string]string{"DATABASE_URL": u, "SUBPROV_LOG_FORMAT": "json"})
		file := filepath.Join(t.TempDir(), "fixture.json")
		write := func(loginPassword string) {
			if err := os.WriteFile(file, []byte(strings.Replace(doc, "%s", loginPassword, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		seed := func(args ...string) string {
			var out, errOut bytes.Buffer
			if err := run(ctx, append([]string{"seed"}, append(args, file)...), e, &out, &errOut); err != nil {
				t.Fatalf("seed %v: %v\n%s", args, err, errOut.String())
			}
			return out.String()
		}
		write("login-fixture-pass")
		seed()
		s := testdb.Open(t, u)
		defer s.Close()
		// The holder sets a password of her own; the line's billing day is changed.
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			h, err := identity.TestPasswordCost.Hash("holder-own-password")
			if err != nil {
				return err
			}
			acc, err := s.AccountByEmail(ctx, "holder@example.ca")
			if err != nil {
				return err
			}
			if err := tx.SetPassword(ctx, acc.ID, h, time.Now()); err != nil {
				return err
			}
			day := 7
			return tx.UpdateSubscription(ctx, "c1", subprov.SubscriptionChange{BillingDay: &day}, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		password := func(email string) string {
			return testdb.Strings(t, s.R().Query, `SELECT password_hash FROM accounts WHERE email = ?`, email)[0]
		}
		billingDay := func() string {
			return testdb.Strings(t, s.R().Query, `SELECT CAST(billing_day AS TEXT) FROM subscriptions WHERE id = 'c1'`)[0]
		}

		out := seed()
		if !strings.Contains(out, "0 subscriptions, 0 logins created") || billingDay() != "7" || !identity.CheckPassword(password("holder@example.ca"), "holder-own-password") {
			t.Fatalf("seed again changed rows already there: billing day %s\n%s", billingDay(), out)
		}

		write("login-file-new-pass") // the login's password is the fixture's: --update may change it
		out = seed("--update")
		want := file + `: changed:
  login login@example.ca
    password_hash: (previous value) -> (the file's value)
  subscription c1
    billing_day: 7 -> 1
` + file + `: left as they were:
  login holder@example.ca
    password: left as it is: set by its owner
` + file + `: loaded 0 providers, 0 buildings, 0 units, 0 ports, 0 plan versions, 0 subscribers, 0 subscriptions, 0 logins created; 2 rows updated,`
		if !strings.HasPrefix(out, want) {
			t.Fatalf("seed --update printed:\n%s\nwant it to start with:\n%s", out, want)
		}
		if billingDay() != "1" || !identity.CheckPassword(password("login@example.ca"), "login-file-new-pass") {
			t.Errorf("--update did not write the file's values: billing day %s", billingDay())
		}
		if !identity.CheckPassword(password("holder@example.ca"), "holder-own-password") {
			t.Error("--update changed the password the holder set")
		}
		if out := seed("--update"); !strings.HasPrefix(out, file+": nothing to change\n"+file+": left as they were:") {
			t.Errorf("a second --update printed:\n%s", out)
		}
	})
}

// TestServeSeedRestartKeepsChanges: serve loads SUBPROV_SEED at every start; a restart keeps
// a billing day changed since instead of putting the file's back.
func TestServeSeedRestartKeepsChanges(t *testing.T) {
	keepGCPercent(t)
	const doc = `{"providers": [{"id": "p1", "name": "P", "time_zone": "America/Toronto", "currency": "CAD", "webhook_secret": "whsec_serve_seed"}],
		"buildings": [{"id": "b1", "provider_ids": ["p1"], "street": "1 Main St", "line_type": "third"}],
		"units": [{"id": "u1", "building_id": "b1", "unit_number": "1"}],
		"plans": [{"id": "pl1", "provider_id": "p1", "name": "Fibre", "versions": [{"id": "pv1", "monthly_price": "50.00", "download_mbps": 100, "upload_mbps": 100}]}],
		"subscribers": [{"id": "s1", "provider_id": "p1", "holder": {"firstname": "Ann", "lastname": "Holder", "email": "holder@example.ca"},
			"subscriptions": [{"id": "c1", "plan_version_id": "pv1", "unit_id": "u1", "status": "ACTIVE", "started_at": "2026-01-05"}]}]}`
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		file := filepath.Join(t.TempDir(), "seed.json")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		e := env(map[string]string{"DATABASE_URL": u, "SUBPROV_SEED": file, "SUBPROV_ADDR": "127.0.0.1:0", "SUBPROV_LOG_FORMAT": "json"})
		serve := func() {
			_, stop := startServer(t, []string{"serve"}, e, regexp.MustCompile(`"url":"(http://127\.0\.0\.1:\d+)"`))
			stop()
		}
		serve()
		s := testdb.Open(t, u)
		defer s.Close()
		day := 9
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			return tx.UpdateSubscription(ctx, "c1", subprov.SubscriptionChange{BillingDay: &day}, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		serve()
		if got := testdb.Strings(t, s.R().Query, `SELECT CAST(billing_day AS TEXT) FROM subscriptions WHERE id = 'c1'`); len(got) != 1 || got[0] != "9" {
			t.Errorf("after a restart the billing day is %v, want 9", got)
		}
	})
}
