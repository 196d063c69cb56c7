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

// invoicePayText is every sentence the pay page shows, in one place.
var invoicePayText = struct {
	title, paidTitle, voidTitle, deadTitle string
	paid, void, dead, done                 string
	declined, noCard, busy, unavailable    string
	labels                                 invoicePayLabels
}{
	title: "Pay your invoice", paidTitle: "This invoice is paid", voidTitle: "This invoice is cancelled",
	deadTitle:   "This link does not work",
	paid:        "Nothing more is due on this invoice.",
	void:        "This invoice was cancelled; nothing is due on it.",
	dead:        "The link is invalid. Open the link in your invoice e-mail again, or pay from your account in the portal.",
	done:        "Thank you: the invoice is paid with the card on file. A receipt is on its way to your e-mail.",
	declined:    "Your card was declined and nothing was charged. Update your card in your account, then try again.",
	noCard:      "There is no saved card on your account. Add one under payment method in your account, then try again.",
	busy:        "A payment of this invoice is already under way. Check again in a minute.",
	unavailable: "The payment could not be made right now and nothing was charged. Try again in a few minutes.",
	labels: invoicePayLabels{Provider: "From", Number: "Invoice", Date: "Date", Period: "Period", Amount: "Amount due",
		Status: "Status", Card: "The card on file for your account is charged.", Pay: "Pay ", Open: "Open", Paid: "Paid", Void: "Cancelled"},
}

type invoicePayLabels struct {
	Provider, Number, Date, Period, Amount, Status, Card, Pay, Open, Paid, Void string
}

// invoicePayPage is what invoice_pay.html receives.
type invoicePayPage struct {
	Heading, Error, Done                                   string
	Provider, Number, Date, Period, Amount, Status, Button string
	Token                                                  string
	Payable                                                bool
	Labels                                                 invoicePayLabels
}

func (h *Handler) renderInvoice(w http.ResponseWriter, status int, inv *subprov.Invoice, p *subprov.Provider, token, problem, done string) error {
	t := invoicePayText
	amount := inv.Total.String() + " " + inv.Currency
	pg := invoicePayPage{Heading: t.title, Error: problem, Done: done, Provider: p.Name, Number: inv.Number, Date: inv.InvoiceDate,
		Period: inv.Period, Amount: amount, Status: t.labels.Open, Button: t.labels.Pay + amount, Token: token,
		Payable: inv.Status == "open", Labels: t.labels}
	switch inv.Status {
	case "paid":
		pg.Heading, pg.Status = t.paidTitle, t.labels.Paid
		if done == "" {
			pg.Done = t.paid
		}
	case "void":
		pg.Heading, pg.Status, pg.Done = t.voidTitle, t.labels.Void, t.void
	}
	// The page's sentences are English until they join the catalogue; the layout takes the language.
	return api.Pages.Render(w, status, "invoice_pay", web.Page{Title: pg.Heading, Lang: locale.EN, Data: pg})
}

// InvoicePayPage: GET /portal/pay?token=…. An open invoice shows with its Pay button; a paid
// or cancelled one says so (410); a link that names no invoice is 404.
func (h *Handler) InvoicePayPage(w http.ResponseWriter, r *http.Request) error {
	token := strings.TrimSpace(r.URL.Query().Get("token"))
	inv, p, err := h.Billing.PayLinkInvoice(r.Context(), token)
	if errors.Is(err, billing.ErrDeadPayLink) {
		return api.Pages.Message(w, http.StatusNotFound, locale.EN, invoicePayText.deadTitle, invoicePayText.dead)
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if inv.Status != "open" {
		status = http.StatusGone
	}
	return h.renderInvoice(w, status, inv, p, token, "", "")
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
		return api.Pages.Message(w, http.StatusNotFound, locale.EN, invoicePayText.deadTitle, invoicePayText.dead)
	}
	inv, p, err := h.Billing.PayLinkInvoice(r.Context(), token)
	if err != nil {
		return err
	}
	if payErr == nil {
		return h.renderInvoice(w, http.StatusOK, paid, p, token, "", invoicePayText.done)
	}
	if inv.Status != "open" {
		return h.renderInvoice(w, http.StatusGone, inv, p, token, "", "")
	}
	var msg string
	switch subprov.ErrorReason(payErr) {
	case "card_declined":
		msg = invoicePayText.declined
	case "no_payment_method":
		msg = invoicePayText.noCard
	case "not_payable":
		msg = invoicePayText.busy
	case "processor_unavailable":
		msg = invoicePayText.unavailable
	default:
		return payErr
	}
	return h.renderInvoice(w, api.Status(subprov.ErrorCode(payErr)), inv, p, token, msg, "")
}
