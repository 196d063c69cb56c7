package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// WebhookEventFilter narrows the operations surface's list of webhook events; "" matches
// anything.
type WebhookEventFilter struct {
	ProviderID string // the reader's scope, or the provider asked for
	Type       string
	State      string // delivery state
}

// ListedEvent is an event as the list reads it: with its recording order, which orders the
// events of one instant.
type ListedEvent struct {
	*subprov.WebhookEvent
	Rec int64
}

// WebhookEvents lists events newest first, page.Limit+1 of them after the page's position
// (an event's created_at, recording order and id, as WebhookEventKey gives it).
func (s *Store) WebhookEvents(ctx context.Context, f WebhookEventFilter, page subprov.Page) ([]ListedEvent, error) {
	q, args, err := webhookEventsQuery(f, page)
	if err != nil {
		return nil, err
	}
	return sqltext.QueryAll(ctx, s.R(), "webhook events", scanListedEvent, q, args...)
}

// webhookEventsQuery is the read of one page of the list: a range of events_listed, or of
// events_provider_listed for one provider's events, walked backwards from the page's position.
func webhookEventsQuery(f WebhookEventFilter, page subprov.Page) (string, []any, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"provider_id", f.ProviderID}, {"type", f.Type}, {"delivery_state", f.State}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if !page.First() {
		if len(page.After) != 3 {
			return "", nil, badCursor()
		}
		at, err := time.Parse(time.RFC3339Nano, page.After[0])
		rec, rerr := strconv.ParseInt(page.After[1], 10, 64)
		if err != nil || rerr != nil {
			return "", nil, badCursor()
		}
		where = append(where, "(created_at < ? OR (created_at = ? AND (rec < ? OR (rec = ? AND id < ?))))")
		args = append(args, at.UTC(), at.UTC(), rec, rec, page.After[2])
	}
	q := `SELECT ` + eventColumns + `, rec FROM events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, rec DESC, id DESC LIMIT ?`
	args = append(args, page.Limit+1)
	return q, args, nil
}

func badCursor() error {
	return subprov.Invalid(map[string]string{"cursor": "is not a cursor this list issued"})
}

func scanListedEvent(row interface{ Scan(...any) error }) (ListedEvent, error) {
	var rec sql.NullInt64
	e, err := scanEvent(scanThenRest{row, &rec})
	if err != nil {
		return ListedEvent{}, err
	}
	return ListedEvent{WebhookEvent: e, Rec: rec.Int64}, nil
}

// scanThenRest scans a row into the destinations asked for and then into rest: a row of
// more columns than a scanner of its first ones knows.
type scanThenRest struct {
	row  interface{ Scan(...any) error }
	rest any
}

func (s scanThenRest) Scan(dest ...any) error { return s.row.Scan(append(dest, s.rest)...) }

// WebhookEventKey is an event's position in the list's order, for the next page's cursor.
func WebhookEventKey(e ListedEvent) []string {
	return []string{e.CreatedAt.UTC().Format(time.RFC3339Nano), strconv.FormatInt(e.Rec, 10), e.ID}
}

// WebhookEvent returns one event of the provider, or of any provider when providerID is "",
// with its trace, as Event (a replay sends it); another provider's event is
// subprov.ErrNotFound.
func (s *Store) WebhookEvent(ctx context.Context, providerID, id string) (*subprov.WebhookEvent, error) {
	if providerID != "" {
		return s.Event(ctx, providerID, id)
	}
	e, err := scanEventToSend(s.R().QueryRow(ctx, `SELECT `+eventToSendColumns+` FROM events WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", id, err)
	}
	return e, nil
}

// LastWebhookAttempts returns the latest attempt of each of the events named that has one,
// by event id.
func (s *Store) LastWebhookAttempts(ctx context.Context, eventIDs []string) (map[string]*subprov.WebhookAttempt, error) {
	out := map[string]*subprov.WebhookAttempt{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(eventIDs))
	for i, id := range eventIDs {
		args[i] = id
	}
	rows, err := s.R().Query(ctx, `SELECT id, event_id, url, status_code, latency_ms, error, attempted_at FROM webhook_attempts
		WHERE event_id IN (`+sqltext.Placeholders(len(eventIDs))+`) ORDER BY event_id, attempted_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("last webhook attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a subprov.WebhookAttempt
		var status sql.NullInt64
		if err := rows.Scan(&a.ID, &a.EventID, &a.URL, &status, &a.LatencyMS, &a.Error, &a.AttemptedAt); err != nil {
			return nil, fmt.Errorf("scan webhook attempt: %w", err)
		}
		a.StatusCode = int(status.Int64)
		a.AttemptedAt = a.AttemptedAt.UTC()
		out[a.EventID] = &a // ordered by time: the last one stays
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last webhook attempts: %w", err)
	}
	return out, nil
}

// RecordReplay records one more delivery attempt of an event of providerID, asked for by an
// operator, and moves the event to state: its retry schedule, if it has one, is kept while it
// stays pending.
func (tx *Tx) RecordReplay(ctx context.Context, providerID string, a *subprov.WebhookAttempt, state string) error {
	if err := tx.InsertWebhookAttempt(ctx, providerID, a); err != nil {
		return err
	}
	if state != subprov.WebhookPending {
		return tx.markEvent(ctx, providerID, a.EventID, state, nil)
	}
	if _, err := tx.Exec(ctx, `UPDATE events SET attempts = attempts + 1 WHERE id = ? AND provider_id = ?`, a.EventID, providerID); err != nil {
		return fmt.Errorf("count replay of event %s: %w", a.EventID, err)
	}
	return nil
}
