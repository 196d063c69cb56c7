package ops

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// Overview: GET /api/v1/overview.
func (h *Handler) Overview(w http.ResponseWriter, r *http.Request) error {
	c, err := h.Summary.Counts(r.Context(), api.CallerOf(r).Operator)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, map[string]any{
		"lines": c.Lines, "install_jobs": c.Installs, "provisioning_failed": c.FailedProvisioning,
		"webhook_events_failed": c.FailingWebhooks, "invoices_overdue": c.OverdueInvoices,
	})
	return nil
}
