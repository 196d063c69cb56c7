package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// NextTicketNumber allocates the provider's next ticket number and returns its support group.
func (tx *Tx) NextTicketNumber(ctx context.Context, providerID string) (int64, string, error) {
	var seq int64
	var group string
	err := tx.QueryRow(ctx, `UPDATE providers SET ticket_seq = ticket_seq + 1 WHERE id = ? RETURNING ticket_seq, support_group`, providerID).
		Scan(&seq, &group)
	if err != nil {
		return 0, "", fmt.Errorf("allocate ticket number: %w", err)
	}
	return seq, group, nil
}

// InsertTicket stores a ticket.
func (tx *Tx) InsertTicket(ctx context.Context, t *subprov.Ticket) error {
	_, err := tx.Exec(ctx, `INSERT INTO tickets (id, provider_id, number, subscriber_id, contact_email, kind, subject, priority, status,
			group_name, article, internal_note, created_at, port_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ProviderID, t.Number, nullStr(t.SubscriberID), t.ContactEmail, t.Kind, t.Subject, t.Priority, t.Status, t.Group,
		t.Article, t.InternalNote, t.CreatedAt.UTC(), nullStr(t.PortID))
	if err != nil {
		return fmt.Errorf("insert ticket: %w", err)
	}
	return nil
}

// PortTicketOpen reports whether an operator ticket about the port is still open (neither
// solved nor closed), as tx sees it.
func (tx *Tx) PortTicketOpen(ctx context.Context, portID string) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM tickets WHERE port_id = ? AND kind = 'operator' AND status NOT IN ('solved', 'closed')`,
		portID).Scan(&n); err != nil {
		return false, fmt.Errorf("open tickets of port %s: %w", portID, err)
	}
	return n > 0, nil
}

const ticketColumns = `id, provider_id, number, COALESCE(subscriber_id, ''), contact_email, kind, subject, priority, status, group_name,
	article, internal_note, created_at, assigned_to, version, updated_at`

func scanTicket(row interface{ Scan(...any) error }) (*subprov.Ticket, error) {
	var t subprov.Ticket
	var updated nullTimeScan
	err := row.Scan(&t.ID, &t.ProviderID, &t.Number, &t.SubscriberID, &t.ContactEmail, &t.Kind, &t.Subject, &t.Priority, &t.Status,
		&t.Group, &t.Article, &t.InternalNote, &t.CreatedAt, &t.AssignedTo, &t.Version, &updated)
	t.UpdatedAt = updated.ptr()
	return &t, err
}

// TicketsSince lists a provider's tickets opened at or after since, oldest first.
func (s *Store) TicketsSince(ctx context.Context, providerID string, since time.Time) ([]*subprov.Ticket, error) {
	return queryTickets(ctx, s.R(), `SELECT `+ticketColumns+` FROM tickets WHERE provider_id = ? AND created_at >= ? ORDER BY created_at, number`,
		providerID, since.UTC())
}

// queryTickets runs a query selecting ticketColumns and scans every row.
func queryTickets(ctx context.Context, q Querier, query string, args ...any) ([]*subprov.Ticket, error) {
	return sqltext.QueryAll(ctx, q, "list tickets", scanTicket, query, args...)
}

// TicketsByEmail lists a provider's customer-facing tickets (not operator tickets) opened
// for a subscriber or for any of the e-mails on file, newest first.
func (s *Store) TicketsByEmail(ctx context.Context, providerID, subscriberID string, emails []string) ([]*subprov.Ticket, error) {
	args := []any{providerID, subscriberID}
	for _, e := range emails {
		args = append(args, strings.ToLower(e))
	}
	return queryTickets(ctx, s.R(), `SELECT `+ticketColumns+` FROM tickets WHERE provider_id = ? AND kind <> 'operator'
		AND (subscriber_id = ? OR LOWER(contact_email) IN (`+sqltext.Placeholders(len(emails))+`)) ORDER BY created_at DESC, number DESC LIMIT 100`, args...)
}
