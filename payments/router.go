package payments

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/tracing"
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
// it is this deployment that cannot reach it. With tracing on, each call is a span.
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

// call runs one call to the provider's processor; with tracing on it is a span,
// "payments.OP", naming the processor and the provider.
func call[T any](ctx context.Context, r *router, op string, p *subprov.Provider, fn func(context.Context, Processor) (T, error)) (out T, err error) {
	proc, err := r.pick(p)
	if err != nil {
		return out, err
	}
	if !tracing.Enabled() {
		return fn(ctx, proc)
	}
	name := p.PaymentProcessor
	if name == "" {
		name = ProcessorBuiltin
	}
	ctx, span := tracing.Start(ctx, "payments."+op, trace.SpanKindClient,
		attribute.String("subprov.payments.processor", name), attribute.String("subprov.provider_id", p.ID))
	defer func() { tracing.End(span, err) }()
	return fn(ctx, proc)
}

func (r *router) Customer(ctx context.Context, p *subprov.Provider, customerID string) (*Customer, error) {
	return call(ctx, r, "customer", p, func(ctx context.Context, proc Processor) (*Customer, error) {
		return proc.Customer(ctx, p, customerID)
	})
}

func (r *router) Charge(ctx context.Context, p *subprov.Provider, req ChargeRequest) (*Charge, error) {
	return call(ctx, r, "charge", p, func(ctx context.Context, proc Processor) (*Charge, error) {
		return proc.Charge(ctx, p, req)
	})
}

func (r *router) Refund(ctx context.Context, p *subprov.Provider, chargeID string, amount subprov.Money, idempotencyKey string) (*Refund, error) {
	return call(ctx, r, "refund", p, func(ctx context.Context, proc Processor) (*Refund, error) {
		return proc.Refund(ctx, p, chargeID, amount, idempotencyKey)
	})
}

func (r *router) CreateCustomer(ctx context.Context, p *subprov.Provider, email string) (string, error) {
	return call(ctx, r, "create_customer", p, func(ctx context.Context, proc Processor) (string, error) {
		return proc.CreateCustomer(ctx, p, email)
	})
}

func (r *router) CreateSetupIntent(ctx context.Context, p *subprov.Provider, customerID string) (*SetupIntent, error) {
	return call(ctx, r, "create_setup_intent", p, func(ctx context.Context, proc Processor) (*SetupIntent, error) {
		return proc.CreateSetupIntent(ctx, p, customerID)
	})
}

func (r *router) ConfirmSetupIntent(ctx context.Context, p *subprov.Provider, customerID, setupIntentID, testCard string) (*Method, error) {
	return call(ctx, r, "confirm_setup_intent", p, func(ctx context.Context, proc Processor) (*Method, error) {
		return proc.ConfirmSetupIntent(ctx, p, customerID, setupIntentID, testCard)
	})
}
