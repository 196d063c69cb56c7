package console_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/internal/apptest"
)

// The demo fixture's objects the network, install and plan pages are tested on.
const (
	kingStreet    = "b1000000-0000-4000-8000-000000000001" // Northwind's alone
	georgiaStreet = "b1000000-0000-4000-8000-000000000005" // Maple's
	pendingLine   = "c1000000-0000-4000-8000-000000000003" // waits for its install
	storeKey      = "nwf_live_store_demo_key_000000000002"
)

// demoInstallJob is the install job of the demo's line waiting for its install.
func demoInstallJob(t testing.TB, s *apptest.Service) *subprov.InstallQueueEntry {
	t.Helper()
	jobs, err := s.Install.Queue(context.Background(), subprov.Everything, install.QueueFilter{ProviderID: northwind})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.SubscriptionID == pendingLine {
			return j
		}
	}
	t.Fatal("the demo has no install job for its pending line")
	return nil
}

// auditActions lists the actions of the audit log, oldest first.
func auditActions(t testing.TB, s *apptest.Service) []string {
	t.Helper()
	rows, err := s.Store.R().Query(context.Background(), `SELECT action FROM audit_log ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// wantPage fails the test unless the page has status and shows every text of contains.
func wantPage(t *testing.T, what string, p *apptest.Page, status int, contains ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("%s: %d, want %d\n%s", what, p.Status, status, p.Body)
	}
	for _, c := range contains {
		if !strings.Contains(p.Body, c) {
			t.Errorf("%s does not show %q", what, c)
		}
	}
}

func wantRedirect(t *testing.T, what string, p *apptest.Page, to string) {
	t.Helper()
	if p.Status != http.StatusSeeOther || p.Location() != to {
		t.Fatalf("%s: %d to %q, want 303 to %q\n%s", what, p.Status, p.Location(), to, p.Body)
	}
}

// TestConsoleInstallQueue: the queue's filters (by the status the home page links with), a
// job's page with its slots, and the actions' refusals: a missing slot, another provider's
// job (404, as an unknown id), a closed job (409); each refusal changes nothing.
func TestConsoleInstallQueue(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		job := demoInstallJob(t, s)
		c := s.ConsoleAs(t, subprov.RoleSupport, northwind)
		jobPath := "/console/installs/" + job.ID
		for _, tc := range []struct {
			query  string
			status int
			shown  bool
		}{
			{"", 200, true},
			{"?status=open", 200, true},
			{"?status=done", 200, false},
			{"?status=open&kind=reinstall", 200, false},
			{"?booking=customer", 200, true},
			{"?status=nonsense", 422, false},
		} {
			p := c.Get("/console/installs" + tc.query)
			if p.Status != tc.status || strings.Contains(p.Body, jobPath) != tc.shown {
				t.Errorf("queue%s: %d, shows the job %v; want %d, %v", tc.query, p.Status, !tc.shown, tc.status, tc.shown)
			}
		}
		if p := c.Get("/console/installs?status=nonsense"); !strings.Contains(p.Body, "want open, booked, held, done or cancelled") {
			t.Errorf("a refused filter does not say why:\n%s", p.Body)
		}
		p := c.Get(jobPath)
		wantPage(t, "job page", p, 200, "Available slots", `name="slot_id"`, "Book this slot", "Complete the install", "Assign")

		other := s.ConsoleAs(t, subprov.RoleAdmin, maple)
		s.Settle(t) // the start-up bill run's entries are written before counting
		before := auditActions(t, s)
		wantPage(t, "book without a slot", c.Post(jobPath+"/book", url.Values{}), 422, "Choose a slot.")
		wantPage(t, "book a slot that is not one", c.Post(jobPath+"/book", url.Values{"slot_id": {"2020-01-01_nope"}}), 422)
		wantPage(t, "assign a name too long", c.Post(jobPath+"/assign", url.Values{"assigned_to": {strings.Repeat("x", 201)}}), 422, "at most 200 characters")
		// Another provider's operator: its console answers 404 for the job, read or acted on.
		wantPage(t, "another provider's job", other.Get(jobPath), 404, "not found")
		wantPage(t, "another provider's job, assigned", other.Post(jobPath+"/assign", url.Values{"assigned_to": {"x"}}), 404)
		wantPage(t, "another provider's job, completed", other.Post(jobPath+"/complete", url.Values{}), 404)
		if after := auditActions(t, s); len(after) != len(before) {
			t.Errorf("refused actions wrote audit entries: %v", after[len(before):])
		}
		if j := demoInstallJob(t, s); j.State != job.State || j.AssignedTo != "" {
			t.Errorf("refused actions changed the job: %+v", j)
		}

		wantRedirect(t, "assign", c.Post(jobPath+"/assign", url.Values{"assigned_to": {"Team East"}}), jobPath)
		wantPage(t, "job page after assigning", c.Get(jobPath), 200, "Assigned to Team East.", `value="Team East"`)
		if j := demoInstallJob(t, s); j.AssignedTo != "Team East" {
			t.Errorf("assigned to %q", j.AssignedTo)
		}
	})
}

// TestConsoleInstallWindows: a window is added and deleted through the capability (audited);
// a bad one is refused beside its field with nothing added.
func TestConsoleInstallWindows(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.ConsoleAs(t, subprov.RoleInstaller, northwind)
		wantPage(t, "windows", c.Get("/console/install-windows"), 200, "08:00", "Add an install window")
		n := count(t, s, `SELECT COUNT(*) FROM install_windows`)
		wantPage(t, "a window that ends before it starts", c.Post("/console/install-windows",
			url.Values{"weekday": {"sunday"}, "starts": {"10:00"}, "ends": {"09:00"}, "technicians": {"2"}}), 422, "want a local time HH:MM after starts", `value="10:00"`)
		wantPage(t, "technicians not a number", c.Post("/console/install-windows",
			url.Values{"weekday": {"sunday"}, "starts": {"10:00"}, "ends": {"12:00"}, "technicians": {"two"}}), 422, "want a whole number")
		if count(t, s, `SELECT COUNT(*) FROM install_windows`) != n {
			t.Fatal("a refused window was added")
		}
		wantRedirect(t, "add", c.Post("/console/install-windows",
			url.Values{"weekday": {"sunday"}, "starts": {"10:00"}, "ends": {"12:00"}, "technicians": {"2"}}), "/console/install-windows")
		if count(t, s, `SELECT COUNT(*) FROM install_windows`) != n+1 {
			t.Fatal("the window was not added")
		}
		var id string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT id FROM install_windows WHERE weekday = 0`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		wantRedirect(t, "delete", c.Post("/console/install-windows/"+id+"/delete", url.Values{}), "/console/install-windows")
		wantPage(t, "another provider's window", s.ConsoleAs(t, subprov.RoleInstaller, maple).Post("/console/install-windows/iw100000-0000-4000-8000-000000000001/delete", url.Values{}), 404)
		actions := strings.Join(auditActions(t, s), " ")
		if !strings.Contains(actions, "install_window.created") || !strings.Contains(actions, "install_window.deleted") {
			t.Errorf("audit log: %s", actions)
		}
	})
}

