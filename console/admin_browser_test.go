package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
)

// The providers, API keys, operators and audit log pages in Chromium.

// pageText is the text of the element sel, or the test fails.
func pageText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// press clicks the button or link sel and waits for the next page's heading.
func press(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if err := follow(ctx, "h1", chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// TestConsoleAdminPages loads each page as every role that reads it, at both widths, and
// writes the admin's screenshots.
func TestConsoleAdminPages(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		nw := "/console/providers/" + northwind
		var operatorPage string // the first operator's, found in the list
		pages := map[subprov.Role][]string{
			subprov.RoleAdmin: {"/console/providers", nw, nw + "/api-keys", nw + "/webhook-secret", "/console/providers/new",
				"/console/operators", "/console/operators/new", "/console/audit"},
		}
		for _, role := range []subprov.Role{subprov.RoleSupport, subprov.RoleBilling, subprov.RoleViewer} {
			pages[role] = []string{"/console/providers", nw, nw + "/api-keys", "/console/audit"}
		}
		for _, role := range []subprov.Role{subprov.RoleAdmin, subprov.RoleSupport, subprov.RoleBilling, subprov.RoleViewer} {
			email, password := s.PutOperator(role, "")
			ctx := consoleTab(t, s, email, password)
			if role == subprov.RoleAdmin {
				browse(t, ctx, s, "/console/operators")
				press(t, ctx, `td[data-label="E-mail"] a`)
				loc, _ := chromedp.Run(ctx, chromedp.Location())
				operatorPage = strings.TrimPrefix(loc, s.URL)
				pages[role] = append(pages[role], operatorPage)
			}
			for _, path := range pages[role] {
				browse(t, ctx, s, path)
				if h := heading(t, ctx); h == "Error" {
					t.Errorf("%s as %s: %s", path, role, pageText(t, ctx, "main"))
					continue
				}
				name := strings.NewReplacer(northwind, "northwind", "/console/", "").Replace(path)
				if path == operatorPage {
					name = "operator"
				}
				if role != subprov.RoleAdmin {
					name += "-" + string(role)
				}
				checkPage(t, ctx, name)
			}
		}
	})
}

// TestConsoleAPIKeyJourney: a provider's admin issues an API key and sees it once; the key
// works on a partner route through the service's HTTP server; the admin revokes it in the
// console and the same key is refused; the audit log shows the revocation; another provider's
// page is the 404 page.
func TestConsoleAPIKeyJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, email, _ := signedInAs(t, s, subprov.RoleAdmin, northwind)
		partner := func(key string) int {
			return s.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=king", Headers: apptest.Key(key)}).Status
		}

		browse(t, ctx, s, "/console/providers")
		press(t, ctx, `td[data-label="Name"] a`)
		press(t, ctx, `a[href$="/api-keys"]`)
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#name"), "Shop"), chromedp.Click(chromedp.CSS(`input[name="features"]`))); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `main form button[type="submit"]`)
		key := pageText(t, ctx, "#secret")
		if h := heading(t, ctx); h != "API key issued" || !strings.HasPrefix(key, "spk_") {
			t.Fatalf("after issuing: %q, key %q", h, key)
		}
		if once := pageText(t, ctx, ".once"); !strings.Contains(once, "It will not be shown again.") {
			t.Errorf("the page does not say the key is shown once: %q", once)
		}
		checkPage(t, ctx, "api-key-issued")
		if st := partner(key); st != 200 {
			t.Fatalf("the new key on a partner route: %d, want 200", st)
		}

		press(t, ctx, `a[href$="/api-keys"]`)
		if list := pageText(t, ctx, "main"); strings.Contains(list, key) || !strings.Contains(list, key[:8]) {
			t.Error("the list shows the key again, or not its prefix")
		}
		shop := `//tr[td[@data-label="Name" and text()="Shop"]]` // the demo keys are listed too
		if err := follow(ctx, "h1", chromedp.Click(chromedp.Search(shop+`//a`))); err != nil {
			t.Fatalf("open the new key: %v", err)
		}
		press(t, ctx, `main form button.danger`)
		if flash := pageText(t, ctx, ".flash"); !strings.Contains(flash, "revoked") {
			t.Errorf("after revoking: %q", flash)
		}
		if revoked, err := chromedp.Run(ctx, chromedp.Text(chromedp.Search(shop+`/td[@data-label="Revoked"]`))); err != nil || revoked == "no" {
			t.Error("the list does not show the key revoked")
		}
		if st := partner(key); st != 401 {
			t.Fatalf("the revoked key: %d, want 401", st)
		}

		browse(t, ctx, s, "/console/audit?action=api_key.revoked")
		if row := pageText(t, ctx, "#results tbody tr"); !strings.Contains(row, "api_key.revoked") || !strings.Contains(row, email) ||
			!strings.Contains(row, "revoked_at") {
			t.Errorf("the audit log's revocation: %q", row)
		}

		browse(t, ctx, s, "/console/providers/"+maple)
		if h, body := heading(t, ctx), pageText(t, ctx, "main"); h != "Error" || !strings.Contains(body, "Provider not found") {
			t.Errorf("another provider's page: %q %q", h, body)
		}
	})
}

