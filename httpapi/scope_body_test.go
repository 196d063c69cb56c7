package httpapi_test

import (
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
)

// Ids sent in a body: another provider's object answers exactly as an unknown id, and nothing
// of it shows.

// TestPortWithAnotherProvidersUnit: a provider's admin adding a port in its own building that
// names another provider's unit is told the unit is unknown, as for an id that does not exist,
// and the answer does not name the unit's building.
func TestPortWithAnotherProvidersUnit(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		const unknown = "u1000000-0000-4000-8000-00000000ffff"
		port := func(unit string) *apptest.Response {
			return call(s, maple, "POST", "/api/v1/ports", map[string]any{"building_id": buildingWest, "unit_id": unit,
				"switch": "sw-review", "port": "p1"})
		}
		theirs, none := port(unitKing1205), port(unknown)
		want(t, theirs, 422, "another provider's unit")
		want(t, none, 422, "an unknown unit")
		if strings.Contains(string(theirs.Raw), buildingKing) {
			t.Errorf("the answer names the other provider's building: %s", theirs.Raw)
		}
		if got, exp := strings.ReplaceAll(string(theirs.Raw), unitKing1205, "ID"), strings.ReplaceAll(string(none.Raw), unknown, "ID"); got != exp {
			t.Errorf("another provider's unit answers\n%s\nan unknown one\n%s", got, exp)
		}
	})
}
