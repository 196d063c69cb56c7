package portal

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// PayInvoice: POST /partner/subscriber/me/invoices/{invoice_id}/pay (holder only).
func (h *Handler) PayInvoice(w http.ResponseWriter, r *http.Request) error {
	_, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	inv, err := h.Billing.PayNow(r.Context(), p, &api.CallerOf(r).Account.Account, r.PathValue("invoice_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, api.InvoiceOf(inv))
	return nil
}

type autoPayLineJSON struct {
	SubscriptionID string `json:"subscription_id"`
	Enabled        bool   `json:"enabled"`
}

type autoPayJSON struct {
	Lines []autoPayLineJSON `json:"lines"`
}

// AutoPay: GET /partner/subscriber/me/autopay (holder only).
func (h *Handler) AutoPay(w http.ResponseWriter, r *http.Request) error {
	_, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	lines, err := h.Billing.AutoPay(r.Context(), p, &api.CallerOf(r).Account.Account)
	if err != nil {
		return err
	}
	out := autoPayJSON{Lines: make([]autoPayLineJSON, 0, len(lines))}
	for _, l := range lines {
		out.Lines = append(out.Lines, autoPayLineJSON(l))
	}
	api.JSON(w, http.StatusOK, out)
	return nil
}

type autoPayRequest struct {
	SubscriptionID string `json:"subscription_id"`
	Enabled        *bool  `json:"enabled"`
}

func (q autoPayRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"subscription_id": q.SubscriptionID})
	if q.Enabled == nil {
		p["enabled"] = "required"
	}
	return p
}

// SetAutoPay: PATCH /partner/subscriber/me/autopay (holder only).
func (h *Handler) SetAutoPay(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[autoPayRequest](r)
	if err != nil {
		return err
	}
	_, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	l, err := h.Billing.SetAutoPay(r.Context(), p, &api.CallerOf(r).Account.Account, q.SubscriptionID, *q.Enabled)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, autoPayLineJSON(*l))
	return nil
}

type paperBillingRequest struct {
	Enabled *bool `json:"enabled"`
}

func (q paperBillingRequest) Valid() map[string]string {
	if q.Enabled == nil {
		return map[string]string{"enabled": "required"}
	}
	return nil
}

type ticketJSON struct {
	TicketID string `json:"ticket_id"`
}

// PaperBilling: POST /partner/subscriber/me/paper-billing (holder only): a ticket to the
// provider's billing staff.
func (h *Handler) PaperBilling(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[paperBillingRequest](r)
	if err != nil {
		return err
	}
	_, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	id, err := h.Portal.RequestPaperBilling(r.Context(), p, &api.CallerOf(r).Account.Account, *q.Enabled)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, ticketJSON{TicketID: id})
	return nil
}
