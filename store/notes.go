package store

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
)

// InsertNote stores a note.
func (tx *Tx) InsertNote(ctx context.Context, n *subprov.CustomerNote) error {
	_, err := tx.Exec(ctx, `INSERT INTO notes (id, provider_id, subscriber_id, author, body, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		n.ID, n.ProviderID, n.SubscriberID, n.Author, n.Body, n.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert note: %w", err)
	}
	return nil
}

// NotesOf lists a provider's notes on a subscriber, oldest first.
func (s *Store) NotesOf(ctx context.Context, providerID, subscriberID string) ([]subprov.CustomerNote, error) {
	rows, err := s.R().Query(ctx, `SELECT id, provider_id, subscriber_id, author, body, created_at FROM notes
		WHERE provider_id = ? AND subscriber_id = ? ORDER BY created_at, id`, providerID, subscriberID)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	defer rows.Close()
	var out []subprov.CustomerNote
	for rows.Next() {
		var n subprov.CustomerNote
		if err := rows.Scan(&n.ID, &n.ProviderID, &n.SubscriberID, &n.Author, &n.Body, &n.CreatedAt); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
