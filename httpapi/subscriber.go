package httpapi

import (
	"bytes"
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/portal"
)

// subscriberOf resolves the signed-in account to its subscriber record and provider; an
// account without one answers 404 on every /me sub-resource.
func (s *server) subscriberOf(r *http.Request) (string, *subprov.Provider, error) {
	acc := callerOf(r).Account
	if acc == nil || acc.SubscriberID == "" {
		return "", nil, &subprov.Error{Code: subprov.ENOTFOUND, Reason: "no_subscriber", Message: "No subscriber record found for this account"}
	}
	p, err := s.Store.Provider(r.Context(), acc.ProviderID)
	if err != nil {
		return "", nil, err
	}
	return acc.SubscriberID, p, nil
}

type invoiceJSON struct {
	ID             string        `json:"id"`
	Number         string        `json:"number"`
	CustomerNumber string        `json:"customer_number"`
	InvoiceDate    string        `json:"invoice_date"`
	Period         string        `json:"period"`
	Kind           string        `json:"kind"`
	Status         string        `json:"status"`
	Net            subprov.Money `json:"net"`
	Tax            subprov.Money `json:"tax"`
	Total          subprov.Money `json:"total"`
	Currency       string        `json:"currency"`
	SubscriptionID string        `json:"subscription_id"`
	PaidAt         any           `json:"paid_at"`
}

