package subprov

import (
	"strconv"
	"sync"
	"time"
)

// Provider is an internet provider (tenant). Every other resource is scoped to one.
type Provider struct {
	ID                        string
	Name                      string
	TimeZone                  string // IANA name; "a day" and "midnight" are in this zone
	Currency                  string
	TaxRateBP                 int // tax rate in basis points: 1300 = 13%
	Sandbox                   bool
	WebhookSecret             string // kept readable: it signs outgoing webhooks (HMAC)
	WebhookURL                string
	CheckoutURL               string
	ServiceProviderDocumentID string
	SMSConfigured             bool
	BookingWindowDays         int
	SupportGroup              string
	BrandColor                string
	PaymentProcessor          string // builtin, stripe, or none (no processor connection)
	ProcessorAccountID        string // the provider's connected account at the processor
	DefaultLanguage           string // en or fr: the language of subscribers who chose none
	// AutoRepair: a port a reconciliation finds drifted from its lines is converged back at
	// once (docs/network.md); off, the drift is only reported.
	AutoRepair bool
	// OutageCredit: each outage of a line's port longer than the policy's hours is credited
	// pro rata on a credit note (docs/billing.md, Outage credits); nil, none is.
	OutageCredit *OutageCredit
	CreatedAt    time.Time
	Version      int64 // moves on with every edit on the operations surface (If-Match)
}

// OutageCredit is a provider's outage credit policy: every outage of a billed line's port
// longer than MinHours is credited, pro rata of the line's monthly price, once.
type OutageCredit struct {
	MinHours float64 `json:"min_hours"`
}

// MaxOutageCreditHours bounds an outage credit policy's threshold: a month of 31 days.
const MaxOutageCreditHours = 31 * 24

// Problem says what is wrong with the policy's threshold, or "" when it is sound: more than 0
// and at most MaxOutageCreditHours.
func (o OutageCredit) Problem() string {
	if !(o.MinHours > 0 && o.MinHours <= MaxOutageCreditHours) { // NaN included
		return "want a number of hours more than 0 and at most " + strconv.Itoa(MaxOutageCreditHours)
	}
	return ""
}

// Location returns the provider's time zone, falling back to UTC for an unknown name.
func (p *Provider) Location() *time.Location {
	if loc, ok := locations.Load(p.TimeZone); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return time.UTC
	}
	kept, _ := locations.LoadOrStore(p.TimeZone, loc)
	return kept.(*time.Location)
}

// Today is the provider's calendar day at now, YYYY-MM-DD: a day is the provider's local day
// unless a rule says UTC (the partner plan change).
func (p *Provider) Today(now time.Time) string {
	return now.In(p.Location()).Format(time.DateOnly)
}

// locations holds the time zones loaded so far by name: time.LoadLocation reads and parses
// the zone's file on every call (once per provisioned order, for one).
var locations sync.Map

// APIKey is a provider credential. Only a hash of the secret is stored.
type APIKey struct {
	ID         string
	ProviderID string
	Prefix     string // first characters of the key, shown to operators; not unique: a provider's keys start alike
	Features   []string
	Name       string // the operator's label for the key ("" for a fixture's)
	CreatedAt  time.Time
	LastUsedAt *time.Time // recorded in batches: see providers.Usage
	RevokedAt  *time.Time
}

// HasFeature reports whether the key carries feature f.
func (k *APIKey) HasFeature(f string) bool {
	for _, x := range k.Features {
		if x == f {
			return true
		}
	}
	return false
}

// Building is an address the network reaches. Coverage (which providers sell there) is a
// separate relation: one building can be served by several providers.
type Building struct {
	ID                  string
	Street              string // house number and street name
	City                string
	PostalCode          string // canonical "A1A 1A1"
	Province            string
	Country             string
	LineType            LineType // "" when unclassified
	Orderable           bool
	EarliestServiceDate string // YYYY-MM-DD or ""
	Presale             bool
}

// Unit is a suite in a building.
type Unit struct {
	ID         string
	BuildingID string
	UnitNumber string
	PostalUnit string // suite label used in the postal address when it differs, else ""
}

// Port is a switch port wired to a suite. location_hash and location_identifier are the two
// ways a caller names a port (captive portal hash, or the partner's own identifier).
type Port struct {
	ID                 string
	BuildingID         string
	UnitID             string
	Switch             string
	Name               string
	LocationHash       string
	LocationIdentifier string
	// Unconverged: the port's convergence ran out of retries before its switch showed what
	// its lines ask (read with the building's ports only).
	Unconverged bool
}

// Plan is a product a provider sells; its versions carry price and speed.
type Plan struct {
	ID         string
	ProviderID string
	Name       string
}

