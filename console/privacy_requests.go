package console

import (
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/privacy"
)

// Privacy requests: the subscribers' requests to delete their personal data by state, and
// their approval or rejection with a reason. The capabilities are those of GET
// /api/v1/privacy-requests and POST /api/v1/privacy-requests/{id}/approve and /reject.

// linesLiveMessage explains the approval's 409 lines_live refusal.
const linesLiveMessage = "This account still has a line that is active, suspended, waiting for its install, or cancelled " +
	"with its end still ahead: its personal data can be deleted once every line has ended. Nothing was changed."

// privacyRow is a request with its provider's name and time zone.
type privacyRow struct {
	*subprov.PrivacyRequest
	Provider string
	Loc      *time.Location
}

// privacyRequests: GET /console/privacy-requests?status=&cursor=.
func (h *Handler) privacyRequests(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.privacyPage(w, r, v, http.StatusOK)
}

// privacyPage renders the list with status: after a refused decision, with its error (the
// form's request field names the row it belongs to).
func (h *Handler) privacyPage(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	return h.listPage(w, r, v, list{title: "Privacy requests", tmpl: "privacy_requests", path: Prefix + "privacy-requests",
		choices: privacy.Statuses, status: status}, func(page subprov.Page, idx providerIndex) (any, string, error) {
		rs, next, err := h.Ops.Privacy.List(v.ctx, v.Operator, r.URL.Query().Get("status"), page)
		rows := make([]privacyRow, len(rs))
		for i, p := range rs {
			rows[i] = privacyRow{PrivacyRequest: p, Provider: idx.Name(p.ProviderID), Loc: idx.Loc(p.ProviderID)}
		}
		return rows, next, err
	})
}

// approvePrivacyRequest: POST /console/privacy-requests/{request_id}/approve. While a line of
// the account is live the capability refuses (409 lines_live) and nothing changes: the list
// says why.
func (h *Handler) approvePrivacyRequest(w http.ResponseWriter, r *http.Request, v *View) error {
	_, err := h.Ops.Privacy.Approve(v.ctx, v.Operator, r.PathValue("request_id"))
	if err != nil {
		return h.privacyRefused(w, r, v, err)
	}
	h.redirect(w, r, Prefix+"privacy-requests", "The request is approved: the account's personal data is deleted.")
	return nil
}

// rejectPrivacyRequest: POST /console/privacy-requests/{request_id}/reject (reason).
func (h *Handler) rejectPrivacyRequest(w http.ResponseWriter, r *http.Request, v *View) error {
	_, err := h.Ops.Privacy.Reject(v.ctx, v.Operator, r.PathValue("request_id"), r.PostForm.Get("reason"))
	if err != nil {
		return h.privacyRefused(w, r, v, err)
	}
	h.redirect(w, r, Prefix+"privacy-requests", "The request is rejected.")
	return nil
}

// privacyRefused shows a refused decision on the list, beside its request's row.
func (h *Handler) privacyRefused(w http.ResponseWriter, r *http.Request, v *View, err error) error {
	reason := subprov.ErrorReason(err)
	return refused(r, v, err, func(status int) error {
		if reason == "lines_live" {
			v.Errors = map[string]string{"": linesLiveMessage}
		}
		v.Form.Set("request", r.PathValue("request_id"))
		return h.privacyPage(w, r, v, status)
	})
}
