// Package subprov holds the domain of the subscriber provisioning service: the resources it
// keeps, the rules that need no I/O, and the coded errors every surface maps to its envelope.
// It imports no infrastructure; storage, HTTP, jobs and adapters live in their own packages.
package subprov

import (
	"fmt"
	"time"
)

// Clock is the one source of "now". Production uses the wall clock; dev mode can set and
// advance it (dev mode), so every time-driven rule reads it instead of time.Now.
type Clock interface {
	Now() time.Time
}

// LineType is how a building is wired, which decides how an order is fulfilled.
type LineType string

const (
	LineFirst  LineType = "first"  // a managed switch port per suite: a resolvable port is switched on unattended
	LineSecond LineType = "second" // installed by the operator; router shipped from the install queue
	LineThird  LineType = "third"  // technician visit booked by the customer
)

// Valid reports whether t is one of the classified line types.
func (t LineType) Valid() bool { return t == LineFirst || t == LineSecond || t == LineThird }

// DeliveryMode is what the caller of an order has: a port (direct) or only a suite (home_drop).
type DeliveryMode string

const (
	DeliveryDirect   DeliveryMode = "direct"
	DeliveryHomeDrop DeliveryMode = "home_drop"
)

// Status is a subscription's named status (docs/provisioning.md, the state machine).
type Status string

const (
	StatusPendingInstall Status = "PENDING_INSTALL"
	StatusActive         Status = "ACTIVE"
	StatusSuspended      Status = "SUSPENDED"
	StatusCancelled      Status = "CANCELLED"
)

// BillingOwner says who bills a line: the partner (default; the service never charges) or the
// platform (the service invoices and charges the adopted card).
type BillingOwner string

const (
	BillingPartner  BillingOwner = "partner"
	BillingPlatform BillingOwner = "platform"
)

// Feature names an API-key capability.
const FeatureAgentAPI = "agent_api_access"

// Limits that more than one package needs (docs/http.md).
const (
	MaxAuthorizedUsers      = 5
	VerifiedSessionLifetime = 15 * time.Minute
	PasswordResetLifetime   = 15 * time.Minute
	SetupLinkLifetime       = 14 * 24 * time.Hour
	ActivationLinkLifetime  = 72 * time.Hour
	CheckoutSessionTTL      = 2 * time.Hour
	SubscriberTokenLifetime = time.Hour
	OperatorTokenLifetime   = 8 * time.Hour
	// A console session ends ConsoleSessionLifetime after its sign-in and after
	// ConsoleSessionIdle without a request; its last request is recorded at most once every
	// ConsoleSessionTouch, so a busy session does not write on every page.
	ConsoleSessionLifetime = 12 * time.Hour
	ConsoleSessionIdle     = 30 * time.Minute
	ConsoleSessionTouch    = time.Minute
	MinPasswordLength      = 10
	MaxBulkOrders          = 500
	MaxAutocomplete        = 15
)

// PasswordProblem says what is wrong with a password someone chooses, "" when nothing: it is
// required and has at least MinPasswordLength characters (docs/security.md).
func PasswordProblem(password string) string {
	switch {
	case password == "":
		return "required"
	case len(password) < MinPasswordLength:
		return fmt.Sprintf("at least %d characters", MinPasswordLength)
	}
	return ""
}
