package ops

import (
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
)

// PrivacyRequests: GET /api/v1/privacy-requests.
func (h *Handler) PrivacyRequests(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	rs, next, err := h.Privacy.List(r.Context(), api.CallerOf(r).Operator, r.URL.Query().Get("status"), page)
	if err != nil {
		return err
	}
	out := make([]privacyRequestJSON, len(rs))
	for i, p := range rs {
		out[i] = privacyRequestOf(p)
	}
	api.List(w, "privacy_requests", out, next)
	return nil
}

// ApprovePrivacyRequest: POST /api/v1/privacy-requests/{request_id}/approve.
func (h *Handler) ApprovePrivacyRequest(w http.ResponseWriter, r *http.Request) error {
	p, err := h.Privacy.Approve(r.Context(), api.CallerOf(r).Operator, r.PathValue("request_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, privacyRequestOf(p))
	return nil
}

type rejectRequest struct {
	Reason string `json:"reason"`
}

// RejectPrivacyRequest: POST /api/v1/privacy-requests/{request_id}/reject.
func (h *Handler) RejectPrivacyRequest(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[rejectRequest](r)
	if err != nil {
		return err
	}
	p, err := h.Privacy.Reject(r.Context(), api.CallerOf(r).Operator, r.PathValue("request_id"), q.Reason)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, privacyRequestOf(p))
	return nil
}

type privacyRequestJSON struct {
	ID           string  `json:"id"`
	ProviderID   string  `json:"provider_id"`
	SubscriberID string  `json:"subscriber_id"`
	Status       string  `json:"status"`
	TicketID     *string `json:"ticket_id"`
	Reason       *string `json:"reason"`
	CreatedAt    string  `json:"created_at"`
	DecidedAt    *string `json:"decided_at"`
}

func privacyRequestOf(p *subprov.PrivacyRequest) privacyRequestJSON {
	return privacyRequestJSON{ID: p.ID, ProviderID: p.ProviderID, SubscriberID: p.SubscriberID, Status: p.Status,
		TicketID: api.Optional(p.TicketID), Reason: api.Optional(p.Reason), CreatedAt: p.CreatedAt.UTC().Format(time.RFC3339),
		DecidedAt: api.Instant(p.DecidedAt)}
}