// PlanVersion is one priced, sellable version of a plan.
type PlanVersion struct {
	ID             string
	PlanID         string
	ProviderID     string
	PlanName       string
	MonthlyPrice   Money
	SetupFee       Money
	DownloadMbps   int
	UploadMbps     int
	StoreProductID string
	Sellable       bool
	PromoPrice     *Money // live campaign price, if any
	PromoEndsOn    string // YYYY-MM-DD, "" when no campaign
}

// PromoOn returns the campaign price live on day (YYYY-MM-DD, the provider's calendar), nil
// for none: PromoPrice until PromoEndsOn inclusive, or for good when the campaign has no end.
func (v *PlanVersion) PromoOn(day string) *Money {
	if v == nil || v.PromoPrice == nil || (v.PromoEndsOn != "" && v.PromoEndsOn < day) {
		return nil
	}
	return v.PromoPrice
}

// PriceOn is the monthly price of the plan version on day (YYYY-MM-DD, the provider's
// calendar): its live campaign's price, else MonthlyPrice. It is the one rule that prices a
// day of service, for what the portal shows and for what every invoice bills.
func (v *PlanVersion) PriceOn(day string) Money {
	if promo := v.PromoOn(day); promo != nil {
		return *promo
	}
	return v.MonthlyPrice
}

// Contact is a person's contact details.
type Contact struct {
	ID          string
	FirstName   string
	LastName    string
	Email       string
	PhoneNumber string
	Company     string
}

// SameParty reports whether two contacts describe the same party: compared by name, e-mail,
// phone and company, not by row (as billing_contact_differs is decided).
func (c Contact) SameParty(o Contact) bool {
	return c.FirstName == o.FirstName && c.LastName == o.LastName &&
		equalFoldTrim(c.Email, o.Email) && c.PhoneNumber == o.PhoneNumber && c.Company == o.Company
}

// Subscriber is the customer record of an account holder at one provider.
type Subscriber struct {
	ID                   string
	ProviderID           string
	CustomerNumber       string // NNNN-NNN
	LegacyCustomerNumber string // retired AAAA-NNNN, searchable only
	Holder               Contact
	InvoiceContact       *Contact // nil when invoices go to the holder
	ProcessorCustomerID  string
	PaymentMethodID      string
	CreatedAt            time.Time
}

// Account is a portal login: an account holder, an authorized user, or a login without a
// subscriber record yet.
type Account struct {
	ID               string
	Email            string
	ProviderID       string
	SubscriberID     string // "" without a subscriber record
	AuthorizedUserID string // set for authorized users
	PasswordSet      bool
}

// IsHolder reports whether the account is the account holder's own login.
func (a *Account) IsHolder() bool { return a.AuthorizedUserID == "" }

// CheckHolder refuses an authorized user (403 holder_only) what only the account holder may do:
// manage authorized users and the payment method, place orders, reactivate a line and move
// its billing day. The holder is answerable for the account and its money; the people they
// let in only use it.
func (a *Account) CheckHolder() error {
	if a.IsHolder() {
		return nil
	}
	return Errorf(EFORBIDDEN, "holder_only", "Only the account holder can do this")
}

// AuthorizedUser is a person the holder allowed to use the account (at most 5).
type AuthorizedUser struct {
	ID             string
	SubscriberID   string
	Contact        Contact
	InvitationSent bool
	Activated      bool
	CreatedAt      time.Time
	AccountID      string // the person's portal login
}

