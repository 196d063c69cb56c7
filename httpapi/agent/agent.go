package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/httpapi/api"
)

// Support-agent surface (docs/agent.md): thin handlers over package agent, which
// holds the rules (scoping, verification, confirmation).

func agentCaller(r *http.Request) agent.Caller {
	c := api.CallerOf(r)
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
	api.JSON(w, status, v)
	return nil
}

// decodeAgent reads the body of an agent call. A body that does not decode is answered only
// after the checks the call makes first (docs/agent.md): the customer it names (the path's
// customerId, else the body's customer_id) must be of the key's provider, else 404 whatever the
// session says; then, on a route that needs one (verified), the session must be bound to that
// customer, else 401 verification_required; only then the 422 (or 413). A body that decodes
// goes on to package agent, which runs the same checks in the same order before its own rules.
func decodeAgent[T any](h *Handler, r *http.Request, verified bool) (T, error) {
	var v T
	body, err := api.ReadBody(r)
	if err == nil {
		if v, err = api.DecodeBytes[T](body); err == nil {
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
		if cerr := h.Agent.Check(r.Context(), agentCaller(r), id, verified); cerr != nil {
			return v, cerr
		}
	}
	return v, err
}

// Search: GET /partner/agent/customers/search?q=&limit=.
func (h *Handler) Search(w http.ResponseWriter, r *http.Request) error {
	limit, err := agent.ParseLimit(r.URL.Query().Get("limit"))
	if err != nil {
		return err
	}
	res, err := h.Agent.Search(r.Context(), agentCaller(r), r.URL.Query().Get("q"), limit)
	return agentJSON(w, http.StatusOK, res, err)
}

type verifyIssueRequest struct {
	CustomerID string `json:"customer_id"`
	Channel    string `json:"channel"`
}

// VerifyIssue: POST /partner/agent/verify/issue.
func (h *Handler) VerifyIssue(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[verifyIssueRequest](h, r, false)
	if err != nil {
		return err
	}
	res, err := h.Agent.IssueCode(r.Context(), agentCaller(r), in.CustomerID, in.Channel)
	return agentJSON(w, http.StatusAccepted, res, err)
}

type verifyCheckRequest struct {
	CustomerID string `json:"customer_id"`
	Code       string `json:"code"`
}

// VerifyCheck: POST /partner/agent/verify/check.
func (h *Handler) VerifyCheck(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[verifyCheckRequest](h, r, false)
	if err != nil {
		return err
	}
	res, err := h.Agent.CheckCode(r.Context(), agentCaller(r), in.CustomerID, in.Code)
	return agentJSON(w, http.StatusOK, res, err)
}

// Profile: GET /partner/agent/customers/{customerId}.
func (h *Handler) Profile(w http.ResponseWriter, r *http.Request) error {
	res, err := h.Agent.Profile(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// BillingSummary: GET /partner/agent/customers/{customerId}/billing-summary.
func (h *Handler) BillingSummary(w http.ResponseWriter, r *http.Request) error {
	res, err := h.Agent.BillingSummary(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// Payments: GET /partner/agent/customers/{customerId}/payments.
func (h *Handler) Payments(w http.ResponseWriter, r *http.Request) error {
	res, err := h.Agent.Payments(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// NetworkHealth: GET /partner/agent/customers/{customerId}/network-health.
func (h *Handler) NetworkHealth(w http.ResponseWriter, r *http.Request) error {
	res, err := h.Agent.NetworkHealth(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

// Tickets: GET /partner/agent/customers/{customerId}/tickets.
func (h *Handler) Tickets(w http.ResponseWriter, r *http.Request) error {
	res, err := h.Agent.Tickets(r.Context(), agentCaller(r), r.PathValue("customerId"))
	return agentJSON(w, http.StatusOK, res, err)
}

type agentNoteRequest struct {
	Note string `json:"note"`
}

// Note: POST /partner/agent/customers/{customerId}/notes.
func (h *Handler) Note(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agentNoteRequest](h, r, true)
	if err != nil {
		return err
	}
	res, err := h.Agent.AddNote(r.Context(), agentCaller(r), r.PathValue("customerId"), in.Note)
	return agentJSON(w, http.StatusCreated, res, err)
}

// Contact: PATCH /partner/agent/customers/{customerId}/contact.
func (h *Handler) Contact(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.ContactPatch](h, r, true)
	if err != nil {
		return err
	}
	res, err := h.Agent.PatchContact(r.Context(), agentCaller(r), r.PathValue("customerId"), in)
	return agentJSON(w, http.StatusOK, res, err)
}

type agentLinkRequest struct {
	Action string `json:"action"`
}

// PasswordReset: POST /partner/agent/customers/{customerId}/password-reset.
func (h *Handler) PasswordReset(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agentLinkRequest](h, r, true)
	if err != nil {
		return err
	}
	res, err := h.Agent.SendAccountLink(r.Context(), agentCaller(r), r.PathValue("customerId"), in.Action)
	return agentJSON(w, http.StatusAccepted, res, err)
}

// InvoiceResend: POST /partner/agent/customers/{customerId}/invoices/{invoiceId}/resend.
func (h *Handler) InvoiceResend(w http.ResponseWriter, r *http.Request) error {
	if _, err := decodeAgent[struct{}](h, r, true); err != nil {
		return err
	}
	res, err := h.Agent.ResendInvoice(r.Context(), agentCaller(r), r.PathValue("customerId"), r.PathValue("invoiceId"))
	return agentJSON(w, http.StatusAccepted, res, err)
}

// PlanPreview: POST /partner/agent/customers/{customerId}/plan-change/preview.
// It reads the apply call's body, whose confirm and quote_id it ignores, so one body serves
// both calls.
func (h *Handler) PlanPreview(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.ApplyRequest](h, r, true)
	if err != nil {
		return err
	}
	res, err := h.Agent.PreviewPlanChange(r.Context(), agentCaller(r), r.PathValue("customerId"),
		agent.PreviewRequest{PlanVersionID: in.PlanVersionID, SubscriptionID: in.SubscriptionID})
	return agentJSON(w, http.StatusOK, res, err)
}

// PlanChange: POST /partner/agent/customers/{customerId}/plan-change.
func (h *Handler) PlanChange(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.ApplyRequest](h, r, true)
	if err != nil {
		return err
	}
	res, err := h.Agent.ApplyPlanChange(r.Context(), agentCaller(r), r.PathValue("customerId"), in)
	return agentJSON(w, http.StatusOK, res, err)
}

// OpenTicket: POST /partner/agent/tickets (no verified session).
func (h *Handler) OpenTicket(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeAgent[agent.TicketInput](h, r, false)
	if err != nil {
		return err
	}
	res, err := h.Agent.OpenTicket(r.Context(), agentCaller(r), in)
	return agentJSON(w, http.StatusCreated, res, err)
}
