package console

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/httpapi/api"
)

// Billing: invoices by state, provider and subscriber, an invoice with its PDF and its credit
// notes' (the account page links its invoices' and credit notes' PDFs here too), the retry of
// its charge and a credit note against it, and the bill runs. The capabilities are those of
// GET /api/v1/invoices, GET /api/v1/invoices/{id}/document,
// GET /api/v1/credit-notes/{id}/document, POST
// /api/v1/invoices/{id}/retry-charge, POST /api/v1/invoices/{id}/credit-notes and GET
// /api/v1/bill-runs.

// invoiceStates are the states the list filters on.
var invoiceStates = []string{billing.InvoiceOpen, billing.InvoiceOverdue, billing.InvoicePaid, billing.InvoiceVoid}

// invoiceRow is an invoice with its provider's name and time zone.
type invoiceRow struct {
	billing.OperatorInvoice
	Provider string
	Loc      *time.Location
}

// invoices: GET /console/invoices?status=&provider_id=&subscriber_id=&cursor=.
func (h *Handler) invoices(w http.ResponseWriter, r *http.Request, v *View) error {
	q := r.URL.Query()
	return h.listPage(w, r, v, list{title: "Invoices", tmpl: "invoices", path: Prefix + "invoices", choices: invoiceStates}, func(page subprov.Page, idx providerIndex) (any, string, error) {
		invs, next, err := h.Ops.Billing.ListInvoices(v.ctx, v.Operator, billing.InvoiceFilter{ProviderID: q.Get("provider_id"),
			SubscriberID: strings.TrimSpace(q.Get("subscriber_id")), Status: q.Get("status")}, page)
		rows := make([]invoiceRow, len(invs))
		for i, inv := range invs {
			rows[i] = invoiceRow{OperatorInvoice: inv, Provider: idx.Name(inv.ProviderID), Loc: idx.Loc(inv.ProviderID)}
		}
		return rows, next, err
	})
}

// invoiceData is the invoice page's: the invoice and what is left to credit on it.
type invoiceData struct {
	invoiceRow
	Left subprov.Money
	// Retriable: an open invoice's charge can be retried; Creditable: a credit note can be
	// issued (the invoice is not void and has something left).
	Retriable, Creditable bool
}

// invoice: GET /console/invoices/{invoice_id}.
func (h *Handler) invoice(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.invoicePage(w, r, v, http.StatusOK)
}

// invoicePage renders the invoice page with status: after a refused form, with its errors.
func (h *Handler) invoicePage(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	inv, err := h.Ops.Billing.Invoice(v.ctx, v.Operator, r.PathValue("invoice_id"))
	if err != nil {
		return err
	}
	p, err := h.providerOf(v, inv.ProviderID)
	if err != nil {
		return err
	}
	d := invoiceData{invoiceRow: invoiceRow{OperatorInvoice: *inv, Provider: p.Name, Loc: p.Location()}, Left: max(inv.Total-inv.Credited, 0)}
	d.Retriable = inv.Status == billing.InvoiceOpen
	d.Creditable = inv.Status != billing.InvoiceVoid && d.Left > 0
	v.Title, v.Data = "Invoice "+inv.Number, d
	h.render(w, r, v, status, "invoice")
	return nil
}

// invoiceDocument: GET /console/invoices/{invoice_id}/document, the invoice's PDF through
// GET /api/v1/invoices/{id}/document's capability.
func (h *Handler) invoiceDocument(w http.ResponseWriter, r *http.Request, v *View) error {
	var buf bytes.Buffer
	if err := h.Ops.Billing.InvoiceDocument(r.Context(), v.Operator, &buf, r.PathValue("invoice_id")); err != nil {
		return err
	}
	return api.PDF(w, "invoice", &buf)
}

// creditNoteDocument: GET /console/credit-notes/{credit_note_id}/document, a credit note's PDF
// through GET /api/v1/credit-notes/{id}/document's capability.
func (h *Handler) creditNoteDocument(w http.ResponseWriter, r *http.Request, v *View) error {
	var buf bytes.Buffer
	if err := h.Ops.Billing.CreditNoteDocument(r.Context(), v.Operator, &buf, r.PathValue("credit_note_id")); err != nil {
		return err
	}
	return api.PDF(w, "credit-note", &buf)
}

// retryCharge: POST /console/invoices/{invoice_id}/retry-charge. An invoice that is not open
// any more (409) is shown with the refusal.
func (h *Handler) retryCharge(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("invoice_id")
	inv, err := h.Ops.Billing.RetryNow(v.ctx, v.Operator, id)
	if err != nil {
		return refused(r, v, err, func(status int) error { return h.invoicePage(w, r, v, status) })
	}
	h.redirect(w, r, Prefix+"invoices/"+inv.ID, "An AutoPay attempt for invoice "+inv.Number+" is queued.")
	return nil
}

// creditInvoice: POST /console/invoices/{invoice_id}/credit-notes (amount, reason). A refused
// note (an amount above what the invoice has left, no reason) is shown beside its field with
// the input kept.
func (h *Handler) creditInvoice(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("invoice_id")
	f := r.PostForm
	c := billing.Credit{Reason: f.Get("reason")}
	var err error
	if raw := strings.TrimSpace(f.Get("amount")); raw != "" {
		amount, perr := subprov.ParseMoney(raw)
		if perr != nil {
			err = subprov.Invalid(map[string]string{"amount": "must be an amount with at most two decimals, like 12.50"})
		}
		c.Amount = &amount
	}
	var cn *subprov.CreditNote
	if err == nil {
		cn, err = h.Ops.Billing.CreditInvoice(v.ctx, v.Operator, id, c)
	}
	if err != nil {
		return refused(r, v, err, func(status int) error { return h.invoicePage(w, r, v, status) })
	}
	h.redirect(w, r, Prefix+"invoices/"+id, fmt.Sprintf("Credit note %s of %s %s issued.", cn.Number, cn.Amount, strings.ToUpper(cn.Currency)))
	return nil
}

// billRunRow is a bill run with its provider's name and time zone.
type billRunRow struct {
	*subprov.BillRun
	Provider string
	Loc      *time.Location
}

// billRuns: GET /console/bill-runs?provider_id=&cursor=.
func (h *Handler) billRuns(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.listPage(w, r, v, list{title: "Bill runs", tmpl: "bill_runs", path: Prefix + "bill-runs"}, func(page subprov.Page, idx providerIndex) (any, string, error) {
		runs, next, err := h.Ops.Billing.BillRuns(v.ctx, v.Operator, r.URL.Query().Get("provider_id"), page)
		rows := make([]billRunRow, len(runs))
		for i, b := range runs {
			rows[i] = billRunRow{BillRun: b, Provider: idx.Name(b.ProviderID), Loc: idx.Loc(b.ProviderID)}
		}
		return rows, next, err
	})
}
