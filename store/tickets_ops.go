package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// TicketFilter narrows a list of tickets; "" matches anything.
type TicketFilter struct {
	ProviderID string
	Status     string
	Group      string
}

// Tickets lists tickets newest first, page.Limit+1 after the page's position (TicketKey).
func (s *Store) Tickets(ctx context.Context, f TicketFilter, page subprov.Page) ([]*subprov.Ticket, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"provider_id", f.ProviderID}, {"status", f.Status}, {"group_name", f.Group}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	w, a, err := newestFirstAfter(page, "created_at")
	if err != nil {
		return nil, err
	}
	where, args = append(where, w...), append(args, a...)
	return queryTickets(ctx, s.R(), `SELECT `+ticketColumns+` FROM tickets`+whereOf(where)+` ORDER BY created_at DESC, id DESC LIMIT ?`,
		append(args, page.Limit+1)...)
}

// TicketKey is a ticket's position in its list's order, for the next page's cursor.
func TicketKey(t *subprov.Ticket) []string { return TimeKey(t.CreatedAt, t.ID) }

// Ticket reads one ticket.
func (s *Store) Ticket(ctx context.Context, id string) (*subprov.Ticket, error) {
	t, err := scanTicket(s.R().QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("ticket %s: %w", id, err)
	}
	return t, nil
}

// LockTicket reads a ticket inside a write transaction, locked until it ends.
func (tx *Tx) LockTicket(ctx context.Context, id string) (*subprov.Ticket, error) {
	t, err := scanTicket(tx.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("ticket %s: %w", id, err)
	}
	return t, nil
}

// UpdateTicket writes an operator's edit of a ticket's status and assignee, moving its version on.
func (tx *Tx) UpdateTicket(ctx context.Context, t *subprov.Ticket, now time.Time) error {
	err := tx.QueryRow(ctx, `UPDATE tickets SET status = ?, assigned_to = ?, version = version + 1, updated_at = ? WHERE id = ? RETURNING version`,
		t.Status, t.AssignedTo, now.UTC(), t.ID).Scan(&t.Version)
	if err != nil {
		return fmt.Errorf("update ticket %s: %w", t.ID, err)
	}
	t.UpdatedAt = &now
	return nil
}

// InsertTicketComment stores a comment on a ticket.
func (tx *Tx) InsertTicketComment(ctx context.Context, c *subprov.TicketComment) error {
	_, err := tx.Exec(ctx, `INSERT INTO ticket_comments (id, ticket_id, author, body, created_at) VALUES (?, ?, ?, ?, ?)`,
		c.ID, c.TicketID, c.Author, c.Body, c.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert ticket comment: %w", err)
	}
	return nil
}

// TicketComments lists the comments of tickets, oldest first, by ticket id.
func (s *Store) TicketComments(ctx context.Context, ticketIDs []string) (map[string][]subprov.TicketComment, error) {
	out := map[string][]subprov.TicketComment{}
	if len(ticketIDs) == 0 {
		return out, nil
	}
	cs, err := sqltext.QueryAll(ctx, s.R(), "ticket comments", func(r interface{ Scan(...any) error }) (subprov.TicketComment, error) {
		var c subprov.TicketComment
		err := r.Scan(&c.ID, &c.TicketID, &c.Author, &c.Body, &c.CreatedAt)
		return c, err
	}, `SELECT id, ticket_id, author, body, created_at FROM ticket_comments WHERE ticket_id IN `+inList(len(ticketIDs))+
		` ORDER BY created_at, id`, anyList(ticketIDs)...)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		out[c.TicketID] = append(out[c.TicketID], c)
	}
	return out, nil
}
