package httpapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

// The inventory, plans and install windows of the operations surface (docs/operations.md).

const (
	buildingKing  = "b1000000-0000-4000-8000-000000000001" // Northwind only
	buildingQueen = "b1000000-0000-4000-8000-000000000002" // Northwind and Maple
	buildingWest  = "b1000000-0000-4000-8000-000000000005" // Maple only
	planFibre500P = "p1000000-0000-4000-8000-000000000500"
	windowMonday  = "iw100000-0000-4000-8000-000000000001" // Northwind's
)

func call(s *apptest.Service, h map[string]string, method, path string, body any) *apptest.Response {
	return s.Do(apptest.Request{Method: method, Path: path, Headers: h, Body: body})
}

func want(t *testing.T, res *apptest.Response, status int, what string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("%s: %d, want %d: %s", what, res.Status, status, res.Raw)
	}
}

// auditActions lists the actions the audit log records about an object.
func auditActions(t *testing.T, s *apptest.Service, objectID string) []string {
	t.Helper()
	res := call(s, s.Operator(), "GET", "/api/v1/audit?object_id="+objectID, nil)
	want(t, res, 200, "audit")
	var out []string
	for _, e := range res.JSON["entries"].([]any) {
		out = append(out, e.(map[string]any)["action"].(string))
	}
	return out
}

func hasAction(t *testing.T, s *apptest.Service, objectID, action string) {
	t.Helper()
	got := auditActions(t, s, objectID)
	for _, a := range got {
		if a == action {
			return
		}
	}
	t.Errorf("audit of %s: %v, want %s", objectID, got, action)
}

// problemFields are the fields a 422 names.
func problemFields(res *apptest.Response) map[string]string {
	out := map[string]string{}
	list, _ := res.JSON["detail"].([]any)
	for _, p := range list {
		m := p.(map[string]any)
		var loc []string
		for _, l := range m["loc"].([]any) {
			loc = append(loc, l.(string))
		}
		out[strings.Join(loc[1:], ".")] = m["msg"].(string)
	}
	return out
}

// A building, unit and port created through the API are served at once: autocomplete finds
// the building, location resolves the port, and a direct order at the port provisions it.
func TestInventoryNewBuildingIsServedAtOnce(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		res := call(s, op, "POST", "/api/v1/buildings", map[string]any{"street": "300 Rue Wellington", "city": "Montréal",
			"postal_code": "h3c1t4", "province": "Quebec", "provider_ids": []string{northwind}, "line_type": "first"})
		want(t, res, 201, "create building")
		b := res.JSON
		id := b["id"].(string)
		if b["postal_code"] != "H3C 1T4" || b["province"] != "QC" || b["country"] != "CA" || b["orderable"] != true || b["version"] != 1.0 {
			t.Errorf("building as created: %s", res.Raw)
		}
		if got := call(s, op, "GET", "/api/v1/buildings/"+id, nil); string(got.Raw) != string(res.Raw) {
			t.Errorf("a read differs from the create's answer:\n %s\n %s", got.Raw, res.Raw)
		}
		ac := call(s, apptest.Key(storeKey), "GET", "/partner/serviceability/autocomplete?q=300+wellington", nil)
		want(t, ac, 200, "autocomplete")
		if sg := ac.JSON["suggestions"].([]any); len(sg) != 1 || sg[0].(map[string]any)["building_id"] != id {
			t.Errorf("autocomplete does not find the new building: %s", ac.Raw)
		}

		unit := call(s, op, "POST", "/api/v1/buildings/"+id+"/units", map[string]any{"unit_number": "101"})
		want(t, unit, 201, "create unit")
		unitID := unit.JSON["id"].(string)
		port := call(s, op, "POST", "/api/v1/ports", map[string]any{"building_id": id, "unit_id": unitID, "switch": "mtl-well-sw1",
			"port": "ge-0/0/1", "location_hash": "lh_wellington_101", "location_identifier": "MTL-WELL-101"})
		want(t, port, 201, "create port on a switch not known before")
		loc := call(s, nil, "POST", "/partner/location/", map[string]string{"location_hash": "lh_wellington_101"})
		want(t, loc, 200, "location of the new port")
		if loc.JSON["building_id"] != id || loc.JSON["unit_number"] != "101" {
			t.Errorf("location: %s", loc.Raw)
		}
		read := call(s, op, "GET", "/api/v1/buildings/"+id, nil)
		if len(read.JSON["units"].([]any)) != 1 || len(read.JSON["ports"].([]any)) != 1 {
			t.Errorf("the building's units and ports: %s", read.Raw)
		}

		ord := (&hook{}).post(s, order(map[string]any{"delivery_mode": "direct", "location_hash": "lh_wellington_101",
			"subscriber": person("wellington.101@example.ca")}))
		if ord.Status != 201 && ord.Status != 200 {
			t.Fatalf("order at the new port: %d %s", ord.Status, ord.Raw)
		}
		awaitLine(t, s, "the new port to be live", ord.JSON["subscription_id"].(string), `workflow_state = 'provisioned'`)

		list := call(s, op, "GET", "/api/v1/buildings?q=wellington", nil)
		want(t, list, 200, "list")
		if bs := list.JSON["buildings"].([]any); len(bs) != 1 || bs[0].(map[string]any)["id"] != id {
			t.Errorf("list by q: %s", list.Raw)
		}
		hasAction(t, s, id, "building.created")
		hasAction(t, s, unitID, "unit.created")
		hasAction(t, s, port.JSON["id"].(string), "port.created")
	})
}

