package payments

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/store"
)

// Fake is the built-in payment processor used by dev, demo, sandbox and tests. Its customers,
// cards and charges live in the service's own database (processor_* tables), so it behaves the
// same on SQLite and PostgreSQL and survives restarts like a real processor would. Each card's
// behaviour (docs/fixtures.md) decides what a charge does: succeeds, declines (card_declined) or
// fails (a processor error). The "processor" fault switch set to "down" makes every call fail
// with ErrUnavailable.
type Fake struct {
	st     *store.Store
	faults *faults.Switches
	clk    subprov.Clock
}

// NewFake returns the built-in processor on st. f may be nil (always healthy); clk nil means
// the wall clock.
func NewFake(st *store.Store, f *faults.Switches, clk subprov.Clock) *Fake {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Fake{st: st, faults: f, clk: clk}
}

var _ Processor = (*Fake)(nil)

// up answers ErrUnavailable while the processor fault is on; every method asks first, so a down
// processor neither reads nor writes anything.
func (f *Fake) up(op string) error {
	if f.faults.Is("processor", "down") {
		return fmt.Errorf("built-in processor: %s: fault switch processor=down: %w", op, ErrUnavailable)
	}
	return nil
}

// storeErr wraps an unexpected database error: to the caller the fake is an external system,
// so its own failure is the processor's failure (ErrUnavailable), with the cause kept.
func storeErr(op string, err error) error {
	return fmt.Errorf("built-in processor: %s: %w: %w", op, ErrUnavailable, err)
}

// Customer returns the provider's customer with its cards ordered by position.
func (f *Fake) Customer(ctx context.Context, p *subprov.Provider, customerID string) (*Customer, error) {
	if err := f.up("customer"); err != nil {
		return nil, err
	}
	c, err := ReadFakeCustomer(ctx, f.st.R(), p.ID, customerID)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, fmt.Errorf("built-in processor: customer %q of provider %s: %w", customerID, p.ID, ErrCustomerNotFound)
	}
	if err != nil {
		return nil, storeErr("customer", err)
	}
	out := &Customer{ID: c.ID, DefaultMethodID: c.DefaultMethodID, Methods: make([]Method, 0, len(c.Methods))}
	for _, m := range c.Methods {
		out.Methods = append(out.Methods, Method{ID: m.ID, Brand: m.Brand, Last4: m.Last4})
	}
	return out, nil
}

// Charge charges the card with its behaviour. The idempotency key is scoped to the provider (as
// Stripe scopes keys to an account) and stored with the charge: the unique index on it makes
// concurrent duplicates store one row, and every duplicate answers from that row. A declined
// attempt is stored too, so its retry with the same key is declined the same way; a "fails"
// card stores nothing, because a processor error means nothing happened and a retry may go
// through.
func (f *Fake) Charge(ctx context.Context, p *subprov.Provider, r ChargeRequest) (*Charge, error) {
	if err := f.up("charge"); err != nil {
		return nil, err
	}
	if r.IdempotencyKey == "" {
		return nil, fmt.Errorf("built-in processor: charge: an idempotency key is required: %w", ErrInvalidRequest)
	}
	if r.Amount <= 0 {
		return nil, fmt.Errorf("built-in processor: charge: amount %s is not positive: %w", r.Amount, ErrInvalidRequest)
	}
	want := FakeCharge{
		ProviderID:      p.ID,
		CustomerID:      r.CustomerID,
		PaymentMethodID: r.MethodID,
		IdempotencyKey:  "charge:" + p.ID + ":" + r.IdempotencyKey,
		Amount:          r.Amount,
		Currency:        strings.ToUpper(or(r.Currency, p.Currency)),
	}
	// A key already used answers from its row without looking at the card again, as a real
	// processor replays its stored response.
	if prev, err := fakeChargeByKey(ctx, f.st.R(), p.ID, want.IdempotencyKey); err == nil {
		return chargeOutcome(prev, &want)
	} else if !errors.Is(err, subprov.ErrNotFound) {
		return nil, storeErr("charge", err)
	}
	// The card's behaviour is read from the store row: Customer does not expose it, because
	// real processors have no such field.
	cust, err := ReadFakeCustomer(ctx, f.st.R(), p.ID, r.CustomerID)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, fmt.Errorf("built-in processor: charge: customer %q of provider %s: %w", r.CustomerID, p.ID, ErrCustomerNotFound)
	}
	if err != nil {
		return nil, storeErr("charge", err)
	}
	behaviour, found := "", false
	for _, m := range cust.Methods {
		if m.ID == r.MethodID {
			behaviour, found = m.Behaviour, true
		}
	}
	if !found {
		return nil, fmt.Errorf("built-in processor: charge: payment method %q is not a card of customer %s: %w",
			r.MethodID, r.CustomerID, ErrNoPaymentMethod)
	}
	switch behaviour {
	case "succeeds":
		want.Status = FakeChargeSucceeded
	case "declines":
		want.Status = FakeChargeFailed
	default: // "fails", and anything unknown: the processor errs and nothing is recorded
		return nil, fmt.Errorf("built-in processor: charge on payment method %s (behaviour %q): %w", r.MethodID, behaviour, ErrUnavailable)
	}
	want.ID = "ch_" + store.NewID()
	want.CreatedAt = f.clk.Now()
	stored, _, err := InsertFakeCharge(ctx, f.st, &want)
	if err != nil {
		return nil, storeErr("charge", err)
	}
	return chargeOutcome(stored, &want)
}

