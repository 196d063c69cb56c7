package payments

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/subprov/subprov"
)

// Stripe is the processor for providers connected through Stripe Connect. The platform's secret
// key authenticates every call and the provider's connected account id goes in the
// Stripe-Account header, so each call sees only that provider's customers and moves money in
// that provider's account.
type Stripe struct {
	sc *stripe.Client
}

var _ Processor = (*Stripe)(nil)

// stripeTimeout bounds one HTTP attempt: billing-owner verification runs inside a partner's
// request, which must not hang for stripe-go's default 80 seconds.
const stripeTimeout = 20 * time.Second

// NewStripe returns the Stripe adapter. baseURL "" is api.stripe.com; tests and CI point it at
// stripe-mock (e.g. http://127.0.0.1:12111).
func NewStripe(apiKey, baseURL string) *Stripe {
	return newStripe(apiKey, baseURL, stripe.DefaultMaxNetworkRetries)
}

// newStripe sets how often stripe-go retries a network error, 409 or 5xx. Retries are safe:
// charges and refunds carry our idempotency keys and stripe-go adds its own to other POSTs.
func newStripe(apiKey, baseURL string, retries int64) *Stripe {
	cfg := &stripe.BackendConfig{
		HTTPClient: &http.Client{Timeout: stripeTimeout},
		// Errors are returned to the caller, which logs them with its own context; stripe-go
		// logging them too would log every decline twice.
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(retries),
	}
	if baseURL != "" {
		cfg.URL = stripe.String(strings.TrimRight(baseURL, "/"))
	}
	return &Stripe{sc: stripe.NewClient(apiKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))}
}

// account returns the provider's connected account. Without one the call must not be made at
// all: with no Stripe-Account header it would act on the platform's own account.
func account(op string, p *subprov.Provider) (string, error) {
	if p.ProcessorAccountID == "" {
		return "", fmt.Errorf("stripe: %s: provider %s has no connected account: %w", op, p.ID, ErrNotConnected)
	}
	return p.ProcessorAccountID, nil
}

// Customer retrieves the customer with its default payment method and lists its cards, oldest
// first, so Methods[0] is the first card attached (Stripe lists newest first).
func (s *Stripe) Customer(ctx context.Context, p *subprov.Provider, customerID string) (*Customer, error) {
	const op = "retrieve customer"
	acct, err := account(op, p)
	if err != nil {
		return nil, err
	}
	if customerID == "" {
		// An empty id would turn GET /v1/customers/{id} into the customer list.
		return nil, fmt.Errorf("stripe: %s: empty customer id: %w", op, ErrCustomerNotFound)
	}
	params := &stripe.CustomerRetrieveParams{}
	params.SetStripeAccount(acct)
	c, err := s.sc.V1Customers.Retrieve(ctx, customerID, params)
	if err != nil {
		return nil, stripeErr(op, err, ErrCustomerNotFound)
	}
	if c.Deleted {
		return nil, fmt.Errorf("stripe: %s: customer %s is deleted: %w", op, customerID, ErrCustomerNotFound)
	}
	out := &Customer{ID: c.ID, Methods: []Method{}}
	if c.InvoiceSettings != nil && c.InvoiceSettings.DefaultPaymentMethod != nil {
		out.DefaultMethodID = c.InvoiceSettings.DefaultPaymentMethod.ID
	}
	list := &stripe.CustomerListPaymentMethodsParams{Customer: stripe.String(customerID), Type: stripe.String("card")}
	list.Limit = stripe.Int64(100)
	list.SetStripeAccount(acct)
	var created []int64
	for pm, err := range s.sc.V1Customers.ListPaymentMethods(ctx, list) {
		if err != nil {
			return nil, stripeErr("list payment methods", err, ErrCustomerNotFound)
		}
		out.Methods = append(out.Methods, methodOf(pm))
		created = append(created, pm.Created)
	}
	sort.Stable(byCreated{out.Methods, created})
	return out, nil
}

type byCreated struct {
	m       []Method
	created []int64
}

func (b byCreated) Len() int           { return len(b.m) }
func (b byCreated) Less(i, j int) bool { return b.created[i] < b.created[j] }
func (b byCreated) Swap(i, j int) {
	b.m[i], b.m[j] = b.m[j], b.m[i]
	b.created[i], b.created[j] = b.created[j], b.created[i]
}