// An edit of a building is made under the version the operator read, changes only the fields
// sent, is audited with its changes and is served at once.
func TestInventoryEditBuilding(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		path := "/api/v1/buildings/" + buildingKing
		stale := map[string]string{"If-Match": "7"}
		for k, v := range op {
			stale[k] = v
		}
		want(t, call(s, stale, "PATCH", path, map[string]any{"orderable": false}), 409, "stale If-Match")
		fresh := map[string]string{"If-Match": "1"}
		for k, v := range op {
			fresh[k] = v
		}
		res := call(s, fresh, "PATCH", path, map[string]any{"street": "120 Rue King Ouest", "earliest_service_date": "2027-05-01"})
		want(t, res, 200, "edit")
		if res.JSON["street"] != "120 Rue King Ouest" || res.JSON["version"] != 2.0 || res.JSON["line_type"] != "first" {
			t.Errorf("after the edit: %s", res.Raw)
		}
		ac := call(s, apptest.Key(storeKey), "GET", "/partner/serviceability/autocomplete?q=120+king+ouest", nil)
		if sg := ac.JSON["suggestions"].([]any); len(sg) != 1 || sg[0].(map[string]any)["earliest_service_date"] != "2027-05-01" {
			t.Errorf("autocomplete after the edit: %s", ac.Raw)
		}
		// The subscribers with a line there are found by the new address (the search index).
		found := call(s, apptest.Key(fixture.DemoAgentKey), "GET", "/partner/agent/customers/search?q="+url.QueryEscape("King Ouest 1204"), nil)
		if ids := searchIDs(found); len(ids) != 1 || ids[0] != marieID {
			t.Errorf("agent search by the new address: %s", found.Raw)
		}
		want(t, call(s, fresh, "PATCH", path, map[string]any{"orderable": false}), 409, "the version read before the edit")
		res = call(s, op, "PATCH", path, map[string]any{"line_type": nil, "earliest_service_date": nil})
		want(t, res, 200, "clear")
		if res.JSON["line_type"] != nil || res.JSON["earliest_service_date"] != nil {
			t.Errorf("cleared: %s", res.Raw)
		}
		audit := call(s, op, "GET", "/api/v1/audit?action=building.updated&object_id="+buildingKing, nil)
		entries := audit.JSON["entries"].([]any)
		if len(entries) != 2 {
			t.Fatalf("building.updated entries: %s", audit.Raw)
		}
		changes := entries[1].(map[string]any)["changes"].(map[string]any)
		if fmt.Sprint(changes["street"]) != "[120 Rue King O 120 Rue King Ouest]" || len(changes) != 2 {
			t.Errorf("changes recorded: %v", changes)
		}
		res = call(s, op, "PATCH", path, map[string]any{"provider_ids": []string{mapleProvider}})
		want(t, res, 422, "a provider with lines keeps covering the building")
		if _, ok := problemFields(res)["provider_ids"]; !ok {
			t.Errorf("problems: %s", res.Raw)
		}
	})
}

