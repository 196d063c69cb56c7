package api

import (
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
)

// SuccessMessage is the answer of a call that changes something and has nothing to show but a
// sentence for the person.
type SuccessMessage struct {
	Message string `json:"message"`
	Success bool   `json:"success"`
}

// Success is a successful call's answer with message.
func Success(message string) SuccessMessage { return SuccessMessage{Success: true, Message: message} }

// Optional is s as an answer shows a text that may be missing: null when empty.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Instant is t as an answer shows a moment that may be missing: RFC 3339 in UTC, or null.
func Instant(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// PlanRef names a plan version in an answer.
type PlanRef struct {
	PlanVersionID string        `json:"plan_version_id"`
	Name          string        `json:"name"`
	MonthlyPrice  subprov.Money `json:"monthly_price"`
	DownloadMbps  int           `json:"download_mbps"`
	UploadMbps    int           `json:"upload_mbps"`
}

// PlanRefOf is v as an answer names it.
func PlanRefOf(v *subprov.PlanVersion) PlanRef {
	return PlanRef{PlanVersionID: v.ID, Name: v.PlanName, MonthlyPrice: v.MonthlyPrice, DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps}
}

// Subscriber is the subscriber block of an order, as a partner's and a marketplace's orders
// send it.
type Subscriber struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
	Company     string `json:"company"`
}

// Person is the order's subscriber; a missing block is an empty one.
func (s *Subscriber) Person() provisioning.Subscriber {
	if s == nil {
		return provisioning.Subscriber{}
	}
	return provisioning.Subscriber{FirstName: s.FirstName, LastName: s.LastName, Email: s.Email, PhoneNumber: s.PhoneNumber, Company: s.Company}
}

// WithSubscriber reports a missing subscriber block as one problem, "subscriber", in place of
// a "required" for each of its fields.
func WithSubscriber(p map[string]string, s *Subscriber) map[string]string {
	if s == nil {
		for f := range p {
			if strings.HasPrefix(f, "subscriber.") {
				delete(p, f)
			}
		}
		p["subscriber"] = "required"
	}
	return p
}

// Contact is a person's contact details as every answer shows them.
type Contact struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
	Company     string `json:"company"`
}

// ContactOf is c as an answer shows it.
func ContactOf(c subprov.Contact) Contact {
	return Contact{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, PhoneNumber: c.PhoneNumber, Company: c.Company}
}

// PlanChangeQuote is a plan change's preview, on the partner's and the operator's routes
// alike. Fields are in name order, as the maps the answers once were encoded them.
type PlanChangeQuote struct {
	BillingOwner      subprov.BillingOwner     `json:"billing_owner"`
	Blockers          []string                 `json:"blockers"`
	CurrentPlan       PlanRef                  `json:"current_plan"`
	EffectiveDate     string                   `json:"effective_date"`
	Eligible          bool                     `json:"eligible"`
	NewPlan           PlanRef                  `json:"new_plan"`
	Note              string                   `json:"note"`
	OneTimeAdjustment *provisioning.Adjustment `json:"one_time_adjustment"`
	RecurringChange   subprov.Money            `json:"recurring_change"`
	SubscriptionID    string                   `json:"subscription_id"`
}

// PlanChangeQuoteOf is q as an answer shows it.
func PlanChangeQuoteOf(q *provisioning.PlanChangeQuote) PlanChangeQuote {
	return PlanChangeQuote{BillingOwner: q.Subscription.BillingOwner, Blockers: q.Blockers, CurrentPlan: PlanRefOf(q.From),
		EffectiveDate: q.EffectiveDate, Eligible: q.Eligible, NewPlan: PlanRefOf(q.To), Note: q.Note, OneTimeAdjustment: q.Adjustment,
		RecurringChange: q.RecurringChange, SubscriptionID: q.Subscription.ID}
}

// Invoice is an invoice as the subscriber's list and the operator's account view show it.
type Invoice struct {
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
	PaidAt         *string       `json:"paid_at"`
}

// InvoiceOf is inv as an answer shows it.
func InvoiceOf(inv *subprov.Invoice) Invoice {
	return Invoice{ID: inv.ID, Number: inv.Number, CustomerNumber: inv.CustomerNumber, InvoiceDate: inv.InvoiceDate,
		Period: inv.Period, Kind: inv.Kind, Status: inv.Status, Net: inv.Net, Tax: inv.Tax, Total: inv.Total, Currency: inv.Currency,
		SubscriptionID: inv.SubscriptionID, PaidAt: Instant(inv.PaidAt)}
}

// CreditNote is a credit note as the subscriber's list and the operator's account view show it.
type CreditNote struct {
	ID        string        `json:"id"`
	Number    string        `json:"number"`
	State     string        `json:"state"`
	Amount    subprov.Money `json:"amount"`
	Currency  string        `json:"currency"`
	Reason    string        `json:"reason"`
	CreatedAt string        `json:"created_at"`
}

// CreditNoteOf is c as an answer shows it.
func CreditNoteOf(c *subprov.CreditNote) CreditNote {
	return CreditNote{ID: c.ID, Number: c.Number, State: c.State, Amount: c.Amount, Currency: c.Currency,
		Reason: c.Reason, CreatedAt: c.CreatedAt.UTC().Format(time.RFC3339)}
}
