package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/switches"
)

// The switch inventory on the operations surface: a switch is created, read and edited with
// its password sealed and never shown (has_password only, in answers and audit entries); a
// port naming a switch for the first time adds it with the default driver; a provider's
// operator sees the switches serving its buildings and edits none another provider shares.
func TestSwitchInventoryOverHTTP(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		op := s.Operator()
		const password = "sw-password-never-shown"
		created := call(s, op, "POST", "/api/v1/switches", map[string]any{"name": "mtl-well-sw1", "driver": "netconf",
			"address": "10.20.0.11:830", "username": "subprov", "password": password, "model": "junos", "host_key": hostKey})
		want(t, created, 201, "create")
		id := created.JSON["id"].(string)
		if created.JSON["has_password"] != true || created.JSON["breaker"].(map[string]any)["state"] != "closed" {
			t.Errorf("created: %s", created.Raw)
		}
		for _, tc := range []struct {
			name, method, path string
			body               map[string]any
			status             int
			field              string
		}{
			{"a name taken", "POST", "/api/v1/switches", map[string]any{"name": "mtl-king-sw1"}, 422, "name"},
			{"an unknown driver", "POST", "/api/v1/switches", map[string]any{"name": "x", "driver": "cisco"}, 422, "driver"},
			{"an unknown model", "PATCH", "/api/v1/switches/" + id, map[string]any{"model": "ios"}, 422, "model"},
			{"renaming a switch with ports", "PATCH", "/api/v1/switches/" + fixture.DemoSwitchKing, map[string]any{"name": "renamed"}, 422, "name"},
			{"a provider's operator adding one", "POST", "/api/v1/switches", map[string]any{"name": "nw-sw9"}, 403, ""},
			{"a name with a space", "POST", "/api/v1/switches", map[string]any{"name": "sw 9"}, 422, "name"},
			{"a name with markup", "POST", "/api/v1/switches", map[string]any{"name": "sw<9>"}, 422, "name"},
			{"netconf without a host key", "POST", "/api/v1/switches", map[string]any{"name": "sw9", "driver": "netconf",
				"address": "10.20.0.9:830", "username": "u", "model": "junos"}, 422, "host_key"},
			{"a host key that is no key", "POST", "/api/v1/switches", map[string]any{"name": "sw9", "driver": "linuxbridge",
				"address": "10.20.0.9:22", "username": "u", "host_key": "ssh-ed25519 notakey"}, 422, "host_key"},
			{"an address without a port", "POST", "/api/v1/switches", map[string]any{"name": "sw9", "driver": "linuxbridge",
				"address": "10.20.0.9", "username": "u", "host_key": hostKey}, 422, "address"},
			{"linuxbridge without a username", "POST", "/api/v1/switches", map[string]any{"name": "sw9", "driver": "linuxbridge",
				"address": "10.20.0.9:22", "host_key": hostKey}, 422, "username"},
			{"netconf without a model", "POST", "/api/v1/switches", map[string]any{"name": "sw9", "driver": "netconf",
				"address": "10.20.0.9:830", "username": "u", "host_key": hostKey}, 422, "model"},
			{"a new address keeping the password", "PATCH", "/api/v1/switches/" + id, map[string]any{"address": "10.66.6.6:830"}, 422, "password"},
			{"a new host key keeping the password", "PATCH", "/api/v1/switches/" + id, map[string]any{"host_key": otherHostKey}, 422, "password"},
			{"a port name with a space", "POST", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "mtl-king-sw1", "port": "ge 0/0/1"}, 422, "port"},
			{"a port name with markup", "POST", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "mtl-king-sw1", "port": "ge-0/0/1<a>"}, 422, "port"},
			{"a provider's port on another provider's switch", "POST", "/api/v1/ports", map[string]any{"building_id": buildingKing,
				"switch": "van-georgia-sw1", "port": "xe-1/0/9"}, 403, ""},
		} {
			h := op
			if tc.status == 403 {
				h = s.OperatorAs(subprov.RoleAdmin, northwind)
			}
			res := call(s, h, tc.method, tc.path, tc.body)
			if res.Status != tc.status || (tc.field != "" && problemFields(res)[tc.field] == "") {
				t.Errorf("%s: %d %s, want %d at %q", tc.name, res.Status, res.Raw, tc.status, tc.field)
			}
		}
		edited := call(s, op, "PATCH", "/api/v1/switches/"+id, map[string]any{"address": "10.20.0.12:830", "password": "another-" + password})
		want(t, edited, 200, "edit")
		if edited.JSON["address"] != "10.20.0.12:830" || edited.JSON["version"] != float64(2) {
			t.Errorf("edited: %s", edited.Raw)
		}
		cleared := call(s, op, "PATCH", "/api/v1/switches/"+id, map[string]any{"password": nil})
		if cleared.Status != 200 || cleared.JSON["has_password"] != false {
			t.Errorf("password removed: %d %s", cleared.Status, cleared.Raw)
		}
		audit := call(s, op, "GET", "/api/v1/audit?object_id="+id, nil)
		for _, res := range []*apptest.Response{created, edited, cleared, audit, call(s, op, "GET", "/api/v1/switches", nil)} {
			if strings.Contains(string(res.Raw), password) {
				t.Fatalf("the password shows: %s", res.Raw)
			}
		}
		hasAction(t, s, id, "switch.created")
		hasAction(t, s, id, "switch.updated")

		// A port naming a new switch adds it with the default driver.
		port := call(s, op, "POST", "/api/v1/ports", map[string]any{"building_id": buildingKing, "switch": "mtl-king-sw9", "port": "ge-0/0/1"})
		want(t, port, 201, "port on a new switch")
		var driver string
		if err := s.Store.R().QueryRow(ctx, `SELECT driver FROM switches WHERE name = 'mtl-king-sw9'`).Scan(&driver); err != nil || driver != "" {
			t.Errorf("the new switch: driver %q (%v), want the default", driver, err)
		}

		// Scope: Northwind sees the switches of its buildings, Maple not Northwind's only one.
		names := func(h map[string]string) map[string]bool {
			res := call(s, h, "GET", "/api/v1/switches", nil)
			want(t, res, 200, "list")
			out := map[string]bool{}
			for _, w := range res.JSON["switches"].([]any) {
				out[w.(map[string]any)["name"].(string)] = true
			}
			return out
		}
		nw, maple := s.OperatorAs(subprov.RoleViewer, northwind), s.OperatorAs(subprov.RoleViewer, mapleProvider)
		if got := names(nw); !got["mtl-king-sw1"] || got["mtl-well-sw1"] {
			t.Errorf("Northwind lists %v", got)
		}
		if got := names(maple); got["mtl-king-sw1"] {
			t.Errorf("Maple lists %v", got)
		}
		if got := names(op); !got["mtl-king-sw1"] || !got["mtl-well-sw1"] || !got["sbx-sw1"] {
			t.Errorf("the platform lists %v", got)
		}

		// A switch shared by a platform operator's port: each provider counts its own ports only.
		want(t, call(s, op, "POST", "/api/v1/ports", map[string]any{"building_id": buildingWest, "switch": "mtl-king-sw1", "port": "ge-0/1/1"}), 201, "a Maple port")
		ports := func(h map[string]string) float64 {
			res := call(s, h, "GET", "/api/v1/switches/"+fixture.DemoSwitchKing, nil)
			want(t, res, 200, "read")
			return res.JSON["ports"].(float64)
		}
		if all, nw, mp := ports(op), ports(nw), ports(maple); mp != 1 || nw != all-1 {
			t.Errorf("ports of the shared switch: %v in all, Northwind %v, Maple %v", all, nw, mp)
		}
	})
}

