package portal

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/portal"
)

// subscriberOf resolves the signed-in account to its subscriber record and provider; an
// account without one answers 404 on every /me sub-resource.
func (h *Handler) subscriberOf(r *http.Request) (string, *subprov.Provider, error) {
	acc := api.CallerOf(r).Account
	if acc == nil || acc.SubscriberID == "" {
		return "", nil, &subprov.Error{Code: subprov.ENOTFOUND, Reason: "no_subscriber", Message: "No subscriber record found for this account"}
	}
	p, err := h.Store.Provider(r.Context(), acc.ProviderID)
	if err != nil {
		return "", nil, err
	}
	return acc.SubscriberID, p, nil
}

// MyInvoices: GET /partner/subscriber/me/invoices — local invoice rows, newest first.
func (h *Handler) MyInvoices(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	invs, err := h.Billing.Invoices(r.Context(), p, sid)
	if err != nil {
		return err
	}
	out := make([]api.Invoice, 0, len(invs))
	for _, inv := range invs {
		out = append(out, api.InvoiceOf(inv))
	}
	api.JSON(w, http.StatusOK, invoicesJSON{Invoices: out})
	return nil
}

type invoicesJSON struct {
	Invoices []api.Invoice `json:"invoices"`
}

// MyCreditNotes: GET /partner/subscriber/me/credit-notes — read live from the billing
// system; 502 when it is unreachable, never an empty list.
func (h *Handler) MyCreditNotes(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	cns, err := h.Billing.CreditNotes(r.Context(), p, sid)
	if err != nil {
		return err
	}
	out := make([]api.CreditNote, 0, len(cns))
	for _, c := range cns {
		out = append(out, api.CreditNoteOf(c))
	}
	api.JSON(w, http.StatusOK, creditNotesJSON{CreditNotes: out})
	return nil
}

type creditNotesJSON struct {
	CreditNotes []api.CreditNote `json:"credit_notes"`
}

// Language is the language the portal writes the caller's refusals in: the signed-in
// person's (their choice, else their provider's); before sign-in, the browser's
// Accept-Language; else English.
func (h *Handler) Language(r *http.Request) (locale.Lang, error) {
	acc := api.CallerOf(r).Account
	if acc == nil {
		return locale.Choose("", r.Header.Get("Accept-Language"), ""), nil
	}
	p, err := h.Store.Provider(r.Context(), acc.ProviderID)
	if err != nil {
		return locale.EN, fmt.Errorf("read the caller's provider: %w", err)
	}
	return h.readerLanguage(r, p)
}

// readerLanguage is the signed-in person's language: their choice, else the provider's.
func (h *Handler) readerLanguage(r *http.Request, p *subprov.Provider) (locale.Lang, error) {
	v, err := h.Preferences.Of(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return "", err
	}
	return locale.Choose(v.Language, "", p.DefaultLanguage), nil
}

// CreditNotePDF: GET /api/v1/credit-notes/{credit_note_id}/pdf with the subscriber session.
func (h *Handler) CreditNotePDF(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	lang, err := h.readerLanguage(r, p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := h.Billing.CreditNotePDF(r.Context(), &buf, p, sid, r.PathValue("credit_note_id"), lang); err != nil {
		return err
	}
	return api.PDF(w, "credit-note", &buf)
}

// InvoicePDF: GET /api/v1/invoices/{invoice_id}/pdf with the subscriber session.
func (h *Handler) InvoicePDF(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	lang, err := h.readerLanguage(r, p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := h.Billing.InvoicePDF(r.Context(), &buf, p, sid, r.PathValue("invoice_id"), lang); err != nil {
		return err
	}
	return api.PDF(w, "invoice", &buf)
}

type billingDayRequest struct {
	SubscriptionID string `json:"subscription_id"`
	BillingDay     *int   `json:"billing_day"`
}

func (q billingDayRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"subscription_id": q.SubscriptionID})
	if q.BillingDay == nil {
		p["billing_day"] = "required"
	}
	return p
}

