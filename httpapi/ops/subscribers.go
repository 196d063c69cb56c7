package ops

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/subscribers"
)

// SubscriberList: GET /api/v1/subscribers.
func (h *Handler) SubscriberList(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	rows, next, err := h.Subscribers.List(r.Context(), api.CallerOf(r).Operator,
		subscribers.Filter{Q: q.Get("q"), ProviderID: q.Get("provider_id"), Status: q.Get("status"), WorkflowState: q.Get("workflow_state")}, page)
	if err != nil {
		return err
	}
	out := make([]listedJSON, len(rows))
	for i, x := range rows {
		out[i] = listedJSON{ID: x.ID, ProviderID: x.ProviderID, CustomerNumber: api.Optional(x.CustomerNumber),
			Name: strings.TrimSpace(x.Holder.FirstName + " " + x.Holder.LastName), Email: x.Holder.Email, Phone: x.Holder.PhoneNumber,
			Lines: make([]listedLineJSON, len(x.Lines))}
		for j, l := range x.Lines {
			out[i].Lines[j] = listedLineJSON{SubscriptionID: l.SubscriptionID, Status: l.Status, PlanName: l.PlanName,
				Address: addressLine(l.Address), UnitNumber: api.Optional(l.UnitNumber)}
		}
	}
	api.List(w, "subscribers", out, next)
	return nil
}

type listedJSON struct {
	ID             string           `json:"id"`
	ProviderID     string           `json:"provider_id"`
	CustomerNumber *string          `json:"customer_number"`
	Name           string           `json:"name"`
	Email          string           `json:"email"`
	Phone          string           `json:"phone"`
	Lines          []listedLineJSON `json:"lines"`
}

type listedLineJSON struct {
	SubscriptionID string         `json:"subscription_id"`
	Status         subprov.Status `json:"status"`
	PlanName       string         `json:"plan_name"`
	Address        string         `json:"address"`
	UnitNumber     *string        `json:"unit_number"`
}

// addressLine is "street, city, province postal", leaving out the empty parts.
func addressLine(a subprov.Address) string {
	var parts []string
	for _, p := range []string{a.Street, a.City, strings.TrimSpace(a.Province + " " + a.PostalCode)} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// Subscriber: GET /api/v1/subscribers/{subscriber_id}.
func (h *Handler) Subscriber(w http.ResponseWriter, r *http.Request) error {
	a, err := h.Subscribers.Get(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscriber_id"))
	if err != nil {
		return err
	}
	out := accountJSON{ID: a.ID, ProviderID: a.ProviderID, CustomerNumber: api.Optional(a.CustomerNumber), Holder: api.ContactOf(a.Holder),
		AuthorizedUsers: make([]authorizedUserJSON, len(a.AuthorizedUsers)), Lines: make([]lineJSON, len(a.Lines)),
		Invoices: make([]api.Invoice, len(a.Invoices)), CreditNotes: make([]api.CreditNote, len(a.CreditNotes)),
		Tickets: make([]accountTicketJSON, len(a.Tickets)), Notes: make([]noteJSON, len(a.Notes))}
	if a.Invoice != nil {
		c := api.ContactOf(*a.Invoice)
		out.InvoiceContact = &c
	}
	for i, u := range a.AuthorizedUsers {
		out.AuthorizedUsers[i] = authorizedUserJSON{ID: u.ID, FirstName: u.Contact.FirstName, LastName: u.Contact.LastName,
			Email: u.Contact.Email, PhoneNumber: u.Contact.PhoneNumber, InvitationSent: u.InvitationSent, Activated: u.Activated}
	}
	for i := range a.Lines {
		out.Lines[i] = lineOf(&a.Lines[i])
	}
	for i, inv := range a.Invoices {
		out.Invoices[i] = api.InvoiceOf(inv)
	}
	for i, c := range a.CreditNotes {
		out.CreditNotes[i] = api.CreditNoteOf(c)
	}
	for i, t := range a.Tickets {
		out.Tickets[i] = accountTicketJSON{ID: t.ID, Number: t.Number, Kind: t.Kind, Subject: t.Subject, Status: t.Status, Priority: t.Priority,
			Group: t.Group, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339)}
	}
	for i, n := range a.Notes {
		out.Notes[i] = noteOf(n)
	}
	api.JSON(w, http.StatusOK, out)
	return nil
}

type accountJSON struct {
	ID              string               `json:"id"`
	ProviderID      string               `json:"provider_id"`
	CustomerNumber  *string              `json:"customer_number"`
	Holder          api.Contact          `json:"holder"`
	InvoiceContact  *api.Contact         `json:"invoice_contact"`
	AuthorizedUsers []authorizedUserJSON `json:"authorized_users"`
	Lines           []lineJSON           `json:"lines"`
	Invoices        []api.Invoice        `json:"invoices"`
	CreditNotes     []api.CreditNote     `json:"credit_notes"`
	Tickets         []accountTicketJSON  `json:"tickets"`
	Notes           []noteJSON           `json:"notes"`
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

type accountTicketJSON struct {
	ID        string `json:"id"`
	Number    string `json:"number"`
	Kind      string `json:"kind"`
	Subject   string `json:"subject"`
	Status    string `json:"status"`
	Priority  string `json:"priority"`
	Group     string `json:"group"`
	CreatedAt string `json:"created_at"`
}

type noteJSON struct {
	ID           string `json:"id"`
	SubscriberID string `json:"subscriber_id"`
	Author       string `json:"author"`
	Note         string `json:"note"`
	CreatedAt    string `json:"created_at"`
}

func noteOf(n subprov.CustomerNote) noteJSON {
	return noteJSON{ID: n.ID, SubscriberID: n.SubscriberID, Author: n.Author, Note: n.Body, CreatedAt: n.CreatedAt.UTC().Format(time.RFC3339)}
}

// lineJSON is a line as an account shows it and a line action answers it.
type lineJSON struct {
	SubscriptionID string               `json:"subscription_id"`
	Status         subprov.Status       `json:"status"`
	PlanVersionID  string               `json:"plan_version_id"`
	PlanName       string               `json:"plan_name"`
	BuildingID     string               `json:"building_id"`
	UnitID         *string              `json:"unit_id"`
	UnitNumber     *string              `json:"unit_number"`
	Address        string               `json:"address"`
	Port           *linePortJSON        `json:"port"`
	BillingOwner   subprov.BillingOwner `json:"billing_owner"`
	BillingDay     int                  `json:"billing_day"`
	StartedAt      *string              `json:"started_at"`
	CanceledAt     *string              `json:"canceled_at"`
	EndedAt        *string              `json:"ended_at"`
	History        []historyJSON        `json:"history"`
}

type linePortJSON struct {
	Switch string `json:"switch"`
	Port   string `json:"port"`
	// Unconverged: the port did not reach what its lines ask after the convergence's retries.
	Unconverged bool `json:"unconverged"`
}

type historyJSON struct {
	Status subprov.Status `json:"status"`
	At     string         `json:"at"`
	Reason *string        `json:"reason"`
}

func lineOf(l *subscribers.Line) lineJSON {
	out := lineJSON{SubscriptionID: l.Subscription.ID, Status: l.Subscription.Status, PlanVersionID: l.Subscription.PlanVersionID,
		PlanName: l.PlanName, BuildingID: l.Subscription.BuildingID, UnitID: api.Optional(l.Subscription.UnitID),
		UnitNumber: api.Optional(l.UnitNumber), Address: addressLine(l.Address), BillingOwner: l.BillingOwner, BillingDay: l.BillingDay,
		StartedAt: api.Optional(l.StartedAt), CanceledAt: api.Instant(l.CanceledAt), EndedAt: api.Instant(l.EndedAt),
		History: make([]historyJSON, len(l.History))}
	if l.Switch != "" {
		out.Port = &linePortJSON{Switch: l.Switch, Port: l.LineSummary.Port, Unconverged: l.PortUnconverged}
	}
	for i, c := range l.History {
		out.History[i] = historyJSON{Status: c.Status, At: c.At.UTC().Format(time.RFC3339), Reason: api.Optional(c.Reason)}
	}
	return out
}

type reasonRequest struct {
	Reason string `json:"reason"`
}

func (q reasonRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"reason": q.Reason})
	return p
}