// handleMyInvoices: GET /partner/subscriber/me/invoices — local invoice rows, newest first.
func (s *server) handleMyInvoices(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	invs, err := s.Billing.Invoices(r.Context(), p, sid)
	if err != nil {
		return err
	}
	out := make([]invoiceJSON, 0, len(invs))
	for _, inv := range invs {
		out = append(out, invoiceJSON{ID: inv.ID, Number: inv.Number, CustomerNumber: inv.CustomerNumber, InvoiceDate: inv.InvoiceDate,
			Period: inv.Period, Kind: inv.Kind, Status: inv.Status, Net: inv.Net, Tax: inv.Tax, Total: inv.Total, Currency: inv.Currency,
			SubscriptionID: inv.SubscriptionID, PaidAt: timeOrNil(inv.PaidAt)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"invoices": out})
	return nil
}

type creditNoteJSON struct {
	ID        string        `json:"id"`
	Number    string        `json:"number"`
	State     string        `json:"state"`
	Amount    subprov.Money `json:"amount"`
	Currency  string        `json:"currency"`
	Reason    string        `json:"reason"`
	CreatedAt string        `json:"created_at"`
}

// handleMyCreditNotes: GET /partner/subscriber/me/credit-notes — read live from the billing
// system; 502 when it is unreachable, never an empty list.
func (s *server) handleMyCreditNotes(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	cns, err := s.Billing.CreditNotes(r.Context(), p, sid)
	if err != nil {
		return err
	}
	out := make([]creditNoteJSON, 0, len(cns))
	for _, c := range cns {
		out = append(out, creditNoteJSON{ID: c.ID, Number: c.Number, State: c.State, Amount: c.Amount, Currency: c.Currency,
			Reason: c.Reason, CreatedAt: c.CreatedAt.UTC().Format(time.RFC3339)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"credit_notes": out})
	return nil
}

func writePDF(w http.ResponseWriter, name string, body *bytes.Buffer) error {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="`+name+`.pdf"`)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body.Bytes())
	return err
}

// handleCreditNotePDF: GET /api/v1/credit-notes/{credit_note_id}/pdf with the subscriber session.
func (s *server) handleCreditNotePDF(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := s.Billing.CreditNotePDF(r.Context(), &buf, p, sid, r.PathValue("credit_note_id")); err != nil {
		return err
	}
	return writePDF(w, "credit-note", &buf)
}

// handleInvoicePDF: GET /api/v1/invoices/{invoice_id}/pdf with the subscriber session.
func (s *server) handleInvoicePDF(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := s.Billing.InvoicePDF(r.Context(), &buf, p, sid, r.PathValue("invoice_id")); err != nil {
		return err
	}
	return writePDF(w, "invoice", &buf)
}

type billingDayRequest struct {
	SubscriptionID string `json:"subscription_id"`
	BillingDay     *int   `json:"billing_day"`
}

func (q billingDayRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"subscription_id": q.SubscriptionID})
	if q.BillingDay == nil {
		p["billing_day"] = "required"
	}
	return p
}

// handleBillingDay: PATCH /partner/subscriber/me/billing-day (holder only).
func (s *server) handleBillingDay(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[billingDayRequest](r)
	if err != nil {
		return err
	}
	_, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	res, err := s.Billing.ChangeBillingDay(r.Context(), p, &callerOf(r).Account.Account, q.SubscriptionID, *q.BillingDay)
	if err != nil {
		return err
	}
	var next any
	if res.NextSendDate != nil {
		next = res.NextSendDate.Format("2006-01-02")
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscription_id": res.SubscriptionID, "billing_day": res.BillingDay,
		"effective_period": res.EffectivePeriod.Format("2006-01-02"), "next_send_date": next})
	return nil
}

type contactJSON struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
	Company     string `json:"company"`
}

func contactOf(c subprov.Contact) contactJSON {
	return contactJSON{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, PhoneNumber: c.PhoneNumber, Company: c.Company}
}

type contactPatchRequest struct {
	FirstName   *string `json:"firstname"`
	LastName    *string `json:"lastname"`
	Email       *string `json:"email"`
	PhoneNumber *string `json:"phonenumber"`
	Company     *string `json:"company"`
}

// handleInvoiceContact: PATCH /partner/subscriber/me/invoice-contact (holder only).
func (s *server) handleInvoiceContact(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[contactPatchRequest](r)
	if err != nil {
		return err
	}
	sid, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	c, err := s.Portal.UpdateInvoiceContact(r.Context(), p, sid, portal.ContactPatch(q))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "contact": contactOf(c), "state": "separate"})
	return nil
}

// handleUseHolder: POST /partner/subscriber/me/invoice-contact/use-holder (holder only).
func (s *server) handleUseHolder(w http.ResponseWriter, r *http.Request) error {
	sid, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	c, err := s.Portal.UseHolderForInvoices(r.Context(), p, sid)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "contact": contactOf(c), "state": "shared"})
	return nil
}

// handleMe: GET /partner/subscriber/me — the account record; a login without a subscriber
// record answers 200 with subscriber null and no subscriptions.
func (s *server) handleMe(w http.ResponseWriter, r *http.Request) error {
	a := callerOf(r).View
	out := meJSON{Subscriptions: make([]meSubscriptionJSON, 0, len(a.Subscriptions)), CheckoutSessions: make([]meSessionJSON, 0, len(a.Sessions)),
		Provider: meProviderJSON{ID: a.Provider.ID, Name: a.Provider.Name, BrandColor: strOrNil(a.Provider.BrandColor), SupportGroup: a.Provider.SupportGroup}}
	if rec := a.Subscriber; rec != nil {
		out.Subscriber = &meSubscriberJSON{ID: rec.ID, CustomerNumber: rec.CustomerNumber, FirstName: rec.Holder.FirstName,
			LastName: rec.Holder.LastName, Email: rec.Holder.Email}
	}
	for _, sub := range a.Subscriptions {
		out.Subscriptions = append(out.Subscriptions, meSubscriptionJSON{SubscriptionID: sub.ID, Status: sub.Status, BillingOwner: sub.BillingOwner,
			BillingDay: sub.BillingDay, BuildingID: sub.BuildingID, UnitID: strOrNil(sub.UnitID), StartedAt: strOrNil(sub.StartedAt),
			CanceledAt: timeStrOrNil(sub.CanceledAt), EndedAt: timeStrOrNil(sub.EndedAt), Plan: planRefOf(a.Plans[sub.PlanVersionID])})
	}
	// The view may be shared with other requests (store.AccountView): expire copies.
	sessions := make([]*subprov.CheckoutSession, len(a.Sessions))
	for i, c := range a.Sessions {
		cp := *c
		sessions[i] = &cp
	}
	s.Checkout.ShowExpired(sessions)
	for _, c := range sessions {
		out.CheckoutSessions = append(out.CheckoutSessions, meSessionJSON{SessionID: c.ID, Status: c.Status, ProviderID: c.ProviderID,
			PlanVersionID: c.PlanVersionID, BuildingID: c.BuildingID, UnitID: strOrNil(c.UnitID), DeliveryMode: c.DeliveryMode,
			SubscriptionID: strOrNil(c.SubscriptionID), CreatedAt: c.CreatedAt.Format(time.RFC3339)})
	}
	writeJSON(w, http.StatusOK, out)
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
	Plan           planRef              `json:"plan"`
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

// timeStrOrNil is an instant in RFC 3339 (UTC), or nil.
func timeStrOrNil(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// handleMyDetails: GET /partner/subscriber/me/details.
func (s *server) handleMyDetails(w http.ResponseWriter, r *http.Request) error {
	d, err := s.Portal.DetailsOf(r.Context(), callerOf(r).Account)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"customer_number": d.CustomerNumber, "contract_contact": contactOf(d.ContractContact),
		"invoice_contact": contactOf(d.InvoiceContact), "billing_contact_differs": d.BillingContactDiffers,
		"user": map[string]any{"contact": contactOf(d.User)}})
	return nil
}

type ownContactRequest struct {
	FirstName   *string `json:"firstname"`
	LastName    *string `json:"lastname"`
	PhoneNumber *string `json:"phonenumber"`
	Company     *string `json:"company"`
}

// handleMyContact: PATCH /partner/subscriber/me/contact — the signed-in person's own details;
// there is no email field (the e-mail is the login), so sending one is 422.
func (s *server) handleMyContact(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[ownContactRequest](r)
	if err != nil {
		return err
	}
	c, err := s.Portal.UpdateOwnContact(r.Context(), callerOf(r).Account,
		portal.ContactPatch{FirstName: q.FirstName, LastName: q.LastName, PhoneNumber: q.PhoneNumber, Company: q.Company})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "contact": contactOf(c)})
	return nil
}

// passwordChangeRequest has no Valid: which field a refusal names depends on whether the
// current password is right, so auth.ChangePassword checks both, the current one first.
type passwordChangeRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// handleMyPassword: PATCH /partner/subscriber/me/password.
func (s *server) handleMyPassword(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[passwordChangeRequest](r)
	if err != nil {
		return err
	}
	if err := s.Auth.ChangePassword(r.Context(), callerOf(r).Account, q.CurrentPassword, q.NewPassword); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Password changed"})
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

// handleAuthorizedUsers: GET /partner/subscriber/me/authorized-users.
func (s *server) handleAuthorizedUsers(w http.ResponseWriter, r *http.Request) error {
	us, err := s.Portal.AuthorizedUsers(r.Context(), callerOf(r).Account)
	if err != nil {
		return err
	}
	out := make([]authorizedUserJSON, 0, len(us))
	for _, u := range us {
		out = append(out, authorizedUserOf(u))
	}
	writeJSON(w, http.StatusOK, map[string]any{"authorized_users": out})
	return nil
}

type authorizedUserRequest struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
}

// handleAddAuthorizedUser: POST /partner/subscriber/me/authorized-users (holder only) — 201.
func (s *server) handleAddAuthorizedUser(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[authorizedUserRequest](r)
	if err != nil {
		return err
	}
	u, err := s.Portal.AddAuthorizedUser(r.Context(), callerOf(r).Account, portal.AuthorizedUserInput(q))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, authorizedUserOf(u))
	return nil
}

// handleResendInvite: POST /partner/subscriber/me/authorized-users/{id}/resend-invite (holder only).
func (s *server) handleResendInvite(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Portal.ResendInvite(r.Context(), callerOf(r).Account, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, authorizedUserOf(u))
	return nil
}

// handleRemoveAuthorizedUser: DELETE /partner/subscriber/me/authorized-users/{id} (holder only) — 204.
func (s *server) handleRemoveAuthorizedUser(w http.ResponseWriter, r *http.Request) error {
	if err := s.Portal.RemoveAuthorizedUser(r.Context(), callerOf(r).Account, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleMyUsage: GET /partner/subscriber/me/usage.
func (s *server) handleMyUsage(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Portal.UsageOf(r.Context(), callerOf(r).Account)
	if err != nil {
		return err
	}
	months := make([]map[string]any, 0, len(u.Months))
	for _, m := range u.Months {
		months = append(months, map[string]any{"month": m.Month, "download_gb": m.DownloadGB, "upload_gb": m.UploadGB})
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": u.Status, "months": months})
	return nil
}

// handleStatusHistory: GET /partner/subscriber/status-history — newest first; an empty list on
// any failure, never an error.
func (s *server) handleStatusHistory(w http.ResponseWriter, r *http.Request) error {
	evs := s.Portal.StatusHistory(r.Context(), callerOf(r).Account)
	out := make([]map[string]any, 0, len(evs))
	for _, e := range evs {
		out = append(out, map[string]any{"id": e.ID, "started_at": e.StartedAt.UTC().Format(time.RFC3339),
			"resolved_at": timeOrNil(e.ResolvedAt), "ongoing": e.ResolvedAt == nil})
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
	return nil
}

// handlePaymentMethod: GET /partner/subscriber/me/payment-method (holder only).
func (s *server) handlePaymentMethod(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Portal.PaymentMethod(r.Context(), callerOf(r).Account)
	if err != nil {
		return err
	}
	var pm any
	if m != nil {
		pm = map[string]string{"id": m.ID, "brand": m.Brand, "last4": m.Last4}
	}
	writeJSON(w, http.StatusOK, map[string]any{"payment_method": pm})
	return nil
}

// handlePaymentSetup: POST /partner/subscriber/me/payment-method/setup (holder only).
func (s *server) handlePaymentSetup(w http.ResponseWriter, r *http.Request) error {
	si, err := s.Portal.StartCardSetup(r.Context(), callerOf(r).Account)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"setup_intent_id": si.ID, "client_secret": si.ClientSecret, "status": si.Status})
	return nil
}

type paymentConfirmRequest struct {
	SetupIntentID string `json:"setup_intent_id"`
	TestCard      string `json:"test_card"`
}

func (q paymentConfirmRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"setup_intent_id": q.SetupIntentID})
	return p
}

// handlePaymentConfirm: POST /partner/subscriber/me/payment-method/confirm (holder only).
func (s *server) handlePaymentConfirm(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[paymentConfirmRequest](r)
	if err != nil {
		return err
	}
	m, err := s.Portal.ConfirmCardSetup(r.Context(), callerOf(r).Account, q.SetupIntentID, q.TestCard)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"payment_method": map[string]string{"id": m.ID, "brand": m.Brand, "last4": m.Last4}})
	return nil
}
