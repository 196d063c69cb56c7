package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// InsertMail queues a message in the outbox; a delivery job enqueued in the same transaction
// carries it, so a mail is sent if and only if the change that asked for it committed.
func (tx *Tx) InsertMail(ctx context.Context, m *subprov.Mail, now time.Time) error {
	if err := insertOutbox(ctx, tx, m, "", now, nil); err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	return nil
}

// LogMessage records a message that was only logged, never sent (dev mode's stand-in for a
// gateway that is not configured), so GET /api/v1/dev/outbox lists it with the mail.
func (s *Store) LogMessage(ctx context.Context, m *subprov.Mail, transport string, now time.Time) error {
	return s.WriteOne(ctx, func(q Execer) error {
		if err := insertOutbox(ctx, q, m, transport, now, &now); err != nil {
			return fmt.Errorf("log message: %w", err)
		}
		return nil
	})
}

// insertOutbox writes one outbox row: queued for its delivery job (logged nil), or logged at
// *logged through transport, its one attempt made by a stand-in that sends nothing.
func insertOutbox(ctx context.Context, q Execer, m *subprov.Mail, transport string, now time.Time, logged *time.Time) error {
	links, _ := json.Marshal(m.Links)
	if m.Links == nil {
		links = []byte("[]")
	}
	status, attempts, sentAt := "queued", 0, any(nil)
	if logged != nil {
		status, attempts, sentAt = "logged", 1, logged.UTC()
	}
	_, err := q.Exec(ctx, `INSERT INTO outbox (id, to_addr, subject, body, links, status, transport, attempts, created_at, sent_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, m.To, m.Subject, m.Body, string(links), status, transport, attempts, now.UTC(), sentAt)
	return err
}

// Mail returns one outbox message.
func (s *Store) Mail(ctx context.Context, id string) (*subprov.Mail, error) {
	ms, err := s.listMail(ctx, `WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("mail %s: %w", id, errNoRows)
	}
	return ms[0], nil
}

// MarkMail records a delivery attempt's outcome.
func (s *Store) MarkMail(ctx context.Context, id, status, transport, lastError string, now time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		var sentAt any
		if status == "sent" || status == "logged" {
			sentAt = now.UTC()
		}
		_, err := tx.Exec(ctx, `UPDATE outbox SET status = ?, transport = ?, last_error = ?, attempts = attempts + 1,
			sent_at = COALESCE(?, sent_at) WHERE id = ?`, status, transport, lastError, sentAt, id)
		if err != nil {
			return fmt.Errorf("mark mail %s: %w", id, err)
		}
		return nil
	})
}

// Outbox lists messages, newest first, optionally only those to one address.
func (s *Store) Outbox(ctx context.Context, to string, limit int) ([]*subprov.Mail, error) {
	if to != "" {
		return s.listMail(ctx, `WHERE to_addr = ? ORDER BY created_at DESC, id DESC LIMIT ?`, to, limit)
	}
	return s.listMail(ctx, `ORDER BY created_at DESC, id DESC LIMIT ?`, limit)
}

func (s *Store) listMail(ctx context.Context, where string, args ...any) ([]*subprov.Mail, error) {
	rows, err := s.R().Query(ctx, `SELECT id, to_addr, subject, body, links, status, transport, created_at, sent_at FROM outbox `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	defer rows.Close()
	var out []*subprov.Mail
	for rows.Next() {
		var m subprov.Mail
		var links string
		var sent nullTimeScan
		if err := rows.Scan(&m.ID, &m.To, &m.Subject, &m.Body, &links, &m.Status, &m.Transport, &m.CreatedAt, &sent); err != nil {
			return nil, fmt.Errorf("scan mail: %w", err)
		}
		_ = json.Unmarshal([]byte(links), &m.Links)
		m.SentAt = sent.ptr()
		out = append(out, &m)
	}
	return out, rows.Err()
}
