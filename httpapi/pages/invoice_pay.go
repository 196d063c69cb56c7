package pages

import (
	"errors"
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/web"
)

// The portal's pay page: where the pay link mailed with an invoice of a line with AutoPay off
// leads. It shows the invoice and pays it with the saved card through the same call as the
// portal's pay now (billing.Service.PayWithLink), with the same refusals shown as messages.
// The link is the credential. Not the sandbox payment page (pay.go), which takes a card.

// invoicePayLabels are the page's labels in its reader's language.
type invoicePayLabels struct {
	Provider, Number, Date, Period, Amount, Status, Card string
}

func invoicePayLabelsIn(l locale.Lang) invoicePayLabels {
	return invoicePayLabels{Provider: l.T("page.invoice_pay.from"), Number: l.T("page.invoice_pay.number"),
		Date: l.T("page.invoice_pay.date"), Period: l.T("page.invoice_pay.period"), Amount: l.T("page.invoice_pay.amount"),
		Status: l.T("page.invoice_pay.status"), Card: l.T("page.invoice_pay.card")}
}

// invoicePayPage is what invoice_pay.html receives.
type invoicePayPage struct {
	Heading, Error, Done                                   string
	Provider, Number, Date, Period, Amount, Status, Button string
	Token                                                  string
	Payable                                                bool
	Labels                                                 invoicePayLabels
}

// renderInvoice shows the invoice in l, with problem (a refusal) or done (its payment) said
// above it; a paid or cancelled invoice says so in place of its button.
func (h *Handler) renderInvoice(w http.ResponseWriter, l locale.Lang, status int, inv *subprov.Invoice, p *subprov.Provider, token, problem, done string) error {
	amount := l.Money(inv.Total, inv.Currency)
	pg := invoicePayPage{Heading: l.T("page.invoice_pay.title"), Error: problem, Done: done, Provider: p.Name, Number: inv.Number,
		Date: l.ISODate(inv.InvoiceDate), Period: inv.Period, Amount: amount, Status: l.T("page.invoice_pay.open"),
		Button: l.T("page.pay.button", amount), Token: token, Payable: inv.Status == "open", Labels: invoicePayLabelsIn(l)}
	switch inv.Status {
	case "paid":
		pg.Heading, pg.Status = l.T("page.invoice_pay.paid.title"), l.T("page.invoice_pay.paid.status")
		if done == "" {
			pg.Done = l.T("page.invoice_pay.paid")
		}
	case "void":
		pg.Heading, pg.Status, pg.Done = l.T("page.invoice_pay.void.title"), l.T("page.invoice_pay.void.status"), l.T("page.invoice_pay.void")
	}
	return api.Pages.Render(w, status, "invoice_pay", web.Page{Title: pg.Heading, Lang: l, Data: pg})
}

// deadPayLink is the page of a pay link that names no invoice: the provider is unknown, so the
// browser's language.
func deadPayLink(w http.ResponseWriter, r *http.Request) error {
	l := pageLanguage(r)
	return api.Pages.Message(w, http.StatusNotFound, l, l.T("page.invoice_pay.dead.title"), l.T("page.invoice_pay.dead"))
}

// payRefusals are the sentences of the refusals a payment may meet, by reason.
var payRefusals = map[string]string{
	"card_declined":         "page.invoice_pay.declined",
	"no_payment_method":     "page.invoice_pay.no_card",
	"not_payable":           "page.invoice_pay.busy",
	"processor_unavailable": "page.invoice_pay.unavailable",
}

// InvoicePayPage: GET /portal/pay?token=…. An open invoice shows with its Pay button; a paid
// or cancelled one says so (410); a link that names no invoice is 404.
func (h *Handler) InvoicePayPage(w http.ResponseWriter, r *http.Request) error {
	token := strings.TrimSpace(r.URL.Query().Get("token"))
	inv, p, err := h.Billing.PayLinkInvoice(r.Context(), token)
	if errors.Is(err, billing.ErrDeadPayLink) {
		return deadPayLink(w, r)
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if inv.Status != "open" {
		status = http.StatusGone
	}
	return h.renderInvoice(w, payLanguage(r, p), status, inv, p, token, "", "")
}

// InvoicePay: POST /portal/pay (form: token). Pays the invoice and shows it paid; a refusal
// shows the invoice again with the reason, with the status the JSON route answers.
func (h *Handler) InvoicePay(w http.ResponseWriter, r *http.Request) error {
	if err := api.ReadForm(w, r, maxPasswordForm); err != nil {
		return err
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	paid, payErr := h.Billing.PayWithLink(r.Context(), token)
	if errors.Is(payErr, billing.ErrDeadPayLink) {
		api.AttemptFailed(r)
		return deadPayLink(w, r)
	}
	inv, p, err := h.Billing.PayLinkInvoice(r.Context(), token)
	if err != nil {
		return err
	}
	l := payLanguage(r, p)
	if payErr == nil {
		return h.renderInvoice(w, l, http.StatusOK, paid, p, token, "", l.T("page.invoice_pay.done"))
	}
	if inv.Status != "open" {
		return h.renderInvoice(w, l, http.StatusGone, inv, p, token, "", "")
	}
	key, ok := payRefusals[subprov.ErrorReason(payErr)]
	if !ok {
		return payErr
	}
	return h.renderInvoice(w, l, api.Status(subprov.ErrorCode(payErr)), inv, p, token, l.T(key), "")
}
