package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

// The demo's accounts the subscriber pages are tested on.
const (
	marieID       = "s1000000-0000-4000-8000-000000000001"
	marieLine     = "c1000000-0000-4000-8000-000000000001"
	priyaLine     = "c1000000-0000-4000-8000-000000000002"
	mapleProvider = "8d0c7f2e-1a3b-4c5d-9e6f-000000000002"
	mapleLiam     = "s2000000-0000-4000-8000-000000000001"
)

// TestConsoleSubscriberList: the list's search, filters and refusals, as GET forms and as the
// htmx fragment, through the subscribers capability.
func TestConsoleSubscriberList(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.ConsoleAs(t, subprov.RoleAdmin, "")
		maple := s.ConsoleAs(t, subprov.RoleViewer, mapleProvider)
		cases := []struct {
			name   string
			c      *apptest.Console
			query  string
			htmx   bool
			status int
			shown  []string
			gone   []string
		}{
			{"phone digits", admin, "q=5550142", false, 200, []string{"Marie Tremblay", "/console/subscribers/" + marieID, `<html`}, []string{"Priya Patel", "Liam Chen"}},
			{"name, as htmx", admin, "q=tremblay", true, 200, []string{"Marie Tremblay"}, []string{"<html", "Priya Patel"}},
			{"customer number", admin, "q=0042-118", false, 200, []string{"Priya Patel"}, []string{"Marie Tremblay"}},
			{"status", admin, "status=PENDING_INSTALL", false, 200, []string{"Jean Gagnon"}, []string{"Marie Tremblay"}},
			{"provider", admin, "provider_id=" + mapleProvider, false, 200, []string{"Liam Chen", "Maple Ethernet"}, []string{"Marie Tremblay"}},
			{"workflow", admin, "workflow_state=provisioning_failed", false, 200, []string{"No subscriber matches"}, []string{"Marie Tremblay"}},
			{"scope", maple, "", false, 200, []string{"Liam Chen"}, []string{"Marie Tremblay", `name="provider_id"`}},
			{"short query", admin, "q=5", false, 422, []string{"at least 2 characters", `value="5"`}, []string{"Marie Tremblay"}},
			{"bad status", admin, "status=GONE", false, 422, []string{"want PENDING_INSTALL"}, nil},
			{"bad workflow", admin, "workflow_state=lost", false, 422, []string{"want one of"}, nil},
		}
		for _, tc := range cases {
			req, _ := http.NewRequest("GET", s.URL+"/console/subscribers?"+tc.query, nil)
			if tc.htmx {
				req.Header.Set("HX-Request", "true")
			}
			p := tc.c.Do(req)
			if p.Status != tc.status {
				t.Errorf("%s: %d, want %d", tc.name, p.Status, tc.status)
			}
			for _, want := range tc.shown {
				if !strings.Contains(p.Body, want) {
					t.Errorf("%s: %q not shown", tc.name, want)
				}
			}
			for _, gone := range tc.gone {
				if strings.Contains(p.Body, gone) {
					t.Errorf("%s: %q shown", tc.name, gone)
				}
			}
		}

		// Paging: one row a page, the next page's link carrying the cursor and the filters.
		p := admin.Get("/console/subscribers?limit=1&provider_id=" + fixture.DemoProviderID)
		next := ""
		if m := regexp.MustCompile(`<a href="([^"]+)" rel="next"`).FindStringSubmatch(p.Body); m != nil {
			next = m[1]
		}
		if next == "" || !strings.Contains(next, "cursor=") || !strings.Contains(next, "provider_id=") {
			t.Fatalf("no next page link with the cursor and filters: %q", next)
		}
		p2 := admin.Get(strings.ReplaceAll(next, "&amp;", "&"))
		if p2.Status != 200 || strings.Contains(p2.Body, "Marie Tremblay") || !strings.Contains(p2.Body, "Priya Patel") {
			t.Errorf("the second page: %d, want Priya and not Marie", p2.Status)
		}
	})
}

// between is the text of s between the first before and the next after.
func between(s, before, after string) string {
	i := strings.Index(s, before)
	if i < 0 {
		return ""
	}
	s = s[i+len(before):]
	j := strings.Index(s, after)
	if j < 0 {
		return ""
	}
	return s[:j]
}