// BillingDay: PATCH /partner/subscriber/me/billing-day (holder only).
func (h *Handler) BillingDay(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[billingDayRequest](r)
	if err != nil {
		return err
	}
	_, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	res, err := h.Billing.ChangeBillingDay(r.Context(), p, &api.CallerOf(r).Account.Account, q.SubscriptionID, *q.BillingDay)
	if err != nil {
		return err
	}
	var next *string
	if res.NextSendDate != nil {
		d := res.NextSendDate.Format("2006-01-02")
		next = &d
	}
	api.JSON(w, http.StatusOK, billingDayJSON{SubscriptionID: res.SubscriptionID, BillingDay: res.BillingDay,
		EffectivePeriod: res.EffectivePeriod.Format("2006-01-02"), NextSendDate: next})
	return nil
}

type billingDayJSON struct {
	BillingDay      int     `json:"billing_day"`
	EffectivePeriod string  `json:"effective_period"`
	NextSendDate    *string `json:"next_send_date"`
	SubscriptionID  string  `json:"subscription_id"`
}

type contactPatchRequest struct {
	FirstName   *string `json:"firstname"`
	LastName    *string `json:"lastname"`
	Email       *string `json:"email"`
	PhoneNumber *string `json:"phonenumber"`
	Company     *string `json:"company"`
}

// InvoiceContact: PATCH /partner/subscriber/me/invoice-contact (holder only).
func (h *Handler) InvoiceContact(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[contactPatchRequest](r)
	if err != nil {
		return err
	}
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	c, err := h.Portal.UpdateInvoiceContact(r.Context(), p, sid, portal.ContactPatch(q))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, contactResultJSON{Success: true, Contact: api.ContactOf(c), State: "separate"})
	return nil
}

// UseHolder: POST /partner/subscriber/me/invoice-contact/use-holder (holder only).
func (h *Handler) UseHolder(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	c, err := h.Portal.UseHolderForInvoices(r.Context(), p, sid)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, contactResultJSON{Success: true, Contact: api.ContactOf(c), State: "shared"})
	return nil
}

// contactResultJSON answers a change of contact details; State says whether the invoice
// contact is the holder's own ("shared") or one of its own ("separate"), and is absent from
// the answer about the signed-in person's own details.
type contactResultJSON struct {
	Contact api.Contact `json:"contact"`
	State   string      `json:"state,omitempty"`
	Success bool        `json:"success"`
}

// Me: GET /partner/subscriber/me — the account record; a login without a subscriber
// record answers 200 with subscriber null and no subscriptions.
func (h *Handler) Me(w http.ResponseWriter, r *http.Request) error {
	a := api.CallerOf(r).View
	out := meJSON{Subscriptions: make([]meSubscriptionJSON, 0, len(a.Subscriptions)), CheckoutSessions: make([]meSessionJSON, 0, len(a.Sessions)),
		Provider: meProviderJSON{ID: a.Provider.ID, Name: a.Provider.Name, BrandColor: api.Optional(a.Provider.BrandColor), SupportGroup: a.Provider.SupportGroup}}
	if rec := a.Subscriber; rec != nil {
		out.Subscriber = &meSubscriberJSON{ID: rec.ID, CustomerNumber: rec.CustomerNumber, FirstName: rec.Holder.FirstName,
			LastName: rec.Holder.LastName, Email: rec.Holder.Email}
	}
	for _, sub := range a.Subscriptions {
		out.Subscriptions = append(out.Subscriptions, meSubscriptionJSON{SubscriptionID: sub.ID, Status: sub.Status, BillingOwner: sub.BillingOwner,
			BillingDay: sub.BillingDay, BuildingID: sub.BuildingID, UnitID: api.Optional(sub.UnitID), StartedAt: api.Optional(sub.StartedAt),
			CanceledAt: api.Instant(sub.CanceledAt), EndedAt: api.Instant(sub.EndedAt), Plan: api.PlanRefOf(a.Plans[sub.PlanVersionID])})
	}
	// The view may be shared with other requests (store.AccountView): expire copies.
	sessions := make([]*subprov.CheckoutSession, len(a.Sessions))
	for i, c := range a.Sessions {
		cp := *c
		sessions[i] = &cp
	}
	h.Checkout.ShowExpired(sessions)
	for _, c := range sessions {
		out.CheckoutSessions = append(out.CheckoutSessions, meSessionJSON{SessionID: c.ID, Status: c.Status, ProviderID: c.ProviderID,
			PlanVersionID: c.PlanVersionID, BuildingID: c.BuildingID, UnitID: api.Optional(c.UnitID), DeliveryMode: c.DeliveryMode,
			SubscriptionID: api.Optional(c.SubscriptionID), CreatedAt: c.CreatedAt.Format(time.RFC3339)})
	}
	api.JSON(w, http.StatusOK, out)
	return nil
}

