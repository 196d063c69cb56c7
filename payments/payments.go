// Package payments is the payment-processor seam: verifying and adopting a partner's processor
// customer, off-session charges with idempotency keys, refunds and saved-card setup, through the
// built-in fake or Stripe connected accounts.
//
// Callers hold a Processor (NewRouter) and pass the provider on every call: the provider's
// PaymentProcessor picks the implementation and its ProcessorAccountID is the account every
// Stripe call acts on, so one provider can never see or charge another provider's customers.
// Errors wrap one of the sentinels below; match them with errors.Is and map them to the codes
// of the billing-owner rules (docs/provisioning.md, Billing owner).
package payments

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
)

// The outcomes a caller branches on. Each one is wrapped with what was being done, so
// errors.Is(err, ErrCardDeclined) holds while the message says which call failed and why.
var (
	// ErrNotConnected: the provider has no processor connection (PaymentProcessor "none", or a
	// Stripe provider without a connected account). Maps to billing_not_available (409).
	ErrNotConnected = errors.New("provider has no payment processor connection")
	// ErrCustomerNotFound: no such customer in the provider's processor account (another
	// provider's customer looks exactly like a missing one). Maps to
	// processor_customer_not_found (422).
	ErrCustomerNotFound = errors.New("processor customer not found")
	// ErrNoPaymentMethod: the customer has no usable card, or the card named is not the
	// customer's. Maps to processor_customer_has_no_payment_method (422) at adoption and to
	// no_payment_method when charging.
	ErrNoPaymentMethod = errors.New("processor customer has no payment method")
	// ErrCardDeclined: the card was refused. Maps to card_declined (409).
	ErrCardDeclined = errors.New("card declined")
	// ErrUnavailable: the processor is unreachable or answered with an error of its own; the
	// same call may succeed later. Maps to processor_unavailable (502).
	ErrUnavailable = errors.New("payment processor unavailable")
	// ErrSetupIntentNotFound: no such setup intent for the customer named: unknown, or opened
	// for another customer (which looks exactly like an unknown one). Maps to 404.
	ErrSetupIntentNotFound = errors.New("setup intent not found for the customer")
	// ErrInvalidRequest: the processor refused the request itself (an idempotency key reused
	// with other parameters, a refund above what is left of the charge, an unknown setup
	// intent). A bug in the caller, not a condition to show a customer: maps to 500.
	ErrInvalidRequest = errors.New("payment processor rejected the request")
)

// Processor is one payment processor as the service uses it. Every call acts inside the
// provider's own processor account.
type Processor interface {
	// Customer returns the provider's processor customer with its cards.
	Customer(ctx context.Context, p *subprov.Provider, customerID string) (*Customer, error)
	// Charge charges a saved card off-session. The same IdempotencyKey twice returns the same
	// Charge (or the same decline) and charges once, even when both calls run at once.
	Charge(ctx context.Context, p *subprov.Provider, r ChargeRequest) (*Charge, error)
	// Refund returns amount of a charge to the card; idempotent by idempotencyKey.
	Refund(ctx context.Context, p *subprov.Provider, chargeID string, amount subprov.Money, idempotencyKey string) (*Refund, error)
	// CreateCustomer creates a customer without cards and returns its id.
	CreateCustomer(ctx context.Context, p *subprov.Provider, email string) (string, error)
	// CreateSetupIntent starts saving a card for off-session use on the customer.
	CreateSetupIntent(ctx context.Context, p *subprov.Provider, customerID string) (*SetupIntent, error)
	// ConfirmSetupIntent completes one of the customer's setups with a test card
	// (TestCardSucceeds, TestCardDeclines, TestCardFails, or a Stripe test PaymentMethod such as
	// pm_card_visa) and returns the card now attached to the customer. A setup opened for
	// another customer is ErrSetupIntentNotFound, as an unknown one is, and nothing is
	// confirmed or attached: a setup id is no credential.
	ConfirmSetupIntent(ctx context.Context, p *subprov.Provider, customerID, setupIntentID, testCard string) (*Method, error)
}

// Method is a saved card.
type Method struct {
	ID    string
	Brand string
	Last4 string
}

// Customer is a processor customer and its cards.
type Customer struct {
	ID              string
	DefaultMethodID string   // "" when the customer has no default payment method
	Methods         []Method // in processor order: the order they were attached
}

// AdoptableMethod returns the card the service adopts with the customer (docs/provisioning.md,
// Billing owner): the default payment method, else the first attached card, else "" (which the
// caller reports as processor_customer_has_no_payment_method).
func (c *Customer) AdoptableMethod() string {
	if c == nil {
		return ""
	}
	if c.DefaultMethodID != "" {
		return c.DefaultMethodID
	}
	if len(c.Methods) > 0 {
		return c.Methods[0].ID
	}
	return ""
}

// ChargeRequest is one off-session charge.
type ChargeRequest struct {
	CustomerID     string
	MethodID       string
	Amount         subprov.Money // minor units, > 0
	Currency       string        // ISO 4217; "" means the provider's currency
	IdempotencyKey string        // required: a retry must not charge twice
	Description    string
}

// Charge is a successful charge. Its ID is what Refund takes.
type Charge struct {
	ID     string
	Status string // ChargeSucceeded
}

// ChargeSucceeded is the status of every Charge returned without an error.
const ChargeSucceeded = "succeeded"

// Refund is an accepted refund.
type Refund struct {
	ID string
}

// SetupIntent is a pending card setup. ClientSecret is what a payment page confirms with.
type SetupIntent struct {
	ID           string
	ClientSecret string
	Status       string // requires_payment_method until confirmed
}

// Test cards the sandbox payment page offers; both processors give each the same outcome.
const (
	TestCardSucceeds = "4242424242424242" // saved; charges succeed
	TestCardDeclines = "4000000000000002" // saved; charges are declined later
	TestCardFails    = "4000000000000119" // the setup itself fails with a processor error
)

// testCard is what each processor makes of a test card.
type testCard struct {
	behaviour string // the fake's behaviour for the saved card; "" means setup fails
	stripePM  string // the Stripe test PaymentMethod with the same outcome
	brand     string
	last4     string
}

var testCards = map[string]testCard{
	TestCardSucceeds: {behaviour: "succeeds", stripePM: "pm_card_visa", brand: "visa", last4: "4242"},
	// pm_card_chargeCustomerFail attaches and then declines every charge: "declines later".
	TestCardDeclines: {behaviour: "declines", stripePM: "pm_card_chargeCustomerFail", brand: "visa", last4: "0002"},
	TestCardFails:    {behaviour: "", stripePM: "pm_card_chargeDeclinedProcessingError", brand: "visa", last4: "0119"},
}

// lookupTestCard accepts a test card number or the matching Stripe test PaymentMethod, so a
// page or test can drive either processor with the same input.
func lookupTestCard(s string) (testCard, bool) {
	if c, ok := testCards[s]; ok {
		return c, true
	}
	for _, c := range testCards {
		if c.stripePM == s {
			return c, true
		}
	}
	return testCard{}, false
}
