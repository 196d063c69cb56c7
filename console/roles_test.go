package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/console"
	"github.com/subprov/subprov/internal/apptest"
)

// TestConsoleRoleMatrix: every console route refuses, with 403, a role without the permission
// it declares, and a refused form writes nothing (no audit entry, no change); a page lets a
// role with it through. It is generated from the console's route table, so a new page is
// covered by adding its route.
func TestConsoleRoleMatrix(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		// The start-up bill run and its charges write audit entries of their own: they are done
		// before counting.
		s.Settle(t)
		consoles := map[subprov.Role]*apptest.Console{}
		for _, role := range subprov.Roles {
			consoles[role] = s.ConsoleAs(t, role, "")
		}
		// What operators did: the service's own background work (sweeps, jobs) writes entries as
		// the system meanwhile.
		audited := func() int {
			var n int
			if err := s.Store.R().QueryRow(ctx, `SELECT COUNT(*) FROM audit_log WHERE actor_type = 'operator'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		checked := 0
		for _, rt := range console.Routes() {
			if rt.Public {
				continue
			}
			path := samplePath(rt.Path)
			for _, role := range subprov.Roles {
				if role.Can(rt.Perm) {
					// A role with the permission is let through (a form is not sent: it would act).
					if rt.Method == "GET" {
						if p := consoles[role].Get(path); p.Status == http.StatusForbidden {
							t.Errorf("%s %s as %s: 403, but the role holds %s", rt.Method, path, role, rt.Perm)
						}
					}
					continue
				}
				checked++
				c := consoles[role]
				before := audited()
				var p *apptest.Page
				if rt.Method == "POST" {
					p = c.Post(path, url.Values{})
				} else {
					p = c.Get(path)
				}
				if p.Status != http.StatusForbidden {
					t.Errorf("%s %s as %s: %d, want 403", rt.Method, path, role, p.Status)
				}
				if after := audited(); after != before {
					t.Errorf("%s %s as %s wrote %d audit entries", rt.Method, path, role, after-before)
				}
			}
		}
		t.Logf("%d (route, role) refusals checked", checked)
	})
}

// samplePath fills a route's path parameters with an id that names nothing: the permission is
// checked before anything is read.
func samplePath(p string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(p, "00000000-0000-4000-8000-000000000000")
}

// visibility is what one page shows a role: text that must be there and text that must not
// (a control the role may not use is not rendered). Page builders add their pages' rows.
var visibility = []struct {
	page  string
	role  subprov.Role
	shown []string
	gone  []string
}{
	{"/console/", subprov.RoleAdmin, []string{"overdue invoices", "webhook events failing", `href="/console/"`}, nil},
	{"/console/", subprov.RoleViewer, []string{"overdue invoices", "install jobs open"}, nil},
	{"/console/", subprov.RoleInstaller, []string{"Welcome"}, []string{"overdue invoices", "webhook events failing"}},
	{"/console/account/second-factor", subprov.RoleInstaller, []string{"Set up a second factor"}, nil},
	{"/console/account/password", subprov.RoleViewer, []string{`name="current_password"`, `name="new_password"`}, nil},

	// Subscribers: every role that reads sees the list and the account; the line actions only
	// a role with line_actions (the installer reads neither: the role matrix's 403).
	{"/console/subscribers", subprov.RoleViewer, []string{`id="q"`, `href="/console/subscribers"`, "Marie Tremblay"}, nil},
	{"/console/", subprov.RoleInstaller, nil, []string{`href="/console/subscribers"`}},
	{"/console/subscribers/" + accountShown, subprov.RoleSupport, append([]string{"Marie Tremblay"}, lineControls...), nil},
	{"/console/subscribers/" + accountShown, subprov.RoleAdmin, append([]string{"Marie Tremblay"}, lineControls...), nil},
	{"/console/subscribers/" + accountShown, subprov.RoleBilling, []string{"Marie Tremblay", `/document"`}, lineControls},
	// An invoice's PDF is served at one address only, the invoice page's.
	{"/console/subscribers/" + accountShown, subprov.RoleViewer, []string{`<a href="/console/invoices/`}, []string{accountShown + `/invoices/`}},
	{"/console/subscribers/" + accountShown, subprov.RoleViewer, []string{"Marie Tremblay", "Status history", `href="/console/network/buildings/`}, lineControls},
	// The install queue, the install windows, the network and plans (pages-network).
	{"/console/installs", subprov.RoleInstaller, []string{"Install queue", `href="/console/network"`, `name="status"`}, []string{`href="/console/plans"`}},
	{"/console/install-windows", subprov.RoleInstaller, []string{"Add an install window", "Delete"}, nil},
	{"/console/install-windows", subprov.RoleSupport, []string{"Add an install window", "Delete"}, nil},
	{"/console/install-windows", subprov.RoleViewer, []string{"08:00"}, []string{"Add an install window", "Delete"}},
	{"/console/install-windows", subprov.RoleBilling, []string{"08:00"}, []string{"Add an install window", "Delete"}},
	{"/console/network", subprov.RoleAdmin, []string{"120 Rue King O", "New building", "Import from CSV"}, nil},
	{"/console/network", subprov.RoleInstaller, []string{"120 Rue King O"}, []string{"New building", "Import from CSV", `action="/console/network/buildings"`}},
	{"/console/network/switches", subprov.RoleInstaller, []string{"mtl-king-sw1", "van-georgia-sw1", "closed", "none"}, []string{"sealed"}},
	{"/console/network", subprov.RoleSupport, []string{"120 Rue King O"}, []string{"New building", "Import from CSV"}},
	{"/console/network", subprov.RoleBilling, []string{"120 Rue King O"}, []string{"New building", "Import from CSV"}},
	{"/console/network/buildings/b1000000-0000-4000-8000-000000000001", subprov.RoleAdmin, []string{"1204", "Add the unit", "Add the port", "Edit the building"}, nil},
	{"/console/network/buildings/b1000000-0000-4000-8000-000000000001", subprov.RoleInstaller, []string{"1204"}, []string{"Add the unit", "Add the port", "Edit the building"}},
	{"/console/network/buildings/b1000000-0000-4000-8000-000000000001", subprov.RoleViewer, []string{"1204"}, []string{"Add the unit", "Add the port", "Edit the building"}},
	{"/console/plans", subprov.RoleAdmin, []string{"Fibre 1000", "New plan", "Add a version", "Stop selling"}, nil},
	{"/console/plans", subprov.RoleSupport, []string{"Fibre 1000"}, []string{"New plan", "Add a version", "Stop selling"}},
	{"/console/plans", subprov.RoleBilling, []string{"Fibre 1000"}, []string{"New plan", "Add a version", "Stop selling"}},
	{"/console/plans", subprov.RoleViewer, []string{"Fibre 1000", `href="/console/installs"`}, []string{"New plan", "Add a version", "Stop selling"}},
	{"/console/invoices", subprov.RoleViewer, []string{`href="/console/invoices"`, `href="/console/webhook-events"`, `href="/console/tickets"`, `href="/console/privacy-requests"`, `href="/console/bill-runs"`}, nil},
	{"/console/", subprov.RoleInstaller, nil, []string{`href="/console/invoices"`, `href="/console/webhook-events"`, `href="/console/tickets"`, `href="/console/privacy-requests"`}},
}

// accountShown is the account the visibility table reads (the demo's Marie), and lineControls
// the account page's line actions.
const accountShown = "s1000000-0000-4000-8000-000000000001"

var lineControls = []string{`/suspend"`, `/cancel"`, `/plan-change"`, `/reprovision"`, `name="note"`, `name="reason"`}

// TestConsoleVisibility loads each page of the table as its role and checks what it shows.
func TestConsoleVisibility(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		// The account's invoice links are those of the start-up bill run's invoices.
		s.AwaitStartupBillRun(t)
		consoles := map[subprov.Role]*apptest.Console{}
		for _, v := range visibility {
			c := consoles[v.role]
			if c == nil {
				c = s.ConsoleAs(t, v.role, "")
				consoles[v.role] = c
			}
			p := c.Get(v.page)
			if p.Status != 200 {
				t.Errorf("%s as %s: %d", v.page, v.role, p.Status)
				continue
			}
			for _, want := range v.shown {
				if !strings.Contains(p.Body, want) {
					t.Errorf("%s as %s does not show %q", v.page, v.role, want)
				}
			}
			for _, gone := range v.gone {
				if strings.Contains(p.Body, gone) {
					t.Errorf("%s as %s shows %q", v.page, v.role, gone)
				}
			}
		}
	})
}