// Subscription is one line of service at one location.
type Subscription struct {
	ID                     string
	ProviderID             string
	SubscriberID           string // "" for anonymous (checkout) lines
	PlanVersionID          string
	BuildingID             string
	UnitID                 string
	PortID                 string
	Status                 Status
	WorkflowState          string
	DeliveryMode           DeliveryMode
	MACAddress             string
	BillingOwner           BillingOwner
	BillingDay             int
	ProcessorCustomerID    string
	PaymentMethodID        string
	ExternalSubscriptionID string
	// AutoPayOff: the holder turned AutoPay off for the line; its invoices are mailed with a
	// pay link and not charged until paid from it or from the portal.
	AutoPayOff         bool
	Anonymous          bool
	ContactEmail       string
	OnHold             bool
	AppointmentAt      *time.Time
	BookingLinkSent    bool
	Source             string
	CheckoutSessionID  string
	StartedAt          string // YYYY-MM-DD service start, "" before activation
	ActivatedAt        *time.Time
	CanceledAt         *time.Time
	EndedAt            *time.Time
	CancelReason       string
	StatusBeforeCancel Status
	RequestedStartDate string
	VLAN               int
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Invoice is a local invoice row.
type Invoice struct {
	ID             string
	ProviderID     string
	SubscriberID   string
	SubscriptionID string
	Number         string
	CustomerNumber string
	InvoiceDate    string // YYYY-MM-DD
	Period         string // YYYY-MM
	Kind           string // first, recurring, final, reactivation
	Occasion       string // "" for first and recurring; the cancellation a final settles, the reactivation a reactivation bills
	Status         string // open, paid, void, uncollectible
	Net            Money
	Tax            Money
	Total          Money
	Currency       string
	PaidAt         *time.Time
	PaymentIntent  string
	CreatedAt      time.Time
}

// CreditNote states (docs/billing.md, Credit notes); draft, archived and voided exist but are never
// listed.
const (
	CreditOpen     = "open"
	CreditRefunded = "refunded"
	CreditPaidOut  = "paid_out"
	CreditApplied  = "applied"
	CreditDraft    = "draft"
	CreditArchived = "archived"
	CreditVoided   = "voided"
)

// CreditNote is money owed back to a subscriber (cancellation refunds and credits, plan-change
// and operator credits). Amount is gross, in the provider's currency.
type CreditNote struct {
	ID             string
	ProviderID     string
	SubscriberID   string
	SubscriptionID string
	InvoiceID      string
	Number         string
	State          string
	Reason         string
	Amount         Money
	Remaining      Money // not yet applied, refunded or paid out
	Currency       string
	CustomerNumber string // the subscriber's number when the note was issued ("" if none)
	CreatedAt      time.Time
}

// Ticket is a support or operator ticket in the built-in ticket store.
type Ticket struct {
	ID           string
	ProviderID   string
	Number       string
	SubscriberID string
	ContactEmail string
	Kind         string // support, install, operator
	Subject      string
	Priority     string
	Status       string
	Group        string
	Article      string // customer-facing
	InternalNote string
	AssignedTo   string // the operator working it, as the operators name each other (an e-mail); "" for nobody
	PortID       string // the port an operator ticket is about ("" for none)
	Version      int64  // moves on with every operator edit (If-Match)
	CreatedAt    time.Time
	UpdatedAt    *time.Time // the last operator edit; nil for none
}

// TicketComment is an operator's comment on a ticket.
type TicketComment struct {
	ID        string
	TicketID  string
	Author    string
	Body      string
	CreatedAt time.Time
}

// Event is a webhook event recorded with the state change that caused it.
type Event struct {
	ID         string
	ProviderID string
	Type       string
	Payload    []byte // the exact JSON body that is signed and sent
	Sandbox    bool
	CreatedAt  time.Time
}

// Event types (docs/webhooks.md).
const (
	EventSubscriptionActivated      = "subscription.activated"
	EventProvisioningCompleted      = "provisioning.completed"
	EventProvisioningFailed         = "provisioning.failed"
	EventSubscriptionPendingInstall = "subscription.pending_install"
	EventCheckoutSessionCompleted   = "checkout.session.completed"
	EventSandboxPing                = "service.sandbox.ping"
	EventDriftDetected              = "network.drift_detected"
	EventDriftRepaired              = "network.drift_repaired"
)

// CheckoutSession is a marketplace hand-over session.
type CheckoutSession struct {
	ID                 string
	ProviderID         string
	PlanVersionID      string
	BuildingID         string
	UnitID             string
	LocationHash       string
	MACAddress         string
	DeliveryMode       DeliveryMode
	Status             string // pending, redirected, completed, expired, cancelled
	AccountID          string
	PartnerReferenceID string
	SubscriptionID     string
	CreatedAt          time.Time
	RedirectedAt       *time.Time
	ExpiredAt          *time.Time
	CompletedAt        *time.Time
	CancelledAt        *time.Time
}

// Checkout session statuses (docs/checkout.md).
const (
	SessionPending    = "pending"
	SessionRedirected = "redirected"
	SessionCompleted  = "completed"
	SessionExpired    = "expired"
	SessionCancelled  = "cancelled"
)

// ExpiresAt is when a session that is never read expires (creation + 2 hours).
func (c *CheckoutSession) ExpiresAt() time.Time { return c.CreatedAt.Add(CheckoutSessionTTL) }

// ExpiredByAge reports whether a still-pending session has gone unread too long at now; a
// session that was read (redirected) never expires.
func (c *CheckoutSession) ExpiredByAge(now time.Time) bool {
	return c.Status == SessionPending && !now.Before(c.ExpiresAt())
}

// Mail is one message in the outbox.
type Mail struct {
	ID        string
	To        string
	Subject   string
	Body      string
	Links     []string
	Status    string // queued, sent, logged, failed
	Transport string
	CreatedAt time.Time
	SentAt    *time.Time
}

func equalFoldTrim(a, b string) bool {
	return len(a) == len(b) && foldASCII(a) == foldASCII(b)
}

func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
