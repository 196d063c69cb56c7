package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
)

// The console's providers, API keys, webhook secrets, operators and audit log pages, over
// HTTP on both engines. The rules are the capabilities' (tested in their packages and through
// /api/v1); these tests check that each page calls them and shows their answers where they
// belong: a refusal beside its field, the input kept, nothing changed.

const (
	northwind = fixture.DemoProviderID
	maple     = "8d0c7f2e-1a3b-4c5d-9e6f-000000000002"
)

// auditCount counts the audit entries of action on object.
func auditCount(t *testing.T, s *apptest.Service, action, objectID string) int {
	t.Helper()
	var n int
	if err := s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM audit_log WHERE action = ? AND subject_id = ?`,
		action, objectID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// settingsForm is the provider's settings form as the page fills it, at version.
func settingsForm(t *testing.T, s *apptest.Service, id string) url.Values {
	t.Helper()
	p, err := s.Store.Provider(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	f := url.Values{"name": {p.Name}, "time_zone": {p.TimeZone}, "currency": {p.Currency}, "tax_rate_bp": {strconv.Itoa(p.TaxRateBP)},
		"webhook_url": {p.WebhookURL}, "checkout_url": {p.CheckoutURL}, "service_provider_document_id": {p.ServiceProviderDocumentID},
		"booking_window_days": {strconv.Itoa(p.BookingWindowDays)}, "support_group": {p.SupportGroup}, "brand_color": {p.BrandColor},
		"payment_processor": {p.PaymentProcessor}, "processor_account_id": {p.ProcessorAccountID}, "default_language": {p.DefaultLanguage}, "version": {strconv.FormatInt(p.Version, 10)}}
	if p.SMSConfigured {
		f.Set("sms_configured", "on")
	}
	if p.AutoRepair {
		f.Set("auto_repair", "on")
	}
	if p.OutageCredit != nil {
		f.Set("outage_credit", strconv.FormatFloat(p.OutageCredit.MinHours, 'f', -1, 64))
	}
	return f
}

func with(f url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// fieldError is the error the page shows beside field, "" if none.
func fieldError(p *apptest.Page, field string) string {
	m := regexp.MustCompile(`<span class="field-error" id="` + regexp.QuoteMeta(field) + `-error">([^<]*)</span>`).FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestConsoleProviderSettings: the settings form edits through the capability with the version
// it was read at: a stale form is refused with "Changed since you read it" and its input kept;
// the capability's 422s show beside their fields (the receivers' address rule, a time zone
// fixed by invoices); a refused form changes nothing.
func TestConsoleProviderSettings(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		c := s.ConsoleAs(t, subprov.RoleAdmin, "")
		path := "/console/providers/" + northwind
		if p := c.Get(path); p.Status != 200 || !strings.Contains(p.Body, `name="version" value="`) {
			t.Fatalf("settings page: %d", p.Status)
		}
		read := settingsForm(t, s, northwind)
		if p := c.Post(path, with(read, "support_group", "Northwind Care")); p.Status != http.StatusSeeOther || p.Location() != path {
			t.Fatalf("save: %d %s", p.Status, p.Body)
		}
		if n := auditCount(t, s, "provider.updated", northwind); n != 1 {
			t.Errorf("%d provider.updated entries, want 1", n)
		}
		saved, _ := s.Store.Provider(ctx, northwind)

		for _, tc := range []struct {
			name   string
			form   url.Values
			status int
			field  string // where the problem shows; "" at the top of the form
			want   string
		}{
			{"a stale form", with(read, "support_group", "Typed after"), 409, "", "Changed since you read it"},
			{"a private receiver", with(settingsForm(t, s, northwind), "webhook_url", "https://192.168.0.4/hook"), 422, "webhook_url", "192.168.0.4"},
			{"no scheme", with(settingsForm(t, s, northwind), "webhook_url", "hooks.example"), 422, "webhook_url", "absolute http(s) URL"},
			{"a tax rate in words", with(settingsForm(t, s, northwind), "tax_rate_bp", "thirteen"), 422, "tax_rate_bp", "whole number"},
			{"an unknown language", with(settingsForm(t, s, northwind), "default_language", "de"), 422, "default_language", "want one of en, fr"},
			{"no version", with(settingsForm(t, s, northwind), "version", ""), 400, "", "version it was read at"},
			{"an outage credit of no time", with(settingsForm(t, s, northwind), "outage_credit", "0"), 422, "outage_credit", "more than 0 and at most 744"},
			{"an outage credit of over a month", with(settingsForm(t, s, northwind), "outage_credit", "800"), 422, "outage_credit", "at most 744"},
			{"an outage credit in words", with(settingsForm(t, s, northwind), "outage_credit", "four"), 422, "outage_credit", "want a number of hours"},
		} {
			p := c.Post(path, tc.form)
			if p.Status != tc.status {
				t.Errorf("%s: %d, want %d", tc.name, p.Status, tc.status)
			}
			got := fieldError(p, tc.field)
			if tc.field == "" {
				got = regexp.MustCompile(`<p class="error" role="alert">([^<]*)`).FindString(p.Body)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("%s: %q shown at %q, want %q", tc.name, got, tc.field, tc.want)
			}
			for _, kept := range []string{"Typed after", "https://192.168.0.4/hook", "hooks.example", "thirteen"} {
				if tc.form.Get("support_group") == kept || tc.form.Get("webhook_url") == kept || tc.form.Get("tax_rate_bp") == kept {
					if !strings.Contains(p.Body, `value="`+kept+`"`) {
						t.Errorf("%s: the input %q is not kept", tc.name, kept)
					}
				}
			}
		}
		if now, _ := s.Store.Provider(ctx, northwind); now.Version != saved.Version || now.SupportGroup != "Northwind Care" {
			t.Errorf("a refused form changed the provider: version %d→%d, %q", saved.Version, now.Version, now.SupportGroup)
		}

		// Once the provider has an invoice, its time zone is fixed: said beside the field.
		s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
		apptest.Eventually(t, 15*time.Second, "a Northwind invoice", func() bool {
			var n int
			_ = s.Store.R().QueryRow(ctx, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ?`, marieLine).Scan(&n)
			return n > 0
		})
		c = s.ConsoleSignIn(t, "admin.platform@ops.test", apptest.OperatorPassword, "") // the clock's move ended the session
		p := c.Post(path, with(settingsForm(t, s, northwind), "time_zone", "America/Halifax"))
		if p.Status != 422 || !strings.Contains(fieldError(p, "time_zone"), "cannot change once the provider has invoices") {
			t.Errorf("time zone of an invoiced provider: %d %q", p.Status, fieldError(p, "time_zone"))
		}
	})
}

// TestConsoleProviderScope: a provider's admin sees its own provider only (another's pages
// are 404 and its forms change nothing) and creates no provider; a platform admin creates one
// and is shown its webhook secret once.
func TestConsoleProviderScope(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		nw := s.ConsoleAs(t, subprov.RoleAdmin, northwind)
		list := nw.Get("/console/providers")
		if list.Status != 200 || !strings.Contains(list.Body, "Northwind Fibre") || strings.Contains(list.Body, "Maple Ethernet") ||
			strings.Contains(list.Body, "New provider") {
			t.Errorf("a provider admin's providers list: %d", list.Status)
		}
		for _, path := range []string{"/console/providers/" + maple, "/console/providers/" + maple + "/api-keys", "/console/providers/" + maple + "/webhook-secret"} {
			if p := nw.Get(path); p.Status != 404 || !strings.Contains(p.Body, "Provider not found") {
				t.Errorf("GET %s as Northwind's admin: %d, want the 404 page", path, p.Status)
			}
		}
		if p := nw.Post("/console/providers/"+maple, with(settingsForm(t, s, maple), "name", "Taken")); p.Status != 404 {
			t.Errorf("edit another provider: %d, want 404", p.Status)
		}
		if p := nw.Post("/console/providers/"+maple+"/webhook-secret", url.Values{"overlap_hours": {"1"}}); p.Status != 404 {
			t.Errorf("rotate another provider's secret: %d, want 404", p.Status)
		}
		if p := nw.Get("/console/providers/new"); p.Status != 403 {
			t.Errorf("the new provider form for a provider's admin: %d, want 403", p.Status)
		}
		newProvider := url.Values{"name": {"Atlantic Fibre"}, "time_zone": {"America/Halifax"}, "currency": {"CAD"}, "tax_rate_bp": {"1500"},
			"booking_window_days": {"21"}, "payment_processor": {"none"}}
		if p := nw.Post("/console/providers", newProvider); p.Status != 403 {
			t.Errorf("a provider's admin creates a provider: %d, want 403", p.Status)
		}
		if mp, _ := s.Store.Provider(context.Background(), maple); mp.Name != "Maple Ethernet" {
			t.Errorf("Maple renamed to %q", mp.Name)
		}

		admin := s.ConsoleAs(t, subprov.RoleAdmin, "")
		if p := admin.Post("/console/providers", with(newProvider, "currency", "dollars", "webhook_url", "https://10.0.0.1/h")); p.Status != 422 ||
			fieldError(p, "currency") == "" || fieldError(p, "webhook_url") == "" || !strings.Contains(p.Body, `value="Atlantic Fibre"`) {
			t.Errorf("a bad new provider: %d currency %q webhook_url %q", p.Status, fieldError(p, "currency"), fieldError(p, "webhook_url"))
		}
		p := admin.Post("/console/providers", newProvider)
		secret := regexp.MustCompile(`<code class="secret" id="secret">(whsec_[^<]+)</code>`).FindStringSubmatch(p.Body)
		if p.Status != 200 || secret == nil || !strings.Contains(p.Body, "It will not be shown again.") {
			t.Fatalf("create: %d %s", p.Status, p.Body)
		}
		var id string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT id FROM providers WHERE name = ?`, "Atlantic Fibre").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if got := admin.Get("/console/providers/" + id); got.Status != 200 || strings.Contains(got.Body, secret[1]) {
			t.Errorf("the provider's page: %d, or it shows the secret again", got.Status)
		}
	})
}

