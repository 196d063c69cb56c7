package portal

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// PrivacyDeletionRequest: POST /partner/subscriber/me/privacy/deletion-request (holder only).
// The request waits for an operator's decision, whatever the lines: the approval is refused
// while one is live.
func (h *Handler) PrivacyDeletionRequest(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	req, err := h.Privacy.Request(r.Context(), p.ID, sid)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, deletionRequestJSON{TicketID: req.TicketID})
	return nil
}

type deletionRequestJSON struct {
	TicketID string `json:"ticket_id"`
}
