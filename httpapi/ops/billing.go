package ops

import (
	"bytes"
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/httpapi/api"
)

// ListInvoices: GET /api/v1/invoices.
func (h *Handler) ListInvoices(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	invs, next, err := h.Billing.ListInvoices(r.Context(), api.CallerOf(r).Operator,
		billing.InvoiceFilter{ProviderID: q.Get("provider_id"), SubscriberID: q.Get("subscriber_id"), Status: q.Get("status")}, page)
	if err != nil {
		return err
	}
	out := make([]invoiceJSON, len(invs))
	for i, inv := range invs {
		out[i] = invoiceJSON{ID: inv.ID, ProviderID: inv.ProviderID, SubscriberID: api.Optional(inv.SubscriberID), SubscriptionID: inv.SubscriptionID,
			Number: inv.Number, CustomerNumber: api.Optional(inv.CustomerNumber), InvoiceDate: inv.InvoiceDate, Period: inv.Period, Kind: inv.Kind,
			Status: inv.State, Net: inv.Net, Tax: inv.Tax, Total: inv.Total, Credited: inv.Credited, Currency: inv.Currency,
			PaidAt: api.Instant(inv.PaidAt), CreatedAt: inv.CreatedAt.UTC().Format(time.RFC3339)}
	}
	api.List(w, "invoices", out, next)
	return nil
}

type invoiceJSON struct {
	ID             string        `json:"id"`
	ProviderID     string        `json:"provider_id"`
	SubscriberID   *string       `json:"subscriber_id"`
	SubscriptionID string        `json:"subscription_id"`
	Number         string        `json:"number"`
	CustomerNumber *string       `json:"customer_number"`
	InvoiceDate    string        `json:"invoice_date"`
	Period         string        `json:"period"`
	Kind           string        `json:"kind"`
	Status         string        `json:"status"`
	Net            subprov.Money `json:"net"`
	Tax            subprov.Money `json:"tax"`
	Total          subprov.Money `json:"total"`
	Credited       subprov.Money `json:"credited"`
	Currency       string        `json:"currency"`
	PaidAt         *string       `json:"paid_at"`
	CreatedAt      string        `json:"created_at"`
}

// InvoiceDocument: GET /api/v1/invoices/{invoice_id}/document, the invoice's PDF.
func (h *Handler) InvoiceDocument(w http.ResponseWriter, r *http.Request) error {
	var buf bytes.Buffer
	if err := h.Billing.InvoiceDocument(r.Context(), api.CallerOf(r).Operator, &buf, r.PathValue("invoice_id")); err != nil {
		return err
	}
	return api.PDF(w, "invoice", &buf)
}

// CreditNoteDocument: GET /api/v1/credit-notes/{credit_note_id}/document, the credit note's PDF.
func (h *Handler) CreditNoteDocument(w http.ResponseWriter, r *http.Request) error {
	var buf bytes.Buffer
	if err := h.Billing.CreditNoteDocument(r.Context(), api.CallerOf(r).Operator, &buf, r.PathValue("credit_note_id")); err != nil {
		return err
	}
	return api.PDF(w, "credit-note", &buf)
}

type creditNoteRequest struct {
	Amount *subprov.Money `json:"amount"`
	Reason string         `json:"reason"`
}

// CreditInvoice: POST /api/v1/invoices/{invoice_id}/credit-notes.
func (h *Handler) CreditInvoice(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[creditNoteRequest](r)
	if err != nil {
		return err
	}
	cn, err := h.Billing.CreditInvoice(r.Context(), api.CallerOf(r).Operator, r.PathValue("invoice_id"),
		billing.Credit{Amount: q.Amount, Reason: q.Reason})
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, creditNoteJSON{ID: cn.ID, ProviderID: cn.ProviderID, SubscriberID: api.Optional(cn.SubscriberID),
		SubscriptionID: api.Optional(cn.SubscriptionID), InvoiceID: api.Optional(cn.InvoiceID), Number: cn.Number, State: cn.State,
		Reason: cn.Reason, Amount: cn.Amount, Remaining: cn.Remaining, Currency: cn.Currency, CreatedAt: cn.CreatedAt.UTC().Format(time.RFC3339)})
	return nil
}

type creditNoteJSON struct {
	ID             string        `json:"id"`
	ProviderID     string        `json:"provider_id"`
	SubscriberID   *string       `json:"subscriber_id"`
	SubscriptionID *string       `json:"subscription_id"`
	InvoiceID      *string       `json:"invoice_id"`
	Number         string        `json:"number"`
	State          string        `json:"state"`
	Reason         string        `json:"reason"`
	Amount         subprov.Money `json:"amount"`
	Remaining      subprov.Money `json:"remaining"`
	Currency       string        `json:"currency"`
	CreatedAt      string        `json:"created_at"`
}

// ListBillRuns: GET /api/v1/bill-runs.
func (h *Handler) ListBillRuns(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	runs, next, err := h.Billing.BillRuns(r.Context(), api.CallerOf(r).Operator, r.URL.Query().Get("provider_id"), page)
	if err != nil {
		return err
	}
	out := make([]billRunJSON, len(runs))
	for i, b := range runs {
		out[i] = billRunJSON{ID: b.ID, ProviderID: b.ProviderID, Period: b.Period, StartedAt: b.StartedAt.UTC().Format(time.RFC3339),
			FinishedAt: api.Instant(b.FinishedAt), Invoices: b.Invoices, Failed: b.Failed}
	}
	api.List(w, "bill_runs", out, next)
	return nil
}

type billRunJSON struct {
	ID         string  `json:"id"`
	ProviderID string  `json:"provider_id"`
	Period     string  `json:"period"`
	StartedAt  string  `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	Invoices   int     `json:"invoices"`
	Failed     int     `json:"failed"`
}
