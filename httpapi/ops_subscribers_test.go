package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// The operations surface's subscribers and lines (docs/operations.md, Subscribers and lines).

const jeanLine = "c1000000-0000-4000-8000-000000000003"

// subscriberIDs are the ids of a subscriber list's answer.
func subscriberIDs(res *apptest.Response) []string {
	var ids []string
	rows, _ := res.JSON["subscribers"].([]any)
	for _, r := range rows {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}

func TestOpsSubscriberList(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		northwindViewer := s.OperatorAs(subprov.RoleViewer, northwind)
		cases := []struct {
			name    string
			headers map[string]string
			query   string
			status  int
			want    []string // exactly these subscribers, in id order (nil: not checked)
			has     []string
			hasNot  []string
		}{
			{"platform lists every provider", admin, "", 200, nil, []string{marieID, liamID}, nil},
			{"a provider's operator sees its own", northwindViewer, "", 200, nil, []string{marieID, priyaID, jeanID}, []string{liamID}},
			{"another provider named: empty", northwindViewer, "provider_id=" + mapleProvider, 200, []string{}, nil, nil},
			{"q by name", admin, "q=tremblay", 200, []string{marieID}, nil, nil},
			{"q by customer number", admin, "q=0042-117", 200, []string{marieID}, nil, nil},
			{"q by phone in another format", admin, "q=" + url.QueryEscape("(514) 555-0142"), 200, []string{marieID}, nil, nil},
			{"q by id prefix", admin, "q=s2000000", 200, []string{liamID}, nil, nil},
			{"q over every provider finds each one's", admin, "q=example", 200, nil, []string{marieID, priyaID, liamID}, nil},
			{"q scoped to the provider", northwindViewer, "q=chen", 200, []string{}, nil, nil},
			{"status", northwindViewer, "status=PENDING_INSTALL", 200, []string{jeanID}, nil, nil},
			{"q and provider", admin, "q=tremblay&provider_id=" + mapleProvider, 200, []string{}, nil, nil},
			{"bad status", admin, "status=LIVE", 422, nil, nil, nil},
			{"short q", admin, "q=a", 422, nil, nil, nil},
			{"bad limit", admin, "limit=0", 422, nil, nil, nil},
			{"installer may not read subscribers", s.OperatorAs(subprov.RoleInstaller, ""), "", 403, nil, nil, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers?" + c.query, Headers: c.headers})
				if res.Status != c.status {
					t.Fatalf("status %d, want %d: %s", res.Status, c.status, res.Raw)
				}
				if c.status != 200 {
					return
				}
				got := subscriberIDs(res)
				if c.want != nil && fmt.Sprint(got) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
					t.Errorf("subscribers %v, want %v", got, c.want)
				}
				for _, id := range c.has {
					if !contains(got, id) {
						t.Errorf("%s missing from %v", id, got)
					}
				}
				for _, id := range c.hasNot {
					if contains(got, id) {
						t.Errorf("%s listed: %v", id, got)
					}
				}
			})
		}
		// Unmasked, with lines.
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers?q=tremblay", Headers: admin})
		row := res.JSON["subscribers"].([]any)[0].(map[string]any)
		line := row["lines"].([]any)[0].(map[string]any)
		if row["email"] != "marie.tremblay@example.ca" || row["name"] != "Marie Tremblay" || row["customer_number"] != "0042-117" ||
			line["subscription_id"] != marieLine || line["unit_number"] != "1204" || line["plan_name"] != "Fibre 500" || line["address"] == "" {
			t.Errorf("row %s", res.Raw)
		}
		// Paging: every subscriber once across pages of one.
		seen, cursor := []string{}, ""
		for range 10 {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers?limit=1&cursor=" + cursor, Headers: northwindViewer})
			seen = append(seen, subscriberIDs(res)...)
			next, _ := res.JSON["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
		if fmt.Sprint(seen) != fmt.Sprint([]string{marieID, priyaID, jeanID}) {
			t.Errorf("pages %v", seen)
		}
	})
}