func methodOf(pm *stripe.PaymentMethod) Method {
	m := Method{ID: pm.ID}
	if pm.Card != nil {
		m.Brand, m.Last4 = string(pm.Card.Brand), pm.Card.Last4
	}
	return m
}

// Charge creates and confirms an off-session PaymentIntent with the caller's idempotency key.
// Only a PaymentIntent that comes back succeeded is a Charge: a real off-session confirmation
// either succeeds or answers with a card error, so any other state means the money did not move
// and must not be booked as paid.
func (s *Stripe) Charge(ctx context.Context, p *subprov.Provider, r ChargeRequest) (*Charge, error) {
	const op = "charge"
	acct, err := account(op, p)
	if err != nil {
		return nil, err
	}
	switch {
	case r.IdempotencyKey == "":
		return nil, fmt.Errorf("stripe: %s: an idempotency key is required: %w", op, ErrInvalidRequest)
	case r.Amount <= 0:
		return nil, fmt.Errorf("stripe: %s: amount %s is not positive: %w", op, r.Amount, ErrInvalidRequest)
	case r.CustomerID == "":
		return nil, fmt.Errorf("stripe: %s: no customer: %w", op, ErrCustomerNotFound)
	case r.MethodID == "":
		return nil, fmt.Errorf("stripe: %s: no payment method: %w", op, ErrNoPaymentMethod)
	}
	params := &stripe.PaymentIntentCreateParams{
		Amount:        stripe.Int64(int64(r.Amount)),
		Currency:      stripe.String(strings.ToLower(or(r.Currency, p.Currency))),
		Customer:      stripe.String(r.CustomerID),
		PaymentMethod: stripe.String(r.MethodID),
		Confirm:       stripe.Bool(true),
		OffSession:    stripe.Bool(true),
		// Cards only: with automatic payment methods a confirmed intent would need a
		// return_url for redirect-based methods, which an off-session charge cannot follow.
		PaymentMethodTypes: []*string{stripe.String("card")},
	}
	if r.Description != "" {
		params.Description = stripe.String(r.Description)
	}
	params.SetStripeAccount(acct)
	params.SetIdempotencyKey(r.IdempotencyKey)
	pi, err := s.sc.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return nil, stripeErr(op, err, nil)
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
		return &Charge{ID: pi.ID, Status: ChargeSucceeded}, nil
	case stripe.PaymentIntentStatusRequiresPaymentMethod, stripe.PaymentIntentStatusRequiresAction,
		stripe.PaymentIntentStatusRequiresConfirmation, stripe.PaymentIntentStatusCanceled:
		// requires_action: the bank wants the cardholder to authenticate, which an
		// off-session charge cannot do; to the service that is a declined card.
		return nil, fmt.Errorf("stripe: %s: payment intent %s is %s: %w", op, pi.ID, pi.Status, ErrCardDeclined)
	default:
		return nil, fmt.Errorf("stripe: %s: payment intent %s is %s, not succeeded: %w", op, pi.ID, pi.Status, ErrUnavailable)
	}
}

// Refund refunds amount of a charge: chargeID is the PaymentIntent id Charge returned (a ch_
// charge id works too).
func (s *Stripe) Refund(ctx context.Context, p *subprov.Provider, chargeID string, amount subprov.Money, idempotencyKey string) (*Refund, error) {
	const op = "refund"
	acct, err := account(op, p)
	if err != nil {
		return nil, err
	}
	switch {
	case idempotencyKey == "":
		return nil, fmt.Errorf("stripe: %s: an idempotency key is required: %w", op, ErrInvalidRequest)
	case amount <= 0:
		return nil, fmt.Errorf("stripe: %s: amount %s is not positive: %w", op, amount, ErrInvalidRequest)
	case chargeID == "":
		return nil, fmt.Errorf("stripe: %s: no charge: %w", op, ErrInvalidRequest)
	}
	params := &stripe.RefundCreateParams{Amount: stripe.Int64(int64(amount))}
	if strings.HasPrefix(chargeID, "ch_") {
		params.Charge = stripe.String(chargeID)
	} else {
		params.PaymentIntent = stripe.String(chargeID)
	}
	params.SetStripeAccount(acct)
	params.SetIdempotencyKey(idempotencyKey)
	re, err := s.sc.V1Refunds.Create(ctx, params)
	if err != nil {
		return nil, stripeErr(op, err, nil)
	}
	if re.Status == stripe.RefundStatusFailed || re.Status == stripe.RefundStatusCanceled {
		return nil, fmt.Errorf("stripe: %s: refund %s is %s: %w", op, re.ID, re.Status, ErrUnavailable)
	}
	return &Refund{ID: re.ID}, nil
}

