package httpapi_test

import (
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

// TestOverview: the counts of what needs attention, in the operator's scope; a role that may
// not read is refused.
func TestOverview(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		all := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/overview", Headers: s.Operator()})
		if all.Status != 200 {
			t.Fatalf("platform: %d %s", all.Status, all.Raw)
		}
		lines := all.JSON["lines"].(map[string]any)
		var want, total float64
		if err := s.Store.R().QueryRow(t.Context(), `SELECT COUNT(*) FROM subscriptions WHERE status = 'ACTIVE'`).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if lines["ACTIVE"] != want || want == 0 {
			t.Errorf("ACTIVE lines %v, want %v", lines["ACTIVE"], want)
		}
		for _, n := range lines {
			total += n.(float64)
		}
		if jobs := all.JSON["install_jobs"].(map[string]any); jobs["open"] == nil {
			t.Errorf("no open install job counted: %v", jobs)
		}

		scoped := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/overview", Headers: s.OperatorAs(subprov.RoleViewer, fixture.DemoProviderID)})
		var mine, scopedTotal float64
		if err := s.Store.R().QueryRow(t.Context(), `SELECT COUNT(*) FROM subscriptions WHERE provider_id = ?`, fixture.DemoProviderID).Scan(&mine); err != nil {
			t.Fatal(err)
		}
		for _, n := range scoped.JSON["lines"].(map[string]any) {
			scopedTotal += n.(float64)
		}
		if scoped.Status != 200 || scopedTotal != mine || mine >= total {
			t.Errorf("provider's operator: %d, %v lines of its provider's %v (all providers: %v)", scoped.Status, scopedTotal, mine, total)
		}

		if r := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/overview", Headers: s.OperatorAs(subprov.RoleInstaller, "")}); r.Status != 403 {
			t.Errorf("installer: %d, want 403", r.Status)
		}
	})
}