// TestOpsSubscriberListBeingProvisioned: the list by workflow state `provisioning` (read from
// the partial index of those lines) finds the subscriber whose line's port is being written,
// within the operator's scope and the other filters.
func TestOpsSubscriberListBeingProvisioned(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		northwindViewer := s.OperatorAs(subprov.RoleViewer, northwind)
		if got := subscriberIDs(s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers?workflow_state=provisioning", Headers: admin})); len(got) != 0 {
			t.Fatalf("before: %v listed", got)
		}
		mustExec(t, s, `UPDATE subscriptions SET workflow_state = 'provisioning' WHERE id = '`+marieLine+`'`)
		for _, c := range []struct {
			name    string
			headers map[string]string
			query   string
			want    []string
		}{
			{"every provider's", admin, "", []string{marieID}},
			{"the provider's operator", northwindViewer, "", []string{marieID}},
			{"another provider", admin, "&provider_id=" + mapleProvider, []string{}},
			{"another status", admin, "&status=CANCELLED", []string{}},
		} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers?workflow_state=provisioning" + c.query, Headers: c.headers})
			if got := subscriberIDs(res); res.Status != 200 || fmt.Sprint(got) != fmt.Sprint(c.want) && len(got)+len(c.want) > 0 {
				t.Errorf("%s: %d %v, want %v", c.name, res.Status, got, c.want)
			}
		}
	})
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestOpsSubscriberAccount(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		invoice, creditNote := northwindBillingDocuments(t, s) // moves the clock: log in after
		nw := s.OperatorAs(subprov.RoleViewer, northwind)
		ctx := context.Background()
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertTicket(ctx, &subprov.Ticket{ID: store.NewID(), ProviderID: northwind, Number: "T-9001", SubscriberID: marieID,
				Kind: "operator", Subject: "Switch port does not follow its line", Priority: "high", Status: "open", Group: "Northwind Tier 1",
				CreatedAt: s.Clock.Now()})
		}); err != nil {
			t.Fatal(err)
		}
		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + marieID, Headers: nw})
		if res.Status != 200 {
			t.Fatalf("%d %s", res.Status, res.Raw)
		}
		holder := res.JSON["holder"].(map[string]any)
		lines := res.JSON["lines"].([]any)
		line := lines[0].(map[string]any)
		port, _ := line["port"].(map[string]any)
		history := line["history"].([]any)
		if holder["email"] != "marie.tremblay@example.ca" || res.JSON["provider_id"] != northwind || line["subscription_id"] != marieLine ||
			port["switch"] != "mtl-king-sw1" || port["port"] != "ge-0/0/12" || line["billing_owner"] != "platform" || len(history) != 1 ||
			history[0].(map[string]any)["status"] != "ACTIVE" {
			t.Errorf("account %s", res.Raw)
		}
		for _, list := range []string{"authorized_users", "invoices", "credit_notes", "tickets", "notes"} {
			if _, ok := res.JSON[list].([]any); !ok {
				t.Errorf("%s is not a list: %s", list, res.Raw)
			}
		}
		first := func(list string) map[string]any {
			rows, _ := res.JSON[list].([]any)
			if len(rows) == 0 {
				return map[string]any{}
			}
			return rows[0].(map[string]any)
		}
		if first("invoices")["id"] != invoice || first("credit_notes")["id"] != creditNote || first("tickets")["number"] != "T-9001" ||
			first("tickets")["kind"] != "operator" {
			t.Errorf("documents %s", res.Raw)
		}
		jean := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + jeanID, Headers: nw})
		if l := jean.JSON["lines"].([]any)[0].(map[string]any); l["port"] != nil || l["status"] != "PENDING_INSTALL" {
			t.Errorf("jean %s", jean.Raw)
		}
		for _, c := range []struct {
			name    string
			headers map[string]string
			id      string
			status  int
		}{
			{"another provider's subscriber", s.OperatorAs(subprov.RoleAdmin, mapleProvider), marieID, 404},
			{"unknown", nw, "s9999999-0000-4000-8000-000000000001", 404},
			{"platform sees Maple's", s.Operator(), liamID, 200},
			{"installer", s.OperatorAs(subprov.RoleInstaller, northwind), marieID, 403},
		} {
			if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + c.id, Headers: c.headers}); res.Status != c.status {
				t.Errorf("%s: %d, want %d: %s", c.name, res.Status, c.status, res.Raw)
			}
		}
	})
}