// A provider's operator sees and edits the inventory of its own provider only: another
// provider's object is not found, a building another provider covers too is the platform's.
func TestInventoryScope(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		installer := s.OperatorAs(subprov.RoleInstaller, northwind)
		list := call(s, maple, "GET", "/api/v1/buildings", nil)
		want(t, list, 200, "maple's buildings")
		seen := map[string]map[string]any{}
		for _, b := range list.JSON["buildings"].([]any) {
			seen[b.(map[string]any)["id"].(string)] = b.(map[string]any)
		}
		if len(seen) != 2 || seen[buildingQueen] == nil || seen[buildingWest] == nil {
			t.Fatalf("maple sees %s", list.Raw)
		}
		if q := seen[buildingQueen]; q["shared"] != true || fmt.Sprint(q["provider_ids"]) != "["+mapleProvider+"]" {
			t.Errorf("a shared building as maple sees it: %v", q)
		}
		tests := []struct {
			name   string
			h      map[string]string
			method string
			path   string
			body   any
			status int
		}{
			{"another provider's building", maple, "GET", "/api/v1/buildings/" + buildingKing, nil, 404},
			{"edit another provider's building", maple, "PATCH", "/api/v1/buildings/" + buildingKing, map[string]any{"presale": true}, 404},
			{"edit a shared building", maple, "PATCH", "/api/v1/buildings/" + buildingQueen, map[string]any{"presale": true}, 403},
			{"add a unit to a shared building", maple, "POST", "/api/v1/buildings/" + buildingQueen + "/units", map[string]any{"unit_number": "900"}, 403},
			{"edit its own building", maple, "PATCH", "/api/v1/buildings/" + buildingWest, map[string]any{"presale": true}, 200},
			{"cover a building by another provider", maple, "POST", "/api/v1/buildings", map[string]any{"street": "1 Rue X", "provider_ids": []string{northwind}}, 422},
			{"a building of its own provider", maple, "POST", "/api/v1/buildings", map[string]any{"street": "2 Rue X"}, 201},
			{"a port in another provider's building", maple, "POST", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "sw-x", "port": "p1"}, 422},
			{"another provider's plan", maple, "POST", "/api/v1/plans/" + planFibre500P + "/versions", map[string]any{"monthly_price": "1.00", "download_mbps": 1, "upload_mbps": 1}, 404},
			{"another provider's plan version", maple, "PATCH", "/api/v1/plan-versions/" + planFibre500, map[string]any{"sellable": false}, 404},
			{"a plan of another provider", maple, "POST", "/api/v1/plans", map[string]any{"provider_id": northwind, "name": "X"}, 422},
			{"another provider's install window", maple, "DELETE", "/api/v1/install-windows/" + windowMonday, nil, 404},
			{"an installer reads buildings", installer, "GET", "/api/v1/buildings/" + buildingKing, nil, 200},
			{"an installer reads install windows", installer, "GET", "/api/v1/install-windows", nil, 200},
			{"an installer does not read plans", installer, "GET", "/api/v1/plans", nil, 403},
			{"an installer creates an install window", installer, "POST", "/api/v1/install-windows", map[string]any{"weekday": "sunday", "starts": "10:00", "ends": "12:00", "technicians": 1}, 201},
			{"an installer does not create buildings", installer, "POST", "/api/v1/buildings", map[string]any{"street": "3 Rue X"}, 403},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				want(t, call(s, tt.h, tt.method, tt.path, tt.body), tt.status, tt.name)
			})
		}
		plans := call(s, maple, "GET", "/api/v1/plans", nil)
		for _, p := range plans.JSON["plans"].([]any) {
			if p.(map[string]any)["provider_id"] != mapleProvider {
				t.Errorf("maple sees another provider's plan: %v", p)
			}
		}
		windows := call(s, installer, "GET", "/api/v1/install-windows?limit=200", nil)
		for _, w := range windows.JSON["install_windows"].([]any) {
			if w.(map[string]any)["provider_id"] != northwind {
				t.Errorf("northwind's installer sees another provider's window: %v", w)
			}
		}
	})
}