// The account record's JSON (GET /partner/subscriber/me). Fields are in name order, as the
// maps this replaced encoded them; structs spare the per-request map building and key sorting.
type meJSON struct {
	CheckoutSessions []meSessionJSON      `json:"checkout_sessions"`
	Provider         meProviderJSON       `json:"provider"`
	Subscriber       *meSubscriberJSON    `json:"subscriber"`
	Subscriptions    []meSubscriptionJSON `json:"subscriptions"`
}

type meProviderJSON struct {
	BrandColor   *string `json:"brand_color"`
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	SupportGroup string  `json:"support_group"`
}

type meSubscriberJSON struct {
	CustomerNumber string `json:"customer_number"`
	Email          string `json:"email"`
	FirstName      string `json:"firstname"`
	ID             string `json:"id"`
	LastName       string `json:"lastname"`
}

type meSubscriptionJSON struct {
	BillingDay     int                  `json:"billing_day"`
	BillingOwner   subprov.BillingOwner `json:"billing_owner"`
	BuildingID     string               `json:"building_id"`
	CanceledAt     *string              `json:"canceled_at"`
	EndedAt        *string              `json:"ended_at"`
	Plan           api.PlanRef          `json:"plan"`
	StartedAt      *string              `json:"started_at"`
	Status         subprov.Status       `json:"status"`
	SubscriptionID string               `json:"subscription_id"`
	UnitID         *string              `json:"unit_id"`
}

type meSessionJSON struct {
	BuildingID     string               `json:"building_id"`
	CreatedAt      string               `json:"created_at"`
	DeliveryMode   subprov.DeliveryMode `json:"delivery_mode"`
	PlanVersionID  string               `json:"plan_version_id"`
	ProviderID     string               `json:"provider_id"`
	SessionID      string               `json:"session_id"`
	Status         string               `json:"status"`
	SubscriptionID *string              `json:"subscription_id"`
	UnitID         *string              `json:"unit_id"`
}

// MyDetails: GET /partner/subscriber/me/details.
func (h *Handler) MyDetails(w http.ResponseWriter, r *http.Request) error {
	d, err := h.Portal.DetailsOf(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, detailsJSON{CustomerNumber: d.CustomerNumber, ContractContact: api.ContactOf(d.ContractContact),
		InvoiceContact: api.ContactOf(d.InvoiceContact), BillingContactDiffers: d.BillingContactDiffers,
		User: detailsUserJSON{Contact: api.ContactOf(d.User)}})
	return nil
}

type detailsJSON struct {
	BillingContactDiffers bool            `json:"billing_contact_differs"`
	ContractContact       api.Contact     `json:"contract_contact"`
	CustomerNumber        string          `json:"customer_number"`
	InvoiceContact        api.Contact     `json:"invoice_contact"`
	User                  detailsUserJSON `json:"user"`
}

type detailsUserJSON struct {
	Contact api.Contact `json:"contact"`
}

