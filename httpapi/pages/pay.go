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
	SessionID string
	Plan      *subprov.PlanVersion
	Provider  *subprov.Provider
	Address   string
	Due       subprov.Money
	Error     string
	Groups    []payGroup
	Cards     []checkout.TestCard
}

func payPageOf(v *checkout.View, form checkout.Payment, fields map[string]string, msg string) payPage {
	b := *v.Building // the one-line address every surface shows, with the suite after the street
	if v.Unit != nil {
		b.Street += ", unit " + v.Unit.UnitNumber
	}
	f := func(name, label, typ, auto, value, hint string) payField {
		return payField{Name: name, Label: label, Type: typ, Autocomplete: auto, Value: value, Hint: hint, Error: fields[name]}
	}
	return payPage{SessionID: v.Session.ID, Plan: v.Plan, Provider: v.Provider, Address: serviceability.Display(&b), Due: checkout.Due(v.Plan), Error: msg,
		Cards: checkout.TestCards,
		Groups: []payGroup{
			{"Your details", []payField{
				f("firstname", "First name", "text", "given-name", form.FirstName, ""),
				f("lastname", "Last name", "text", "family-name", form.LastName, ""),
				f("email", "E-mail", "email", "email", form.Email, ""),
				f("phonenumber", "Phone", "tel", "tel", form.PhoneNumber, ""),
			}},
			{"Card", []payField{
				f("card_number", "Card number", "text", "cc-number", form.CardNumber, "4242 4242 4242 4242"),
				f("expiry", "Expiry (MM/YY)", "text", "cc-exp", form.Expiry, "12/30"),
				f("cvc", "CVC", "text", "cc-csc", form.CVC, "123"),
			}},
		}}
}

// PayPage: GET /sandbox/checkout?session_id=…
func (h *Handler) PayPage(w http.ResponseWriter, r *http.Request) error {
	v, err := h.Checkout.PageSession(r.Context(), r.URL.Query().Get("session_id"))
	if err != nil {
		return err
	}
	return api.Pages.Render(w, http.StatusOK, "pay", web.Page{Title: "Sandbox checkout", Data: payPageOf(v, checkout.Payment{}, nil, "")})
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
		msg := e.Message
		if e.Code == subprov.EINVALID {
			msg = "Please correct the fields marked below."
		}
		form.CardNumber, form.CVC = "", ""
		status := api.Status(e.Code)
		if e.Reason == "card_declined" {
			status = http.StatusPaymentRequired
		}
		return api.Pages.Render(w, status, "pay", web.Page{Title: "Sandbox checkout", Data: payPageOf(v, form, e.Fields, msg)})
	}
	sub := c.Subscription
	next := "Your provider will contact you to book the installation."
	if sub.Status == subprov.StatusActive {
		next = "Your line is being switched on now."
	}
	name := strings.TrimSpace(form.FirstName)
	if c.Replay {
		name = ""
	}
	plan, _, err := h.Checkout.Plan(r.Context(), sub.PlanVersionID)
	if err != nil {
		return err
	}
	return api.Pages.Render(w, http.StatusOK, "paid", web.Page{Title: "Payment received", Data: paidView{
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
	return api.Pages.Message(w, http.StatusOK, locale.EN, "Checkout cancelled", "Nothing was charged. You can close this page.")
}
