package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
)

// subscriberPages are the subscriber pages TestConsoleScreenshots checks, by screenshot name.
func subscriberPages(s *apptest.Service) map[string]string {
	end := s.Clock.Now().AddDate(0, 1, 0).Format(time.DateOnly)
	return map[string]string{
		"subscribers":         "/console/subscribers",
		"subscribers-search":  "/console/subscribers?q=tremblay",
		"account":             "/console/subscribers/" + marieID,
		"cancel-preview":      "/console/subscriptions/" + priyaLine + "/cancel?end_date=" + end,
		"plan-change-preview": "/console/subscriptions/" + marieLine + "/plan-change?plan_version_id=pv100000-0000-4000-8000-000000001000",
	}
}

// auditReasons is the reasons of the audit log's entries of action on object, read through
// the audit API (GET /api/v1/audit) as the demo operator.
func auditReasons(t *testing.T, s *apptest.Service, action, object string) []string {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?action=" + action + "&object_id=" + object, Headers: s.Operator()})
	if res.Status != 200 {
		t.Fatalf("audit: %d %s", res.Status, res.Raw)
	}
	var out []string
	for _, e := range res.JSON["entries"].([]any) {
		r, _ := e.(map[string]any)["reason"].(string)
		out = append(out, r)
	}
	return out
}

// TestConsoleFindByPhoneJourney: a support operator types part of a phone number in the
// search, sees the account in the results as it types (htmx), and opens it.
func TestConsoleFindByPhoneJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleSupport, "")
		browse(t, ctx, s, "/console/subscribers")
		// The list starts with every subscriber: the results narrow to Marie's alone as the
		// digits are typed, without a page load.
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#q"), "5550142")); err != nil {
			t.Fatalf("type the phone digits: %v", err)
		}
		apptest.Eventually(t, 20*time.Second, "the results narrowed to the phone's subscriber", func() bool {
			rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#results tbody tr').length`))
			return err == nil && rows == 1
		})
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#results a[href="/console/subscribers/`+marieID+`"]`))); err != nil {
			t.Fatalf("search by phone digits: %v", err)
		}
		if loc, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`)); !strings.Contains(loc, "q=5550142") {
			t.Errorf("the address does not keep the search: %q", loc)
		}
		checkPage(t, ctx, "subscribers-phone")
		if err := follow(ctx, `#line-`+marieLine, chromedp.Click(chromedp.CSS(`#results a[href="/console/subscribers/`+marieID+`"]`))); err != nil {
			t.Fatalf("open the account: %v", err)
		}
		if h := heading(t, ctx); h != "Marie Tremblay" {
			t.Errorf("opened %q", h)
		}
	})
}

// TestConsoleSuspendRestoreJourney: a support operator suspends and restores a line with a
// reason; the account's status history and the audit log show both, with their reasons.
func TestConsoleSuspendRestoreJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleSupport, "")
		browse(t, ctx, s, "/console/subscribers/"+marieID)
		for _, step := range []struct{ action, reason, flash, audit string }{
			{"suspend", "Unpaid since March", "The line is suspended.", "subscription.suspended"},
			{"restore", "Paid at the counter", "The line is restored.", "subscription.restored"},
		} {
			field := "#" + step.action + "-" + marieLine + "-reason"
			if err := follow(ctx, ".flash", chromedp.SendKeys(chromedp.CSS(field), step.reason),
				chromedp.Click(chromedp.CSS(`form[action$="/`+step.action+`"] button`))); err != nil {
				t.Fatalf("%s: %v", step.action, err)
			}
			flash, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".flash")))
			history, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#line-"+marieLine+" table")))
			if flash != step.flash || !strings.Contains(history, step.reason) {
				t.Errorf("after %s: flash %q, history %q", step.action, flash, history)
			}
			if got := auditReasons(t, s, step.audit, marieLine); len(got) != 1 || got[0] != step.reason {
				t.Errorf("%s in the audit log: %q", step.audit, got)
			}
		}
		checkPage(t, ctx, "account-restored")
		// The audit page, when the console has one, lists both entries with their reasons.
		if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/console/audit?object_id="+marieLine), chromedp.WaitVisible(chromedp.CSS("h1"))); err == nil {
			if h := heading(t, ctx); h != "Error" {
				body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
				for _, r := range []string{"Unpaid since March", "Paid at the counter"} {
					if !strings.Contains(body, r) {
						t.Errorf("the audit page does not show %q", r)
					}
				}
			}
		}
	})
}

// TestConsoleCancelJourney: a support operator cancels a line: the preview is shown before
// the confirm button, and confirming cancels the line.
func TestConsoleCancelJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, _, _ := signedInAs(t, s, subprov.RoleSupport, "")
		browse(t, ctx, s, "/console/subscribers/s1000000-0000-4000-8000-000000000002")
		end := s.Clock.Now().AddDate(0, 1, 0).Format(time.DateOnly)
		if err := follow(ctx, "#end_date", chromedp.Click(chromedp.CSS(`a[href="/console/subscriptions/`+priyaLine+`/cancel"]`))); err != nil {
			t.Fatalf("open the cancellation: %v", err)
		}
		confirm, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('button.danger') !== null`))
		if confirm {
			t.Fatal("the confirm button is shown before the preview")
		}
		if err := follow(ctx, "#preview", chromedp.SetValue(chromedp.CSS("#end_date"), end), chromedp.Click(chromedp.CSS(`main form[method="get"] button`))); err != nil {
			t.Fatalf("preview: %v", err)
		}
		preview, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".preview")))
		if !strings.Contains(preview, "Service ends") || !strings.Contains(preview, "Confirm the cancellation") {
			t.Errorf("the preview: %q", preview)
		}
		checkPage(t, ctx, "cancel-journey")
		if err := follow(ctx, ".flash", chromedp.SendKeys(chromedp.CSS("#reason"), "Moving abroad"), chromedp.Click(chromedp.CSS("button.danger"))); err != nil {
			t.Fatalf("confirm: %v", err)
		}
		status, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#line-"+priyaLine+" .status")))
		if status != string(subprov.StatusCancelled) {
			t.Errorf("after confirming, the line is %q", status)
		}
		if got := auditReasons(t, s, "subscription.cancelled", priyaLine); len(got) != 1 {
			t.Errorf("cancellations in the audit log: %q", got)
		}
	})
}

// TestConsoleAccountScopeJourney: a Maple operator opening a Northwind account gets the 404
// page, which names nothing of the account.
func TestConsoleAccountScopeJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, email, password := signedInAs(t, s, subprov.RoleSupport, mapleProvider)
		// The status, which the browser does not expose to the page, through the same route.
		status := s.ConsoleSignIn(t, email, password, "").Get("/console/subscribers/" + marieID).Status
		browse(t, ctx, s, "/console/subscribers/"+marieID)
		if h := heading(t, ctx); h != "Error" || status != 404 {
			t.Errorf("a Maple operator on a Northwind account: %q, %d", h, status)
		}
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		if !strings.Contains(msg, "not found") || strings.Contains(msg, "Marie") {
			t.Errorf("the 404 page: %q", msg)
		}
	})
}
