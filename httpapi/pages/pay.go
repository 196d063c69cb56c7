package pages

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/serviceability"
	"github.com/subprov/subprov/web"
)

// The sandbox payment page (server-rendered; errors render as pages).

const maxForm = 64 << 10

// payField is one labelled input of the payment form.
type payField struct {
	Name, Label, Type, Autocomplete, Value, Hint, Error string
}

type payGroup struct {
	Legend string
	Fields []payField
}

type payPage struct {
	SessionID           string
	Plan                *subprov.PlanVersion
	Provider            *subprov.Provider
	Address             string
	Monthly, Setup, Due string // written in the page's language
	Error               string
	Groups              []payGroup
	Cards               []checkout.TestCard
}

// payLanguage is the language of a page a link opens without a login (the sandbox checkout,
// the pay link): the browser's, else the provider's default.
func payLanguage(r *http.Request, p *subprov.Provider) locale.Lang {
	return locale.Choose("", r.Header.Get("Accept-Language"), p.DefaultLanguage)
}

// payProblems are the catalogue keys of the checkout's field problems, by their English text.
var payProblems = func() map[string]string {
	m := map[string]string{}
	for _, msg := range locale.Messages {
		if strings.HasPrefix(msg.Key, "page.pay.problem.") {
			m[msg.EN] = msg.Key
		}
	}
	return m
}()

// payProblem is a field problem of the checkout in l; one the catalogue lacks stays as written.
func payProblem(l locale.Lang, problem string) string {
	if key, ok := payProblems[problem]; ok {
		return l.T(key)
	}
	return problem
}

func payPageOf(l locale.Lang, v *checkout.View, form checkout.Payment, fields map[string]string, msg string) payPage {
	b := *v.Building // the one-line address every surface shows, with the suite after the street
	if v.Unit != nil {
		b.Street += ", unit " + v.Unit.UnitNumber
	}
	f := func(name, label, typ, auto, value, hint string) payField {
		problem := ""
		if p, ok := fields[name]; ok {
			problem = payProblem(l, p)
		}
		return payField{Name: name, Label: l.T(label), Type: typ, Autocomplete: auto, Value: value, Hint: hint, Error: problem}
	}
	cards := make([]checkout.TestCard, len(checkout.TestCards))
	for i, c := range checkout.TestCards {
		c.Label = l.T("page.pay.card." + c.Outcome)
		cards[i] = c
	}
	cur := v.Provider.Currency
	return payPage{SessionID: v.Session.ID, Plan: v.Plan, Provider: v.Provider, Address: serviceability.Display(&b),
		Monthly: l.Money(v.Plan.MonthlyPrice, cur), Setup: l.Money(v.Plan.SetupFee, cur), Due: l.Money(checkout.Due(v.Plan), cur), Error: msg,
		Cards: cards,
		Groups: []payGroup{
			{l.T("page.pay.details"), []payField{
				f("firstname", "page.pay.firstname", "text", "given-name", form.FirstName, ""),
				f("lastname", "page.pay.lastname", "text", "family-name", form.LastName, ""),
				f("email", "page.pay.email", "email", "email", form.Email, ""),
				f("phonenumber", "page.pay.phone", "tel", "tel", form.PhoneNumber, ""),
			}},
			{l.T("page.pay.card"), []payField{
				f("card_number", "page.pay.card_number", "text", "cc-number", form.CardNumber, "4242 4242 4242 4242"),
				f("expiry", "page.pay.expiry", "text", "cc-exp", form.Expiry, "12/30"),
				f("cvc", "page.pay.cvc", "text", "cc-csc", form.CVC, "123"),
			}},
		}}
}

// PayPage: GET /sandbox/checkout?session_id=…
func (h *Handler) PayPage(w http.ResponseWriter, r *http.Request) error {
	v, err := h.Checkout.PageSession(r.Context(), r.URL.Query().Get("session_id"))
	if err != nil {
		return err
	}
	l := payLanguage(r, v.Provider)
	return api.Pages.Render(w, http.StatusOK, "pay", web.Page{Title: l.T("page.pay.title"), Lang: l, Data: payPageOf(l, v, checkout.Payment{}, nil, "")})
}

// Pay: POST /sandbox/checkout (form). Field problems and refused cards re-render the
// form with what was typed (never the card number) and the reason.
func (h *Handler) Pay(w http.ResponseWriter, r *http.Request) error {
	if err := api.ReadForm(w, r, maxForm); err != nil {
		return err
	}
	id := r.PostForm.Get("session_id")
	form := checkout.Payment{FirstName: r.PostForm.Get("firstname"), LastName: r.PostForm.Get("lastname"), Email: r.PostForm.Get("email"),
		PhoneNumber: r.PostForm.Get("phonenumber"), CardNumber: r.PostForm.Get("card_number"), Expiry: r.PostForm.Get("expiry"), CVC: r.PostForm.Get("cvc")}
	c, err := h.Checkout.Pay(r.Context(), id, form)
	if err != nil {
		e, ok := subprov.AsError(err)
		if !ok || (e.Code != subprov.EINVALID && e.Reason != "card_declined" && e.Reason != "processing_error") {
			return err
		}
		v, verr := h.Checkout.PageSession(r.Context(), id)
		if verr != nil {
			return verr
		}
		l := payLanguage(r, v.Provider)
		msg := l.T("page.pay." + e.Reason) // card_declined, processing_error
		if e.Code == subprov.EINVALID {
			msg = l.T("page.pay.correct")
		}
		form.CardNumber, form.CVC = "", ""
		status := api.Status(e.Code)
		if e.Reason == "card_declined" {
			status = http.StatusPaymentRequired
		}
		return api.Pages.Render(w, status, "pay", web.Page{Title: l.T("page.pay.title"), Lang: l, Data: payPageOf(l, v, form, e.Fields, msg)})
	}
	sub := c.Subscription
	plan, prov, err := h.Checkout.Plan(r.Context(), sub.PlanVersionID)
	if err != nil {
		return err
	}
	l := payLanguage(r, prov)
	next := l.T("page.paid.next.install")
	if sub.Status == subprov.StatusActive {
		next = l.T("page.paid.next.active")
	}
	name := strings.TrimSpace(form.FirstName)
	if c.Replay {
		name = ""
	}
	return api.Pages.Render(w, http.StatusOK, "paid", web.Page{Title: l.T("page.paid.title"), Lang: l, Data: paidView{
		Name: name, Plan: plan.PlanName, SubscriptionID: sub.ID, Status: sub.Status, Next: next}})
}

// paidView is what paid.html receives.
type paidView struct {
	Name, Plan, SubscriptionID, Next string
	Status                           subprov.Status
}

// PayCancel: POST /sandbox/checkout/cancel (form).
func (h *Handler) PayCancel(w http.ResponseWriter, r *http.Request) error {
	if err := api.ReadForm(w, r, maxForm); err != nil {
		return err
	}
	if err := h.Checkout.CancelPage(r.Context(), r.PostForm.Get("session_id")); err != nil {
		return err
	}
	l := pageLanguage(r)
	return api.Pages.Message(w, http.StatusOK, l, l.T("page.pay.cancelled.title"), l.T("page.pay.cancelled.text"))
}
