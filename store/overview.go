package store

import (
	"context"
	"fmt"
)

// Overview is the operations surface's summary counts (package overview).
type Overview struct {
	Lines              map[string]int // by subscription status
	Installs           map[string]int // install jobs by state, those still to be done
	FailedProvisioning int
	FailingWebhooks    int
	OverdueInvoices    int
}

// Overview counts, for providerID ("" for every provider), lines by status, install jobs
// still to be done by state, lines whose provisioning failed, webhook events whose delivery
// failed, and open invoices dated before today.
func (s *Store) Overview(ctx context.Context, providerID, today string) (*Overview, error) {
	scope, args := "", []any{}
	if providerID != "" {
		scope, args = " AND provider_id = ?", []any{providerID}
	}
	o := &Overview{Lines: map[string]int{}, Installs: map[string]int{}}
	groups := []struct {
		into  map[string]int
		query string
	}{
		{o.Lines, `SELECT status, COUNT(*) FROM subscriptions WHERE 1 = 1` + scope + ` GROUP BY status`},
		{o.Installs, `SELECT state, COUNT(*) FROM install_jobs WHERE state IN ('open', 'booked', 'held')` + scope + ` GROUP BY state`},
	}
	for _, g := range groups {
		if err := countGroups(ctx, s.R(), g.into, g.query, args...); err != nil {
			return nil, err
		}
	}
	counts := []struct {
		into  *int
		query string
		args  []any
	}{
		{&o.FailedProvisioning, `SELECT COUNT(*) FROM subscriptions WHERE workflow_state = 'provisioning_failed'` + scope, args},
		{&o.FailingWebhooks, `SELECT COUNT(*) FROM events WHERE delivery_state = 'failed'` + scope, args},
		{&o.OverdueInvoices, `SELECT COUNT(*) FROM invoices WHERE status = 'open' AND invoice_date < ?` + scope, append([]any{today}, args...)},
	}
	for _, c := range counts {
		if err := s.R().QueryRow(ctx, c.query, c.args...).Scan(c.into); err != nil {
			return nil, fmt.Errorf("overview: %w", err)
		}
	}
	return o, nil
}

// countGroups reads (key, count) rows into m.
func countGroups(ctx context.Context, q Querier, m map[string]int, query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("overview: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return fmt.Errorf("overview: %w", err)
		}
		m[k] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("overview: %w", err)
	}
	return nil
}