// CreateCustomer creates a customer in the provider's account.
func (s *Stripe) CreateCustomer(ctx context.Context, p *subprov.Provider, email string) (string, error) {
	const op = "create customer"
	acct, err := account(op, p)
	if err != nil {
		return "", err
	}
	params := &stripe.CustomerCreateParams{}
	if email != "" {
		params.Email = stripe.String(email)
	}
	params.SetStripeAccount(acct)
	c, err := s.sc.V1Customers.Create(ctx, params)
	if err != nil {
		return "", stripeErr(op, err, nil)
	}
	return c.ID, nil
}

// CreateSetupIntent starts saving a card for off-session charges on the customer.
func (s *Stripe) CreateSetupIntent(ctx context.Context, p *subprov.Provider, customerID string) (*SetupIntent, error) {
	const op = "create setup intent"
	acct, err := account(op, p)
	if err != nil {
		return nil, err
	}
	if customerID == "" {
		return nil, fmt.Errorf("stripe: %s: empty customer id: %w", op, ErrCustomerNotFound)
	}
	params := &stripe.SetupIntentCreateParams{
		Customer:           stripe.String(customerID),
		Usage:              stripe.String("off_session"), // the card is charged later without the customer
		PaymentMethodTypes: []*string{stripe.String("card")},
	}
	params.SetStripeAccount(acct)
	si, err := s.sc.V1SetupIntents.Create(ctx, params)
	if err != nil {
		return nil, stripeErr(op, err, ErrCustomerNotFound)
	}
	return &SetupIntent{ID: si.ID, ClientSecret: si.ClientSecret, Status: string(si.Status)}, nil
}

// ConfirmSetupIntent confirms the intent server-side with a Stripe test PaymentMethod: a test
// card number (TestCardSucceeds, …) is translated to the PaymentMethod with the same outcome,
// and a pm_… id is used as given. setupIntentID may also be the client secret. The intent is
// read first and confirmed only when it was opened for customerID: confirming attaches the card
// to the intent's own customer, whoever asks.
func (s *Stripe) ConfirmSetupIntent(ctx context.Context, p *subprov.Provider, customerID, setupIntentID, testCardNumber string) (*Method, error) {
	const op = "confirm setup intent"
	acct, err := account(op, p)
	if err != nil {
		return nil, err
	}
	id, _, _ := strings.Cut(setupIntentID, secretSeparator)
	if id == "" || customerID == "" {
		return nil, fmt.Errorf("stripe: %s: no setup intent %q for customer %q: %w", op, setupIntentID, customerID, ErrSetupIntentNotFound)
	}
	read := &stripe.SetupIntentRetrieveParams{}
	read.SetStripeAccount(acct)
	si, err := s.sc.V1SetupIntents.Retrieve(ctx, id, read)
	if err != nil {
		return nil, stripeErr("retrieve setup intent", err, ErrSetupIntentNotFound)
	}
	if si.Customer == nil || si.Customer.ID != customerID {
		return nil, fmt.Errorf("stripe: %s: setup intent %s is not customer %s's: %w", op, id, customerID, ErrSetupIntentNotFound)
	}
	pm := testCardNumber
	if c, ok := lookupTestCard(testCardNumber); ok {
		pm = c.stripePM
	} else if !strings.HasPrefix(testCardNumber, "pm_") {
		// Raw card numbers never go to Stripe from a server; only test cards are known here.
		return nil, fmt.Errorf("stripe: %s: %q is not a test card: %w", op, testCardNumber, ErrCardDeclined)
	}
	params := &stripe.SetupIntentConfirmParams{PaymentMethod: stripe.String(pm)}
	params.AddExpand("payment_method")
	params.SetStripeAccount(acct)
	si, err = s.sc.V1SetupIntents.Confirm(ctx, id, params)
	if err != nil {
		return nil, stripeErr(op, err, nil)
	}
	switch si.Status {
	case stripe.SetupIntentStatusSucceeded:
	case stripe.SetupIntentStatusRequiresPaymentMethod, stripe.SetupIntentStatusRequiresAction,
		stripe.SetupIntentStatusRequiresConfirmation, stripe.SetupIntentStatusCanceled:
		return nil, fmt.Errorf("stripe: %s: setup intent %s is %s: %w", op, si.ID, si.Status, ErrCardDeclined)
	default:
		return nil, fmt.Errorf("stripe: %s: setup intent %s is %s, not succeeded: %w", op, si.ID, si.Status, ErrUnavailable)
	}
	if si.PaymentMethod == nil || si.PaymentMethod.ID == "" {
		return nil, fmt.Errorf("stripe: %s: setup intent %s succeeded without a payment method: %w", op, si.ID, ErrUnavailable)
	}
	if si.PaymentMethod.Card != nil {
		return &Method{ID: si.PaymentMethod.ID, Brand: string(si.PaymentMethod.Card.Brand), Last4: si.PaymentMethod.Card.Last4}, nil
	}
	// Not expanded (the expansion was ignored): fetch the card to report brand and last4.
	get := &stripe.PaymentMethodRetrieveParams{}
	get.SetStripeAccount(acct)
	full, err := s.sc.V1PaymentMethods.Retrieve(ctx, si.PaymentMethod.ID, get)
	if err != nil {
		return nil, stripeErr("retrieve payment method", err, ErrNoPaymentMethod)
	}
	m := methodOf(full)
	return &m, nil
}

