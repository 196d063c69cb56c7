package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// SQL of portal orders and reactivation: the caller's lines, what holds a suite, and the
// undoing of a cancellation.

// PortIDOfUnit returns the port wired to a suite, or "" when the suite has none.
func (s *Store) PortIDOfUnit(ctx context.Context, unitID string) (string, error) {
	var id string
	err := s.R().QueryRow(ctx, `SELECT id FROM ports WHERE unit_id = ? ORDER BY id LIMIT 1`, unitID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("port of unit %s: %w", unitID, err)
	}
	return id, nil
}

// UnitHeldByOther reports whether a line other than exceptID holds the suite (holdsPlace):
// pending, running or suspended, or cancelled and not yet deprovisioned.
func (s *Store) UnitHeldByOther(ctx context.Context, unitID, exceptID string) (bool, error) {
	var n int
	err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM subscriptions s WHERE s.unit_id = ? AND s.id <> ? AND `+holdsPlace,
		unitID, exceptID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("suite %s held: %w", unitID, err)
	}
	return n > 0, nil
}

// LatestCancelled returns a subscriber's most recently cancelled line.
func (s *Store) LatestCancelled(ctx context.Context, providerID, subscriberID string) (*subprov.Subscription, error) {
	sub, err := scanSubscription(s.R().QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s
		WHERE s.provider_id = ? AND s.subscriber_id = ? AND s.status = 'CANCELLED' ORDER BY s.canceled_at DESC, s.id LIMIT 1`,
		providerID, subscriberID))
	if err != nil {
		return nil, fmt.Errorf("latest cancelled line: %w", err)
	}
	return sub, nil
}

// UnpaidInvoices counts a subscriber's open invoices, leaving out the final invoice of the line
// exceptFinalOf ("" for none): withdrawing that line's cancellation voids it.
func (s *Store) UnpaidInvoices(ctx context.Context, providerID, subscriberID, exceptFinalOf string) (int, error) {
	var n int
	err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM invoices WHERE provider_id = ? AND subscriber_id = ? AND status = 'open'
		AND NOT (kind = 'final' AND subscription_id = ?)`, providerID, subscriberID, exceptFinalOf).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("unpaid invoices: %w", err)
	}
	return n, nil
}

// ReinstateSubscription undoes a line's cancellation: canceled_at, ended_at, the reason and
// the deprovisioner's marks are cleared, so a later cancellation runs from scratch.
func (tx *Tx) ReinstateSubscription(ctx context.Context, id string, r subprov.Reinstatement, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE subscriptions SET status = ?, workflow_state = ?, canceled_at = NULL, ended_at = NULL,
			cancel_reason = '', status_before_cancel = '', deprovision_queued_at = NULL, deprovisioned_at = NULL,
			port_id = COALESCE(?, port_id), vlan = COALESCE(?, vlan), activated_at = COALESCE(?, activated_at),
			started_at = COALESCE(?, started_at), requested_start_date = COALESCE(?, requested_start_date), updated_at = ?
		WHERE id = ? AND status = 'CANCELLED'`,
		string(r.Status), r.WorkflowState, ptrArg(r.PortID), ptrArg(r.VLAN), nullTime(r.ActivatedAt), ptrArg(r.StartedAt),
		ptrArg(r.RequestedStartDate), now.UTC(), id)
	if err != nil {
		return fmt.Errorf("reinstate subscription %s: %w", id, err)
	}
	return nil
}

func ptrArg[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// SetActivation records that a new line is live from now (a portal order charged at once).
func (tx *Tx) SetActivation(ctx context.Context, id string, activatedAt time.Time, startedOn string) error {
	if _, err := tx.Exec(ctx, `UPDATE subscriptions SET activated_at = ?, started_at = ? WHERE id = ?`, activatedAt.UTC(), startedOn, id); err != nil {
		return fmt.Errorf("activate subscription %s: %w", id, err)
	}
	return nil
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

// CancellationFinalInvoice returns the final invoice a cancellation issued (occasion names
// the cancellation, billing.CancellationOccasion) and its status; "" when there is none.
func (tx *Tx) CancellationFinalInvoice(ctx context.Context, subscriptionID, occasion string) (id, status string, err error) {
	err = tx.QueryRow(ctx, `SELECT id, status FROM invoices WHERE subscription_id = ? AND kind = 'final' AND occasion = ?`,
		subscriptionID, occasion).Scan(&id, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("final invoice of the cancellation: %w", err)
	}
	return id, status, nil
}

// VoidUntouchedInvoice voids an unpaid invoice that nothing has acted on yet: no AutoPay
// attempt claimed (ClaimCharge, the only way an open invoice is charged, claims it first, so a
// void and a charge exclude each other), no credit note or plan-change adjustment spent on it
// (voiding would lose them). It reports whether it voided the invoice.
func (tx *Tx) VoidUntouchedInvoice(ctx context.Context, id string) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE invoices SET status = 'void', next_charge_at = NULL WHERE id = ? AND status = 'open' AND charge_queued_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM credit_notes c WHERE c.applied_to_invoice_id = invoices.id)
		AND NOT EXISTS (SELECT 1 FROM billing_adjustments a WHERE a.invoice_id = invoices.id)`, id)
	if err != nil {
		return false, fmt.Errorf("void invoice %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE ledger_documents SET state = 'void' WHERE invoice_id = ?`, id); err != nil {
		return false, fmt.Errorf("void invoice %s: %w", id, err)
	}
	return true, nil
}