// TestConsoleAccount: the account page's sections, its invoice PDFs, and its scope.
func TestConsoleAccount(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.AwaitStartupBillRun(t)
		viewer := s.ConsoleAs(t, subprov.RoleViewer, "")
		p := viewer.Get("/console/subscribers/" + marieID)
		if p.Status != 200 {
			t.Fatalf("account: %d %s", p.Status, p.Body)
		}
		for _, want := range []string{"Marie Tremblay", "0042-117", "514-555-0142", "Invoice contact", "Authorized users", "Status history",
			"Fibre 500", "unit 1204", "Credit notes", "Tickets", "Notes"} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("the account does not show %q", want)
			}
		}
		doc := between(p.Body, `href="/console/invoices/`, `/document"`)
		if doc == "" {
			t.Fatal("no invoice PDF link")
		}
		pdf := viewer.Get("/console/invoices/" + doc + "/document")
		if pdf.Status != 200 || pdf.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(pdf.Body, "%PDF") {
			t.Errorf("invoice PDF: %d %s", pdf.Status, pdf.Header.Get("Content-Type"))
		}

		// Another provider's account, invoice and line are not found, as an unknown id is.
		maple := s.ConsoleAs(t, subprov.RoleSupport, mapleProvider)
		for _, path := range []string{"/console/subscribers/" + marieID, "/console/invoices/" + doc + "/document",
			"/console/subscriptions/" + marieLine + "/cancel?end_date=2099-01-01", "/console/subscriptions/" + marieLine + "/plan-change"} {
			if p := maple.Get(path); p.Status != http.StatusNotFound || !strings.Contains(p.Body, "not found") {
				t.Errorf("%s as Maple's operator: %d, want the 404 page", path, p.Status)
			}
		}
		if p := maple.Post("/console/subscriptions/"+marieLine+"/suspend", url.Values{"reason": {"not mine"}}); p.Status != http.StatusNotFound {
			t.Errorf("suspend of another provider's line: %d, want 404", p.Status)
		}
		if p := maple.Get("/console/subscribers/" + mapleLiam); p.Status != 200 || !strings.Contains(p.Body, "Liam Chen") {
			t.Errorf("its own account: %d", p.Status)
		}
	})
}