// A plan created through the API, and a version added to it, are sold at once; a version
// that is not sellable is not, until an edit makes it so.
func TestInventoryNewPlanVersionIsSold(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		res := call(s, op, "POST", "/api/v1/plans", map[string]any{"provider_id": northwind, "name": "Fibre 800",
			"versions": []map[string]any{{"monthly_price": "75.00", "download_mbps": 800, "upload_mbps": 800, "store_product_id": "sku-800"}}})
		want(t, res, 201, "create plan")
		planID := res.JSON["id"].(string)
		v1 := res.JSON["versions"].([]any)[0].(map[string]any)
		if v1["monthly_price"] != 75.0 || v1["sellable"] != true || v1["version"] != 1.0 {
			t.Errorf("plan as created: %s", res.Raw)
		}
		orderOn := func(plan, unit, email string) *apptest.Response {
			return (&hook{}).post(s, order(map[string]any{"plan_version_id": plan, "delivery_mode": "home_drop", "unit_id": unit,
				"subscriber": person(email)}))
		}
		if o := orderOn(v1["id"].(string), unitQueen102, "fibre800@example.ca"); o.Status != 201 && o.Status != 200 {
			t.Fatalf("order on the new plan: %d %s", o.Status, o.Raw)
		}
		res = call(s, op, "POST", "/api/v1/plans/"+planID+"/versions", map[string]any{"monthly_price": "85.00", "download_mbps": 900,
			"upload_mbps": 900, "sellable": false})
		want(t, res, 201, "create version")
		v2 := res.JSON["id"].(string)
		if o := orderOn(v2, unitQueen103, "fibre900@example.ca"); o.Status < 400 {
			t.Fatalf("order on a version not sellable: %d %s", o.Status, o.Raw)
		}
		ifMatch := map[string]string{"If-Match": "1"}
		for k, v := range op {
			ifMatch[k] = v
		}
		res = call(s, ifMatch, "PATCH", "/api/v1/plan-versions/"+v2, map[string]any{"sellable": true})
		want(t, res, 200, "sell it")
		if res.JSON["sellable"] != true || res.JSON["version"] != 2.0 {
			t.Errorf("after the edit: %s", res.Raw)
		}
		want(t, call(s, ifMatch, "PATCH", "/api/v1/plan-versions/"+v2, map[string]any{"sellable": false}), 409, "stale")
		if o := orderOn(v2, unitQueen103, "fibre900@example.ca"); o.Status != 201 && o.Status != 200 {
			t.Fatalf("order on the version now sold: %d %s", o.Status, o.Raw)
		}
		plans := call(s, op, "GET", "/api/v1/plans?provider_id="+northwind, nil)
		found := false
		for _, p := range plans.JSON["plans"].([]any) {
			if p := p.(map[string]any); p["id"] == planID {
				found = len(p["versions"].([]any)) == 2
			}
		}
		if !found {
			t.Errorf("the plan with its two versions is not listed: %s", plans.Raw)
		}
		hasAction(t, s, planID, "plan.created")
		hasAction(t, s, v1["id"].(string), "plan_version.created")
		hasAction(t, s, v2, "plan_version.created")
		hasAction(t, s, v2, "plan_version.updated")
	})
}