// stripeError keeps both the outcome the service branches on and Stripe's own error, so
// errors.Is(err, ErrCardDeclined) and errors.As(err, **stripe.Error) both work.
type stripeError struct {
	op   string
	kind error
	se   *stripe.Error
}

func (e *stripeError) Error() string {
	msg := fmt.Sprintf("stripe: %s: %v: %s (type %s", e.op, e.kind, e.se.Msg, e.se.Type)
	if e.se.Code != "" {
		msg += ", code " + string(e.se.Code)
	}
	if e.se.DeclineCode != "" {
		msg += ", decline " + string(e.se.DeclineCode)
	}
	if e.se.Param != "" {
		msg += ", param " + e.se.Param
	}
	if e.se.HTTPStatusCode != 0 {
		msg += fmt.Sprintf(", HTTP %d", e.se.HTTPStatusCode)
	}
	if e.se.RequestID != "" {
		msg += ", request " + e.se.RequestID
	}
	return msg + ")"
}

func (e *stripeError) Unwrap() []error { return []error{e.kind, e.se} }

// stripeErr maps a stripe-go error to the package's outcomes. missing is what resource_missing
// on the call's own object means (a customer for Customer); a missing customer or payment method
// named by a parameter maps the same way on every call.
func stripeErr(op string, err error, missing error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		// No answer from Stripe at all: connection refused, timeout, cancelled context.
		return fmt.Errorf("stripe: %s: %w: %w", op, ErrUnavailable, err)
	}
	return &stripeError{op: op, kind: classify(se, missing), se: se}
}

func classify(se *stripe.Error, missing error) error {
	switch {
	case se.Code == stripe.ErrorCodeProcessingError:
		// A card_error by type, but Stripe says to retry it: the processor failed, not the card.
		return ErrUnavailable
	case se.Type == stripe.ErrorTypeCard:
		return ErrCardDeclined
	case se.Code == stripe.ErrorCodeResourceMissing:
		switch {
		case se.Param == "customer":
			return ErrCustomerNotFound
		case se.Param == "payment_method":
			return ErrNoPaymentMethod
		case missing != nil:
			return missing
		}
		return ErrInvalidRequest
	case se.Code == stripe.ErrorCodeAccountInvalid, se.HTTPStatusCode == http.StatusForbidden:
		// The connected account no longer lets the platform act for it.
		return ErrNotConnected
	case se.HTTPStatusCode >= 500, se.Type == stripe.ErrorTypeAPI,
		se.HTTPStatusCode == http.StatusTooManyRequests, se.HTTPStatusCode == http.StatusUnauthorized:
		// 401 is the platform's own key being wrong: to a provider that is the processor
		// failing, and nothing the provider or customer can fix.
		return ErrUnavailable
	}
	return ErrInvalidRequest
}
