package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// recordStatus appends a status a line took at now, with its reason ("" for none), to the
// line's status history, in the transaction of the change.
func (tx *Tx) recordStatus(ctx context.Context, subscriptionID string, status subprov.Status, reason string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO subscription_status_history (id, subscription_id, status, reason, at) VALUES (?, ?, ?, ?, ?)`,
		NewOrderedID(), subscriptionID, string(status), reason, now.UTC())
	if err != nil {
		return fmt.Errorf("status history of %s: %w", subscriptionID, err)
	}
	return nil
}

// startHistory gives a line without a status history (loaded from a fixture or in bulk) its
// status before the change about to be made, dated when the line was created, so that its
// history starts where the line did.
func (tx *Tx) startHistory(ctx context.Context, subscriptionID string) error {
	_, err := tx.Exec(ctx, `INSERT INTO subscription_status_history (id, subscription_id, status, reason, at)
		SELECT ?, id, status, '', created_at FROM subscriptions s WHERE id = ?
			AND NOT EXISTS (SELECT 1 FROM subscription_status_history h WHERE h.subscription_id = s.id)`,
		NewOrderedID(), subscriptionID)
	if err != nil {
		return fmt.Errorf("status history of %s: %w", subscriptionID, err)
	}
	return nil
}

// StatusHistory lists the statuses each of the lines had, oldest first, by line id. A line
// loaded from a fixture or in bulk has none listed until its status first changes.
func (s *Store) StatusHistory(ctx context.Context, subscriptionIDs []string) (map[string][]subprov.StatusChange, error) {
	out := make(map[string][]subprov.StatusChange, len(subscriptionIDs))
	if len(subscriptionIDs) == 0 {
		return out, nil
	}
	type row struct {
		line string
		c    subprov.StatusChange
	}
	args := make([]any, len(subscriptionIDs))
	for i, id := range subscriptionIDs {
		args[i] = id
	}
	rows, err := sqltext.QueryAll(ctx, s.R(), "status history", func(r interface{ Scan(...any) error }) (row, error) {
		var x row
		var status string
		err := r.Scan(&x.line, &status, &x.c.Reason, &x.c.At)
		x.c.Status, x.c.At = subprov.Status(status), x.c.At.UTC()
		return x, err
	}, `SELECT subscription_id, status, reason, at FROM subscription_status_history
		WHERE subscription_id IN (`+sqltext.Placeholders(len(subscriptionIDs))+`) ORDER BY subscription_id, at, id`,
		args...)
	if err != nil {
		return nil, err
	}
	for _, x := range rows {
		out[x.line] = append(out[x.line], x.c)
	}
	return out, nil
}
