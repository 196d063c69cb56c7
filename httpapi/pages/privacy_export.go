package pages

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
)

// PrivacyExport: GET /portal/privacy/export?token=… — the link in the personal-data export
// mail. A live link downloads the person's data as a JSON file (and is used); a link that is
// unknown, used or expired shows a page saying so (410), a failed attempt the route's limit
// counts.
func (h *Handler) PrivacyExport(w http.ResponseWriter, r *http.Request) error {
	body, err := h.Privacy.Export(r.Context(), strings.TrimSpace(r.URL.Query().Get("token")))
	if subprov.ErrorCode(err) == subprov.EGONE {
		api.AttemptFailed(r)
		l := pageLanguage(r)
		return api.Pages.Message(w, http.StatusGone, l, l.T("page.password.dead.title"), l.T("page.export.dead.text"))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="personal-data.json"`)
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}