type ownContactRequest struct {
	FirstName   *string `json:"firstname"`
	LastName    *string `json:"lastname"`
	PhoneNumber *string `json:"phonenumber"`
	Company     *string `json:"company"`
}

// MyContact: PATCH /partner/subscriber/me/contact — the signed-in person's own details;
// there is no email field (the e-mail is the login), so sending one is 422.
func (h *Handler) MyContact(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[ownContactRequest](r)
	if err != nil {
		return err
	}
	c, err := h.Portal.UpdateOwnContact(r.Context(), api.CallerOf(r).Account,
		portal.ContactPatch{FirstName: q.FirstName, LastName: q.LastName, PhoneNumber: q.PhoneNumber, Company: q.Company})
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, contactResultJSON{Success: true, Contact: api.ContactOf(c)})
	return nil
}

// passwordChangeRequest has no Valid: which field a refusal names depends on whether the
// current password is right, so auth.ChangePassword checks both, the current one first.
type passwordChangeRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// MyPassword: PATCH /partner/subscriber/me/password.
func (h *Handler) MyPassword(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[passwordChangeRequest](r)
	if err != nil {
		return err
	}
	if err := h.Auth.ChangePassword(r.Context(), api.CallerOf(r).Account, q.CurrentPassword, q.NewPassword, api.CallerOf(r).Client); err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, api.Success("Password changed"))
	return nil
}

type authorizedUserJSON struct {
	ID             string `json:"id"`
	FirstName      string `json:"firstname"`
	LastName       string `json:"lastname"`
	Email          string `json:"email"`
	PhoneNumber    string `json:"phonenumber"`
	InvitationSent bool   `json:"invitation_sent"`
	Activated      bool   `json:"activated"`
}

func authorizedUserOf(u *subprov.AuthorizedUser) authorizedUserJSON {
	return authorizedUserJSON{ID: u.ID, FirstName: u.Contact.FirstName, LastName: u.Contact.LastName, Email: u.Contact.Email,
		PhoneNumber: u.Contact.PhoneNumber, InvitationSent: u.InvitationSent, Activated: u.Activated}
}

// AuthorizedUsers: GET /partner/subscriber/me/authorized-users.
func (h *Handler) AuthorizedUsers(w http.ResponseWriter, r *http.Request) error {
	us, err := h.Portal.AuthorizedUsers(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	out := make([]authorizedUserJSON, 0, len(us))
	for _, u := range us {
		out = append(out, authorizedUserOf(u))
	}
	api.JSON(w, http.StatusOK, authorizedUsersJSON{AuthorizedUsers: out})
	return nil
}

type authorizedUsersJSON struct {
	AuthorizedUsers []authorizedUserJSON `json:"authorized_users"`
}

type authorizedUserRequest struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
}

// AddAuthorizedUser: POST /partner/subscriber/me/authorized-users (holder only) — 201.
func (h *Handler) AddAuthorizedUser(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[authorizedUserRequest](r)
	if err != nil {
		return err
	}
	u, err := h.Portal.AddAuthorizedUser(r.Context(), api.CallerOf(r).Account, portal.AuthorizedUserInput(q))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, authorizedUserOf(u))
	return nil
}

