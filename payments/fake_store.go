package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// The built-in payment processor's rows (the fixture's processor_customers, docs/fixtures.md). A
// real processor keeps these on its side; Fake keeps them in the service's database so dev, demo,
// sandbox and tests charge cards the same way on both engines. Every lookup takes the provider,
// because a processor customer belongs to one provider's account and must be invisible to every
// other provider.

// Statuses of processor_charges rows. A refund is a row of its own (the schema has no refunds
// table), linked to the charge it refunds through its idempotency key, which the caller builds.
const (
	FakeChargeSucceeded = "succeeded"
	FakeChargeFailed    = "failed" // declined; kept so a retry with the same key answers the same
	FakeRefund          = "refund"
)

// FakePaymentMethod is a saved card of the built-in processor.
type FakePaymentMethod struct {
	ID         string
	CustomerID string
	Behaviour  string // succeeds, declines, fails (docs/fixtures.md)
	Brand      string
	Last4      string
	Position   int
	CreatedAt  time.Time
}

// FakeCustomer is a customer of the built-in processor with its cards in processor order.
type FakeCustomer struct {
	ID              string
	ProviderID      string
	DefaultMethodID string // "" when the customer has no default payment method
	CreatedAt       time.Time
	Methods         []FakePaymentMethod
}

// FakeCharge is a charge, a declined charge attempt or a refund of the built-in processor.
type FakeCharge struct {
	ID              string
	ProviderID      string
	CustomerID      string
	PaymentMethodID string
	IdempotencyKey  string
	Amount          subprov.Money
	Currency        string
	Status          string
	CreatedAt       time.Time
}

