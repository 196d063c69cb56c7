package agent_test

import (
	"errors"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
)

// Every error an agent sees carries one of the agent codes (docs/agent.md; invalid_state,
// method_not_allowed and, on MCP only, rate_limited): never empty, never a reason of another
// surface. The codes of a signed quote and an Idempotency-Key are not among them: both are
// planned and not shipped (docs/agent.md, Writes).
func TestPublicErrorsCarryAnAgentCode(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     string
		unlisted bool
	}{
		{"a listed reason is kept", subprov.Errorf(subprov.ECONFLICT, "plan_change_limit", "x"), "plan_change_limit", false},
		{"a state conflict is kept", subprov.Errorf(subprov.ECONFLICT, "invalid_state", "x"), "invalid_state", false},
		{"an unshipped plan-change code is unlisted", subprov.Errorf(subprov.ECONFLICT, "quote_stale", "x"), "internal", true},
		{"validation", subprov.Invalid(map[string]string{"f": "required"}), "validation_error", false},
		{"a wrong method", subprov.Errorf(subprov.EMETHOD, "", "x"), "method_not_allowed", false},
		{"an unreadable body", subprov.Errorf(subprov.EBADREQUEST, "bad_request", "x"), "validation_error", false},
		{"a body too large", subprov.Errorf(subprov.ETOOLARGE, "too_large", "x"), "validation_error", false},
		{"another surface's not-found", subprov.NotFound("Invoice"), "not_found", false},
		{"an upstream failure", subprov.Errorf(subprov.EUNAVAILABLE, "processor_unavailable", "x"), "upstream_unavailable", false},
		{"an unconfigured dependency", subprov.Errorf(subprov.EUNCONFIGURED, "", "x"), "dependency_unconfigured", false},
		{"a rate limit", subprov.Errorf(subprov.ERATELIMITED, "", "x"), "rate_limited", false},
		{"a conflict the agent rules did not name", subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "x"), "internal", true},
		{"a conflict without reason", subprov.Errorf(subprov.ECONFLICT, "", "x"), "internal", true},
		{"not implemented", subprov.Errorf(subprov.ENOTIMPLEMENTED, "", "x"), "internal", true},
		{"an uncoded error", errors.New("boom"), "internal", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, unlisted := agent.Public(tt.err)
			if e.Reason != tt.code || unlisted != tt.unlisted {
				t.Fatalf("Public = %q (unlisted %t), want %q (unlisted %t)", e.Reason, unlisted, tt.code, tt.unlisted)
			}
			if code, _ := agent.PublicError(tt.err); code != tt.code {
				t.Fatalf("PublicError = %q, want %q", code, tt.code)
			}
			if unlisted && e.Message != "Internal server error" {
				t.Fatalf("an internal error shows detail: %q", e.Message)
			}
		})
	}
}
