package main

import (
	"context"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subprov/subprov/agent/mcp"
	"github.com/subprov/subprov/app"
)

// cmdMCP serves the support-agent tools over MCP on stdin/stdout. Logs go to stderr (stdout
// carries the protocol). It works no jobs: mail it queues is delivered by 'serve' or 'worker'
// processes on the same database.
func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", "mcp [--api-key KEY]",
		"Serves the support-agent API as Model Context Protocol tools over stdio (search_customers, verify_issue,\n"+
			"verify_check, get_customer_profile, get_billing_summary, get_payments, get_network_health,\n"+
			"get_customer_tickets, add_note, update_contact, send_account_link, resend_invoice, preview_plan_change,\n"+
			"apply_plan_change, open_ticket) with the same key, scoping, verification and confirmation rules as\n"+
			"/partner/agent. The key (with the agent_api_access feature) comes from --api-key or SUBPROV_AGENT_API_KEY.")
	key := fs.String("api-key", "", "agent API key (overrides SUBPROV_AGENT_API_KEY)")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	if *key != "" {
		cfg.AgentAPIKey = *key
	}
	cfg.Workers = false
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	srv := &mcp.Server{Agent: a.Agent, Auth: a.Auth, APIKey: cfg.AgentAPIKey}
	if err := srv.CheckKey(ctx); err != nil {
		return err
	}
	log.Info("subprov mcp serving on stdio", "database", redactedDB(a.Store))
	return srv.New().Run(ctx, &sdk.StdioTransport{})
}