// ResendInvite: POST /partner/subscriber/me/authorized-users/{id}/resend-invite (holder only).
func (h *Handler) ResendInvite(w http.ResponseWriter, r *http.Request) error {
	u, err := h.Portal.ResendInvite(r.Context(), api.CallerOf(r).Account, r.PathValue("id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, authorizedUserOf(u))
	return nil
}

// RemoveAuthorizedUser: DELETE /partner/subscriber/me/authorized-users/{id} (holder only) — 204.
func (h *Handler) RemoveAuthorizedUser(w http.ResponseWriter, r *http.Request) error {
	if err := h.Portal.RemoveAuthorizedUser(r.Context(), api.CallerOf(r).Account, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// MyUsage: GET /partner/subscriber/me/usage.
func (h *Handler) MyUsage(w http.ResponseWriter, r *http.Request) error {
	u, err := h.Portal.UsageOf(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	months := make([]usageMonthJSON, 0, len(u.Months))
	for _, m := range u.Months {
		months = append(months, usageMonthJSON{Month: m.Month, DownloadGB: m.DownloadGB, UploadGB: m.UploadGB})
	}
	api.JSON(w, http.StatusOK, usageJSON{Status: u.Status, Months: months})
	return nil
}

type usageJSON struct {
	Months []usageMonthJSON `json:"months"`
	Status string           `json:"status"`
}

type usageMonthJSON struct {
	DownloadGB float64 `json:"download_gb"`
	Month      string  `json:"month"`
	UploadGB   float64 `json:"upload_gb"`
}

// StatusHistory: GET /partner/subscriber/status-history — newest first; an empty list on
// any failure, never an error.
func (h *Handler) StatusHistory(w http.ResponseWriter, r *http.Request) error {
	evs := h.Portal.StatusHistory(r.Context(), api.CallerOf(r).Account)
	out := make([]statusEventJSON, 0, len(evs))
	for _, e := range evs {
		out = append(out, statusEventJSON{ID: e.ID, StartedAt: e.StartedAt.UTC().Format(time.RFC3339),
			ResolvedAt: api.Instant(e.ResolvedAt), Ongoing: e.ResolvedAt == nil})
	}
	api.JSON(w, http.StatusOK, statusHistoryJSON{Events: out})
	return nil
}

type statusHistoryJSON struct {
	Events []statusEventJSON `json:"events"`
}

type statusEventJSON struct {
	ID         string  `json:"id"`
	Ongoing    bool    `json:"ongoing"`
	ResolvedAt *string `json:"resolved_at"`
	StartedAt  string  `json:"started_at"`
}

// PaymentMethod: GET /partner/subscriber/me/payment-method (holder only).
func (h *Handler) PaymentMethod(w http.ResponseWriter, r *http.Request) error {
	m, err := h.Portal.PaymentMethod(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	var pm *cardJSON
	if m != nil {
		pm = &cardJSON{ID: m.ID, Brand: m.Brand, Last4: m.Last4}
	}
	api.JSON(w, http.StatusOK, paymentMethodJSON{PaymentMethod: pm})
	return nil
}

type paymentMethodJSON struct {
	PaymentMethod *cardJSON `json:"payment_method"` // null without a card on file
}

type cardJSON struct {
	Brand string `json:"brand"`
	ID    string `json:"id"`
	Last4 string `json:"last4"`
}

// PaymentSetup: POST /partner/subscriber/me/payment-method/setup (holder only).
func (h *Handler) PaymentSetup(w http.ResponseWriter, r *http.Request) error {
	si, err := h.Portal.StartCardSetup(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, setupIntentJSON{SetupIntentID: si.ID, ClientSecret: si.ClientSecret, Status: si.Status})
	return nil
}

type setupIntentJSON struct {
	ClientSecret  string `json:"client_secret"`
	SetupIntentID string `json:"setup_intent_id"`
	Status        string `json:"status"`
}

type paymentConfirmRequest struct {
	SetupIntentID string `json:"setup_intent_id"`
	TestCard      string `json:"test_card"`
}

func (q paymentConfirmRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"setup_intent_id": q.SetupIntentID})
	return p
}

// PaymentConfirm: POST /partner/subscriber/me/payment-method/confirm (holder only).
func (h *Handler) PaymentConfirm(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[paymentConfirmRequest](r)
	if err != nil {
		return err
	}
	m, err := h.Portal.ConfirmCardSetup(r.Context(), api.CallerOf(r).Account, q.SetupIntentID, q.TestCard)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, paymentMethodJSON{PaymentMethod: &cardJSON{ID: m.ID, Brand: m.Brand, Last4: m.Last4}})
	return nil
}
