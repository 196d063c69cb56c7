package store

import (
	"context"
	"fmt"

	"github.com/subprov/subprov/internal/sqltext"
)

// Overview is the operations surface's summary counts (package overview).
type Overview struct {
	Lines              map[string]int // by subscription status
	Installs           map[string]int // install jobs by state, those still to be done
	FailedProvisioning int
	FailingWebhooks    int
	OverdueInvoices    int
}

// OverviewQuery is what Overview counts: the provider ("" for every provider), the install
// job states still to be done, the workflow state of failed provisioning, the delivery state
// of a failed webhook event, an open invoice's status and today's date.
type OverviewQuery struct {
	ProviderID                                  string
	InstallStates                               []string
	FailedWorkflow, FailedDelivery, OpenInvoice string
	Today                                       string
}

// Overview counts, for one provider or every one, lines by status (kept as the lines are
// written: line_counts), install jobs in the states still to be done, lines whose provisioning
// failed, webhook events whose delivery failed, and open invoices dated before today.
func (s *Store) Overview(ctx context.Context, q OverviewQuery) (*Overview, error) {
	scope, args := "", []any{}
	if q.ProviderID != "" {
		scope, args = " AND provider_id = ?", []any{q.ProviderID}
	}
	states := make([]any, len(q.InstallStates))
	for i, st := range q.InstallStates {
		states[i] = st
	}
	o := &Overview{Lines: map[string]int{}, Installs: map[string]int{}}
	groups := []struct {
		into  map[string]int
		query string
		args  []any
	}{
		{o.Lines, `SELECT status, SUM(n) FROM line_counts WHERE 1 = 1` + scope + ` GROUP BY status HAVING SUM(n) > 0`, args},
		{o.Installs, `SELECT state, COUNT(*) FROM install_jobs WHERE state IN (` + sqltext.Placeholders(len(states)) + `)` + scope + ` GROUP BY state`,
			append(states, args...)},
	}
	for _, g := range groups {
		if err := countGroups(ctx, s.R(), g.into, g.query, g.args...); err != nil {
			return nil, fmt.Errorf("overview: %w", err)
		}
	}
	failed, failedArgs := failedProvisioningCount(q.FailedWorkflow, q.ProviderID)
	overdue, overdueArgs := s.Dialect.overdueCount(q.OpenInvoice, q.Today, q.ProviderID)
	counts := []struct {
		into  *int
		query string
		args  []any
	}{
		{&o.FailedProvisioning, failed, failedArgs},
		{&o.FailingWebhooks, `SELECT COUNT(*) FROM events WHERE delivery_state = ?` + scope, append([]any{q.FailedDelivery}, args...)},
		{&o.OverdueInvoices, overdue, overdueArgs},
	}
	for _, c := range counts {
		if err := s.R().QueryRow(ctx, c.query, c.args...).Scan(c.into); err != nil {
			return nil, fmt.Errorf("overview: %w", err)
		}
	}
	return o, nil
}

// InvoiceOpen is the status of an invoice not yet paid nor void (package billing's
// InvoiceOpen). The partial index invoices_open holds those invoices only, by provider and date:
// a statement reaches it by naming the status as a literal (equals).
const InvoiceOpen = "open"

// overdueCount is the count of the provider's ("": every provider's) open invoices dated
// before today, and its arguments: a range of the partial index of the open invoices
// (d.openInvoices).
func (d Dialect) overdueCount(openStatus, today, providerID string) (string, []any) {
	cond, args := equals("status", openStatus, InvoiceOpen)
	if providerID != "" {
		cond += " AND provider_id = ?"
		args = append(args, providerID)
	}
	table := "invoices"
	if openStatus == InvoiceOpen { // the literal the index's condition needs is in cond
		table = d.openInvoices()
	}
	return `SELECT COUNT(*) FROM ` + table + ` WHERE ` + cond + ` AND invoice_date < ?`, append(args, today)
}

// RecountLines counts every provider's lines by status afresh (line_counts), in one
// transaction: after a bulk load whose writes bypassed the triggers that keep the counts
// (subprov gen's on PostgreSQL).
func (s *Store) RecountLines(ctx context.Context) error {
	shard := "substr(id, -1)"
	if s.Dialect == Postgres {
		shard = "right(id, 1)"
	}
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM line_counts`); err != nil {
			return fmt.Errorf("recount lines: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO line_counts (provider_id, status, shard, n)
			SELECT provider_id, status, `+shard+`, COUNT(*) FROM subscriptions GROUP BY 1, 2, 3`)
		if err != nil {
			return fmt.Errorf("recount lines: %w", err)
		}
		return nil
	})
}

// failedProvisioningCount is the count of the provider's lines ("": every provider's) in the
// failed workflow state, and its arguments: a read of the state's partial index.
func failedProvisioningCount(failedWorkflow, providerID string) (string, []any) {
	cond, args := linesInWorkflowState(failedWorkflow, providerID)
	return `SELECT COUNT(*) FROM subscriptions WHERE ` + cond, args
}

// countGroups reads the (key, count) rows of a GROUP BY query into m.
func countGroups(ctx context.Context, q Querier, m map[string]int, query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		m[k] = n
	}
	return rows.Err()
}