// ReadFakeCustomer returns the provider's processor customer id with its payment methods
// ordered by position (then attach time), as q (the read pool, or a transaction) sees it.
// Another provider's customer is subprov.ErrNotFound, exactly like one that does not exist.
func ReadFakeCustomer(ctx context.Context, q store.Querier, providerID, id string) (*FakeCustomer, error) {
	c := FakeCustomer{}
	err := q.QueryRow(ctx, `SELECT id, provider_id, COALESCE(default_payment_method_id, ''), created_at
		FROM processor_customers WHERE id = ? AND provider_id = ?`, id, providerID).
		Scan(&c.ID, &c.ProviderID, &c.DefaultMethodID, &c.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("processor customer %s: %w", id, err)
	}
	rows, err := q.Query(ctx, `SELECT id, customer_id, behaviour, brand, last4, position, created_at
		FROM processor_payment_methods WHERE customer_id = ? ORDER BY position, created_at, id`, id)
	if err != nil {
		return nil, fmt.Errorf("payment methods of processor customer %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m FakePaymentMethod
		if err := rows.Scan(&m.ID, &m.CustomerID, &m.Behaviour, &m.Brand, &m.Last4, &m.Position, &m.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan payment method: %w", err)
		}
		c.Methods = append(c.Methods, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("payment methods of processor customer %s: %w", id, err)
	}
	return &c, nil
}

// insertFakeCustomer creates an empty processor customer (no cards, no default).
func insertFakeCustomer(ctx context.Context, tx *store.Tx, providerID, id string, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO processor_customers (id, provider_id, created_at) VALUES (?, ?, ?)`,
		id, providerID, now.UTC()); err != nil {
		return fmt.Errorf("insert processor customer %s: %w", id, err)
	}
	return nil
}

// AddFakePaymentMethod attaches m to the provider's customer m.CustomerID after its other
// cards and returns the stored method. It is idempotent by m.ID: adding the same id again
// returns the card already stored (so a retried confirmation saves one card, not two).
// subprov.ErrNotFound when the customer is not the provider's, or when m.ID belongs to another customer.
func AddFakePaymentMethod(ctx context.Context, tx *store.Tx, providerID string, m FakePaymentMethod, now time.Time) (*FakePaymentMethod, error) {
	var owner string
	if err := tx.QueryRow(ctx, `SELECT id FROM processor_customers WHERE id = ? AND provider_id = ?`,
		m.CustomerID, providerID).Scan(&owner); err != nil {
		return nil, fmt.Errorf("processor customer %s: %w", m.CustomerID, err)
	}
	var next int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(position) + 1, 0) FROM processor_payment_methods WHERE customer_id = ?`,
		m.CustomerID).Scan(&next); err != nil {
		return nil, fmt.Errorf("next payment method position: %w", err)
	}
	// ON CONFLICT DO NOTHING rather than catching the unique violation: on PostgreSQL a failed
	// statement aborts the whole transaction, and the winner's row is what we want to return.
	if _, err := tx.Exec(ctx, `INSERT INTO processor_payment_methods (id, customer_id, behaviour, brand, last4, position, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		m.ID, m.CustomerID, m.Behaviour, m.Brand, m.Last4, next, now.UTC()); err != nil {
		return nil, fmt.Errorf("insert payment method %s: %w", m.ID, err)
	}
	out := FakePaymentMethod{}
	err := tx.QueryRow(ctx, `SELECT id, customer_id, behaviour, brand, last4, position, created_at
		FROM processor_payment_methods WHERE id = ? AND customer_id = ?`, m.ID, m.CustomerID).
		Scan(&out.ID, &out.CustomerID, &out.Behaviour, &out.Brand, &out.Last4, &out.Position, &out.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("payment method %s: %w", m.ID, err)
	}
	return &out, nil
}

const fakeChargeColumns = `id, provider_id, customer_id, payment_method_id, idempotency_key, amount_minor, currency, status, created_at`

func scanFakeCharge(row interface{ Scan(...any) error }) (*FakeCharge, error) {
	var c FakeCharge
	var amount int64
	if err := row.Scan(&c.ID, &c.ProviderID, &c.CustomerID, &c.PaymentMethodID, &c.IdempotencyKey, &amount,
		&c.Currency, &c.Status, &c.CreatedAt); err != nil {
		return nil, err
	}
	c.Amount = subprov.Money(amount)
	return &c, nil
}

// fakeChargeByKey returns the provider's charge or refund row stored under an idempotency
// key, as q (the read pool, or a transaction) sees it, or subprov.ErrNotFound.
func fakeChargeByKey(ctx context.Context, q store.Querier, providerID, key string) (*FakeCharge, error) {
	c, err := scanFakeCharge(q.QueryRow(ctx, `SELECT `+fakeChargeColumns+`
		FROM processor_charges WHERE provider_id = ? AND idempotency_key = ?`, providerID, key))
	if err != nil {
		return nil, fmt.Errorf("processor charge by idempotency key: %w", err)
	}
	return c, nil
}

// InsertFakeCharge stores c unless a row with its idempotency key already exists, and
// returns the row that holds the key: c when this call inserted it (inserted true), else the
// earlier one. The unique constraint decides, not a read before the write, so concurrent
// duplicates store exactly one row and every caller gets that row back.
func InsertFakeCharge(ctx context.Context, st *store.Store, c *FakeCharge) (stored *FakeCharge, inserted bool, err error) {
	err = st.InTx(ctx, func(tx *store.Tx) error { return insertFakeChargeTx(ctx, tx, c) })
	if err == nil {
		return c, true, nil
	}
	if !errors.Is(err, subprov.ErrDuplicate) {
		return nil, false, err
	}
	// The loser reads after its own transaction has rolled back: the winner has committed by
	// then (the unique index made the loser wait for it), so the row is visible.
	winner, err := fakeChargeByKey(ctx, st.R(), c.ProviderID, c.IdempotencyKey)
	if err != nil {
		return nil, false, fmt.Errorf("read the charge that holds the idempotency key: %w", err)
	}
	return winner, false, nil
}

// insertFakeChargeTx stores one charge, failed attempt or refund row. A duplicate
// idempotency key comes back as subprov.ErrDuplicate.
func insertFakeChargeTx(ctx context.Context, tx *store.Tx, c *FakeCharge) error {
	if _, err := tx.Exec(ctx, `INSERT INTO processor_charges (`+fakeChargeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.ProviderID, c.CustomerID, c.PaymentMethodID, c.IdempotencyKey, int64(c.Amount), c.Currency, c.Status,
		c.CreatedAt.UTC()); err != nil {
		return fmt.Errorf("insert processor charge %s: %w", c.ID, err)
	}
	return nil
}

// lockFakeCharge returns the provider's charge id, first taking its row lock on PostgreSQL
// (a no-op update) so that refunds of one charge run one after another and cannot together
// refund more than was charged. SQLite already serializes writers. subprov.ErrNotFound when it is not the
// provider's.
func lockFakeCharge(ctx context.Context, tx *store.Tx, providerID, id string) (*FakeCharge, error) {
	if _, err := tx.Exec(ctx, `UPDATE processor_charges SET status = status WHERE id = ? AND provider_id = ?`, id, providerID); err != nil {
		return nil, fmt.Errorf("lock processor charge %s: %w", id, err)
	}
	c, err := scanFakeCharge(tx.QueryRow(ctx, `SELECT `+fakeChargeColumns+`
		FROM processor_charges WHERE id = ? AND provider_id = ?`, id, providerID))
	if err != nil {
		return nil, fmt.Errorf("processor charge %s: %w", id, err)
	}
	return c, nil
}

// fakeRefundTotal sums the provider's refund rows whose idempotency key starts with
// keyPrefix (the caller puts the refunded charge's id in that prefix).
func fakeRefundTotal(ctx context.Context, tx *store.Tx, providerID, keyPrefix string) (subprov.Money, error) {
	var total int64
	// substr rather than LIKE: ids and keys may hold "_" and "%", which LIKE treats as wildcards.
	err := tx.QueryRow(ctx, `SELECT COALESCE(SUM(amount_minor), 0) FROM processor_charges
		WHERE provider_id = ? AND status = ? AND substr(idempotency_key, 1, ?) = ?`,
		providerID, FakeRefund, len([]rune(keyPrefix)), keyPrefix).Scan(&total)
	if err != nil {
		return 0, fmt.Errorf("refunded total: %w", err)
	}
	return subprov.Money(total), nil
}

// UpsertFakeCustomer writes a fake-processor customer and its payment methods in order.
func UpsertFakeCustomer(ctx context.Context, tx *store.Tx, id, providerID string, methods []FakeMethod, now time.Time) error {
	var def any
	if len(methods) > 0 {
		def = methods[0].ID
	}
	if _, err := tx.Exec(ctx, `INSERT INTO processor_customers (id, provider_id, default_payment_method_id, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, default_payment_method_id = excluded.default_payment_method_id`,
		id, providerID, def, now.UTC()); err != nil {
		return fmt.Errorf("upsert processor customer %s: %w", id, err)
	}
	for i, m := range methods {
		if _, err := tx.Exec(ctx, `INSERT INTO processor_payment_methods (id, customer_id, behaviour, brand, last4, position, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET customer_id = excluded.customer_id, behaviour = excluded.behaviour, position = excluded.position`,
			m.ID, id, m.Behaviour, "visa", m.Last4, i, now.UTC()); err != nil {
			return fmt.Errorf("upsert payment method %s: %w", m.ID, err)
		}
	}
	return nil
}

// FakeMethod is a fake-processor payment method as the fixture gives it.
type FakeMethod struct {
	ID        string
	Behaviour string // succeeds, declines, fails
	Last4     string
}
