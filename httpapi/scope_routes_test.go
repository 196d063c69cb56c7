package httpapi_test

import (
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
)

// Scope on the operator routes that name no object in their path (TestOperatorScope covers
// those that do): a location lookup, the install queue, the sandbox (one provider) and dev
// mode (the whole deployment).

func TestScopeOfLocationDetails(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		body := map[string]string{"location_hash": "lh_7f3a9c1205"}
		all := s.Do(apptest.Request{Method: "POST", Path: "/partner/location/details", Headers: s.Operator(), Body: body})
		covering := map[string]bool{}
		for _, p := range all.JSON["provider_ids"].([]any) {
			covering[p.(string)] = true
		}
		if all.Status != 200 || !covering[northwind] {
			t.Fatalf("platform operator: %d %s", all.Status, all.Raw)
		}
		for _, provider := range []string{northwind, mapleProvider} {
			op := s.OperatorAs(subprov.RoleViewer, provider)
			res := s.Do(apptest.Request{Method: "POST", Path: "/partner/location/details", Headers: op, Body: body})
			if covering[provider] {
				if ids, _ := res.JSON["provider_ids"].([]any); res.Status != 200 || len(ids) != 1 || ids[0] != provider {
					t.Errorf("%s, which covers the building: %d %s", provider, res.Status, res.Raw)
				}
				continue
			}
			none := s.Do(apptest.Request{Method: "POST", Path: "/partner/location/details", Headers: op, Body: map[string]string{"location_hash": "lh_none"}})
			if res.Status != 404 || withoutRequestIDs(res.Raw) != withoutRequestIDs(none.Raw) {
				t.Errorf("%s, which does not cover the building: %d %s, an unknown location %d %s", provider, res.Status, res.Raw, none.Status, none.Raw)
			}
		}
	})
}

func TestScopeOfInstallQueue(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		jobs := func(op map[string]string, query string) []map[string]any {
			t.Helper()
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs" + query, Headers: op})
			if res.Status != 200 {
				t.Fatalf("install-jobs%s: %d %s", query, res.Status, res.Raw)
			}
			var out []map[string]any
			for _, j := range res.JSON["install_jobs"].([]any) {
				out = append(out, j.(map[string]any))
			}
			return out
		}
		if len(jobs(s.Operator(), "?provider_id="+northwind)) == 0 {
			t.Fatal("no Northwind install job to hide")
		}
		for _, tt := range []struct {
			name, provider, query string
			want                  int // -1: any number, all the provider's
		}{
			{"Maple's queue", mapleProvider, "", -1},
			{"Maple asking for Northwind's", mapleProvider, "?provider_id=" + northwind, 0},
			{"Northwind's queue", northwind, "", -1},
		} {
			got := jobs(s.OperatorAs(subprov.RoleInstaller, tt.provider), tt.query)
			if tt.want >= 0 && len(got) != tt.want {
				t.Errorf("%s: %d jobs, want %d", tt.name, len(got), tt.want)
			}
			for _, j := range got {
				if j["provider_id"] != tt.provider {
					t.Errorf("%s lists a job of %v", tt.name, j["provider_id"])
				}
			}
		}
	})
}

func TestScopeOfSandboxAndDevRoutes(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		northwindAdmin := s.OperatorAs(subprov.RoleAdmin, northwind)
		sandboxAdmin := s.OperatorAs(subprov.RoleAdmin, sandboxProvider)
		hook := map[string]string{"webhook_url": "https://hooks.example.com/x"}
		for _, tt := range []struct {
			method, path string
			body         any
			op           map[string]string
			want         int
		}{
			// The sandbox is one provider: out of scope it is absent.
			{"GET", "/api/v1/sandbox/provider-info", nil, northwindAdmin, 404},
			{"POST", "/api/v1/sandbox/webhook-config", hook, northwindAdmin, 404},
			{"GET", "/api/v1/sandbox/webhook-events", nil, northwindAdmin, 404},
			{"POST", "/api/v1/sandbox/webhook-events/" + sandboxProvider + "/replay", nil, northwindAdmin, 404},
			{"GET", "/api/v1/sandbox/provider-info", nil, sandboxAdmin, 200},
			{"GET", "/api/v1/sandbox/webhook-events", nil, sandboxAdmin, 200},
			// Dev mode acts on the whole deployment: a provider's operator reads the clock and
			// the switches, nothing more.
			{"GET", "/api/v1/dev/clock", nil, northwindAdmin, 200},
			{"POST", "/api/v1/dev/clock", map[string]any{"advance_seconds": 1}, northwindAdmin, 403},
			{"GET", "/api/v1/dev/faults", nil, northwindAdmin, 200},
			{"POST", "/api/v1/dev/faults", map[string]string{"smtp": "down"}, northwindAdmin, 403},
			{"GET", "/api/v1/dev/outbox", nil, northwindAdmin, 403},
			{"POST", "/api/v1/dev/clock", map[string]any{"advance_seconds": 1}, s.Operator(), 200},
			{"GET", "/api/v1/dev/outbox", nil, s.Operator(), 200},
		} {
			res := s.Do(apptest.Request{Method: tt.method, Path: tt.path, Headers: tt.op, Body: tt.body})
			if res.Status != tt.want {
				t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, res.Status, res.Raw, tt.want)
			}
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/faults", Headers: s.Operator()}); res.JSON["smtp"] == "down" {
			t.Error("a refused fault switch changed")
		}
	})
}
