package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// Batch reads and writes of the monthly bill run: one statement per batch of lines instead of
// several per invoice, so a run over 100,000 lines is a few thousand round trips.

// inList returns "(?, ?, …)" with n markers.
func inList(n int) string { return "(" + sqltext.Placeholders(n) + ")" }

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// OpenAdjustmentsOfLines is OpenAdjustments for several lines at once, by line id.
func (s *Store) OpenAdjustmentsOfLines(ctx context.Context, q Querier, subscriptionIDs []string) (map[string][]subprov.Adjustment, error) {
	out := map[string][]subprov.Adjustment{}
	if len(subscriptionIDs) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT subscription_id, id, kind, description, unit_price_minor, days, days_in_period, amount_minor
		FROM billing_adjustments WHERE subscription_id IN `+inList(len(subscriptionIDs))+` AND consumed_at IS NULL
		ORDER BY created_at, id`, anyList(subscriptionIDs)...)
	if err != nil {
		return nil, fmt.Errorf("open adjustments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		var a subprov.Adjustment
		var unit, amount int64
		if err := rows.Scan(&line, &a.ID, &a.Kind, &a.Description, &unit, &a.Days, &a.DaysInPeriod, &amount); err != nil {
			return nil, fmt.Errorf("open adjustments: %w", err)
		}
		a.UnitPrice, a.Amount = subprov.Money(unit), subprov.Money(amount)
		out[line] = append(out[line], a)
	}
	return out, rows.Err()
}

// OpenCreditsOfLines is OpenCredits for several lines at once, by line id.
func (tx *Tx) OpenCreditsOfLines(ctx context.Context, subscriptionIDs []string) (map[string][]*subprov.CreditNote, error) {
	out := map[string][]*subprov.CreditNote{}
	if len(subscriptionIDs) == 0 {
		return out, nil
	}
	credits, err := listCredits(ctx, tx, `WHERE subscription_id IN `+inList(len(subscriptionIDs))+`
		AND state = 'open' AND remaining_minor > 0 ORDER BY created_at, number`, anyList(subscriptionIDs)...)
	if err != nil {
		return nil, err
	}
	for _, c := range credits {
		out[c.SubscriptionID] = append(out[c.SubscriptionID], c)
	}
	return out, nil
}

// CustomerNumbers returns the customer numbers of subscribers, by subscriber id ("" for none).
func (s *Store) CustomerNumbers(ctx context.Context, subscriberIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(subscriberIDs) == 0 {
		return out, nil
	}
	rows, err := s.R().Query(ctx, `SELECT id, COALESCE(customer_number, '') FROM subscribers WHERE id IN `+inList(len(subscriberIDs)),
		anyList(subscriberIDs)...)
	if err != nil {
		return nil, fmt.Errorf("customer numbers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, num string
		if err := rows.Scan(&id, &num); err != nil {
			return nil, fmt.Errorf("customer numbers: %w", err)
		}
		out[id] = num
	}
	return out, rows.Err()
}

// TakeDocumentSeq takes n consecutive values of a provider's document sequence (its invoices'
// and credit notes' numbers) and returns the first.
func (tx *Tx) TakeDocumentSeq(ctx context.Context, providerID string, n int) (int64, error) {
	var last int64
	if err := tx.QueryRow(ctx, `UPDATE providers SET document_seq = document_seq + ? WHERE id = ? RETURNING document_seq`, n, providerID).Scan(&last); err != nil {
		return 0, fmt.Errorf("take document numbers: %w", err)
	}
	return last - int64(n) + 1, nil
}

// insertRows runs INSERT INTO head VALUES (…), (…) … tail for rows of equal width, as many
// rows per statement as both engines' parameter limits allow; each returned row is scanned
// by scan when tail has RETURNING.
func (tx *Tx) insertRows(ctx context.Context, head, tail string, rows [][]any, scan func(rowScanner) error) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, 30000/len(rows[0]))
	one := inList(len(rows[0]))
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(" VALUES ")
		args := make([]any, 0, len(chunk)*len(chunk[0]))
		for i, r := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(one)
			args = append(args, r...)
		}
		b.WriteString(tail)
		if scan == nil {
			if _, err := tx.Exec(ctx, b.String(), args...); err != nil {
				return err
			}
			continue
		}
		res, err := tx.Query(ctx, b.String(), args...)
		if err != nil {
			return err
		}
		for res.Next() {
			if err := scan(res); err != nil {
				res.Close()
				return err
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		if err := res.Err(); err != nil {
			return err
		}
	}
	return nil
}

// InsertInvoices is InsertInvoice for a batch: each invoice with its lines and ledger document
// unless its line already has one of the same period, kind and occasion. inserted holds the ids
// of the invoices written.
func (tx *Tx) InsertInvoices(ctx context.Context, invs []subprov.IssuedInvoice, now time.Time) (inserted map[string]bool, err error) {
	inserted = map[string]bool{}
	rows := make([][]any, len(invs))
	for i, n := range invs {
		inv := n.Invoice
		rows[i] = []any{inv.ID, inv.ProviderID, nullStr(inv.SubscriberID), inv.SubscriptionID, inv.Number, nullStr(inv.CustomerNumber), inv.InvoiceDate,
			inv.Period, inv.Kind, inv.Occasion, inv.Status, int64(inv.Net), int64(inv.Tax), int64(inv.Total), inv.Currency, inv.InvoiceDate,
			nullTime(n.NextChargeAt), now.UTC()}
	}
	err = tx.insertRows(ctx, `INSERT INTO invoices (id, provider_id, subscriber_id, subscription_id, number, customer_number, invoice_date,
			period, kind, occasion, status, net_minor, tax_minor, total_minor, currency, due_date, next_charge_at, created_at)`,
		` ON CONFLICT DO NOTHING RETURNING id`, rows, func(r rowScanner) error {
			var id string
			err := r.Scan(&id)
			inserted[id] = true
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("insert invoices: %w", err)
	}
	var lines, docs [][]any
	for _, n := range invs {
		inv := n.Invoice
		if !inserted[inv.ID] {
			continue
		}
		for i, l := range n.Lines {
			var days, in any
			if l.DaysInPeriod > 0 {
				days, in = l.Days, l.DaysInPeriod
			}
			lines = append(lines, []any{NewOrderedID(), inv.ID, i, l.Kind, l.Description, int64(l.UnitPrice), days, in, int64(l.Amount)})
		}
		docs = append(docs, []any{NewOrderedID(), inv.ProviderID, nullStr(inv.SubscriberID), "invoice", inv.ID, inv.Status, int64(inv.Total), now.UTC()})
	}
	if err := tx.insertRows(ctx, `INSERT INTO invoice_lines (id, invoice_id, position, kind, description, unit_price_minor, days, days_in_period, amount_minor)`,
		"", lines, nil); err != nil {
		return nil, fmt.Errorf("insert invoice lines: %w", err)
	}
	if err := tx.insertRows(ctx, `INSERT INTO ledger_documents (id, provider_id, subscriber_id, kind, invoice_id, state, amount_minor, created_at)`,
		"", docs, nil); err != nil {
		return nil, fmt.Errorf("record invoices in the ledger: %w", err)
	}
	return inserted, nil
}
