// Package mcp serves the support-agent surface as Model Context Protocol tools (subprov mcp,
// stdio transport, official Go SDK). Every tool calls the same package agent code as the HTTP
// routes, with one API key fixed at start: the same provider scoping, verification (the
// verified_session argument plays X-Verified-Session) and confirmation rules apply. Errors are
// tool errors carrying the agent envelope {"error": {"code", "message"}} with the stable codes.
package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/auth"
)

// Version of the tool set announced to clients.
const Version = "1.0.0"

// Server builds MCP servers over one agent service and one API key.
type Server struct {
	Agent  *agent.Service
	Auth   *auth.Service
	APIKey string
}

// CheckKey resolves the key and requires the agent_api_access feature, so a bad key fails at
// start rather than on every call.
func (s *Server) CheckKey(ctx context.Context) error {
	_, err := s.caller(ctx, "")
	return err
}

// caller re-resolves the key on every call, so a revoked key stops working at once.
func (s *Server) caller(ctx context.Context, session string) (agent.Caller, error) {
	k, p, err := s.Auth.APIKey(ctx, s.APIKey)
	if err != nil {
		return agent.Caller{}, err
	}
	if err := auth.AgentAccess(k); err != nil {
		return agent.Caller{}, err
	}
	return agent.Caller{Provider: p, Key: k, Session: session}, nil
}

// Customer names the customer and carries the verified session of sensitive tools.
type Customer struct {
	CustomerID      string `json:"customer_id" jsonschema:"the customer id from search_customers"`
	VerifiedSession string `json:"verified_session,omitempty" jsonschema:"verified_session_token from verify_check (15 minutes, bound to this customer)"`
}

// SearchInput is search_customers' input.
type SearchInput struct {
	Q     string `json:"q" jsonschema:"at least 2 characters: name, e-mail, phone, customer number, customer id (or its first 8 characters), address or unit"`
	Limit int    `json:"limit,omitempty" jsonschema:"1 to 100, default 25"`
}

// IssueInput is verify_issue's input.
type IssueInput struct {
	CustomerID string `json:"customer_id"`
	Channel    string `json:"channel,omitempty" jsonschema:"email (default) or sms"`
}

// CheckInput is verify_check's input.
type CheckInput struct {
	CustomerID string `json:"customer_id"`
	Code       string `json:"code" jsonschema:"the 6-digit code the customer read out"`
}

// NoteInput is add_note's input.
type NoteInput struct {
	Customer
	Note string `json:"note"`
}

// ContactInput is update_contact's input.
type ContactInput struct {
	Customer
	agent.ContactPatch
}

// LinkInput is send_account_link's input.
type LinkInput struct {
	Customer
	Action string `json:"action,omitempty" jsonschema:"password_reset (default) or resend_activation"`
}

// InvoiceInput is resend_invoice's input.
type InvoiceInput struct {
	Customer
	InvoiceID string `json:"invoice_id"`
}

// PreviewInput is preview_plan_change's input.
type PreviewInput struct {
	Customer
	agent.PreviewRequest
}

// ApplyInput is apply_plan_change's input.
type ApplyInput struct {
	Customer
	agent.ApplyRequest
}

