package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
)

// Support-agent surface (docs/agent.md): thin handlers over package agent, which
// holds the rules (scoping, verification, confirmation).

func agentCaller(r *http.Request) agent.Caller {
	c := callerOf(r)
	return agent.Caller{Provider: c.Provider, Key: c.APIKey, Session: r.Header.Get("X-Verified-Session")}
}

// agentJSON renders an agent answer, or its error with Retry-After when it is a rate limit.
func agentJSON(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		if e, ok := subprov.AsError(err); ok && e.Code == subprov.ERATELIMITED {
			if secs, ok := e.Extra["retry_after"].(int); ok {
				w.Header().Set("Retry-After", strconv.Itoa(secs))
			}
		}
		return err
	}
	writeJSON(w, status, v)
	return nil
}

// decodeAgent reads the body of an agent call. A body that does not decode is answered only
// after the checks the call makes first (docs/agent.md): the customer it names (the path's
// customerId, else the body's customer_id) must be of the key's provider, else 404 whatever the
// session says; then, on a route that needs one (verified), the session must be bound to that
// customer, else 401 verification_required; only then the 422 (or 413). A body that decodes
// goes on to package agent, which runs the same checks in the same order before its own rules.
func decodeAgent[T any](s *server, r *http.Request, verified bool) (T, error) {
	var v T
	body, err := readBody(r)
	if err == nil {
		if v, err = decodeBytes[T](body); err == nil {
			return v, nil
		}
	}
	id := r.PathValue("customerId")
	if id == "" {
		var named struct {
			CustomerID any `json:"customer_id"`
		}
		if json.Unmarshal(body, &named) == nil {
			id, _ = named.CustomerID.(string)
		}
	}
	if strings.TrimSpace(id) != "" {
		if cerr := s.Agent.Check(r.Context(), agentCaller(r), id, verified); cerr != nil {
			return v, cerr
		}
	}
	return v, err
}

// handleAgentSearch: GET /partner/agent/customers/search?q=&limit=.
func (s *server) handleAgentSearch(w http.ResponseWriter, r *http.Request) error {
	limit, err := agent.ParseLimit(r.URL.Query().Get("limit"))
	if err != nil {
		return err
	}
	res, err := s.Agent.Search(r.Context(), agentCaller(r), r.URL.Query().Get("q"), limit)
	return agentJSON(w, http.StatusOK, res, err)
}

type verifyIssueRequest struct {
	CustomerID string `json:"customer_id"`
	Channel    string `json:"channel"`
}

// handleAgentVerifyIssue: POST /partner/agent/verify/issue.
func (s *server) handleAgentVerifyIssue(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[verifyIssueRequest](s, r, false)
	if err != nil {
		return err
	}
	res, err := s.Agent.IssueCode(r.Context(), agentCaller(r), in.CustomerID, in.Channel)
	return agentJSON(w, http.StatusAccepted, res, err)
}

type verifyCheckRequest struct {
	CustomerID string `json:"customer_id"`
	Code       string `json:"code"`
}

// handleAgentVerifyCheck: POST /partner/agent/verify/check.
func (s *server) handleAgentVerifyCheck(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[verifyCheckRequest](s, r, false)
	if err != nil {
		return err
	}
	res, err := s.Agent.CheckCode(r.Context(), agentCaller(r), in.CustomerID, in.Code)
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentProfile: GET /partner/agent/customers/{customerId}.
func (s *server) handleAgentProfile(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Agent.Profile(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentBillingSummary: GET /partner/agent/customers/{customerId}/billing-summary.
func (s *server) handleAgentBillingSummary(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Agent.BillingSummary(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentPayments: GET /partner/agent/customers/{customerId}/payments.
func (s *server) handleAgentPayments(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Agent.Payments(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentNetworkHealth: GET /partner/agent/customers/{customerId}/network-health.
func (s *server) handleAgentNetworkHealth(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Agent.NetworkHealth(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentTickets: GET /partner/agent/customers/{customerId}/tickets.
func (s *server) handleAgentTickets(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Agent.Tickets(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

type agentNoteRequest struct {
	Note string `json:"note"`
}

// handleAgentNote: POST /partner/agent/customers/{customerId}/notes.
func (s *server) handleAgentNote(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agentNoteRequest](s, r, true)
	if err != nil {
		return err
	}
	res, err := s.Agent.AddNote(r.Context(), agentCaller(r), r.PathValue("customerId"), in.Note)
	return agentJSON(w, http.StatusCreated, res, err)
}

// handleAgentContact: PATCH /partner/agent/customers/{customerId}/contact.
func (s *server) handleAgentContact(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.ContactPatch](s, r, true)
	if err != nil {
		return err
	}
	res, err := s.Agent.PatchContact(r.Context(), agentCaller(r), r.PathValue("customerId"), in)
	return agentJSON(w, http.StatusOK, res, err)
}

type agentLinkRequest struct {
	Action string `json:"action"`
}

// handleAgentPasswordReset: POST /partner/agent/customers/{customerId}/password-reset.
func (s *server) handleAgentPasswordReset(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agentLinkRequest](s, r, true)
	if err != nil {
		return err
	}
	res, err := s.Agent.SendAccountLink(r.Context(), agentCaller(r), r.PathValue("customerId"), in.Action)
	return agentJSON(w, http.StatusAccepted, res, err)
}

// handleAgentInvoiceResend: POST /partner/agent/customers/{customerId}/invoices/{invoiceId}/resend.
func (s *server) handleAgentInvoiceResend(w http.ResponseWriter, r *http.Request) error {
	if _, err := decodeAgent[struct{}](s, r, true); err != nil {
		return err
	}
	res, err := s.Agent.ResendInvoice(r.Context(), agentCaller(r), r.PathValue("customerId"), r.PathValue("invoiceId"))
	return agentJSON(w, http.StatusAccepted, res, err)
}

// handleAgentPlanPreview: POST /partner/agent/customers/{customerId}/plan-change/preview.
// It reads the apply call's body, whose confirm and quote_id it ignores, so one body serves
// both calls.
func (s *server) handleAgentPlanPreview(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.ApplyRequest](s, r, true)
	if err != nil {
		return err
	}
	res, err := s.Agent.PreviewPlanChange(r.Context(), agentCaller(r), r.PathValue("customerId"),
		agent.PreviewRequest{PlanVersionID: in.PlanVersionID, SubscriptionID: in.SubscriptionID})
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentPlanChange: POST /partner/agent/customers/{customerId}/plan-change.
func (s *server) handleAgentPlanChange(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.ApplyRequest](s, r, true)
	if err != nil {
		return err
	}
	res, err := s.Agent.ApplyPlanChange(r.Context(), agentCaller(r), r.PathValue("customerId"), in)
	return agentJSON(w, http.StatusOK, res, err)
}

// handleAgentOpenTicket: POST /partner/agent/tickets (no verified session).
func (s *server) handleAgentOpenTicket(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.TicketInput](s, r, false)
	if err != nil {
		return err
	}
	res, err := s.Agent.OpenTicket(r.Context(), agentCaller(r), in)
	return agentJSON(w, http.StatusCreated, res, err)
}
