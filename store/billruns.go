package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// StartBillRun records that an attempt of the bill run id began at now: the run's row is
// written by its first attempt and kept by every later one.
func (s *Store) StartBillRun(ctx context.Context, id, providerID, period string, now time.Time) error {
	return s.WriteOne(ctx, func(q Execer) error {
		_, err := q.Exec(ctx, `INSERT INTO bill_runs (id, provider_id, period, started_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			id, providerID, period, now.UTC())
		if err != nil {
			return fmt.Errorf("start bill run %s: %w", id, err)
		}
		return nil
	})
}

// CountBillRunInvoices adds n to the invoices of the bill run id, in the transaction that
// writes them: the count stands or falls with its batch, so an attempt killed after some of its
// batches committed leaves them counted.
func (tx *Tx) CountBillRunInvoices(ctx context.Context, id string, n int) error {
	if _, err := tx.Exec(ctx, `UPDATE bill_runs SET invoices = invoices + ? WHERE id = ?`, n, id); err != nil {
		return fmt.Errorf("count bill run %s invoices: %w", id, err)
	}
	return nil
}

// EndBillRun records the end of an attempt of the bill run id: either that the run finished at
// now or that the attempt failed (it is retried). Its invoices were counted with their batches.
func (s *Store) EndBillRun(ctx context.Context, id string, failed bool, now time.Time) error {
	return s.WriteOne(ctx, func(q Execer) error {
		var err error
		if failed {
			_, err = q.Exec(ctx, `UPDATE bill_runs SET failed = failed + 1 WHERE id = ?`, id)
		} else {
			_, err = q.Exec(ctx, `UPDATE bill_runs SET finished_at = ? WHERE id = ?`, now.UTC(), id)
		}
		if err != nil {
			return fmt.Errorf("end bill run %s: %w", id, err)
		}
		return nil
	})
}

// BillRunFilter narrows a list of bill runs; "" matches anything.
type BillRunFilter struct {
	ProviderID string // the reader's scope or the provider asked for
}

// BillRuns lists bill runs newest first, page.Limit+1 after the page's position (BillRunKey).
func (s *Store) BillRuns(ctx context.Context, f BillRunFilter, page subprov.Page) ([]*subprov.BillRun, error) {
	var where []string
	var args []any
	if f.ProviderID != "" {
		where, args = append(where, "provider_id = ?"), append(args, f.ProviderID)
	}
	w, a, err := newestFirstAfter(page, "started_at")
	if err != nil {
		return nil, err
	}
	where, args = append(where, w...), append(args, a...)
	q := `SELECT id, provider_id, period, started_at, finished_at, invoices, failed FROM bill_runs` + whereOf(where) +
		` ORDER BY started_at DESC, id DESC LIMIT ?`
	return sqltext.QueryAll(ctx, s.R(), "bill runs", func(r interface{ Scan(...any) error }) (*subprov.BillRun, error) {
		var b subprov.BillRun
		var finished nullTimeScan
		if err := r.Scan(&b.ID, &b.ProviderID, &b.Period, &b.StartedAt, &finished, &b.Invoices, &b.Failed); err != nil {
			return nil, err
		}
		b.FinishedAt = finished.ptr()
		return &b, nil
	}, q, append(args, page.Limit+1)...)
}

// BillRunKey is a bill run's position in its list's order, for the next page's cursor.
func BillRunKey(b *subprov.BillRun) []string { return TimeKey(b.StartedAt, b.ID) }

// TimeKey is the position of a row in a list ordered newest first by an instant and then by
// id: the cursor newestFirstAfter reads.
func TimeKey(at time.Time, id string) []string {
	return []string{at.UTC().Format(time.RFC3339Nano), id}
}

// newestFirstAfter is the condition selecting the rows after page's position in a list ordered
// by column (an instant) and id, both descending; none for the first page.
func newestFirstAfter(page subprov.Page, column string) ([]string, []any, error) {
	if page.First() {
		return nil, nil, nil
	}
	at, err := time.Parse(time.RFC3339Nano, page.After[0])
	if err != nil || len(page.After) != 2 {
		return nil, nil, subprov.Invalid(map[string]string{"cursor": "is not a cursor this list issued"})
	}
	return []string{"(" + column + " < ? OR (" + column + " = ? AND id < ?))"}, []any{at.UTC(), at.UTC(), page.After[1]}, nil
}

func whereOf(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}
