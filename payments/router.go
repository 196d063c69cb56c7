package payments

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
)

// Processor names a provider's PaymentProcessor may hold.
const (
	ProcessorBuiltin = "builtin"
	ProcessorStripe  = "stripe"
	ProcessorNone    = "none"
)

// NewRouter returns the Processor the service uses: each call goes to the implementation the
// provider is connected to. builtin (and "", the store's default) goes to fake, stripe to
// stripe, none to nothing (every call is ErrNotConnected). stripe may be nil when no Stripe key
// is configured: Stripe providers then get ErrUnavailable, because their connection exists and
// it is this deployment that cannot reach it.
func NewRouter(fake *Fake, stripe *Stripe) Processor {
	return &router{fake: fake, stripe: stripe}
}

type router struct {
	fake   *Fake
	stripe *Stripe
}

// pick returns the provider's processor. It returns an interface value only when the concrete
// pointer is non-nil, so a missing adapter is an error here and never a nil-pointer panic later.
func (r *router) pick(p *subprov.Provider) (Processor, error) {
	if p == nil {
		return nil, fmt.Errorf("payments: no provider: %w", ErrNotConnected)
	}
	switch p.PaymentProcessor {
	case ProcessorBuiltin, "":
		if r.fake == nil {
			return nil, fmt.Errorf("payments: provider %s: built-in processor not configured: %w", p.ID, ErrUnavailable)
		}
		return r.fake, nil
	case ProcessorStripe:
		if r.stripe == nil {
			return nil, fmt.Errorf("payments: provider %s: Stripe is not configured on this deployment: %w", p.ID, ErrUnavailable)
		}
		return r.stripe, nil
	case ProcessorNone:
		return nil, fmt.Errorf("payments: provider %s: %w", p.ID, ErrNotConnected)
	default:
		// An unknown name is a connection the service cannot use; refusing is safer than
		// guessing which account to charge.
		return nil, fmt.Errorf("payments: provider %s: unknown payment processor %q: %w", p.ID, p.PaymentProcessor, ErrNotConnected)
	}
}

func (r *router) Customer(ctx context.Context, p *subprov.Provider, customerID string) (*Customer, error) {
	proc, err := r.pick(p)
	if err != nil {
		return nil, err
	}
	return proc.Customer(ctx, p, customerID)
}

func (r *router) Charge(ctx context.Context, p *subprov.Provider, req ChargeRequest) (*Charge, error) {
	proc, err := r.pick(p)
	if err != nil {
		return nil, err
	}
	return proc.Charge(ctx, p, req)
}

func (r *router) Refund(ctx context.Context, p *subprov.Provider, chargeID string, amount subprov.Money, idempotencyKey string) (*Refund, error) {
	proc, err := r.pick(p)
	if err != nil {
		return nil, err
	}
	return proc.Refund(ctx, p, chargeID, amount, idempotencyKey)
}

func (r *router) CreateCustomer(ctx context.Context, p *subprov.Provider, email string) (string, error) {
	proc, err := r.pick(p)
	if err != nil {
		return "", err
	}
	return proc.CreateCustomer(ctx, p, email)
}

func (r *router) CreateSetupIntent(ctx context.Context, p *subprov.Provider, customerID string) (*SetupIntent, error) {
	proc, err := r.pick(p)
	if err != nil {
		return nil, err
	}
	return proc.CreateSetupIntent(ctx, p, customerID)
}

func (r *router) ConfirmSetupIntent(ctx context.Context, p *subprov.Provider, customerID, setupIntentID, testCard string) (*Method, error) {
	proc, err := r.pick(p)
	if err != nil {
		return nil, err
	}
	return proc.ConfirmSetupIntent(ctx, p, customerID, setupIntentID, testCard)
}