// auditOf lists the audit entries of an object and action.
func auditOf(t *testing.T, s *apptest.Service, objectID, action string) []map[string]any {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + objectID + "&action=" + action, Headers: s.Operator()})
	var out []map[string]any
	for _, e := range res.JSON["entries"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func TestOpsLineActions(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		support := s.OperatorAs(subprov.RoleSupport, northwind)
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		viewer := s.OperatorAs(subprov.RoleViewer, northwind)
		line := "/api/v1/subscriptions/" + marieLine
		steps := []struct {
			name    string
			headers map[string]string
			path    string
			body    any
			status  int
			check   func(t *testing.T, res *apptest.Response)
		}{
			{"viewer may not suspend", viewer, line + "/suspend", map[string]string{"reason": "x"}, 403, nil},
			{"another provider's line", maple, line + "/suspend", map[string]string{"reason": "x"}, 404, nil},
			{"reason required", support, line + "/suspend", map[string]string{}, 422, nil},
			{"unknown field", support, line + "/suspend", map[string]string{"reason": "x", "why": "y"}, 422, nil},
			{"suspend", support, line + "/suspend", map[string]string{"reason": "Customer away"}, 200, func(t *testing.T, res *apptest.Response) {
				h := res.JSON["history"].([]any)
				last := h[len(h)-1].(map[string]any)
				if res.JSON["status"] != "SUSPENDED" || last["status"] != "SUSPENDED" || last["reason"] != "Customer away" {
					t.Errorf("suspended line %s", res.Raw)
				}
			}},
			{"suspend again", support, line + "/suspend", map[string]string{"reason": "again"}, 409, nil},
			{"restore", support, line + "/restore", map[string]string{"reason": "Back home"}, 200, func(t *testing.T, res *apptest.Response) {
				if res.JSON["status"] != "ACTIVE" || len(res.JSON["history"].([]any)) != 3 {
					t.Errorf("restored line %s", res.Raw)
				}
			}},
			{"restore an active line", support, line + "/restore", map[string]string{"reason": "x"}, 409, nil},
			{"hold before install", support, "/api/v1/subscriptions/" + jeanLine + "/suspend", map[string]string{"reason": "Moving later"}, 200, func(t *testing.T, res *apptest.Response) {
				if res.JSON["status"] != "PENDING_INSTALL" {
					t.Errorf("held line %s", res.Raw)
				}
			}},
			{"viewer may preview", viewer, line + "/plan-change/preview", map[string]string{"plan_version_id": fibre1000}, 200, func(t *testing.T, res *apptest.Response) {
				if res.JSON["eligible"] != true || res.JSON["subscription_id"] != marieLine {
					t.Errorf("preview %s", res.Raw)
				}
			}},
			{"preview: unknown plan", viewer, line + "/plan-change/preview", map[string]string{"plan_version_id": "pv200000-0000-4000-8000-000000000300"}, 422, nil},
			{"preview: another provider's line", maple, line + "/plan-change/preview", map[string]string{"plan_version_id": fibre1000}, 404, nil},
			{"viewer may not change plan", viewer, line + "/plan-change", map[string]string{"plan_version_id": fibre1000}, 403, nil},
			{"change plan", support, line + "/plan-change", map[string]string{"plan_version_id": fibre1000}, 200, func(t *testing.T, res *apptest.Response) {
				if res.JSON["plan_version_id"] != fibre1000 || res.JSON["plan_name"] != "Fibre 1000" {
					t.Errorf("changed line %s", res.Raw)
				}
			}},
			{"second change the same day", support, line + "/plan-change", map[string]string{"plan_version_id": fibre150}, 409, nil},
			{"reprovision", support, line + "/reprovision", nil, 202, func(t *testing.T, res *apptest.Response) {
				if id, _ := res.JSON["job_id"].(string); id == "" {
					t.Errorf("reprovision %s", res.Raw)
				}
			}},
			{"reprovision without a port", support, "/api/v1/subscriptions/" + jeanLine + "/reprovision", map[string]string{}, 409, nil},
			{"reprovision another provider's", maple, line + "/reprovision", nil, 404, nil},
			{"note", support, line + "/notes", map[string]string{"note": "Called about Wi-Fi"}, 201, func(t *testing.T, res *apptest.Response) {
				if res.JSON["note"] != "Called about Wi-Fi" || res.JSON["subscriber_id"] != marieID ||
					res.JSON["author"] != "operator:support."+northwind+"@ops.test" {
					t.Errorf("note %s", res.Raw)
				}
				// A create answers the object as a read of it returns it.
				account := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + marieID, Headers: support})
				found := false
				for _, n := range account.JSON["notes"].([]any) {
					found = found || reflect.DeepEqual(n, map[string]any(res.JSON))
				}
				if !found {
					t.Errorf("the note %s is not in the account as created: %s", res.Raw, account.JSON["notes"])
				}
			}},
			{"empty note", support, line + "/notes", map[string]string{"note": " "}, 422, nil},
			{"note on another provider's", maple, line + "/notes", map[string]string{"note": "x"}, 404, nil},
		}
		for _, st := range steps {
			res := s.Do(apptest.Request{Method: "POST", Path: st.path, Headers: st.headers, Body: st.body})
			if res.Status != st.status {
				t.Errorf("%s: status %d, want %d: %s", st.name, res.Status, st.status, res.Raw)
				continue
			}
			if st.check != nil {
				st.check(t, res)
			}
		}
		// Each write audited once, with its reason and changes.
		for _, c := range []struct {
			action, reason, field string
			before, after         any
		}{
			{"subscription.suspended", "Customer away", "status", "ACTIVE", "SUSPENDED"},
			{"subscription.restored", "Back home", "status", "SUSPENDED", "ACTIVE"},
			{"subscription.plan_changed", "", "plan_version_id", "pv100000-0000-4000-8000-000000000500", fibre1000},
		} {
			es := auditOf(t, s, marieLine, c.action)
			if len(es) != 1 {
				t.Errorf("%s: %d entries, want 1", c.action, len(es))
				continue
			}
			e := es[0]
			ch, _ := e["changes"].(map[string]any)[c.field].([]any)
			if (c.reason != "" && e["reason"] != c.reason) || len(ch) != 2 || ch[0] != c.before || ch[1] != c.after ||
				e["actor"].(map[string]any)["type"] != "operator" {
				t.Errorf("%s: entry %v", c.action, e)
			}
		}
		if es := auditOf(t, s, marieLine, "subscription.reprovisioned"); len(es) != 1 {
			t.Errorf("reprovisioned: %d entries", len(es))
		}
		if es := auditOf(t, s, jeanLine, "subscription.suspended"); len(es) != 1 || es[0]["reason"] != "Moving later" {
			t.Errorf("hold: %v", es)
		}
		acct := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + marieID, Headers: viewer})
		notes := acct.JSON["notes"].([]any)
		if len(notes) != 1 {
			t.Fatalf("notes %s", acct.Raw)
		}
		if es := auditOf(t, s, notes[0].(map[string]any)["id"].(string), "note.created"); len(es) != 1 {
			t.Errorf("note.created: %d entries", len(es))
		}
	})
}

// TestOpsRestoreWhenThePortStaysShut: a restore the switch refuses puts the line back to
// SUSPENDED and answers 409, as the partner's restore does; the history says why.
func TestOpsRestoreWhenThePortStaysShut(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		line := "/api/v1/subscriptions/" + marieLine
		if res := s.Do(apptest.Request{Method: "POST", Path: line + "/suspend", Headers: admin, Body: map[string]string{"reason": "Unpaid elsewhere"}}); res.Status != 200 {
			t.Fatalf("suspend %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/faults", Headers: admin, Body: map[string]string{"switch": "fail"}}); res.Status != 200 {
			t.Fatalf("fault %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: line + "/restore", Headers: admin, Body: map[string]string{"reason": "Paid"}}); res.Status != 409 {
			t.Fatalf("restore with the switch failing: %d %s", res.Status, res.Raw)
		}
		acct := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + marieID, Headers: admin})
		l := acct.JSON["lines"].([]any)[0].(map[string]any)
		h := l["history"].([]any)
		last := h[len(h)-1].(map[string]any)
		if l["status"] != "SUSPENDED" || last["status"] != "SUSPENDED" || last["reason"] != "port_not_reopened" {
			t.Errorf("line after a refused restore %v", l)
		}
	})
}
