package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/store"
)

// ErrBillingSystemUnavailable means the provider's billing system did not answer.
var ErrBillingSystemUnavailable = errors.New("billing system unavailable")

// Ledger is the provider's billing system: the documents behind local invoice rows, credit
// notes read live, and the customer's billing contact. The built-in one lives in the service's
// database; the dev fault billing_system=down makes it unreachable like a remote one.
type Ledger interface {
	CreditNotes(ctx context.Context, p *subprov.Provider, subscriberID string) ([]*subprov.CreditNote, error)
	SyncContact(ctx context.Context, p *subprov.Provider, subscriberID string, c subprov.Contact) error
	RescheduleNextInvoice(ctx context.Context, p *subprov.Provider, subscriptionID string, on time.Time) error
}

// BuiltinLedger is the billing system kept in the service's own database.
type BuiltinLedger struct {
	Store  *store.Store
	Faults *faults.Switches
}

func (l *BuiltinLedger) up() error {
	if l.Faults.Is("billing_system", "down") {
		return fmt.Errorf("%w: fault injected", ErrBillingSystemUnavailable)
	}
	return nil
}

// CreditNotes lists a subscriber's credit notes newest first, never drafts, archived or voided.
func (l *BuiltinLedger) CreditNotes(ctx context.Context, p *subprov.Provider, subscriberID string) ([]*subprov.CreditNote, error) {
	if err := l.up(); err != nil {
		return nil, err
	}
	return l.Store.ListedCredits(ctx, p.ID, subscriberID)
}

// SyncContact records the billing contact in the billing system.
func (l *BuiltinLedger) SyncContact(ctx context.Context, p *subprov.Provider, subscriberID string, c subprov.Contact) error {
	return l.up()
}

// RescheduleNextInvoice moves the date the next recurring invoice is sent. The built-in bill run
// reads billing_day itself, so only reachability matters here.
func (l *BuiltinLedger) RescheduleNextInvoice(ctx context.Context, p *subprov.Provider, subscriptionID string, on time.Time) error {
	return l.up()
}

// IssueCredit writes an open credit note of gross amount for a line (plan-change downgrade,
// cancellation, operator credit); it is applied to the next invoice or refunded.
func (s *Service) IssueCredit(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, amount subprov.Money,
	reason, invoiceID string, now time.Time) (*subprov.CreditNote, error) {
	number, err := documentNumber(ctx, tx, p.ID, CreditNotePrefix)
	if err != nil {
		return nil, err
	}
	cn := &subprov.CreditNote{ID: store.NewID(), ProviderID: p.ID, SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID, InvoiceID: invoiceID,
		Number: number, State: subprov.CreditOpen, Reason: reason, Amount: amount, Remaining: amount, Currency: p.Currency, CreatedAt: now}
	if err := tx.InsertCreditNote(ctx, cn, now); err != nil {
		return nil, err
	}
	e := subprov.NewAudit(ctx, p.ID, "credit_note.issued", "credit_note", cn.ID)
	e.Actor, e.Reason = subprov.ActorNamed(ctx, "billing"), reason
	e.Changes = subprov.Changes{"amount": {nil, amount.String()}, "subscription_id": {nil, sub.ID}}
	if invoiceID != "" {
		e.Changes["invoice_id"] = [2]any{nil, invoiceID}
	}
	e.Details = fmt.Sprintf(`{"credit_note_id":%q,"amount":"%s","reason":%q}`, cn.ID, amount, reason)
	return cn, tx.RecordAudit(ctx, e, now)
}