// Bodies are held to the fixture's rules, every problem listed by field, nothing written.
func TestInventoryValidation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		tests := []struct {
			name, path string
			body       any
			fields     []string
		}{
			{"building values", "/api/v1/buildings", map[string]any{"street": "", "line_type": "fourth", "postal_code": "ZZZ",
				"earliest_service_date": "soon", "provider_ids": []string{"nobody"}}, []string{"street", "line_type", "postal_code", "earliest_service_date", "provider_ids[0]"}},
			{"unknown field", "/api/v1/buildings", map[string]any{"street": "1 Main", "colour": "red"}, []string{"colour"}},
			{"building id taken", "/api/v1/buildings", map[string]any{"id": buildingKing, "street": "1 Main"}, []string{"id"}},
			{"unit number taken", "/api/v1/buildings/" + buildingKing + "/units", map[string]any{"unit_number": "1204"}, []string{"unit_number"}},
			{"unit without number", "/api/v1/buildings/" + buildingKing + "/units", map[string]any{"postal_unit": "A"}, []string{"unit_number"}},
			{"port values", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "", "port": ""}, []string{"switch", "port"}},
			{"port taken", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "mtl-king-sw1", "port": "ge-0/0/12"}, []string{"port"}},
			{"port's unit elsewhere", "/api/v1/ports", map[string]any{"building_id": buildingKing, "unit_id": unitQueen102, "switch": "sw-n", "port": "p"}, []string{"unit_id"}},
			{"location hash taken", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "sw-n", "port": "p", "location_hash": "lh_7f3a9c1204"}, []string{"location_hash"}},
			{"unknown building", "/api/v1/ports", map[string]any{"building_id": "b-none", "switch": "sw-n", "port": "p"}, []string{"building_id"}},
			{"plan values", "/api/v1/plans", map[string]any{"provider_id": northwind, "name": "", "versions": []map[string]any{{"monthly_price": "1.999", "download_mbps": 0, "upload_mbps": 1}}},
				[]string{"name", "versions[0].monthly_price", "versions[0].download_mbps"}},
			{"plan of no provider", "/api/v1/plans", map[string]any{"provider_id": "nobody", "name": "X"}, []string{"provider_id"}},
			{"plan version values", "/api/v1/plans/" + planFibre500P + "/versions", map[string]any{"monthly_price": "", "upload_mbps": 1, "download_mbps": 1, "promo_ends_on": "x"},
				[]string{"monthly_price", "promo_ends_on"}},
			{"sellable required", "/api/v1/plan-versions/" + planFibre500, map[string]any{}, []string{"sellable"}},
			{"edit with a wrong type", "/api/v1/buildings/" + buildingKing, map[string]any{"line_type": 5}, []string{"line_type"}},
			{"edit with nulls", "/api/v1/buildings/" + buildingKing, map[string]any{"orderable": nil, "street": nil}, []string{"orderable", "street"}},
			{"install window values", "/api/v1/install-windows", map[string]any{"provider_id": northwind, "weekday": "mon", "starts": "8:00", "ends": "07:00", "technicians": 0},
				[]string{"weekday", "starts", "ends", "technicians"}},
		}
		const ours = `SELECT COUNT(*) FROM audit_log WHERE object_type IN ('building', 'unit', 'port', 'plan', 'plan_version', 'install_window')`
		before := count(t, s, ours)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				method := "POST"
				if strings.HasPrefix(tt.path, "/api/v1/plan-versions/") || tt.path == "/api/v1/buildings/"+buildingKing {
					method = "PATCH"
				}
				res := call(s, op, method, tt.path, tt.body)
				want(t, res, 422, tt.name)
				got := problemFields(res)
				if f := got["line_type"]; tt.name == "edit with a wrong type" && f != "want a string or null" {
					t.Errorf("line_type: %q", f)
				}
				for _, f := range tt.fields {
					if _, ok := got[f]; !ok {
						t.Errorf("%s not named: %s", f, res.Raw)
					}
				}
				if len(got) != len(tt.fields) {
					t.Errorf("problems %v, want exactly %v", got, tt.fields)
				}
			})
		}
		if after := count(t, s, ours); after != before {
			t.Errorf("refused writes recorded %d audit entries", after-before)
		}
	})
}

