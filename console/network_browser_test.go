package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
)

// audited reports whether the audit log, as the API lists it, holds an entry of action.
func audited(t *testing.T, s *apptest.Service, action string) bool {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?limit=200", Headers: s.Operator()})
	if res.Status != 200 {
		t.Fatalf("audit log: %d %s", res.Status, res.Raw)
	}
	return strings.Contains(string(res.Raw), `"`+action+`"`)
}

// TestConsoleInstallJourney: an installer opens the queue's open jobs (the home page's link),
// opens a job, books a slot and completes it; the job's status moves to booked then done, the
// line is ACTIVE, and the audit log records each action.
func TestConsoleInstallJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleInstaller, "")
		browse(t, ctx, s, "/console/installs?status=open")
		checkPage(t, ctx, "installs")
		if err := follow(ctx, "#job-status", chromedp.Click(chromedp.CSS(`#results a[href^="/console/installs/"]`))); err != nil {
			t.Fatalf("open the job: %v", err)
		}
		checkPage(t, ctx, "install-job")
		if got := pageText(t, ctx, "#job-status"); got != "open" {
			t.Fatalf("job status %q", got)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name="slot_id"]:not([disabled])`))); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `form[action$="/book"] button`)
		if got := pageText(t, ctx, ".flash"); got != "Visit booked." {
			t.Fatalf("flash after booking %q", got)
		}
		if got := pageText(t, ctx, "#job-status"); got != "booked" {
			t.Fatalf("after booking, job status %q", got)
		}
		press(t, ctx, `form[action$="/complete"] button`)
		if got := pageText(t, ctx, ".flash"); !strings.Contains(got, "Install completed") {
			t.Fatalf("flash after completing %q", got)
		}
		if got, line := pageText(t, ctx, "#job-status"), pageText(t, ctx, "#line-status"); got != "done" || line != "ACTIVE" {
			t.Fatalf("after completing, job %q, line %q", got, line)
		}
		// The action forms are gone from a finished job.
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('main form').length`)); err != nil || n != 0 {
			t.Errorf("%d forms on a finished job (%v)", n, err)
		}
		job := demoInstallJob(t, s)
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs/" + job.ID, Headers: s.Operator()})
		if res.Status != 200 || res.JSON["state"] != "done" || res.JSON["subscription_status"] != "ACTIVE" {
			t.Fatalf("the API reads the job as %d %s", res.Status, res.Raw)
		}
		for _, action := range []string{"install.booked", "subscription.install_completed"} {
			if !audited(t, s, action) {
				t.Errorf("the audit log has no %s", action)
			}
		}
	})
}

// TestConsoleImportJourney: an admin imports a CSV file with a bad row (its problems listed by
// row and column, nothing written: the building list unchanged), then a good one: its
// building is listed and the serviceability check finds it.
func TestConsoleImportJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleAdmin, northwind)
		dir := t.TempDir()
		file := func(name, csv string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(csv), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		browse(t, ctx, s, "/console/network")
		checkPage(t, ctx, "network")
		before := pageText(t, ctx, "#results")

		browse(t, ctx, s, "/console/network/import")
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles("#file", []string{file("bad.csv", badImport)})); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `main form button[type="submit"]`)
		checkPage(t, ctx, "network-import-problems")
		if got := pageText(t, ctx, "table.problems tbody"); !strings.Contains(got, "3") || !strings.Contains(got, "line_type") {
			t.Fatalf("problems %q", got)
		}
		if got := pageText(t, ctx, `[role="alert"]`); !strings.Contains(got, "Nothing was imported") {
			t.Fatalf("alert %q", got)
		}
		browse(t, ctx, s, "/console/network")
		if after := pageText(t, ctx, "#results"); after != before {
			t.Fatalf("a refused import changed the building list:\n%s", after)
		}

		browse(t, ctx, s, "/console/network/import")
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles("#file", []string{file("good.csv", goodImport)})); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, `main form button[type="submit"]`)
		if got := pageText(t, ctx, ".flash"); !strings.Contains(got, "Imported 1 building(s), 2 unit(s)") {
			t.Fatalf("flash %q", got)
		}
		if got := pageText(t, ctx, "#results"); !strings.Contains(got, "700 Rue Import") {
			t.Fatalf("the list does not show the imported building:\n%s", got)
		}
		res := s.Do(apptest.Request{Method: "POST", Path: "/partner/serviceability/check", Headers: apptest.Key(storeKey),
			Body: map[string]string{"address": "700 Rue Import, Montréal, QC H2X 1Y4"}})
		if res.Status != 200 || res.JSON["serviceable"] != true || !strings.Contains(string(res.Raw), "700 Rue Import") {
			t.Fatalf("serviceability of the imported building: %d %s", res.Status, res.Raw)
		}
		if !audited(t, s, "buildings.imported") {
			t.Error("the audit log has no import")
		}
	})
}

// TestConsoleNetworkScreenshots loads the install, network and plans pages in Chromium as
// each role that reads them; as an admin, who sees every control, it checks them at both
// widths and writes their screenshots.
func TestConsoleNetworkScreenshots(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := browsertest.New(t, 5*time.Minute) // five sign-ins and every page: longer than one journey
		pages := []struct {
			name, path string
			perm       subprov.Permission
		}{
			{"installs", "/console/installs", subprov.PermReadNetwork},
			{"install-job", "/console/installs/" + demoInstallJob(t, s).ID, subprov.PermReadNetwork},
			{"install-windows", "/console/install-windows", subprov.PermReadNetwork},
			{"network", "/console/network", subprov.PermReadNetwork},
			{"building", "/console/network/buildings/" + kingStreet, subprov.PermReadNetwork},
			{"network-import", "/console/network/import", subprov.PermAdminister},
			{"plans", "/console/plans", subprov.PermRead},
		}
		for _, role := range subprov.Roles {
			email, password := s.PutOperator(role, "")
			signIn(t, ctx, s, email, password, "")
			// The sign-in page has a heading too: wait for the signed-in page's.
			if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(".who"))); err != nil {
				t.Fatalf("sign in as %s: %v", role, err)
			}
			for _, p := range pages {
				if !role.Can(p.perm) {
					continue
				}
				browse(t, ctx, s, p.path)
				if role == subprov.RoleAdmin {
					checkPage(t, ctx, p.name)
				}
			}
			// Sign out, and wait for the sign-in page the next sign-in starts from.
			if err := follow(ctx, "#email", chromedp.Click(chromedp.CSS(".who button"))); err != nil {
				t.Fatalf("sign out as %s: %v", role, err)
			}
		}
	})
}