// TestConsoleBuildings: a building is created, edited under the version its form was read
// at (a stale form is refused, "Changed since you read it", nothing changed), given a unit and
// a port; bad input is refused beside its field; another provider's building is 404.
func TestConsoleBuildings(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.ConsoleAs(t, subprov.RoleAdmin, northwind)
		wantPage(t, "network", c.Get("/console/network?q=king"), 200, "120 Rue King O")
		if p := c.Get("/console/network"); strings.Contains(p.Body, "1055 W Georgia St") {
			t.Error("the list shows another provider's building")
		}
		n := count(t, s, `SELECT COUNT(*) FROM buildings`)
		wantPage(t, "a building without a street", c.Post("/console/network/buildings", url.Values{"city": {"Laval"}}), 422, "required", `value="Laval"`)
		if count(t, s, `SELECT COUNT(*) FROM buildings`) != n {
			t.Fatal("a refused building was created")
		}
		p := c.Post("/console/network/buildings", url.Values{"street": {"10 Rue Test"}, "city": {"Laval"}, "postal_code": {"H7N 1A1"},
			"province": {"QC"}, "country": {"CA"}, "line_type": {"first"}, "orderable": {"on"}})
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/console/network/buildings/") {
			t.Fatalf("create: %d %s\n%s", p.Status, p.Location(), p.Body)
		}
		path := p.Location()
		wantPage(t, "the new building", c.Get(path), 200, "10 Rue Test", `name="version" value="1"`, "No units.")

		form := url.Values{"version": {"1"}, "street": {"12 Rue Test"}, "city": {"Laval"}, "postal_code": {"H7N 1A1"},
			"province": {"QC"}, "country": {"CA"}, "line_type": {"first"}, "orderable": {"on"}}
		wantRedirect(t, "edit", c.Post(path, form), path)
		wantPage(t, "after the edit", c.Get(path), 200, "12 Rue Test", `name="version" value="2"`)
		form.Set("street", "14 Rue Test") // read at version 1: someone saved since
		wantPage(t, "a stale edit", c.Post(path, form), 409, "Changed since you read it", `value="14 Rue Test"`)
		wantPage(t, "after the stale edit", c.Get(path), 200, "12 Rue Test", `name="version" value="2"`)

		wantRedirect(t, "unit", c.Post(path+"/units", url.Values{"unit_number": {"301"}}), path)
		wantPage(t, "a unit without its number", c.Post(path+"/units", url.Values{}), 422, "required")
		p = c.Get(path)
		wantPage(t, "with its unit", p, 200, "301")
		wantRedirect(t, "port", c.Post(path+"/ports", url.Values{"switch": {"sw-test-1"}, "port": {"ge-0/0/1"}}), path)
		wantPage(t, "with its port", c.Get(path), 200, "sw-test-1", "ge-0/0/1")
		wantPage(t, "a port without its switch", c.Post(path+"/ports", url.Values{"port": {"ge-0/0/2"}}), 422, "required", `value="ge-0/0/2"`)

		wantPage(t, "another provider's building", c.Get("/console/network/buildings/"+georgiaStreet), 404)
		wantPage(t, "another provider's building, edited", c.Post("/console/network/buildings/"+georgiaStreet, form), 404)
		actions := strings.Join(auditActions(t, s), " ")
		for _, a := range []string{"building.created", "building.updated", "unit.created", "port.created"} {
			if !strings.Contains(actions, a) {
				t.Errorf("audit log has no %s: %s", a, actions)
			}
		}
	})
}