// TestConsoleProviderPolicies: an admin turns on auto_repair and an outage credit policy of 4.5
// hours on the settings page, sees them kept on the next read and in the audit log, and turns
// the policy off by emptying its field.
func TestConsoleProviderPolicies(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleAdmin, northwind)
		policy := func() (bool, *subprov.OutageCredit) {
			t.Helper()
			p, err := s.Store.Provider(context.Background(), northwind)
			if err != nil {
				t.Fatal(err)
			}
			return p.AutoRepair, p.OutageCredit
		}
		browse(t, ctx, s, "/console/providers/"+northwind)
		if checked, err := chromedp.Run(ctx, chromedp.JavascriptAttribute[bool](chromedp.CSS("#auto_repair"), "checked")); err != nil || checked {
			t.Fatalf("auto_repair shown checked %t (%v), want off", checked, err)
		}
		if v := inputValue(t, ctx, "#outage_credit"); v != "" {
			t.Fatalf("outage credit shown %q, want empty (off)", v)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#auto_repair")), chromedp.SendKeys(chromedp.CSS("#outage_credit"), "4.5")); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `main form button[type="submit"]`)
		if flash := pageText(t, ctx, ".flash"); !strings.Contains(flash, "saved") {
			t.Fatalf("after saving: %q", flash)
		}
		if on, oc := policy(); !on || oc == nil || oc.MinHours != 4.5 {
			t.Fatalf("saved auto_repair %t, outage credit %+v", on, oc)
		}
		if checked, err := chromedp.Run(ctx, chromedp.JavascriptAttribute[bool](chromedp.CSS("#auto_repair"), "checked")); err != nil || !checked {
			t.Errorf("auto_repair shown checked %t (%v) after saving", checked, err)
		}
		if v := inputValue(t, ctx, "#outage_credit"); v != "4.5" {
			t.Errorf("outage credit shown %q after saving, want 4.5", v)
		}
		checkPage(t, ctx, "provider-policies")

		if err := chromedp.Do(ctx, chromedp.Clear(chromedp.CSS("#outage_credit"))); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `main form button[type="submit"]`)
		if on, oc := policy(); !on || oc != nil {
			t.Errorf("after emptying the field: auto_repair %t, outage credit %+v, want on and none", on, oc)
		}
		browse(t, ctx, s, "/console/audit?object_id="+northwind)
		if log := pageText(t, ctx, "#results"); !strings.Contains(log, "outage_credit") || !strings.Contains(log, "auto_repair") {
			t.Errorf("the audit log does not show the policies' changes: %q", log)
		}
	})
}

// inputValue is the current value of the input sel.
func inputValue(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("value of %s: %v", sel, err)
	}
	return v
}

// TestConsoleOperatorJourney: a platform admin creates a billing operator of Northwind, which
// signs in and sees what its role allows: no operators page.
func TestConsoleOperatorJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleAdmin, "")
		browse(t, ctx, s, "/console/operators")
		press(t, ctx, `a[href="/console/operators/new"]`)
		const email, password = "ledger@northwind.test", "a-long-first-password"
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.SetValue(chromedp.CSS("#role"), "billing"), chromedp.SetValue(chromedp.CSS("#provider_id"), northwind)); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `main form button[type="submit"]`)
		if h, flash := heading(t, ctx), pageText(t, ctx, ".flash"); h != email || !strings.Contains(flash, "is created") {
			t.Fatalf("after creating: %q %q", h, flash)
		}
		if facts := pageText(t, ctx, "dl.facts"); !strings.Contains(facts, "billing") || !strings.Contains(facts, "Northwind Fibre") {
			t.Errorf("the new operator: %q", facts)
		}

		press(t, ctx, `.who button`)
		signIn(t, ctx, s, email, password, "")
		if h, who := heading(t, ctx), pageText(t, ctx, ".who span"); h != "Home" || !strings.Contains(who, email+" · billing") {
			t.Fatalf("signed in as the new operator: %q %q", h, who)
		}
		if nav := pageText(t, ctx, "header nav"); strings.Contains(nav, "Operators") || !strings.Contains(nav, "Providers") {
			t.Errorf("the billing operator's navigation: %q", nav)
		}
		browse(t, ctx, s, "/console/operators")
		if h := heading(t, ctx); h != "Error" {
			t.Errorf("the operators page for a billing operator: %q", h)
		}
	})
}

// TestConsoleAuditJourney: a suspension's reason shows in the audit log, and the action filter
// (typed into the form, refreshed in place by htmx) narrows the list to it.
func TestConsoleAuditJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleViewer, "")
		admin := s.OperatorAs(subprov.RoleAdmin, northwind)
		const reason = "Tenant asked for a pause while abroad"
		if r := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscriptions/" + marieLine + "/suspend", Headers: admin,
			Body: map[string]string{"reason": reason}}); r.Status != 200 {
			t.Fatalf("suspend: %d %s", r.Status, r.Raw)
		}
		browse(t, ctx, s, "/console/audit")
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#action"), "subscription.suspended")); err != nil {
			t.Fatal(err)
		}
		// htmx refreshes the table as the filter is typed; pressing Filter does without JavaScript.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const rows = document.querySelectorAll('#results tbody tr');
		return rows.length === 1 && rows[0].innerText.includes('subscription.suspended') })()`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("the filtered table: %v; %s", err, pageText(t, ctx, "#results"))
		}
		row := pageText(t, ctx, "#results tbody tr")
		if !strings.Contains(row, reason) || !strings.Contains(row, "ACTIVE → SUSPENDED") || !strings.Contains(row, "Northwind Fibre") {
			t.Errorf("the suspension's entry: %q", row)
		}
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "action=subscription.suspended") {
			t.Errorf("the filter is not in the address: %q", loc)
		}
		checkPage(t, ctx, "audit-filtered")
	})
}
