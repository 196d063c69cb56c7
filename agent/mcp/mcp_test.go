package mcp_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subprov/subprov/agent/mcp"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

const (
	marieID   = "s1000000-0000-4000-8000-000000000001"
	liamID    = "s2000000-0000-4000-8000-000000000001"
	fibre1000 = "pv100000-0000-4000-8000-000000001000"
)

// conversation is an MCP client session against a running service.
type conversation struct {
	t  *testing.T
	cs *sdk.ClientSession
}

func connect(t *testing.T, s *apptest.Service, key string) *conversation {
	ctx := context.Background()
	srv := (&mcp.Server{Agent: s.App.Agent, Auth: s.App.Auth, APIKey: key}).New()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &conversation{t: t, cs: cs}
}

// call runs a tool and decodes its JSON text; isError reports a tool error.
func (c *conversation) call(name string, args map[string]any) (out map[string]any, isError bool) {
	c.t.Helper()
	res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		c.t.Fatalf("%s: %q: %v", name, text, err)
	}
	return out, res.IsError
}

func (c *conversation) ok(name string, args map[string]any) map[string]any {
	c.t.Helper()
	out, isErr := c.call(name, args)
	if isErr {
		c.t.Fatalf("%s: %v", name, out)
	}
	return out
}

func (c *conversation) fails(name string, args map[string]any, code string) {
	c.t.Helper()
	out, isErr := c.call(name, args)
	if e, _ := out["error"].(map[string]any); !isErr || e["code"] != code {
		c.t.Fatalf("%s: %v, want error %s", name, out, code)
	}
}

var codeLine = regexp.MustCompile(`(?m)^(\d{6})$`)

// TestMCPConversation runs a whole agent conversation through the SDK's own client: search,
// verify (the code read from the outbox), read, preview, apply, with the HTTP rules.
func TestMCPConversation(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		c := connect(t, s, fixture.DemoAgentKey)
		tools, err := c.cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 15 {
			t.Fatalf("tools: %v %v", tools, err)
		}

		found := c.ok("search_customers", map[string]any{"q": "Marie 1204"})
		if found["match_count"] != 1.0 || found["ambiguous"] != false {
			t.Fatalf("search: %v", found)
		}
		id := found["results"].([]any)[0].(map[string]any)["customer_id"].(string)
		if id != marieID {
			t.Fatalf("search found %s", id)
		}
		c.fails("search_customers", map[string]any{"q": "M"}, "validation_error")

		// Sensitive reads need the verified session; another provider's customer is not found.
		c.fails("get_customer_profile", map[string]any{"customer_id": id}, "verification_required")
		c.fails("verify_issue", map[string]any{"customer_id": liamID}, "not_found")
		c.fails("verify_issue", map[string]any{"customer_id": ""}, "validation_error")
		c.fails("verify_check", map[string]any{"customer_id": "", "code": "123456"}, "validation_error")
		c.fails("open_ticket", map[string]any{"customer_id": id, "ai_summary": "x", "priority": ""}, "validation_error")
		c.fails("open_ticket", map[string]any{"customer_id": liamID, "ai_summary": "x", "priority": "urgent"}, "not_found")

		issued := c.ok("verify_issue", map[string]any{"customer_id": id})
		if issued["destination"] != "m***@e***.ca" {
			t.Fatalf("issue: %v", issued)
		}
		mails, err := s.Store.Outbox(ctx, fixture.DemoSubscriberEmail, 10)
		if err != nil || len(mails) == 0 {
			t.Fatalf("outbox: %v %v", mails, err)
		}
		code := codeLine.FindStringSubmatch(mails[0].Body)
		if code == nil {
			t.Fatalf("no code in %q", mails[0].Body)
		}
		c.fails("verify_check", map[string]any{"customer_id": id, "code": "12345x"}, "verification_failed")
		sess := c.ok("verify_check", map[string]any{"customer_id": id, "code": code[1]})["verified_session_token"].(string)
		v := map[string]any{"customer_id": id, "verified_session": sess}

		profile := c.ok("get_customer_profile", v)
		if profile["contract_contact"].(map[string]any)["email"] != fixture.DemoSubscriberEmail {
			t.Fatalf("profile: %v", profile)
		}
		c.ok("get_billing_summary", v)
		if health := c.ok("get_network_health", v); len(health["subscriptions"].([]any)) != 1 {
			t.Fatalf("health: %v", health)
		}
		c.fails("get_customer_profile", map[string]any{"customer_id": "s1000000-0000-4000-8000-000000000002", "verified_session": sess}, "verification_required")

		s.AwaitStartupBillRun(t) // the quote's proration depends on this month's invoice
		preview := c.ok("preview_plan_change", map[string]any{"customer_id": id, "verified_session": sess, "plan_version_id": fibre1000})
		// No signed quote is shipped: the preview gives no quote_id, and one
		// echoed to apply is ignored.
		if _, quoted := preview["quote_id"]; preview["eligible"] != true || quoted {
			t.Fatalf("preview: %v", preview)
		}
		c.fails("apply_plan_change", map[string]any{"customer_id": id, "verified_session": sess, "plan_version_id": fibre1000}, "confirmation_required")
		applied := c.ok("apply_plan_change", map[string]any{"customer_id": id, "verified_session": sess, "plan_version_id": fibre1000,
			"confirm": true, "quote_id": "q_echoed"})
		if applied["plan_version_id"] != fibre1000 || applied["status"] != "ACTIVE" {
			t.Fatalf("apply: %v", applied)
		}
		for _, plan := range []string{fibre1000, "pv100000-0000-4000-8000-000000000150"} { // the same change again, or another
			c.fails("apply_plan_change", map[string]any{"customer_id": id, "verified_session": sess, "plan_version_id": plan, "confirm": true}, "plan_change_limit")
		}
		c.ok("add_note", map[string]any{"customer_id": id, "verified_session": sess, "note": "Upgraded to Fibre 1000 by phone"})
		if tk := c.ok("open_ticket", map[string]any{"customer_id": id, "ai_summary": "Follow up on the upgrade", "priority": "low"}); tk["number"] == nil {
			t.Fatalf("ticket: %v", tk)
		}
	})
}

// TestMCPKeyWithoutAgentFeature: the store key cannot serve the agent tools.
func TestMCPKeyWithoutAgentFeature(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		srv := &mcp.Server{Agent: s.App.Agent, Auth: s.App.Auth, APIKey: fixture.DemoStoreKey}
		if err := srv.CheckKey(context.Background()); err == nil {
			t.Fatal("a key without agent_api_access was accepted")
		}
		connect(t, s, fixture.DemoStoreKey).fails("search_customers", map[string]any{"q": "Marie"}, "forbidden")
	})
}