// upload posts the import form with a file, as a browser does.
func upload(t *testing.T, s *apptest.Service, c *apptest.Console, csv string) *apptest.Page {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", c.CSRF)
	fw, err := mw.CreateFormFile("file", "buildings.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(csv))
	_ = mw.Close()
	req, err := http.NewRequest("POST", s.URL+"/console/network/import", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.Do(req)
}

// Import files: one with a bad row (row 3, its line type), and a good one.
const (
	badImport = "street,city,postal_code,province,country,line_type,unit_number\n" +
		"700 Rue Import,Montréal,H2X 1Y4,QC,CA,first,101\n" +
		"702 Rue Import,Montréal,H2X 1Y4,QC,CA,fourth,102\n"
	goodImport = "street,city,postal_code,province,country,line_type,orderable,unit_number\n" +
		"700 Rue Import,Montréal,H2X 1Y4,QC,CA,first,true,101\n" +
		"700 Rue Import,Montréal,H2X 1Y4,QC,CA,first,true,102\n"
)

// TestConsoleImport: an uploaded file with a bad row lists its problems by row and column
// and writes nothing; a good file (uploaded or pasted) creates its buildings, which the list
// shows.
func TestConsoleImport(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.ConsoleAs(t, subprov.RoleAdmin, northwind)
		wantPage(t, "import page", c.Get("/console/network/import"), 200, `type="file"`, "unit_number")
		buildings, units := count(t, s, `SELECT COUNT(*) FROM buildings`), count(t, s, `SELECT COUNT(*) FROM units`)
		p := upload(t, s, c, badImport)
		wantPage(t, "a file with a bad row", p, 422, "Nothing was imported", `<td data-label="Row">3</td>`, `<td data-label="Column">line_type</td>`)
		if count(t, s, `SELECT COUNT(*) FROM buildings`) != buildings || count(t, s, `SELECT COUNT(*) FROM units`) != units {
			t.Fatal("a refused import wrote rows")
		}
		wantPage(t, "no file", upload(t, s, c, ""), 422, "Choose a CSV file")
		wantRedirect(t, "a good file", upload(t, s, c, goodImport), "/console/network")
		wantPage(t, "after the import", c.Get("/console/network"), 200, "Imported 1 building(s), 2 unit(s) and 0 port(s). 700 Rue Import.", "700 Rue Import")
		if count(t, s, `SELECT COUNT(*) FROM buildings`) != buildings+1 || count(t, s, `SELECT COUNT(*) FROM units`) != units+2 {
			t.Fatal("the import did not write its rows")
		}
		// Pasted rows go the same way: the same rows again are refused (the units exist).
		c.Get("/console/network/import")
		p = c.Post("/console/network/import", url.Values{"csv": {strings.ReplaceAll(goodImport, "700 Rue", "800 Rue")}})
		wantRedirect(t, "pasted rows", p, "/console/network")
		if !strings.Contains(strings.Join(auditActions(t, s), " "), "buildings.imported") {
			t.Error("the import is not audited")
		}
	})
}