// New returns an MCP server exposing the agent tools.
func (s *Server) New() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "subprov-agent", Version: Version}, &sdk.ServerOptions{
		Instructions: "Support-agent tools. Search (masked), then verify_issue and verify_check to get a verified_session for one customer, " +
			"then read or change. Never auto-select an ambiguous search match. Apply a plan change only with confirm: true after the customer heard the previewed cost.",
	})
	tool(srv, "search_customers", "Masked search of the provider's customers; ambiguous true means ask for the service address or unit and search again.",
		func(ctx context.Context, c agent.Caller, in SearchInput) (any, error) {
			limit := in.Limit
			if limit == 0 {
				limit = 25
			}
			return s.Agent.Search(ctx, c, in.Q, limit)
		}, s, func(SearchInput) string { return "" })
	tool(srv, "verify_issue", "Send the customer a 6-digit one-time code by e-mail (default) or SMS; the code is never returned.",
		func(ctx context.Context, c agent.Caller, in IssueInput) (any, error) {
			return s.Agent.IssueCode(ctx, c, in.CustomerID, in.Channel)
		}, s, func(IssueInput) string { return "" })
	tool(srv, "verify_check", "Check the code the customer read out; returns verified_session_token for the customer's sensitive tools.",
		func(ctx context.Context, c agent.Caller, in CheckInput) (any, error) {
			return s.Agent.CheckCode(ctx, c, in.CustomerID, in.Code)
		}, s, func(CheckInput) string { return "" })
	reads := map[string]struct {
		desc string
		fn   func(context.Context, agent.Caller, string) (any, error)
	}{
		"get_customer_profile": {"Slim profile: contacts, invoice address, service locations, subscriptions (verified session).",
			func(ctx context.Context, c agent.Caller, id string) (any, error) { return s.Agent.Profile(ctx, c, id) }},
		"get_billing_summary": {"Balance due, open invoices, monthly price, recent invoices (verified session).",
			func(ctx context.Context, c agent.Caller, id string) (any, error) {
				return s.Agent.BillingSummary(ctx, c, id)
			}},
		"get_payments": {"Payments derived from paid invoices (verified session).",
			func(ctx context.Context, c agent.Caller, id string) (any, error) { return s.Agent.Payments(ctx, c, id) }},
		"get_network_health": {"Per-line provisioning status, modem status, and the port's link state as last sampled with its outages of the last 30 days (verified session).",
			func(ctx context.Context, c agent.Caller, id string) (any, error) {
				return s.Agent.NetworkHealth(ctx, c, id)
			}},
		"get_customer_tickets": {"The customer's support tickets (verified session).",
			func(ctx context.Context, c agent.Caller, id string) (any, error) { return s.Agent.Tickets(ctx, c, id) }},
	}
	for name, r := range reads {
		tool(srv, name, r.desc, func(ctx context.Context, c agent.Caller, in Customer) (any, error) {
			return r.fn(ctx, c, in.CustomerID)
		}, s, func(in Customer) string { return in.VerifiedSession })
	}
	tool(srv, "add_note", "Append an internal, operator-visible note attributed to the AI (verified session).",
		func(ctx context.Context, c agent.Caller, in NoteInput) (any, error) {
			return s.Agent.AddNote(ctx, c, in.CustomerID, in.Note)
		}, s, func(in NoteInput) string { return in.VerifiedSession })
	tool(srv, "update_contact", "Change the contract (default) or invoice contact; only the fields sent change (verified session).",
		func(ctx context.Context, c agent.Caller, in ContactInput) (any, error) {
			return s.Agent.PatchContact(ctx, c, in.CustomerID, in.ContactPatch)
		}, s, func(in ContactInput) string { return in.VerifiedSession })
	tool(srv, "send_account_link", "E-mail a password-reset or activation link (verified session).",
		func(ctx context.Context, c agent.Caller, in LinkInput) (any, error) {
			return s.Agent.SendAccountLink(ctx, c, in.CustomerID, in.Action)
		}, s, func(in LinkInput) string { return in.VerifiedSession })
	tool(srv, "resend_invoice", "E-mail a copy of one of the customer's invoices (verified session).",
		func(ctx context.Context, c agent.Caller, in InvoiceInput) (any, error) {
			return s.Agent.ResendInvoice(ctx, c, in.CustomerID, in.InvoiceID)
		}, s, func(in InvoiceInput) string { return in.VerifiedSession })
	tool(srv, "preview_plan_change", "Exact billing impact of a plan change (verified session).",
		func(ctx context.Context, c agent.Caller, in PreviewInput) (any, error) {
			return s.Agent.PreviewPlanChange(ctx, c, in.CustomerID, in.PreviewRequest)
		}, s, func(in PreviewInput) string { return in.VerifiedSession })
	tool(srv, "apply_plan_change", "Apply a plan change live; needs confirm: true after the customer heard the previewed cost (verified session).",
		func(ctx context.Context, c agent.Caller, in ApplyInput) (any, error) {
			return s.Agent.ApplyPlanChange(ctx, c, in.CustomerID, in.ApplyRequest)
		}, s, func(in ApplyInput) string { return in.VerifiedSession })
	tool(srv, "open_ticket", "Open a support ticket routed to the provider's support group (no verified session needed).",
		func(ctx context.Context, c agent.Caller, in agent.TicketInput) (any, error) {
			return s.Agent.OpenTicket(ctx, c, in)
		}, s, func(agent.TicketInput) string { return "" })
	return srv
}

// tool registers one tool: it resolves the caller, runs fn, and renders the answer as JSON
// text (and structured content), or a coded error as a tool error in the agent envelope.
func tool[In any](srv *sdk.Server, name, desc string, fn func(context.Context, agent.Caller, In) (any, error), s *Server, session func(In) string) {
	sdk.AddTool(srv, &sdk.Tool{Name: name, Description: desc}, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		c, err := s.caller(ctx, session(in))
		var out any
		if err == nil {
			out, err = fn(ctx, c, in)
		}
		if err != nil {
			return errorResult(err), nil, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return errorResult(err), nil, nil
		}
		var structured any
		_ = json.Unmarshal(b, &structured)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: structured}, nil, nil
	})
}

// errorResult renders err in the agent envelope; anything uncoded is "internal".
func errorResult(err error) *sdk.CallToolResult {
	code, msg := agent.PublicError(err)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}
