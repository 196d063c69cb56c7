package subprov

import "time"

// AccountView is what GET /partner/subscriber/me shows of a portal login, read in one query:
// the login itself (so the subscriber-token check and the read are one round trip), the
// provider's display fields, the subscriber record with its holder, the lines with their plan
// versions, and the checkout sessions created while signed in. Only the fields the portal's
// account record shows are filled.
type AccountView struct {
	Account  *AccountLogin
	Provider Provider // ID, Name, BrandColor, SupportGroup
	// Subscriber is nil for a login without a subscriber record; Invoice is not read.
	Subscriber *SubscriberContacts
	// Subscriptions are the subscriber's lines, newest first: ID, ProviderID, SubscriberID,
	// PlanVersionID, BuildingID, UnitID, Status, BillingOwner, BillingDay, StartedAt,
	// CanceledAt, EndedAt, CreatedAt.
	Subscriptions []*Subscription
	// Plans holds each line's plan version by id: ID, ProviderID, PlanName, MonthlyPrice,
	// DownloadMbps, UploadMbps.
	Plans map[string]*PlanVersion
	// Sessions are the checkout sessions created while signed in to the login, newest first,
	// as stored (whole rows but for the partner reference, location hash and MAC address).
	Sessions []*CheckoutSession
}

// AccountLogin is an account with what a login needs to check.
type AccountLogin struct {
	Account
	PasswordHash string
	// TokenGeneration is the generation the login's access tokens must carry: a password
	// change or reset moves it on, which ends every token issued before.
	TokenGeneration int64
	// TOTPEnabled is whether the login's second factor is on: its login then needs a code.
	TOTPEnabled bool
}

// MailedToken is a single-use mailed token as stored (by hash).
type MailedToken struct {
	Kind       string
	ProviderID string
	SubjectID  string
	ExpiresAt  time.Time
}

// SubscriberContacts is a subscriber with its contacts, for the portal.
type SubscriberContacts struct {
	ID, ProviderID, CustomerNumber string
	Holder                         Contact
	Invoice                        *Contact
}

// BillingContact is who receives invoices: the separate invoice contact, else the holder.
func (r *SubscriberContacts) BillingContact() Contact {
	if r.Invoice != nil {
		return *r.Invoice
	}
	return r.Holder
}