// An import creates every building, unit and port of the file, or, with any problem, lists
// every problem by row and column and writes nothing.
func TestInventoryImport(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		csvHeaders := map[string]string{"Content-Type": "text/csv"}
		for k, v := range op {
			csvHeaders[k] = v
		}
		good := "street,city,postal_code,province,provider_ids,line_type,unit_number,switch,port,location_hash\n" +
			"400 Rue Wellington,Montréal,H3C 1T4,QC," + northwind + ",first,101,mtl-w400,ge-0/0/1,lh_w400_101\n" +
			"400 Rue Wellington,Montréal,H3C 1T4,QC," + northwind + ",first,102,mtl-w400,ge-0/0/2,lh_w400_102\n" +
			"10 Rue Peel,Montréal,H3C 2G9,QC," + northwind + ";" + mapleProvider + ",second,1,,,\n"
		buildings := count(t, s, `SELECT COUNT(*) FROM buildings`)
		tests := []struct {
			name     string
			body     string
			problems []string // row:column
		}{
			{"every problem at once", "street,city,postal_code,province,provider_ids,line_type,unit_number,switch,port,colour\n" +
				"500 Rue Wellington,Montréal,ZZZ,QC," + northwind + ",fourth,1,,,\n" +
				"500 Rue Wellington,Montréal,ZZZ,QC," + northwind + ",fourth,1,sw,,\n" +
				"20 Rue Peel,Montréal,H3C 2G9,QC,nobody,first,1,mtl-king-sw1,ge-0/0/12,\n" +
				",Montréal,H3C 2G9,QC," + northwind + ",first,,,,\n",
				[]string{"1:colour", "2:line_type", "2:postal_code", "3:port", "3:unit_number", "4:port", "4:provider_ids", "5:street", "5:unit_number"}},
			{"no rows", "street,unit_number\n", []string{"2:"}},
			{"missing columns", "city\nMontréal\n", []string{"1:street", "1:unit_number"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := call(s, csvHeaders, "POST", "/api/v1/buildings/import", tt.body)
				want(t, res, 422, "import")
				var got []string
				for _, p := range res.JSON["detail"].([]any) {
					m := p.(map[string]any)
					got = append(got, fmt.Sprintf("%v:%v", m["row"], m["column"]))
				}
				if strings.Join(got, " ") != strings.Join(tt.problems, " ") {
					t.Errorf("problems %v, want %v: %s", got, tt.problems, res.Raw)
				}
			})
		}
		t.Run("a provider's port on another provider's switch", func(t *testing.T) {
			headers := map[string]string{"Content-Type": "text/csv"}
			for k, v := range s.OperatorAs(subprov.RoleAdmin, northwind) {
				headers[k] = v
			}
			res := call(s, headers, "POST", "/api/v1/buildings/import", "street,city,postal_code,province,provider_ids,line_type,unit_number,switch,port,location_hash\n"+
				"600 Rue Wellington,Montréal,H3C 1T4,QC,"+northwind+",first,1,van-georgia-sw1,xe-1/0/9,lh_w600_1\n")
			want(t, res, 422, "import")
			if p := res.JSON["detail"].([]any); len(p) != 1 || p[0].(map[string]any)["column"] != "switch" {
				t.Errorf("problems: %s", res.Raw)
			}
		})
		if n := count(t, s, `SELECT COUNT(*) FROM buildings`); n != buildings {
			t.Fatalf("a refused import wrote %d buildings", n-buildings)
		}
		want(t, call(s, op, "POST", "/api/v1/buildings/import", map[string]any{}), 400, "not CSV")
		res := call(s, csvHeaders, "POST", "/api/v1/buildings/import", good)
		want(t, res, 200, "import")
		created := res.JSON["created"].(map[string]any)
		if created["buildings"] != 2.0 || created["units"] != 3.0 || created["ports"] != 2.0 {
			t.Errorf("created: %s", res.Raw)
		}
		ac := call(s, apptest.Key(storeKey), "GET", "/partner/serviceability/autocomplete?q=400+wellington", nil)
		if len(ac.JSON["suggestions"].([]any)) != 1 {
			t.Errorf("autocomplete does not find the imported building: %s", ac.Raw)
		}
		loc := call(s, nil, "POST", "/partner/location/", map[string]string{"location_hash": "lh_w400_102"})
		want(t, loc, 200, "location of an imported port")
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'buildings.imported'`); n != 1 {
			t.Errorf("%d buildings.imported entries", n)
		}
	})
}

// Install windows: created and listed, removed once (then not found), audited.
func TestInventoryInstallWindows(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		res := call(s, op, "POST", "/api/v1/install-windows", map[string]any{"provider_id": northwind, "weekday": "sunday",
			"starts": "10:00", "ends": "14:00", "technicians": 3})
		want(t, res, 201, "create")
		id := res.JSON["id"].(string)
		listed := func() bool {
			l := call(s, op, "GET", "/api/v1/install-windows?provider_id="+northwind+"&limit=200", nil)
			want(t, l, 200, "list")
			for _, w := range l.JSON["install_windows"].([]any) {
				if w.(map[string]any)["id"] == id {
					return true
				}
			}
			return false
		}
		if !listed() {
			t.Fatal("the new window is not listed")
		}
		page := call(s, op, "GET", "/api/v1/install-windows?limit=5", nil)
		next, _ := page.JSON["next_cursor"].(string)
		if len(page.JSON["install_windows"].([]any)) != 5 || next == "" {
			t.Fatalf("first page: %s", page.Raw)
		}
		page2 := call(s, op, "GET", "/api/v1/install-windows?limit=5&cursor="+next, nil)
		want(t, page2, 200, "second page")
		if page2.JSON["install_windows"].([]any)[0].(map[string]any)["id"] == page.JSON["install_windows"].([]any)[4].(map[string]any)["id"] {
			t.Error("the second page repeats the first's last window")
		}
		want(t, call(s, op, "DELETE", "/api/v1/install-windows/"+id, nil), 204, "delete")
		want(t, call(s, op, "DELETE", "/api/v1/install-windows/"+id, nil), 404, "delete again")
		if listed() {
			t.Error("a removed window is listed")
		}
		hasAction(t, s, id, "install_window.created")
		hasAction(t, s, id, "install_window.deleted")
	})
}

// Each list pages by its cursor: the pages of two hold, in order, what one page of 200 holds.
func TestInventoryListsPage(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		ids := func(res *apptest.Response, name string) []string {
			var out []string
			for _, o := range res.JSON[name].([]any) {
				out = append(out, o.(map[string]any)["id"].(string))
			}
			return out
		}
		for _, tt := range []struct{ path, name string }{
			{"/api/v1/buildings", "buildings"}, {"/api/v1/plans", "plans"}, {"/api/v1/install-windows", "install_windows"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				all := call(s, op, "GET", tt.path+"?limit=200", nil)
				want(t, all, 200, "one page")
				var paged []string
				cursor := ""
				for range 100 {
					res := call(s, op, "GET", tt.path+"?limit=2&cursor="+url.QueryEscape(cursor), nil)
					want(t, res, 200, "a page")
					paged = append(paged, ids(res, tt.name)...)
					next, _ := res.JSON["next_cursor"].(string)
					if next == "" {
						break
					}
					cursor = next
				}
				if w := ids(all, tt.name); strings.Join(paged, " ") != strings.Join(w, " ") || len(w) < 3 {
					t.Errorf("pages of two: %v\none page: %v", paged, w)
				}
				want(t, call(s, op, "GET", tt.path+"?cursor=bogus", nil), 422, "a cursor no list issued")
			})
		}
	})
}

// Two operators creating the same thing at once: one is created, the other is told it is
// taken; neither overwrites the other.
func TestInventoryRacingCreates(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		for _, tt := range []struct {
			name, path string
			body       func(i int) any
		}{
			{"a port", "/api/v1/ports", func(i int) any {
				return map[string]any{"building_id": buildingKing, "switch": "mtl-king-sw9", "port": "ge-0/0/1", "location_identifier": fmt.Sprintf("RACE-%d", i)}
			}},
			{"a building id", "/api/v1/buildings", func(i int) any {
				return map[string]any{"id": "b-race", "street": fmt.Sprintf("%d Rue Course", i+1)}
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				const n = 4
				statuses := make(chan int, n)
				for i := range n {
					go func() { statuses <- call(s, op, "POST", tt.path, tt.body(i)).Status }()
				}
				created := 0
				for range n {
					switch st := <-statuses; st {
					case 201:
						created++
					case 422:
					default:
						t.Errorf("status %d", st)
					}
				}
				if created != 1 {
					t.Errorf("%d created, want 1", created)
				}
			})
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'port.created'`); n != 1 {
			t.Errorf("%d port.created entries", n)
		}
	})
}