// SuspendLine: POST /api/v1/subscriptions/{subscription_id}/suspend.
func (h *Handler) SuspendLine(w http.ResponseWriter, r *http.Request) error {
	return h.lineStatus(w, r, h.Subscribers.Suspend)
}

// RestoreLine: POST /api/v1/subscriptions/{subscription_id}/restore.
func (h *Handler) RestoreLine(w http.ResponseWriter, r *http.Request) error {
	return h.lineStatus(w, r, h.Subscribers.Restore)
}

func (h *Handler) lineStatus(w http.ResponseWriter, r *http.Request, act func(ctx context.Context, op *subprov.Operator, id, reason string) (*subscribers.Line, error)) error {
	q, err := api.Decode[reasonRequest](r)
	if err != nil {
		return err
	}
	l, err := act(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"), q.Reason)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, lineOf(l))
	return nil
}

type planChangeRequest struct {
	PlanVersionID string `json:"plan_version_id"`
}

func (q planChangeRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"plan_version_id": q.PlanVersionID})
	return p
}

// PlanChangePreview: POST /api/v1/subscriptions/{subscription_id}/plan-change/preview.
func (h *Handler) PlanChangePreview(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[planChangeRequest](r)
	if err != nil {
		return err
	}
	quote, err := h.Subscribers.PreviewPlanChange(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"), q.PlanVersionID)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, api.PlanChangeQuoteOf(quote))
	return nil
}

// PlanChange: POST /api/v1/subscriptions/{subscription_id}/plan-change.
func (h *Handler) PlanChange(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[planChangeRequest](r)
	if err != nil {
		return err
	}
	l, err := h.Subscribers.ChangePlan(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"), q.PlanVersionID)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, lineOf(l))
	return nil
}

// Reprovision: POST /api/v1/subscriptions/{subscription_id}/reprovision.
func (h *Handler) Reprovision(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.Decode[struct{}](r); err != nil {
		return err
	}
	id, err := h.Subscribers.Reprovision(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, map[string]string{"job_id": id})
	return nil
}

type noteRequest struct {
	Note string `json:"note"`
}

func (q noteRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"note": q.Note})
	return p
}

// LineNote: POST /api/v1/subscriptions/{subscription_id}/notes.
func (h *Handler) LineNote(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[noteRequest](r)
	if err != nil {
		return err
	}
	n, err := h.Subscribers.AddNote(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"), q.Note)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, noteOf(n.CustomerNote)) // as the account's notes show it
	return nil
}
