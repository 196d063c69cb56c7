package subprov

import "time"

// SubscriberMatch is a subscriber an agent search found, before masking.
type SubscriberMatch struct {
	SubscriberID   string
	CustomerNumber string
	Holder         Contact
	Locations      []ServiceLocation // newest line first
}

// CustomerNote is an operator-visible note on a customer.
type CustomerNote struct {
	ID, ProviderID, SubscriberID, Author, Body string
	CreatedAt                                  time.Time
}

// VerificationCode is a one-time code sent to a customer; only its hash is stored.
type VerificationCode struct {
	ID, ProviderID, SubscriberID, APIKeyID, Channel, CodeHash string
	Checks                                                    int
	ExpiresAt, CreatedAt                                      time.Time
}
