package partner

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// RetryCharge: POST /api/v1/invoices/{invoice_id}/retry-charge (dashboard): the open
// invoice's next AutoPay attempt is made now instead of on the dunning schedule.
func (h *Handler) RetryCharge(w http.ResponseWriter, r *http.Request) error {
	inv, err := h.Billing.RetryNow(r.Context(), api.CallerOf(r).Operator, r.PathValue("invoice_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, retryChargeJSON{InvoiceID: inv.ID, Number: inv.Number, Status: inv.Status,
		Message: "An AutoPay attempt is queued"})
	return nil
}

type retryChargeJSON struct {
	InvoiceID string `json:"invoice_id"`
	Message   string `json:"message"`
	Number    string `json:"number"`
	Status    string `json:"status"`
}
