package store

import (
	"context"
	"fmt"
	"time"
)

// Note is an operator-visible note on a customer.
type Note struct {
	ID, ProviderID, SubscriberID, Author, Body string
	CreatedAt                                  time.Time
}

// InsertNote stores a note.
func (tx *Tx) InsertNote(ctx context.Context, n *Note) error {
	_, err := tx.Exec(ctx, `INSERT INTO notes (id, provider_id, subscriber_id, author, body, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		n.ID, n.ProviderID, n.SubscriberID, n.Author, n.Body, n.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert note: %w", err)
	}
	return nil
}

// NotesOf lists a provider's notes on a subscriber, oldest first.
func (s *Store) NotesOf(ctx context.Context, providerID, subscriberID string) ([]Note, error) {
	rows, err := s.R().Query(ctx, `SELECT id, provider_id, subscriber_id, author, body, created_at FROM notes
		WHERE provider_id = ? AND subscriber_id = ? ORDER BY created_at, id`, providerID, subscriberID)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	defer rows.Close()
	var out []Note
	for rows.Next() {
		var n Note
		if err := rows.Scan(&n.ID, &n.ProviderID, &n.SubscriberID, &n.Author, &n.Body, &n.CreatedAt); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