// TestConsolePlans: a plan is created with its first version, given another version, and a
// version's sale stopped under the version the page was read at (a stale switch is refused).
func TestConsolePlans(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		c := s.ConsoleAs(t, subprov.RoleAdmin, northwind)
		wantPage(t, "plans", c.Get("/console/plans"), 200, "Fibre 1000", "CAD", "Stop selling")
		version := url.Values{"monthly_price": {"55.00"}, "download_mbps": {"500"}, "upload_mbps": {"500"}, "sellable": {"on"}}
		bad := url.Values{"name": {"Fibre 600 Test"}, "monthly_price": {"cheap"}, "download_mbps": {"500"}, "upload_mbps": {"x"}}
		n := count(t, s, `SELECT COUNT(*) FROM plans`)
		wantPage(t, "a bad plan", c.Post("/console/plans", bad), 422, "want a whole number", `value="Fibre 600 Test"`)
		bad.Set("upload_mbps", "500")
		wantPage(t, "a bad price", c.Post("/console/plans", bad), 422, "want a non-negative amount", `value="cheap"`)
		if count(t, s, `SELECT COUNT(*) FROM plans`) != n {
			t.Fatal("a refused plan was created")
		}
		plan := url.Values{"name": {"Fibre 600 Test"}}
		for k, v := range version {
			plan[k] = v
		}
		wantRedirect(t, "create", c.Post("/console/plans", plan), "/console/plans")
		wantPage(t, "with the plan", c.Get("/console/plans"), 200, "Fibre 600 Test", "55.00 CAD")
		var planID, versionID string
		if err := s.Store.R().QueryRow(context.Background(), `SELECT p.id, v.id FROM plans p JOIN plan_versions v ON v.plan_id = p.id WHERE p.name = 'Fibre 600 Test'`).Scan(&planID, &versionID); err != nil {
			t.Fatal(err)
		}
		version.Set("monthly_price", "50.00")
		wantRedirect(t, "a version", c.Post("/console/plans/"+planID+"/versions", version), "/console/plans")
		wantPage(t, "with its version", c.Get("/console/plans"), 200, "50.00 CAD")
		wantPage(t, "a bad version", c.Post("/console/plans/"+planID+"/versions", url.Values{"monthly_price": {"1"}, "download_mbps": {"0"}, "upload_mbps": {"1"}}), 422, "want a positive number")

		sell := "/console/plan-versions/" + versionID + "/sellable"
		wantRedirect(t, "stop selling", c.Post(sell, url.Values{"version": {"1"}, "sellable": {"false"}}), "/console/plans")
		wantPage(t, "a stale switch", c.Post(sell, url.Values{"version": {"1"}, "sellable": {"true"}}), 409, "Changed since you read it")
		var sellable bool
		if err := s.Store.R().QueryRow(context.Background(), `SELECT sellable FROM plan_versions WHERE id = ?`, versionID).Scan(&sellable); err != nil || sellable {
			t.Fatalf("sellable %v after stopping and a stale switch (%v)", sellable, err)
		}
		wantPage(t, "another provider's version", s.ConsoleAs(t, subprov.RoleAdmin, maple).Post(sell, url.Values{"version": {"2"}, "sellable": {"true"}}), 404)
	})
}

// TestConsoleInstallJobVisibility: a job's page shows its slots to every role that reads it,
// and the book, assign and complete forms only to the roles with the install permission.
func TestConsoleInstallJobVisibility(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		path := "/console/installs/" + demoInstallJob(t, s).ID
		actions := []string{"Book this slot", "Complete the install", `action="` + path + `/assign"`}
		for _, role := range subprov.Roles {
			p := s.ConsoleAs(t, role, "").Get(path)
			if p.Status != 200 || !strings.Contains(p.Body, "Available slots") {
				t.Errorf("%s: %d without its slots", role, p.Status)
				continue
			}
			for _, a := range actions {
				if strings.Contains(p.Body, a) != role.Can(subprov.PermInstall) {
					t.Errorf("%s: shows %q is %v, want %v", role, a, !role.Can(subprov.PermInstall), role.Can(subprov.PermInstall))
				}
			}
		}
	})
}
