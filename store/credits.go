package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// InsertCreditNote stores a credit note and its billing-system document. The note keeps its
// subscriber's customer number of the moment (read in the same statement), as an invoice does.
func (tx *Tx) InsertCreditNote(ctx context.Context, cn *subprov.CreditNote, now time.Time) error {
	err := tx.QueryRow(ctx, `INSERT INTO credit_notes (id, provider_id, subscriber_id, subscription_id, invoice_id, number, state, reason,
			amount_minor, remaining_minor, currency, created_at, state_changed_at, customer_number)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT customer_number FROM subscribers WHERE id = ?))
		RETURNING COALESCE(customer_number, '')`, cn.ID, cn.ProviderID, nullStr(cn.SubscriberID), nullStr(cn.SubscriptionID),
		nullStr(cn.InvoiceID), cn.Number, cn.State, cn.Reason, int64(cn.Amount), int64(cn.Remaining), cn.Currency, now.UTC(), now.UTC(),
		nullStr(cn.SubscriberID)).Scan(&cn.CustomerNumber)
	if err != nil {
		return fmt.Errorf("insert credit note: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ledger_documents (id, provider_id, subscriber_id, kind, credit_note_id, state, amount_minor, created_at)
		VALUES (?, ?, ?, 'credit_note', ?, ?, ?, ?)`, NewID(), cn.ProviderID, nullStr(cn.SubscriberID), cn.ID, cn.State, int64(cn.Amount), now.UTC()); err != nil {
		return fmt.Errorf("record credit note in the ledger: %w", err)
	}
	return nil
}

const creditColumns = `id, provider_id, COALESCE(subscriber_id, ''), COALESCE(subscription_id, ''), COALESCE(invoice_id, ''), number, state,
	reason, amount_minor, remaining_minor, currency, created_at, COALESCE(customer_number, '')`

func scanCredit(row interface{ Scan(...any) error }) (*subprov.CreditNote, error) {
	var c subprov.CreditNote
	var amount, remaining int64
	if err := row.Scan(&c.ID, &c.ProviderID, &c.SubscriberID, &c.SubscriptionID, &c.InvoiceID, &c.Number, &c.State, &c.Reason,
		&amount, &remaining, &c.Currency, &c.CreatedAt, &c.CustomerNumber); err != nil {
		return nil, err
	}
	c.Amount, c.Remaining = subprov.Money(amount), subprov.Money(remaining)
	return &c, nil
}

func listCredits(ctx context.Context, q Querier, where string, args ...any) ([]*subprov.CreditNote, error) {
	return sqltext.QueryAll(ctx, q, "list credit notes", scanCredit, `SELECT `+creditColumns+` FROM credit_notes `+where, args...)
}

// OpenCredits lists a line's open credit notes with money left, oldest first, through q (a
// transaction, or the read pool for quotes).
func (s *Store) OpenCredits(ctx context.Context, q Querier, subscriptionID string) ([]*subprov.CreditNote, error) {
	return listCredits(ctx, q, `WHERE subscription_id = ? AND state = 'open' AND remaining_minor > 0 ORDER BY created_at, number`, subscriptionID)
}

// listedCredit is the condition on a credit note the billing system shows: never a draft, an
// archived or a voided note.
const listedCredit = `state IN ('open', 'refunded', 'paid_out', 'applied')`

// ListedCredits lists a subscriber's credit notes as the billing system shows them: newest
// first, never drafts, archived or voided notes.
func (s *Store) ListedCredits(ctx context.Context, providerID, subscriberID string) ([]*subprov.CreditNote, error) {
	return listCredits(ctx, s.R(), `WHERE provider_id = ? AND subscriber_id = ? AND `+listedCredit+`
		ORDER BY created_at DESC, number DESC`, providerID, subscriberID)
}

// ListedCreditsOfInvoice lists the credit notes issued against an invoice as the billing
// system shows them (ListedCredits), newest first.
func (s *Store) ListedCreditsOfInvoice(ctx context.Context, invoiceID string) ([]*subprov.CreditNote, error) {
	return listCredits(ctx, s.R(), `WHERE invoice_id = ? AND `+listedCredit+` ORDER BY created_at DESC, number DESC`, invoiceID)
}

// CreditNoteByID returns any provider's credit note (the caller checks scope).
func (s *Store) CreditNoteByID(ctx context.Context, id string) (*subprov.CreditNote, error) {
	c, err := scanCredit(s.R().QueryRow(ctx, `SELECT `+creditColumns+` FROM credit_notes WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("credit note %s: %w", id, err)
	}
	return c, nil
}

// CreditNote returns one of a provider's credit notes.
func (s *Store) CreditNote(ctx context.Context, providerID, id string) (*subprov.CreditNote, error) {
	c, err := scanCredit(s.R().QueryRow(ctx, `SELECT `+creditColumns+` FROM credit_notes WHERE provider_id = ? AND id = ?`, providerID, id))
	if err != nil {
		return nil, fmt.Errorf("credit note %s: %w", id, err)
	}
	return c, nil
}

// SpendCredit takes amount off a credit note; the note becomes state when nothing is left.
func (tx *Tx) SpendCredit(ctx context.Context, id string, amount subprov.Money, state, invoiceID string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE credit_notes SET remaining_minor = remaining_minor - ?,
			state = CASE WHEN remaining_minor - ? <= 0 THEN ? ELSE state END,
			applied_to_invoice_id = COALESCE(?, applied_to_invoice_id), state_changed_at = ? WHERE id = ?`,
		int64(amount), int64(amount), state, nullStr(invoiceID), now.UTC(), id)
	if err == nil {
		_, err = tx.Exec(ctx, `UPDATE ledger_documents SET state = (SELECT state FROM credit_notes WHERE id = ?) WHERE credit_note_id = ?`, id, id)
	}
	if err != nil {
		return fmt.Errorf("spend credit note %s: %w", id, err)
	}
	return nil
}

// OpenAdjustments lists a line's adjustments not yet on an invoice.
func (s *Store) OpenAdjustments(ctx context.Context, q Querier, subscriptionID string) ([]subprov.Adjustment, error) {
	rows, err := q.Query(ctx, `SELECT id, kind, description, unit_price_minor, days, days_in_period, amount_minor FROM billing_adjustments
		WHERE subscription_id = ? AND consumed_at IS NULL ORDER BY created_at, id`, subscriptionID)
	if err != nil {
		return nil, fmt.Errorf("open adjustments: %w", err)
	}
	defer rows.Close()
	var out []subprov.Adjustment
	for rows.Next() {
		var a subprov.Adjustment
		var unit, amount int64
		if err := rows.Scan(&a.ID, &a.Kind, &a.Description, &unit, &a.Days, &a.DaysInPeriod, &amount); err != nil {
			return nil, err
		}
		a.UnitPrice, a.Amount = subprov.Money(unit), subprov.Money(amount)
		out = append(out, a)
	}
	return out, rows.Err()
}

// InsertAdjustment stores an adjustment for a line's next invoice (or next correction).
func (tx *Tx) InsertAdjustment(ctx context.Context, providerID, subscriptionID string, a subprov.Adjustment, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO billing_adjustments (id, provider_id, subscription_id, kind, description, unit_price_minor, days,
		days_in_period, amount_minor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, NewID(), providerID, subscriptionID, a.Kind,
		a.Description, int64(a.UnitPrice), a.Days, a.DaysInPeriod, int64(a.Amount), now.UTC())
	if err != nil {
		return fmt.Errorf("insert adjustment: %w", err)
	}
	return nil
}

// ConsumeAdjustments marks adjustments used (by invoiceID, or "" when folded elsewhere).
func (tx *Tx) ConsumeAdjustments(ctx context.Context, ids []string, invoiceID string, now time.Time) error {
	return tx.consumeAdjustments(ctx, ids, "invoice_id", nullStr(invoiceID), now)
}

// ConsumeAdjustmentsByCredit marks adjustments used by a credit note: netted against a
// cancellation's credit for the unused days instead of billed on an invoice.
func (tx *Tx) ConsumeAdjustmentsByCredit(ctx context.Context, ids []string, creditNoteID string, now time.Time) error {
	return tx.consumeAdjustments(ctx, ids, "credit_note_id", creditNoteID, now)
}

// consumeAdjustments marks open adjustments used by the document in column. One that another
// transaction used meanwhile (a bill run and a cancellation of the same line read it open at
// once) fails this one, which writes nothing, rather than bill it twice.
func (tx *Tx) consumeAdjustments(ctx context.Context, ids []string, column string, document any, now time.Time) error {
	for _, id := range ids {
		res, err := tx.Exec(ctx, `UPDATE billing_adjustments SET consumed_at = ?, `+column+` = ? WHERE id = ? AND consumed_at IS NULL`, now.UTC(), document, id)
		if err != nil {
			return fmt.Errorf("consume adjustment: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("consume adjustment: %w", err)
		} else if n != 1 {
			return fmt.Errorf("consume adjustment %s: used meanwhile by another document", id)
		}
	}
	return nil
}

// ReopenAdjustmentsOfCredit puts back the adjustments a voided credit note had used: the
// line's next invoice carries them again.
func (tx *Tx) ReopenAdjustmentsOfCredit(ctx context.Context, creditNoteID string) error {
	if _, err := tx.Exec(ctx, `UPDATE billing_adjustments SET consumed_at = NULL, credit_note_id = NULL WHERE credit_note_id = ?`, creditNoteID); err != nil {
		return fmt.Errorf("reopen adjustments of credit note %s: %w", creditNoteID, err)
	}
	return nil
}

// monthKinds are the kinds of invoice that bill a line's month: once a line has one for a
// period, the bill run issues it no recurring invoice for that period (RecurringCandidates), and the
// month counts as invoiced (PeriodInvoice). A reactivation invoice bills the rest of a month,
// whose days before it were billed already or not served.
const monthKinds = `'recurring', 'first', 'reactivation'`

// PeriodInvoice returns the invoice that billed a line's month (monthKinds), the first one
// issued, if any.
func (s *Store) PeriodInvoice(ctx context.Context, q Querier, subscriptionID, period string) (*subprov.Invoice, error) {
	inv, err := scanInvoice(q.QueryRow(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE subscription_id = ? AND period = ?
		AND kind IN (`+monthKinds+`) ORDER BY created_at LIMIT 1`, subscriptionID, period))
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// LedgerHasInvoice reports whether the billing system holds the document of an invoice.
func (s *Store) LedgerHasInvoice(ctx context.Context, q Querier, invoiceID string) (bool, error) {
	var n int
	if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM ledger_documents WHERE invoice_id = ?`, invoiceID).Scan(&n); err != nil {
		return false, fmt.Errorf("ledger document: %w", err)
	}
	return n > 0, nil
}

// CancellationCredits lists the credit notes a line's cancellation issued (reason
// cancellation, created at or after canceledAt), oldest first.
func (tx *Tx) CancellationCredits(ctx context.Context, subscriptionID string, canceledAt time.Time) ([]*subprov.CreditNote, error) {
	return listCredits(ctx, tx, `WHERE subscription_id = ? AND reason = 'cancellation' AND created_at >= ? ORDER BY created_at, number`,
		subscriptionID, canceledAt.UTC())
}

// VoidCredit voids an open credit note (nothing of it was refunded or applied).
func (tx *Tx) VoidCredit(ctx context.Context, id string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE credit_notes SET state = 'voided', remaining_minor = 0, state_changed_at = ? WHERE id = ? AND state = 'open'`, now.UTC(), id)
	if err == nil {
		_, err = tx.Exec(ctx, `UPDATE ledger_documents SET state = 'voided' WHERE credit_note_id = ?`, id)
	}
	if err != nil {
		return fmt.Errorf("void credit note %s: %w", id, err)
	}
	return nil
}