// TestConsoleAPIKeysAndSecret: the issue form's refusals beside their fields; a key and a
// rotated webhook secret shown once, on the answer only; a revocation confirmed and audited.
func TestConsoleAPIKeysAndSecret(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.ConsoleAs(t, subprov.RoleAdmin, northwind)
		keys := "/console/providers/" + northwind + "/api-keys"
		c.Get(keys)
		for _, tc := range []struct {
			form        url.Values
			field, want string
		}{
			{url.Values{"name": {"  "}}, "name", "required"},
			{url.Values{"name": {"Shop"}, "features": {"everything"}}, "features", "unknown feature"},
		} {
			if p := c.Post(keys, tc.form); p.Status != 422 || !strings.Contains(fieldError(p, tc.field), tc.want) {
				t.Errorf("issue %v: %d %q", tc.form, p.Status, fieldError(p, tc.field))
			}
		}
		p := c.Post(keys, url.Values{"name": {"Shop"}, "features": {subprov.FeatureAgentAPI}})
		m := regexp.MustCompile(`id="secret">(spk_[^<]+)<`).FindStringSubmatch(p.Body)
		if p.Status != 200 || m == nil || !strings.Contains(p.Body, "It will not be shown again.") {
			t.Fatalf("issue: %d %s", p.Status, p.Body)
		}
		key := m[1]
		list := c.Get(keys)
		if strings.Contains(list.Body, key) || !strings.Contains(list.Body, identity.KeyPrefix(key)) || !strings.Contains(list.Body, subprov.FeatureAgentAPI) {
			t.Errorf("the list shows the key, or not its prefix and features")
		}
		var keyID string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT id FROM api_keys WHERE name = ? AND provider_id = ?`, "Shop", northwind).Scan(&keyID); err != nil {
			t.Fatal(err)
		}
		revoke := keys + "/" + keyID + "/revoke"
		if p := c.Get(revoke); p.Status != 200 || !strings.Contains(p.Body, "Revoke the key") {
			t.Errorf("confirm page: %d", p.Status)
		}
		if p := s.ConsoleAs(t, subprov.RoleAdmin, maple).Post(revoke, url.Values{}); p.Status != 404 {
			t.Errorf("another provider's admin revokes: %d, want 404", p.Status)
		}
		if p := c.Post(revoke, url.Values{}); p.Status != http.StatusSeeOther || p.Location() != keys {
			t.Errorf("revoke: %d %q", p.Status, p.Location())
		}
		if n := auditCount(t, s, "api_key.revoked", keyID); n != 1 {
			t.Errorf("%d api_key.revoked entries, want 1", n)
		}
		if r := s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=king", Headers: apptest.Key(key)}); r.Status != 401 {
			t.Errorf("the revoked key: %d, want 401", r.Status)
		}

		secret := "/console/providers/" + northwind + "/webhook-secret"
		c.Get(secret)
		if p := c.Post(secret, url.Values{"overlap_hours": {"100"}}); p.Status != 422 || !strings.Contains(fieldError(p, "overlap_hours"), "0 to 72") ||
			!strings.Contains(p.Body, `value="100"`) {
			t.Errorf("overlap of 100 hours: %d %q", p.Status, fieldError(p, "overlap_hours"))
		}
		p = c.Post(secret, url.Values{"overlap_hours": {"2"}})
		m = regexp.MustCompile(`id="secret">(whsec_[^<]+)<`).FindStringSubmatch(p.Body)
		if p.Status != 200 || m == nil {
			t.Fatalf("rotate: %d %s", p.Status, p.Body)
		}
		if prov, _ := s.Store.Provider(context.Background(), northwind); prov.WebhookSecret != m[1] {
			t.Error("the secret shown is not the provider's new one")
		}
		if n := auditCount(t, s, "provider.webhook_secret_rotated", northwind); n != 1 {
			t.Errorf("%d rotation entries, want 1", n)
		}
	})
}

// TestConsoleOperators: create (every problem beside its field, the password never sent
// back, a taken e-mail), change the role under the version read, disable and enable, reset a
// second factor; the last active platform admin is kept (409, said at the top); a provider's
// admin makes and sees its own provider's operators only.
func TestConsoleOperators(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		c := s.ConsoleAs(t, subprov.RoleAdmin, "")
		c.Get("/console/operators/new")
		p := c.Post("/console/operators", url.Values{"email": {"not-an-address"}, "password": {"short"}, "role": {"boss"}, "provider_id": {"nope"}})
		for _, f := range []string{"email", "password", "role", "provider_id"} {
			if fieldError(p, f) == "" {
				t.Errorf("no problem shown beside %s", f)
			}
		}
		if p.Status != 422 || strings.Contains(p.Body, `value="short"`) || !strings.Contains(p.Body, `value="not-an-address"`) {
			t.Errorf("a bad operator: %d, or the password sent back, or the e-mail not kept", p.Status)
		}
		if p := c.Post("/console/operators", url.Values{"email": {fixture.DemoSupportEmail}, "password": {"long-enough-password"}, "role": {"viewer"}, "provider_id": {northwind}}); p.Status != 409 ||
			!strings.Contains(fieldError(p, "email"), "another operator") {
			t.Errorf("a taken e-mail: %d %q", p.Status, fieldError(p, "email"))
		}
		p = c.Post("/console/operators", url.Values{"email": {"desk@northwind.test"}, "password": {"long-enough-password"}, "role": {"viewer"}, "provider_id": {northwind}})
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/console/operators/") {
			t.Fatalf("create: %d %s", p.Status, p.Body)
		}
		page := p.Location()
		desk, _, err := s.Store.OperatorByEmail(ctx, "desk@northwind.test")
		if err != nil || desk.Role != subprov.RoleViewer || desk.ProviderID != northwind {
			t.Fatalf("created: %+v %v", desk, err)
		}
		version := strconv.FormatInt(desk.Version, 10)
		c.Get(page)
		if p := c.Post(page+"/role", url.Values{"role": {"billing"}, "version": {version}}); p.Status != http.StatusSeeOther {
			t.Errorf("role: %d %s", p.Status, p.Body)
		}
		if p := c.Post(page+"/status", url.Values{"disabled": {"true"}, "version": {version}}); p.Status != 409 || !strings.Contains(p.Body, "Changed since you read it") {
			t.Errorf("a stale form: %d", p.Status)
		}
		if p := c.Post(page+"/role", url.Values{"role": {"boss"}, "version": {"2"}}); p.Status != 422 || fieldError(p, "role") == "" {
			t.Errorf("a bad role: %d", p.Status)
		}
		for i, disabled := range []string{"true", "false"} {
			if p := c.Post(page+"/status", url.Values{"disabled": {disabled}, "version": {strconv.Itoa(2 + i)}}); p.Status != http.StatusSeeOther {
				t.Errorf("disabled=%s: %d %s", disabled, p.Status, p.Body)
			}
		}
		if n := auditCount(t, s, "operator.updated", desk.ID); n != 3 {
			t.Errorf("%d operator.updated entries, want 3", n)
		}

		// A second factor, enrolled by its owner, reset by the admin.
		support := s.ConsoleAs(t, subprov.RoleSupport, northwind)
		enrol := support.Post("/console/account/second-factor", url.Values{})
		key := regexp.MustCompile(`<code class="secret">([A-Z2-7]+)</code>`).FindStringSubmatch(enrol.Body)
		if key == nil {
			t.Fatalf("enrol: %d", enrol.Status)
		}
		code, _ := identity.TOTPCode(key[1], s.Clock.Now())
		support.Post("/console/account/second-factor/confirm", url.Values{"code": {code}, "otpauth_url": {""}})
		sup, _, _ := s.Store.OperatorByEmail(ctx, "support."+northwind+"@ops.test")
		if !sup.TOTPEnabled {
			t.Fatal("the second factor is not on")
		}
		if p := c.Get("/console/operators/" + sup.ID); !strings.Contains(p.Body, "Reset the second factor") {
			t.Error("no reset button for an operator with a second factor")
		}
		if p := c.Post("/console/operators/"+sup.ID+"/second-factor/reset", url.Values{"version": {strconv.FormatInt(sup.Version, 10)}}); p.Status != http.StatusSeeOther {
			t.Errorf("reset: %d %s", p.Status, p.Body)
		}
		if sup, _, _ = s.Store.OperatorByEmail(ctx, sup.Email); sup.TOTPEnabled || auditCount(t, s, "operator.totp_reset", sup.ID) != 1 {
			t.Errorf("after the reset: on=%v", sup.TOTPEnabled)
		}

		// The last active platform admin: the demo operator disabled, this admin is the last.
		demo, _, _ := s.Store.OperatorByEmail(ctx, fixture.DemoOperatorEmail)
		if p := c.Post("/console/operators/"+demo.ID+"/status", url.Values{"disabled": {"true"}, "version": {strconv.FormatInt(demo.Version, 10)}}); p.Status != http.StatusSeeOther {
			t.Fatalf("disable the demo admin: %d %s", p.Status, p.Body)
		}
		me, _, _ := s.Store.OperatorByEmail(ctx, "admin.platform@ops.test")
		for _, f := range []url.Values{{"disabled": {"true"}}, {"role": {"viewer"}}} {
			action := "/status"
			if f.Has("role") {
				action = "/role"
			}
			f.Set("version", strconv.FormatInt(me.Version, 10))
			p := c.Post("/console/operators/"+me.ID+action, f)
			if p.Status != 409 || !strings.Contains(p.Body, `role="alert">Nobody may disable or demote the last active platform admin`) {
				t.Errorf("%s of the last platform admin: %d", action, p.Status)
			}
		}

		// A provider's admin: its provider's operators only.
		nw := s.ConsoleAs(t, subprov.RoleAdmin, northwind)
		list := nw.Get("/console/operators")
		if !strings.Contains(list.Body, "desk@northwind.test") || strings.Contains(list.Body, fixture.DemoOperatorEmail) {
			t.Error("a provider's admin sees other operators, or not its own")
		}
		if p := nw.Get("/console/operators/" + demo.ID); p.Status != 404 {
			t.Errorf("a platform operator's page for a provider's admin: %d, want 404", p.Status)
		}
		nw.Get("/console/operators/new")
		if p := nw.Post("/console/operators", url.Values{"email": {"x@maple.test"}, "password": {"long-enough-password"}, "role": {"viewer"}, "provider_id": {maple}}); p.Status != 422 ||
			fieldError(p, "provider_id") == "" {
			t.Errorf("an operator of another provider: %d", p.Status)
		}
	})
}

// TestConsoleAuditLog: the filters of GET /api/v1/audit, cursor paging that keeps them, an
// entry's reason and changes, its time in its provider's time zone (a platform-wide one's in
// UTC); a provider's operator reads its own provider's entries only.
func TestConsoleAuditLog(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		for _, action := range []string{"suspend", "restore"} {
			if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscriptions/" + marieLine + "/" + action, Headers: admin,
				Body: map[string]string{"reason": "Unpaid since October (" + action + ")"}}); r.Status != 200 {
				t.Fatalf("%s: %d %s", action, r.Status, r.Raw)
			}
		}
		c := s.ConsoleAs(t, subprov.RoleViewer, "")
		p := c.Get("/console/audit?action=subscription.suspended")
		if p.Status != 200 || !strings.Contains(p.Body, "Unpaid since October (suspend)") || strings.Contains(p.Body, "(restore)") ||
			!strings.Contains(p.Body, "<strong>status</strong>: ACTIVE → SUSPENDED") || !regexp.MustCompile(`\d\d:\d\d:\d\d E[SD]T`).MatchString(p.Body) {
			t.Errorf("filtered by action: %d %s", p.Status, p.Body)
		}
		if p := c.Get("/console/audit?object_id=" + marieLine + "&action=subscription.restored"); !strings.Contains(p.Body, "(restore)") || strings.Contains(p.Body, "(suspend)") {
			t.Error("filtered by object and action")
		}
		// A platform-wide entry (the creation of a platform operator) is in UTC; a secret only as changed.
		s.ConsoleAs(t, subprov.RoleAdmin, "").Post("/console/operators", url.Values{"email": {"night@ops.test"}, "password": {"long-enough-password"}, "role": {"viewer"}})
		if p := c.Get("/console/audit?action=operator.created"); !regexp.MustCompile(`\d\d:\d\d:\d\d UTC`).MatchString(p.Body) ||
			!strings.Contains(p.Body, "<strong>password</strong>: changed → changed") {
			t.Errorf("a platform-wide entry: %s", p.Body)
		}

		// Paging: one entry a page, the filter kept.
		first := c.Get("/console/audit?action=subscription.suspended&limit=1")
		next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(c.Get("/console/audit?limit=1").Body)
		if next == nil {
			t.Fatal("no next page link")
		}
		u := strings.ReplaceAll(next[1], "&amp;", "&")
		if !strings.Contains(u, "cursor=") || !strings.Contains(u, "limit=1") {
			t.Errorf("next page link %q", u)
		}
		if strings.Contains(first.Body, `rel="next"`) {
			t.Error("a one-entry list offers a next page")
		}
		a, b := c.Get("/console/audit?limit=1"), c.Get(u)
		if b.Status != 200 || entryIDs(a.Body) == entryIDs(b.Body) {
			t.Errorf("the next page: %d, the same entries", b.Status)
		}

		// A provider's operator: its own provider's entries only.
		mp := s.ConsoleAs(t, subprov.RoleViewer, maple)
		if p := mp.Get("/console/audit?object_id=" + marieLine); strings.Contains(p.Body, "Unpaid since October") {
			t.Error("Maple's viewer reads Northwind's entries")
		}
		if p := s.ConsoleAs(t, subprov.RoleInstaller, "").Get("/console/audit"); p.Status != 403 {
			t.Errorf("an installer: %d, want 403", p.Status)
		}
	})
}

// entryIDs is the table of an audit page, to tell two pages apart.
func entryIDs(body string) string {
	_, rest, _ := strings.Cut(body, "<tbody>")
	rows, _, _ := strings.Cut(rest, "</tbody>")
	return rows
}

// visibilityRow is a row of the role-visibility table (roles_test.go).
type visibilityRow = struct {
	page  string
	role  subprov.Role
	shown []string
	gone  []string
}

// The role-visibility table's rows of the providers, API keys, operators and audit log pages:
// only an admin edits, issues, revokes, rotates and manages operators; the other reading roles
// see the providers read-only; the installer sees none of them.
func init() {
	visibility = append(visibility, []visibilityRow{
		{"/console/", subprov.RoleAdmin, []string{`href="/console/providers"`, `href="/console/operators"`, `href="/console/audit"`}, nil},
		{"/console/", subprov.RoleViewer, []string{`href="/console/providers"`, `href="/console/audit"`}, []string{`href="/console/operators"`}},
		{"/console/", subprov.RoleInstaller, nil, []string{`href="/console/providers"`, `href="/console/operators"`, `href="/console/audit"`}},
		{"/console/providers", subprov.RoleAdmin, []string{"Northwind Fibre", "Maple Ethernet", `href="/console/providers/new"`}, nil},
		{"/console/providers/" + northwind, subprov.RoleAdmin, []string{`name="version"`, "Save the settings", "/webhook-secret", "/api-keys"}, nil},
		{"/console/providers/" + northwind + "/api-keys", subprov.RoleAdmin, []string{"Issue the key", `name="features"`}, nil},
		{"/console/operators", subprov.RoleAdmin, []string{fixture.DemoSupportEmail, "New operator"}, nil},
		{"/console/operators/new", subprov.RoleAdmin, []string{"every provider (a platform operator)", "Maple Ethernet"}, nil},
		{"/console/audit", subprov.RoleAdmin, []string{`name="action"`, `name="object_id"`, `name="actor_id"`}, nil},
	}...)
	for _, role := range []subprov.Role{subprov.RoleSupport, subprov.RoleBilling, subprov.RoleViewer} {
		visibility = append(visibility, []visibilityRow{
			{"/console/providers", role, []string{"Northwind Fibre"}, []string{"New provider"}},
			{"/console/providers/" + northwind, role, []string{"Settings", "America/Toronto", "/api-keys"}, []string{`name="version"`, "Save the settings", "/webhook-secret"}},
			{"/console/providers/" + northwind + "/api-keys", role, []string{"API keys of Northwind Fibre"}, []string{"Issue the key", "/revoke"}},
			{"/console/audit", role, []string{`name="action"`}, []string{`href="/console/operators"`}},
		}...)
	}
}