// chargeOutcome answers a charge from the row that holds its idempotency key. A key reused with
// other parameters is refused, as Stripe does, because answering with the first charge would
// report an amount or card that was never asked for.
func chargeOutcome(stored, want *FakeCharge) (*Charge, error) {
	if stored.CustomerID != want.CustomerID || stored.PaymentMethodID != want.PaymentMethodID ||
		stored.Amount != want.Amount || stored.Currency != want.Currency || stored.Status == FakeRefund {
		return nil, fmt.Errorf("built-in processor: charge: idempotency key reused with different parameters (charge %s): %w",
			stored.ID, ErrInvalidRequest)
	}
	if stored.Status != FakeChargeSucceeded {
		return nil, fmt.Errorf("built-in processor: charge %s on payment method %s: %w", stored.ID, stored.PaymentMethodID, ErrCardDeclined)
	}
	return &Charge{ID: stored.ID, Status: ChargeSucceeded}, nil
}

// Refund stores a refund row against a succeeded charge. The charge's row is locked first so
// that refunds of one charge never together exceed it; the key is scoped to the provider and
// the charge, which is also how refund rows find their charge.
func (f *Fake) Refund(ctx context.Context, p *subprov.Provider, chargeID string, amount subprov.Money, idempotencyKey string) (*Refund, error) {
	if err := f.up("refund"); err != nil {
		return nil, err
	}
	if idempotencyKey == "" {
		return nil, fmt.Errorf("built-in processor: refund: an idempotency key is required: %w", ErrInvalidRequest)
	}
	if amount <= 0 {
		return nil, fmt.Errorf("built-in processor: refund: amount %s is not positive: %w", amount, ErrInvalidRequest)
	}
	prefix := "refund:" + p.ID + ":" + chargeID + ":"
	var out *Refund
	err := f.st.InTx(ctx, func(tx *store.Tx) error {
		ch, err := lockFakeCharge(ctx, tx, p.ID, chargeID)
		if errors.Is(err, subprov.ErrNotFound) {
			return fmt.Errorf("built-in processor: refund: no charge %q for provider %s: %w", chargeID, p.ID, ErrInvalidRequest)
		}
		if err != nil {
			return storeErr("refund", err)
		}
		if ch.Status != FakeChargeSucceeded {
			return fmt.Errorf("built-in processor: refund: charge %s is %s, not refundable: %w", chargeID, ch.Status, ErrInvalidRequest)
		}
		prev, err := fakeChargeByKey(ctx, tx, p.ID, prefix+idempotencyKey)
		if err == nil {
			if prev.Amount != amount {
				return fmt.Errorf("built-in processor: refund: idempotency key reused with a different amount (refund %s): %w",
					prev.ID, ErrInvalidRequest)
			}
			out = &Refund{ID: prev.ID}
			return nil
		}
		if !errors.Is(err, subprov.ErrNotFound) {
			return storeErr("refund", err)
		}
		refunded, err := fakeRefundTotal(ctx, tx, p.ID, prefix)
		if err != nil {
			return storeErr("refund", err)
		}
		if refunded+amount > ch.Amount {
			return fmt.Errorf("built-in processor: refund of %s on charge %s: only %s of %s is left to refund: %w",
				amount, chargeID, ch.Amount-refunded, ch.Amount, ErrInvalidRequest)
		}
		re := &FakeCharge{
			ID: "re_" + store.NewID(), ProviderID: p.ID, CustomerID: ch.CustomerID, PaymentMethodID: ch.PaymentMethodID,
			IdempotencyKey: prefix + idempotencyKey, Amount: amount, Currency: ch.Currency, Status: FakeRefund,
			CreatedAt: f.clk.Now(),
		}
		if err := insertFakeChargeTx(ctx, tx, re); err != nil {
			return storeErr("refund", err)
		}
		out = &Refund{ID: re.ID}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateCustomer creates an empty customer. The e-mail is not kept: the schema has no column
// for it and nothing in the service reads it back from the processor.
func (f *Fake) CreateCustomer(ctx context.Context, p *subprov.Provider, email string) (string, error) {
	if err := f.up("create customer"); err != nil {
		return "", err
	}
	id := "cus_" + store.NewID()
	err := f.st.InTx(ctx, func(tx *store.Tx) error { return insertFakeCustomer(ctx, tx, p.ID, id, f.clk.Now()) })
	if err != nil {
		return "", storeErr("create customer", err)
	}
	return id, nil
}

// A fake setup intent keeps no row: its id carries the customer (hex, so it cannot contain the
// "_" separator) and a nonce that becomes the saved card's id. Confirming the same intent twice
// therefore saves one card. The client secret is not checked on confirm: it only exists so a
// payment page can be written the way Stripe.js pages are; the provider scoping of the customer
// keeps one provider out of another's customers, and the customer the caller names keeps one
// customer out of another's setups.
const (
	setupIntentPrefix = "seti_"
	secretSeparator   = "_secret_"
)

// CreateSetupIntent starts saving a card on the provider's customer.
func (f *Fake) CreateSetupIntent(ctx context.Context, p *subprov.Provider, customerID string) (*SetupIntent, error) {
	if err := f.up("create setup intent"); err != nil {
		return nil, err
	}
	if _, err := f.Customer(ctx, p, customerID); err != nil {
		return nil, fmt.Errorf("create setup intent: %w", err)
	}
	id := setupIntentPrefix + hex.EncodeToString([]byte(customerID)) + "_" + randomHex(12)
	return &SetupIntent{ID: id, ClientSecret: id + secretSeparator + randomHex(12), Status: "requires_payment_method"}, nil
}

// ConfirmSetupIntent saves the test card on the intent's customer, which must be customerID.
// setupIntentID may also be the client secret. TestCardSucceeds saves a card whose charges
// succeed, TestCardDeclines one whose charges are declined, TestCardFails fails the setup with
// ErrUnavailable and saves nothing; any other number is declined. A second confirmation returns
// the card the first one saved.
func (f *Fake) ConfirmSetupIntent(ctx context.Context, p *subprov.Provider, customerID, setupIntentID, testCardNumber string) (*Method, error) {
	if err := f.up("confirm setup intent"); err != nil {
		return nil, err
	}
	owner, nonce, ok := parseSetupIntent(setupIntentID)
	if !ok || customerID == "" || owner != customerID {
		return nil, fmt.Errorf("built-in processor: confirm setup intent: no setup intent %q for customer %q: %w", setupIntentID, customerID, ErrSetupIntentNotFound)
	}
	card, ok := lookupTestCard(testCardNumber)
	if !ok {
		return nil, fmt.Errorf("built-in processor: confirm setup intent: %q is not a test card: %w", testCardNumber, ErrCardDeclined)
	}
	if card.behaviour == "" {
		return nil, fmt.Errorf("built-in processor: confirm setup intent with card ending %s: processing error: %w", card.last4, ErrUnavailable)
	}
	var saved *FakePaymentMethod
	err := f.st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		saved, err = AddFakePaymentMethod(ctx, tx, p.ID, FakePaymentMethod{
			ID: "pm_" + nonce, CustomerID: customerID, Behaviour: card.behaviour, Brand: card.brand, Last4: card.last4,
		}, f.clk.Now())
		return err
	})
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, fmt.Errorf("built-in processor: confirm setup intent: customer %q of provider %s: %w", customerID, p.ID, ErrCustomerNotFound)
	}
	if err != nil {
		return nil, storeErr("confirm setup intent", err)
	}
	return &Method{ID: saved.ID, Brand: saved.Brand, Last4: saved.Last4}, nil
}

// parseSetupIntent undoes CreateSetupIntent's encoding.
func parseSetupIntent(s string) (customerID, nonce string, ok bool) {
	s, _, _ = strings.Cut(s, secretSeparator)
	rest, found := strings.CutPrefix(s, setupIntentPrefix)
	if !found {
		return "", "", false
	}
	hexCustomer, nonce, found := strings.Cut(rest, "_")
	if !found || nonce == "" || strings.Contains(nonce, "_") {
		return "", "", false
	}
	raw, err := hex.DecodeString(hexCustomer)
	if err != nil || len(raw) == 0 {
		return "", "", false
	}
	return string(raw), nonce, true
}

// randomHex returns n random bytes in hex; crypto/rand.Read never fails (it crashes the
// program instead of returning predictable bytes).
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
