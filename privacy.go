package subprov

import "time"

// Privacy request states.
const (
	PrivacyPending  = "pending"
	PrivacyApproved = "approved"
	PrivacyRejected = "rejected"
)

// PrivacyRequest is a subscriber's request that the provider delete its personal data. An
// operator approves it (the data is erased, the invoices and credit notes kept) or rejects it.
type PrivacyRequest struct {
	ID           string
	ProviderID   string
	SubscriberID string
	Status       string
	TicketID     string // the ticket that tells the provider's staff; "" for none
	Reason       string // a rejection's reason
	CreatedAt    time.Time
	DecidedAt    *time.Time
}