// TestConsoleLineActions: each line form calls its capability, which audits it; a refused
// form shows the account again with the error beside its field, its input kept, and nothing
// changed.
func TestConsoleLineActions(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		c := s.ConsoleAs(t, subprov.RoleSupport, "")
		// The demo's line was loaded, never written to its port: the page says so.
		if page := c.Get("/console/subscribers/" + marieID); !strings.Contains(page.Body, "none recorded") {
			t.Error("a port nothing was written to shows no state")
		}
		status := func(id string) subprov.Status {
			sub, err := s.Store.Subscription(ctx, fixture.DemoProviderID, id)
			if err != nil {
				t.Fatal(err)
			}
			return sub.Status
		}
		audited := func(action, object string) []map[string]any {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?action=" + action + "&object_id=" + object, Headers: s.Operator()})
			if res.Status != 200 {
				t.Fatalf("audit: %d %s", res.Status, res.Raw)
			}
			var out []map[string]any
			for _, e := range res.JSON["entries"].([]any) {
				out = append(out, e.(map[string]any))
			}
			return out
		}

		// Refused: no reason. The error is beside the suspend form's field; nothing changed.
		p := c.Post("/console/subscriptions/"+marieLine+"/suspend", url.Values{"form": {"suspend-" + marieLine}, "reason": {"  "}})
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, `id="suspend-`+marieLine+`-error"`) {
			t.Fatalf("suspend without a reason: %d", p.Status)
		}
		if status(marieLine) != subprov.StatusActive || len(audited("subscription.suspended", marieLine)) != 0 {
			t.Fatal("a refused suspend changed the line")
		}

		for _, step := range []struct {
			action, reason string
			want           subprov.Status
		}{{"suspend", "Unpaid since March", subprov.StatusSuspended}, {"restore", "Paid at the counter", subprov.StatusActive}} {
			p := c.Post("/console/subscriptions/"+marieLine+"/"+step.action, url.Values{"reason": {step.reason}})
			if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/console/subscribers/"+marieID) {
				t.Fatalf("%s: %d %s %s", step.action, p.Status, p.Location(), p.Body)
			}
			if got := status(marieLine); got != step.want {
				t.Fatalf("after %s: %s", step.action, got)
			}
			es := audited("subscription."+step.action+map[string]string{"suspend": "ed", "restore": "d"}[step.action], marieLine)
			if len(es) != 1 || es[0]["reason"] != step.reason {
				t.Errorf("%s audit: %v", step.action, es)
			}
			page := c.Get("/console/subscribers/" + marieID)
			if !strings.Contains(page.Body, step.reason) {
				t.Errorf("the status history does not show %q", step.reason)
			}
			// The port's state as the line's action decided it.
			if !strings.Contains(page.Body, `class="port-state"`) || strings.Contains(page.Body, "none recorded") {
				t.Errorf("after %s the port's state is not shown", step.action)
			}
		}

		// A note; an empty note is refused beside its field with nothing written.
		if p := c.Post("/console/subscriptions/"+marieLine+"/notes", url.Values{"form": {"note"}, "note": {""}}); p.Status != 422 ||
			!strings.Contains(p.Body, `id="note-error"`) {
			t.Errorf("empty note: %d", p.Status)
		}
		if p := c.Post("/console/subscriptions/"+marieLine+"/notes", url.Values{"note": {"Called about the router"}}); p.Status != 303 {
			t.Errorf("note: %d", p.Status)
		}
		if page := c.Get("/console/subscribers/" + marieID); !strings.Contains(page.Body, "Called about the router") {
			t.Error("the note is not shown")
		}
		if p := c.Post("/console/subscriptions/"+marieLine+"/reprovision", nil); p.Status != 303 {
			t.Errorf("reprovision: %d %s", p.Status, p.Body)
		}

		// Plan change: pick, preview, confirm.
		p = c.Get("/console/subscriptions/" + marieLine + "/plan-change")
		if p.Status != 200 || !strings.Contains(p.Body, "(current)") {
			t.Fatalf("plan change page: %d", p.Status)
		}
		other := ""
		for _, opt := range strings.Split(p.Body, `<option value="`)[1:] {
			id := opt[:strings.IndexByte(opt, '"')]
			if id != "" && !strings.Contains(opt[:strings.Index(opt, "</option>")], "(current)") {
				other = id
				break
			}
		}
		if other == "" {
			t.Fatal("no other plan to pick")
		}
		p = c.Get("/console/subscriptions/" + marieLine + "/plan-change?plan_version_id=" + other)
		if p.Status != 200 || !strings.Contains(p.Body, "What the change does") {
			t.Fatalf("plan change preview: %d", p.Status)
		}
		if strings.Contains(p.Body, "Confirm the change") {
			if p := c.Post("/console/subscriptions/"+marieLine+"/plan-change", url.Values{"plan_version_id": {other}}); p.Status != 303 {
				t.Errorf("plan change: %d %s", p.Status, p.Body)
			}
		}
		if p := c.Post("/console/subscriptions/"+marieLine+"/plan-change", url.Values{"plan_version_id": {"nope"}}); p.Status < 400 {
			t.Errorf("plan change to an unknown version: %d", p.Status)
		}

		// Cancel: the preview before the confirmation; a past date is refused beside its field.
		if p := c.Get("/console/subscriptions/" + priyaLine + "/cancel?end_date=2000-01-01"); p.Status != 422 || !strings.Contains(p.Body, `id="end_date-error"`) {
			t.Errorf("cancel preview in the past: %d", p.Status)
		}
		end := s.Clock.Now().AddDate(0, 1, 0).Format("2006-01-02")
		p = c.Get("/console/subscriptions/" + priyaLine + "/cancel?end_date=" + end)
		if p.Status != 200 || !strings.Contains(p.Body, "What cancelling does") || !strings.Contains(p.Body, "Confirm the cancellation") {
			t.Fatalf("cancel preview: %d %s", p.Status, p.Body)
		}
		if status(priyaLine) == subprov.StatusCancelled {
			t.Fatal("the preview cancelled the line")
		}
		if p := c.Post("/console/subscriptions/"+priyaLine+"/cancel", url.Values{"end_date": {end}, "reason": {"Moving abroad"}}); p.Status != 303 {
			t.Fatalf("cancel: %d %s", p.Status, p.Body)
		}
		if status(priyaLine) != subprov.StatusCancelled || len(audited("subscription.cancelled", priyaLine)) == 0 {
			t.Error("the line is not cancelled and audited")
		}
		if p := c.Post("/console/subscriptions/"+priyaLine+"/cancel", url.Values{"end_date": {end}, "reason": {"again"}}); p.Status != 409 {
			t.Errorf("cancel twice: %d", p.Status)
		}
	})
}