// Two SSH host keys, as ssh-keyscan prints them (the switches of these tests are never reached).
const (
	hostKey      = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIB34fdg0MCe2S1HZ6XFcxY1bTrYjOFQqISbuyxbaOHS"
	otherHostKey = "10.20.0.11 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFZBk6ZC/4iD/7q3wyDEYZ59VmR8/P8G1gVFv5lzWHkD"
)

// The demo's switches are sim rows; an open breaker shows on the switch's read.
func TestSwitchShowsItsBreaker(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		router := s.Provisioning.Switch.(*switches.Router)
		setFault(s, op, "switch@mtl-king-sw1", "fail")
		p := switches.Port{Switch: "mtl-king-sw1", Name: "ge-0/0/99"}
		for range switches.DefaultFailures {
			if err := router.Converge(context.Background(), p, switches.CaptiveState); err == nil {
				t.Fatal("the failing switch converged")
			}
		}
		res := call(s, op, "GET", "/api/v1/switches/"+fixture.DemoSwitchKing, nil)
		want(t, res, 200, "read")
		b := res.JSON["breaker"].(map[string]any)
		if res.JSON["driver"] != "sim" || b["state"] != "open" || b["failures"] != float64(switches.DefaultFailures) {
			t.Errorf("after %d failures: %s", switches.DefaultFailures, res.Raw)
		}
		awaitSeries(t, s, `subprov_switch_breaker_open{switch="mtl-king-sw1"}`, 1)
		// Another switch is not held back.
		if err := router.Converge(context.Background(), switches.Port{Switch: "van-georgia-sw1", Name: "ge-0/0/99"}, switches.CaptiveState); err != nil {
			t.Errorf("another switch: %v", err)
		}
	})
}

// A process without workers runs no switch operations and keeps no breakers: it shows none.
func TestSwitchBreakerNotKeptWithoutWorkers(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		res := call(s, s.Operator(), "GET", "/api/v1/switches/"+fixture.DemoSwitchKing, nil)
		want(t, res, 200, "read")
		if b, ok := res.JSON["breaker"]; !ok || b != nil {
			t.Errorf("breaker from a process without workers: %s", res.Raw)
		}
	}, withoutWorkers)
}

// withoutWorkers runs the service as serve --no-workers does: no jobs, no sweeps.
func withoutWorkers(c *config.Config) { c.Workers = false }
