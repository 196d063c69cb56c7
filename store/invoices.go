package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// InsertInvoice stores an invoice with its lines unless the line already has one of the same
// period, kind and occasion (a bill run that runs twice invoices once, a reactivation is
// invoiced once); inserted says which.
func (tx *Tx) InsertInvoice(ctx context.Context, inv *subprov.Invoice, lines []subprov.InvoiceLine, nextChargeAt *time.Time, now time.Time) (bool, error) {
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO invoices (id, provider_id, subscriber_id, subscription_id, number, customer_number, invoice_date,
			period, kind, occasion, status, net_minor, tax_minor, total_minor, currency, due_date, next_charge_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		inv.ID, inv.ProviderID, nullStr(inv.SubscriberID), inv.SubscriptionID, inv.Number, nullStr(inv.CustomerNumber), inv.InvoiceDate,
		inv.Period, inv.Kind, inv.Occasion, inv.Status, int64(inv.Net), int64(inv.Tax), int64(inv.Total), inv.Currency, inv.InvoiceDate,
		nullTime(nextChargeAt), now.UTC()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("insert invoice: %w", err)
	}
	for i, l := range lines {
		var days, in any
		if l.DaysInPeriod > 0 {
			days, in = l.Days, l.DaysInPeriod
		}
		if _, err := tx.Exec(ctx, `INSERT INTO invoice_lines (id, invoice_id, position, kind, description, unit_price_minor, days, days_in_period, amount_minor)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, NewID(), inv.ID, i, l.Kind, l.Description, int64(l.UnitPrice), days, in, int64(l.Amount)); err != nil {
			return false, fmt.Errorf("insert invoice line: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ledger_documents (id, provider_id, subscriber_id, kind, invoice_id, state, amount_minor, created_at)
		VALUES (?, ?, ?, 'invoice', ?, ?, ?, ?)`, NewID(), inv.ProviderID, nullStr(inv.SubscriberID), inv.ID, inv.Status, int64(inv.Total), now.UTC()); err != nil {
		return false, fmt.Errorf("record invoice in the ledger: %w", err)
	}
	return true, nil
}

const invoiceColumns = `id, provider_id, COALESCE(subscriber_id, ''), subscription_id, number, COALESCE(customer_number, ''), invoice_date,
	period, kind, status, net_minor, tax_minor, total_minor, currency, paid_at, COALESCE(payment_intent, ''), created_at`

func scanInvoice(row interface{ Scan(...any) error }) (*subprov.Invoice, error) {
	var inv subprov.Invoice
	var net, tax, total int64
	var paid sql.NullTime
	if err := row.Scan(&inv.ID, &inv.ProviderID, &inv.SubscriberID, &inv.SubscriptionID, &inv.Number, &inv.CustomerNumber, &inv.InvoiceDate,
		&inv.Period, &inv.Kind, &inv.Status, &net, &tax, &total, &inv.Currency, &paid, &inv.PaymentIntent, &inv.CreatedAt); err != nil {
		return nil, err
	}
	inv.Net, inv.Tax, inv.Total, inv.PaidAt = subprov.Money(net), subprov.Money(tax), subprov.Money(total), timePtr(paid)
	return &inv, nil
}

func (s *Store) listInvoices(ctx context.Context, q Querier, where string, args ...any) ([]*subprov.Invoice, error) {
	return sqltext.QueryAll(ctx, q, "list invoices", scanInvoice, `SELECT `+invoiceColumns+` FROM invoices `+where, args...)
}

// Invoice returns one of a provider's invoices.
func (s *Store) Invoice(ctx context.Context, providerID, id string) (*subprov.Invoice, error) {
	inv, err := scanInvoice(s.R().QueryRow(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE provider_id = ? AND id = ?`, providerID, id))
	if err != nil {
		return nil, fmt.Errorf("invoice %s: %w", id, err)
	}
	return inv, nil
}

// InvoicesOfSubscription lists a line's invoices, newest first.
func (s *Store) InvoicesOfSubscription(ctx context.Context, subscriptionID string) ([]*subprov.Invoice, error) {
	return s.listInvoices(ctx, s.R(), `WHERE subscription_id = ? ORDER BY invoice_date DESC, created_at DESC`, subscriptionID)
}

// InvoicesOfSubscriber lists a subscriber's invoices by invoice_date, newest first.
func (s *Store) InvoicesOfSubscriber(ctx context.Context, providerID, subscriberID string) ([]*subprov.Invoice, error) {
	return s.listInvoices(ctx, s.R(), `WHERE provider_id = ? AND subscriber_id = ? ORDER BY invoice_date DESC, created_at DESC`, providerID, subscriberID)
}

// InvoiceLines returns an invoice's lines in order.
func (s *Store) InvoiceLines(ctx context.Context, invoiceID string) ([]subprov.InvoiceLine, error) {
	rows, err := s.R().Query(ctx, `SELECT kind, description, unit_price_minor, COALESCE(days, 0), COALESCE(days_in_period, 0), amount_minor
		FROM invoice_lines WHERE invoice_id = ? ORDER BY position`, invoiceID)
	if err != nil {
		return nil, fmt.Errorf("invoice lines: %w", err)
	}
	defer rows.Close()
	var out []subprov.InvoiceLine
	for rows.Next() {
		var l subprov.InvoiceLine
		var unit, amount int64
		if err := rows.Scan(&l.Kind, &l.Description, &unit, &l.Days, &l.DaysInPeriod, &amount); err != nil {
			return nil, err
		}
		l.UnitPrice, l.Amount = subprov.Money(unit), subprov.Money(amount)
		out = append(out, l)
	}
	return out, rows.Err()
}

// RecordCharge stores an attempt once per idempotency key; the invoice becomes paid when it
// succeeded, else its next attempt is scheduled (nil: no more attempts), except after a
// declined pay-now, which leaves the schedule as it was.
func (tx *Tx) RecordCharge(ctx context.Context, c subprov.ChargeAttempt, next *time.Time, now time.Time) (bool, error) {
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO charges (id, provider_id, invoice_id, idempotency_key, amount_minor, status, processor_ref, failure_code, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		NewID(), c.ProviderID, c.InvoiceID, c.IdempotencyKey, int64(c.Amount), c.Status, nullStr(c.ProcessorRef), nullStr(c.FailureCode), now.UTC()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record charge: %w", err)
	}
	payNow := 0
	if c.PayNow {
		payNow = 1
	}
	switch {
	case c.Status == "succeeded":
		_, err = tx.Exec(ctx, `UPDATE invoices SET status = 'paid', paid_at = ?, payment_intent = ?, next_charge_at = NULL, charge_queued_at = NULL, remind_at = NULL,
			charge_attempts = charge_attempts + 1, pay_now_attempts = pay_now_attempts + ? WHERE id = ?`, now.UTC(), c.ProcessorRef, payNow, c.InvoiceID)
		if err == nil {
			_, err = tx.Exec(ctx, `UPDATE ledger_documents SET state = 'paid' WHERE invoice_id = ?`, c.InvoiceID)
		}
	case c.PayNow: // the holder's declined payment: AutoPay's schedule stays as it was
		_, err = tx.Exec(ctx, `UPDATE invoices SET charge_attempts = charge_attempts + 1, pay_now_attempts = pay_now_attempts + 1,
			charge_queued_at = NULL WHERE id = ?`, c.InvoiceID)
	default:
		_, err = tx.Exec(ctx, `UPDATE invoices SET charge_attempts = charge_attempts + 1, next_charge_at = ?, charge_queued_at = NULL WHERE id = ?`,
			nullTime(next), c.InvoiceID)
	}
	if err != nil {
		return false, fmt.Errorf("settle invoice: %w", err)
	}
	return true, nil
}

// LockUnpaidInvoices reads a line's open invoices for update, oldest first.
func (tx *Tx) LockUnpaidInvoices(ctx context.Context, subscriptionID string) ([]subprov.UnpaidInvoice, error) {
	return sqltext.QueryAll(ctx, tx, "unpaid invoices", func(row rowScanner) (subprov.UnpaidInvoice, error) {
		var u subprov.UnpaidInvoice
		var total int64
		err := row.Scan(&u.ID, &total, &u.Attempted)
		u.Total = subprov.Money(total)
		return u, err
	}, `SELECT id, total_minor, charge_queued_at IS NOT NULL FROM invoices WHERE subscription_id = ? AND status = 'open'
		ORDER BY invoice_date, created_at, id`+tx.d.ForUpdate(), subscriptionID)
}

// DeductFromInvoice takes a credit off an open invoice: line (a negative amount) is added to
// its lines and to its total, and an invoice left at zero is paid, with nothing more to charge.
func (tx *Tx) DeductFromInvoice(ctx context.Context, invoiceID string, line subprov.InvoiceLine, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO invoice_lines (id, invoice_id, position, kind, description, unit_price_minor, amount_minor)
		SELECT ?, ?, COALESCE(MAX(position) + 1, 0), ?, ?, ?, ? FROM invoice_lines WHERE invoice_id = ?`,
		NewID(), invoiceID, line.Kind, line.Description, int64(line.UnitPrice), int64(line.Amount), invoiceID); err != nil {
		return fmt.Errorf("deduct from invoice %s: %w", invoiceID, err)
	}
	_, err := tx.Exec(ctx, `UPDATE invoices SET total_minor = total_minor + ?,
			status = CASE WHEN total_minor + ? <= 0 THEN 'paid' ELSE status END,
			paid_at = CASE WHEN total_minor + ? <= 0 THEN ? ELSE paid_at END,
			next_charge_at = CASE WHEN total_minor + ? <= 0 THEN NULL ELSE next_charge_at END,
			remind_at = CASE WHEN total_minor + ? <= 0 THEN NULL ELSE remind_at END
		WHERE id = ? AND status = 'open'`,
		int64(line.Amount), int64(line.Amount), int64(line.Amount), now.UTC(), int64(line.Amount), int64(line.Amount), invoiceID)
	if err == nil {
		_, err = tx.Exec(ctx, `UPDATE ledger_documents SET amount_minor = (SELECT total_minor FROM invoices WHERE id = ?),
			state = (SELECT status FROM invoices WHERE id = ?) WHERE invoice_id = ?`, invoiceID, invoiceID, invoiceID)
	}
	if err != nil {
		return fmt.Errorf("deduct from invoice %s: %w", invoiceID, err)
	}
	return nil
}

// LockInvoice reads an invoice for update with its attempt count, its claim and its dunning
// reminders.
func (tx *Tx) LockInvoice(ctx context.Context, id string) (*subprov.InvoiceChargeState, error) {
	var st subprov.InvoiceChargeState
	row := tx.QueryRow(ctx, `SELECT `+invoiceColumns+`, charge_attempts, pay_now_attempts, charge_queued_at, reminders, remind_at
		FROM invoices WHERE id = ?`+tx.d.ForUpdate(), id)
	var inv subprov.Invoice
	var net, tax, total int64
	var paid, claimed, remind sql.NullTime
	if err := row.Scan(&inv.ID, &inv.ProviderID, &inv.SubscriberID, &inv.SubscriptionID, &inv.Number, &inv.CustomerNumber, &inv.InvoiceDate,
		&inv.Period, &inv.Kind, &inv.Status, &net, &tax, &total, &inv.Currency, &paid, &inv.PaymentIntent, &inv.CreatedAt, &st.Attempts, &st.PayNow,
		&claimed, &st.Reminders, &remind); err != nil {
		return nil, fmt.Errorf("lock invoice %s: %w", id, err)
	}
	inv.Net, inv.Tax, inv.Total, inv.PaidAt = subprov.Money(net), subprov.Money(tax), subprov.Money(total), timePtr(paid)
	st.Invoice, st.ClaimedAt, st.RemindAt = &inv, timePtr(claimed), timePtr(remind)
	return &st, nil
}

// DueCharges lists open invoices whose next AutoPay attempt is due and not claimed, a claim
// taken at or before staleBefore counting as none.
func (s *Store) DueCharges(ctx context.Context, now, staleBefore time.Time, limit int) ([]string, error) {
	return QueryStrings(ctx, s.R(), "due charges", `SELECT id FROM invoices WHERE status = 'open' AND next_charge_at <= ?
		AND (charge_queued_at IS NULL OR charge_queued_at <= ?) ORDER BY next_charge_at LIMIT ?`, now.UTC(), staleBefore.UTC(), limit)
}

// ClaimCharge marks an invoice's attempt under way at now; false if a claim taken after
// staleBefore holds it (another sweep, another click).
func (tx *Tx) ClaimCharge(ctx context.Context, id string, now, staleBefore time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE invoices SET charge_queued_at = ? WHERE id = ? AND (charge_queued_at IS NULL OR charge_queued_at <= ?)
		AND status = 'open'`, now.UTC(), id, staleBefore.UTC())
	if err != nil {
		return false, fmt.Errorf("claim charge: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RecurringCandidates reads a page of a provider's platform-billed lines, in id order after
// afterID, and returns those that may owe period's recurring invoice: billing day up to
// dayOfMonth, not ended before periodEnd, and without an invoice that bills the period yet.
// last is the id of the page's last line, "" once no line is left: the next page starts
// after it, also when every line of this one was invoiced already. Billing decides which
// candidates owe the invoice; this only keeps the bill run from reading every line the
// provider ever had.
func (s *Store) RecurringCandidates(ctx context.Context, providerID, period string, dayOfMonth int, periodEnd time.Time, afterID string, limit int) (candidates []*subprov.Subscription, last string, err error) {
	page, err := listSubscriptions(ctx, s.R(), "recurring candidates", recurringPage, providerID, dayOfMonth, periodEnd.UTC(), afterID, limit)
	if err != nil || len(page) == 0 {
		return nil, "", err
	}
	ids := make([]string, len(page))
	for i, sub := range page {
		ids[i] = sub.ID
	}
	invoiced, err := sqltext.Strings(ctx, s.R(), "lines invoiced for the period", periodInvoicedOf(len(ids)), append(anyList(ids), period)...)
	if err != nil {
		return nil, "", err
	}
	done := make(map[string]bool, len(invoiced))
	for _, id := range invoiced {
		done[id] = true
	}
	for _, sub := range page {
		if !done[sub.ID] {
			candidates = append(candidates, sub)
		}
	}
	return candidates, page[len(page)-1].ID, nil
}

// recurringPage is the page of RecurringCandidates: a range of subscriptions_platform_billed.
// The lines invoiced already are taken out by a second statement and not by an anti-join,
// whose plan could read every invoice on each page (docs/performance.md, "The bill run").
const recurringPage = `WHERE s.provider_id = ? AND s.billing_owner = 'platform'
		AND s.billing_day <= ? AND (s.ended_at IS NULL OR s.ended_at >= ?) AND s.id > ?
	ORDER BY s.id LIMIT ?`

// periodInvoicedOf reads which of n lines have an invoice that bills a period (monthKinds),
// each through invoices_once_per_occasion.
func periodInvoicedOf(n int) string {
	return `SELECT DISTINCT subscription_id FROM invoices WHERE subscription_id IN ` + inList(n) + `
		AND period = ? AND kind IN (` + monthKinds + `)`
}

// SubscriberForInvoice returns what an invoice prints about its subscriber.
func (tx *Tx) SubscriberForInvoice(ctx context.Context, subscriberID string) (customerNumber, email string, err error) {
	var num sql.NullString
	err = tx.QueryRow(ctx, `SELECT s.customer_number, COALESCE(c.email, s.email) FROM subscribers s
		LEFT JOIN contacts c ON c.subscriber_id = s.id AND c.role = 'invoice' WHERE s.id = ?`, subscriberID).Scan(&num, &email)
	if err != nil {
		return "", "", fmt.Errorf("subscriber for invoice: %w", err)
	}
	return num.String, email, nil
}

// SetSuspendedFor records why a line is suspended ("" when not).
func (tx *Tx) SetSuspendedFor(ctx context.Context, id, reason string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE subscriptions SET suspended_for = ?, updated_at = ? WHERE id = ?`, reason, now.UTC(), id)
	if err != nil {
		return fmt.Errorf("set suspension reason: %w", err)
	}
	return nil
}

// SuspendedFor returns why a line is suspended.
func (tx *Tx) SuspendedFor(ctx context.Context, id string) (string, error) {
	var r string
	err := tx.QueryRow(ctx, `SELECT suspended_for FROM subscriptions WHERE id = ?`, id).Scan(&r)
	return r, err
}

// OpenInvoicesOf counts a line's unpaid invoices.
func (tx *Tx) OpenInvoicesOf(ctx context.Context, subscriptionID string) (int, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND status = 'open'`, subscriptionID).Scan(&n)
	return n, err
}

// ParkCharge releases an open invoice's queued AutoPay attempt without recording one and
// without scheduling another (nothing could be charged); false when the claim is gone, as
// ScheduleCharge releases it to make the invoice due again.
func (tx *Tx) ParkCharge(ctx context.Context, id string) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE invoices SET next_charge_at = NULL, charge_queued_at = NULL
		WHERE id = ? AND status = 'open' AND charge_queued_at IS NOT NULL`, id)
	if err != nil {
		return false, fmt.Errorf("park charge: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ScheduleCharge makes an open invoice's next AutoPay attempt due at t.
func (tx *Tx) ScheduleCharge(ctx context.Context, id string, t time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE invoices SET next_charge_at = ?, charge_queued_at = NULL WHERE id = ? AND status = 'open'`, t.UTC(), id)
	if err != nil {
		return fmt.Errorf("schedule charge: %w", err)
	}
	return nil
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
