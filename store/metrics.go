package store

import (
	"context"
	"fmt"
	"time"
)

// WebhookBacklog is one provider's production events still waiting for delivery.
type WebhookBacklog struct {
	ProviderID string
	Pending    int
	Oldest     time.Time // the oldest pending event's recording time
}

// WebhookBacklogs reads, per provider with any, how many production events are pending
// delivery and when the oldest was recorded: one grouped read on the events_due index.
func (s *Store) WebhookBacklogs(ctx context.Context) ([]WebhookBacklog, error) {
	rows, err := s.R().Query(ctx, `SELECT provider_id, COUNT(*), MIN(created_at) FROM events
		WHERE delivery_state = 'pending' AND sandbox = FALSE GROUP BY provider_id`)
	if err != nil {
		return nil, fmt.Errorf("webhook backlogs: %w", err)
	}
	defer rows.Close()
	var out []WebhookBacklog
	for rows.Next() {
		var b WebhookBacklog
		var oldest textTime
		if err := rows.Scan(&b.ProviderID, &b.Pending, &oldest); err != nil {
			return nil, fmt.Errorf("scan webhook backlog: %w", err)
		}
		if oldest.t != nil {
			b.Oldest = *oldest.t
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook backlogs: %w", err)
	}
	return out, nil
}

// InvoiceCounts counts the invoices by status, on the index that leads with it.
func (s *Store) InvoiceCounts(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	if err := countGroups(ctx, s.R(), out, `SELECT status, COUNT(*) FROM invoices GROUP BY status`); err != nil {
		return nil, fmt.Errorf("invoice counts: %w", err)
	}
	return out, nil
}

// UnfinishedBillRuns returns, per provider, when its oldest bill run started since since that
// has not finished (still running, or its last attempt failed).
func (s *Store) UnfinishedBillRuns(ctx context.Context, since time.Time) (map[string]time.Time, error) {
	rows, err := s.R().Query(ctx, `SELECT provider_id, started_at FROM bill_runs WHERE finished_at IS NULL AND started_at >= ?`, since.UTC())
	if err != nil {
		return nil, fmt.Errorf("unfinished bill runs: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var started time.Time
		if err := rows.Scan(&id, &started); err != nil {
			return nil, fmt.Errorf("scan unfinished bill run: %w", err)
		}
		if t, ok := out[id]; !ok || started.Before(t) {
			out[id] = started.UTC()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unfinished bill runs: %w", err)
	}
	return out, nil
}
