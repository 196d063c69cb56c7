package auth

import (
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/identity"
)

// TestVerifiedSession: the agent's X-Verified-Session token is bound to one (provider,
// customer) pair and lasts 15 minutes (docs/agent.md, Verification).
func TestVerifiedSession(t *testing.T) {
	clk := clock.NewAdjustable(0)
	s := &Service{Clock: clk, Signer: identity.NewSigner("secret")}
	tok, exp, err := s.IssueVerifiedSession("prov-1", "cust-1")
	if err != nil {
		t.Fatal(err)
	}
	if d := exp.Sub(clk.Now()); d < 14*time.Minute || d > 15*time.Minute {
		t.Fatalf("expires in %v, want 15 minutes", d)
	}
	subscriberTok, _ := s.Signer.Issue(identity.AudienceSubscriber, "cust-1", "prov-1", "acc", clk.Now(), time.Hour)
	tests := []struct {
		name     string
		token    string
		provider string
		customer string
		ok       bool
	}{
		{"the pair it was issued for", tok, "prov-1", "cust-1", true},
		{"another customer", tok, "prov-1", "cust-2", false},
		{"another provider", tok, "prov-2", "cust-1", false},
		{"no token", "", "prov-1", "cust-1", false},
		{"garbage", "x.y.z", "prov-1", "cust-1", false},
		{"a subscriber token is not a verified session", subscriberTok, "prov-1", "cust-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CheckVerifiedSession(tt.token, tt.provider, tt.customer)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && (subprov.ErrorCode(err) != subprov.EUNAUTHORIZED || subprov.ErrorReason(err) != "verification_required") {
				t.Fatalf("refusal %v, want 401 verification_required", err)
			}
		})
	}
	clk.Advance(14 * time.Minute)
	if err := s.CheckVerifiedSession(tok, "prov-1", "cust-1"); err != nil {
		t.Fatalf("refused after 14 minutes: %v", err)
	}
	clk.Advance(2 * time.Minute)
	if err := s.CheckVerifiedSession(tok, "prov-1", "cust-1"); err == nil {
		t.Fatal("accepted after 16 minutes")
	}
}

func TestAgentAccess(t *testing.T) {
	tests := []struct {
		name     string
		features []string
		allowed  bool
	}{
		{"a key with agent_api_access reaches the agent surface", []string{subprov.FeatureAgentAPI}, true},
		{"a key without features does not", nil, false},
		{"nor does a key with other features only", []string{"something_else"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := AgentAccess(&subprov.APIKey{Features: tt.features})
			if tt.allowed != (err == nil) {
				t.Fatalf("AgentAccess = %v, want allowed %v", err, tt.allowed)
			}
			if err != nil && (subprov.ErrorCode(err) != subprov.EFORBIDDEN || subprov.ErrorReason(err) != "forbidden") {
				t.Fatalf("AgentAccess = %v, want forbidden (forbidden)", err)
			}
		})
	}
}
