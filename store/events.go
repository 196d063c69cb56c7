package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// eventColumns are an event's columns as the lists read them (scanEvent). The trace it was
// recorded in is internal: only the reads of an event to send also read it (eventToSend).
const eventColumns = `id, provider_id, type, subscription_id, payload, sandbox, delivery_state, attempts,
	next_attempt_at, created_at, seq`

// eventToSendColumns are eventColumns and the event's trace (scanEventToSend).
const eventToSendColumns = eventColumns + `, trace`

// scanEventToSend scans eventToSendColumns.
func scanEventToSend(row interface{ Scan(...any) error }) (*subprov.WebhookEvent, error) {
	var trace sql.NullString
	e, err := scanEvent(scanThenRest{row, &trace})
	if err != nil {
		return nil, err
	}
	e.Trace = trace.String
	return e, nil
}

func scanEvent(row interface{ Scan(...any) error }) (*subprov.WebhookEvent, error) {
	var e subprov.WebhookEvent
	var sub sql.NullString
	var payload string
	var next nullTimeScan
	err := row.Scan(&e.ID, &e.ProviderID, &e.Type, &sub, &payload, &e.Sandbox, &e.DeliveryState, &e.Attempts,
		&next, &e.CreatedAt, &e.Seq)
	if err != nil {
		return nil, err
	}
	e.SubscriptionID = sub.String
	e.Payload = []byte(payload)
	e.NextAttemptAt = next.ptr()
	e.CreatedAt = e.CreatedAt.UTC()
	return &e, nil
}

// NextEventSeq allocates the provider's next number from its event counter and locks the
// provider row until tx ends: the recorder numbers sandbox events with it. Production events
// are numbered without that lock: on SQLite as they are recorded (InsertEvent), on PostgreSQL
// by the webhook flusher (SequenceEvents).
func (tx *Tx) NextEventSeq(ctx context.Context, providerID string) (int64, error) {
	var seq int64
	err := tx.QueryRow(ctx, `UPDATE providers SET event_seq = event_seq + 1 WHERE id = ? RETURNING event_seq`, providerID).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("next event seq of provider %s: %w", providerID, err)
	}
	return seq, nil
}

// InsertEvent writes an event row; its payload is the exact body that will be signed and sent,
// and its trace is stored as given ("" is NULL). Its recording order (rec) comes from the
// database, without a lock held to commit. On SQLite a pending production event without a seq
// is numbered here too (Dialect.seqAtRecord), so the flusher can send it as soon as it commits.
func (tx *Tx) InsertEvent(ctx context.Context, e *subprov.WebhookEvent) error {
	cols, vals := eventColumns, `?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`
	args := []any{e.ID, e.ProviderID, e.Type, nullStr(e.SubscriptionID), string(e.Payload), e.Sandbox, e.DeliveryState, e.Attempts,
		nullTime(e.NextAttemptAt), e.CreatedAt.UTC(), e.Seq}
	if seq := tx.d.seqAtRecord(); seq != "" && e.Seq == 0 && e.DeliveryState == subprov.WebhookPending && !e.Sandbox {
		// The seq column's value becomes the subquery, and its argument the subquery's one.
		vals, args[len(args)-1] = strings.TrimSuffix(vals, "?")+seq, e.ProviderID
	}
	if e.Trace != "" {
		cols, vals, args = cols+", trace", vals+", ?", append(args, e.Trace)
	}
	if rec := tx.d.nextEventRec(); rec != "" {
		cols, vals, args = cols+", rec", vals+", "+rec, append(args, e.ProviderID)
	}
	_, err := tx.Exec(ctx, `INSERT INTO events (`+cols+`) VALUES (`+vals+`)`, args...)
	if err != nil {
		return fmt.Errorf("insert event %s (%s): %w", e.ID, e.Type, err)
	}
	return nil
}

// SequenceEvents numbers the provider's committed pending production events that have no seq
// yet, in recording order, after the provider's highest seq, at most limit of them, and
// returns how many it numbered. Only the holder of the provider's webhook lease calls it, so
// two callers never hand out one number. An event that commits after later-recorded ones were
// numbered is numbered after them: delivery follows commit order. (On SQLite, InsertEvent has
// numbered every event recorded since migration 0018, which numbered those before it: this
// finds none there.)
func (s *Store) SequenceEvents(ctx context.Context, providerID string, limit int) (int, error) {
	// Look first, outside a write transaction: most calls find nothing to number. The
	// transaction reads the events again, as they are when it runs.
	ids, err := QueryStrings(ctx, s.R(), "events to sequence", eventsToSequence(s.Dialect), providerID, 1)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	n := 0
	err = s.InTx(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.SequenceEvents(ctx, providerID, limit)
		return err
	})
	return n, err
}

// SequenceEvents is Store.SequenceEvents inside a transaction that writes anyway (the
// flusher numbers the events committed meanwhile as it records its deliveries, one commit
// for both).
func (tx *Tx) SequenceEvents(ctx context.Context, providerID string, limit int) (int, error) {
	ids, err := QueryStrings(ctx, tx, "events to sequence", eventsToSequence(tx.d), providerID, limit)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	var next int64
	if err := tx.QueryRow(ctx, `SELECT `+nextOfProvider("seq"), providerID).Scan(&next); err != nil {
		return 0, fmt.Errorf("next event seq of provider %s: %w", providerID, err)
	}
	args := make([]any, 0, 3*len(ids)+1)
	for i, id := range ids {
		args = append(args, id, next+int64(i))
	}
	args = append(args, providerID)
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := tx.Exec(ctx, numberEvents(len(ids)), args...)
	if err != nil {
		return 0, fmt.Errorf("sequence events of provider %s: %w", providerID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(ids)) {
		return 0, fmt.Errorf("sequence events of provider %s: %d of %d numbered (%v): another flusher without the lease?", providerID, n, len(ids), err)
	}
	return len(ids), nil
}

// numberEvents gives n unnumbered events of one provider, named by id, their seq: through the
// primary key, not the provider's range of events_provider_seq, which holds every event left
// at seq 0 for good (no endpoint) as well (unindexed). Arguments: each id with its seq, the
// provider, then the ids.
func numberEvents(n int) string {
	return `UPDATE events SET seq = CASE id` + strings.Repeat(" WHEN ? THEN CAST(? AS BIGINT)", n) + ` END
		WHERE seq = 0 AND ` + sqltext.ProvidersKeys("provider_id", "id", n)
}

// The statements on a provider's pending production events. None may step over the events
// the provider had delivered before (a cost that would grow with its history): each reads
// the events table as Dialect.pendingEvents (dialect.go) names it, under the events_pending
// index's condition (pendingOf), written out so that SQLite can match the partial index.

// pendingOf is the events_pending index's condition, for one provider.
const pendingOf = `provider_id = ? AND delivery_state = 'pending' AND sandbox = FALSE`

// eventsToSequence selects the events SequenceEvents numbers, in recording order.
func eventsToSequence(d Dialect) string {
	return `SELECT id FROM ` + d.pendingEvents() + ` WHERE ` + pendingOf + ` AND seq = 0 ORDER BY rec LIMIT ?`
}

func hasEventsToSequence(d Dialect) string {
	return `SELECT COUNT(*) FROM (SELECT 1 FROM ` + d.pendingEvents() + ` WHERE ` + pendingOf + ` AND seq = 0 LIMIT 1) x`
}

// pendingInOrder selects the numbered pending events after a seq, in delivery order.
func pendingInOrder(d Dialect) string {
	return `SELECT ` + eventToSendColumns + ` FROM ` + d.pendingEvents() + ` WHERE ` + pendingOf + ` AND seq > ? ORDER BY seq LIMIT ?`
}

// holdQueuedEvents moves the provider's pending events up to the first one's next attempt.
func holdQueuedEvents(d Dialect) string {
	head := `(SELECT next_attempt_at FROM ` + d.pendingEvents() + ` WHERE ` + pendingOf + ` AND seq > 0 ORDER BY seq LIMIT 1)`
	return `UPDATE ` + d.pendingEvents() + ` SET next_attempt_at = ` + head + ` WHERE ` + pendingOf + ` AND next_attempt_at < ` + head
}

// HasEventsToSequence reports whether the provider has committed pending production events
// that SequenceEvents has not numbered yet.
func (s *Store) HasEventsToSequence(ctx context.Context, providerID string) (bool, error) {
	var n int
	err := s.R().QueryRow(ctx, hasEventsToSequence(s.Dialect), providerID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("events to sequence of provider %s: %w", providerID, err)
	}
	return n > 0, nil
}

// DueEvents returns the provider's production events that may be sent now, in seq order: the
// leading run of numbered pending events whose next_attempt_at has passed. It stops at the
// first pending event that is not due yet, because every later event must wait behind it to
// keep the order. Events not numbered yet (SequenceEvents) are not due.
func (s *Store) DueEvents(ctx context.Context, providerID string, now time.Time, limit int) ([]*subprov.WebhookEvent, error) {
	due, _, err := s.DueEventsOrHead(ctx, providerID, now, 0, limit)
	return due, err
}

// DueEventsOrHead is DueEvents over the events numbered after seq `after` (0: all), which
// also reports, when nothing is due, whether a numbered pending event waits for its retry at
// the head (the flusher then parks the events behind it). The flusher passes the last seq it
// sent: the events up to it are delivered, their recording still under way.
func (s *Store) DueEventsOrHead(ctx context.Context, providerID string, now time.Time, after int64, limit int) (due []*subprov.WebhookEvent, waiting bool, err error) {
	rows, err := s.R().Query(ctx, pendingInOrder(s.Dialect), providerID, max(after, 0), limit)
	if err != nil {
		return nil, false, fmt.Errorf("due events of provider %s: %w", providerID, err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEventToSend(rows)
		if err != nil {
			return nil, false, fmt.Errorf("scan event: %w", err)
		}
		if e.NextAttemptAt == nil || e.NextAttemptAt.After(now) {
			waiting = len(due) == 0
			break
		}
		due = append(due, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("due events of provider %s: %w", providerID, err)
	}
	return due, waiting, nil
}

// MarkEventDelivered records that a receiver accepted the event.
func (tx *Tx) MarkEventDelivered(ctx context.Context, providerID, eventID string) error {
	return tx.markEvent(ctx, providerID, eventID, subprov.WebhookDelivered, nil)
}

// MarkEventFailed records that the event will not be sent again.
func (tx *Tx) MarkEventFailed(ctx context.Context, providerID, eventID string) error {
	return tx.markEvent(ctx, providerID, eventID, subprov.WebhookFailed, nil)
}

// MarkEventRetry counts a failed attempt, schedules the next one at next and holds every later
// pending event of the provider until then, so the sweep (which reads only the events_due
// index) does not keep waking a flush for events that must wait behind this one.
func (tx *Tx) MarkEventRetry(ctx context.Context, providerID, eventID string, next time.Time) error {
	if err := tx.markEvent(ctx, providerID, eventID, subprov.WebhookPending, &next); err != nil {
		return err
	}
	return tx.HoldQueuedEvents(ctx, providerID)
}

func (tx *Tx) markEvent(ctx context.Context, providerID, eventID, state string, next *time.Time) error {
	res, err := tx.Exec(ctx, `UPDATE events SET delivery_state = ?, attempts = attempts + 1, next_attempt_at = ?
		WHERE id = ? AND provider_id = ?`, state, nullTime(next), eventID, providerID)
	if err != nil {
		return fmt.Errorf("mark event %s %s: %w", eventID, state, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("mark event %s %s: %w", eventID, state, err)
	} else if n == 0 {
		return fmt.Errorf("mark event %s %s: %w", eventID, state, errNoRows)
	}
	return nil
}

// HoldQueuedEvents moves next_attempt_at of the provider's pending production events up to
// that of the first one (lowest seq), so no event counts as due while an earlier one waits
// for its retry. Events recorded behind a waiting event start out due; a flush that finds the
// head not due calls this to park them.
func (tx *Tx) HoldQueuedEvents(ctx context.Context, providerID string) error {
	_, err := tx.Exec(ctx, holdQueuedEvents(tx.d), providerID, providerID, providerID)
	if err != nil {
		return fmt.Errorf("hold queued events of provider %s: %w", providerID, err)
	}
	return nil
}

// InsertWebhookAttempt records one delivery attempt of an event of providerID. The event is
// looked up with its provider first, so an attempt can never be filed under another
// provider's event.
func (tx *Tx) InsertWebhookAttempt(ctx context.Context, providerID string, a *subprov.WebhookAttempt) error {
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM events WHERE id = ? AND provider_id = ?`, a.EventID, providerID).Scan(&one); err != nil {
		return fmt.Errorf("webhook attempt for event %s: %w", a.EventID, err)
	}
	var status any
	if a.StatusCode != 0 {
		status = a.StatusCode
	}
	_, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (id, event_id, url, status_code, latency_ms, error, attempted_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, a.ID, a.EventID, a.URL, status, a.LatencyMS, a.Error, a.AttemptedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert webhook attempt for event %s: %w", a.EventID, err)
	}
	return nil
}

// FirstAttemptAt returns when the event's first delivery attempt was made; ok is false when
// none was. The production retry window runs from it (events.RetryFor).
func (s *Store) FirstAttemptAt(ctx context.Context, eventID string) (first time.Time, ok bool, err error) {
	var at sql.NullTime
	err = s.R().QueryRow(ctx, `SELECT attempted_at FROM webhook_attempts WHERE event_id = ?
		ORDER BY attempted_at LIMIT 1`, eventID).Scan(&at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("first attempt of event %s: %w", eventID, err)
	}
	return at.Time, at.Valid, nil
}

// MarkEventsDelivered records, in one statement each, that the receiver accepted these events
// of the provider, and their attempts: a flusher settles a run of deliveries at once. Every
// event must be the provider's; otherwise nothing is recorded.
func (tx *Tx) MarkEventsDelivered(ctx context.Context, providerID string, attempts []*subprov.WebhookAttempt) error {
	if len(attempts) == 0 {
		return nil
	}
	args := make([]any, 0, 7*len(attempts))
	args = append(args, providerID)
	for _, a := range attempts {
		args = append(args, a.EventID)
	}
	res, err := tx.Exec(ctx, markDelivered(len(attempts)), args...)
	if err != nil {
		return fmt.Errorf("mark %d events delivered: %w", len(attempts), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("mark %d events delivered: %w", len(attempts), err)
	} else if n != int64(len(attempts)) {
		return fmt.Errorf("mark %d events delivered: %d are the provider's: %w", len(attempts), n, errNoRows)
	}
	args = args[:0]
	for _, a := range attempts {
		var status any
		if a.StatusCode != 0 {
			status = a.StatusCode
		}
		args = append(args, a.ID, a.EventID, a.URL, status, a.LatencyMS, a.Error, a.AttemptedAt.UTC())
	}
	_, err = tx.Exec(ctx, `INSERT INTO webhook_attempts (id, event_id, url, status_code, latency_ms, error, attempted_at) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", len(attempts)), ", "), args...)
	if err != nil {
		return fmt.Errorf("insert %d webhook attempts: %w", len(attempts), err)
	}
	return nil
}

// markDelivered marks n events of one provider, named by id, delivered: through the primary
// key, whatever the provider's history (unindexed). Arguments: the provider, then the
// ids.
func markDelivered(n int) string {
	return `UPDATE events SET delivery_state = 'delivered', attempts = attempts + 1, next_attempt_at = NULL
		WHERE ` + sqltext.ProvidersKeys("provider_id", "id", n)
}

// AcquireWebhookLease makes holder the provider's only webhook flusher until `until`, if the
// lease is free or expired at now. It reports whether holder got it. One conditional upsert:
// concurrent callers race on the primary key and exactly one wins.
func (s *Store) AcquireWebhookLease(ctx context.Context, providerID, holder string, now, until time.Time) (bool, error) {
	got := false
	err := s.InTx(ctx, func(tx *Tx) error {
		var h string
		err := tx.QueryRow(ctx, `INSERT INTO webhook_leases (provider_id, holder, lease_until) VALUES (?, ?, ?)
			ON CONFLICT (provider_id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
			WHERE webhook_leases.lease_until <= ?
			RETURNING holder`, providerID, holder, until.UTC(), now.UTC()).Scan(&h)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil // someone else holds a live lease
		case err != nil:
			return err
		}
		got = h == holder
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("acquire webhook lease of provider %s: %w", providerID, err)
	}
	return got, nil
}

// RenewWebhookLease extends holder's lease to until; false when holder no longer has it.
func (s *Store) RenewWebhookLease(ctx context.Context, providerID, holder string, until time.Time) (bool, error) {
	var n int64
	err := s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, `UPDATE webhook_leases SET lease_until = ? WHERE provider_id = ? AND holder = ?`, until.UTC(), providerID, holder)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("renew webhook lease of provider %s: %w", providerID, err)
	}
	return n == 1, nil
}

// ReleaseWebhookLease frees the lease if holder still has it (an expired lease taken over by
// another flusher is left alone).
func (s *Store) ReleaseWebhookLease(ctx context.Context, providerID, holder string) error {
	err := s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM webhook_leases WHERE provider_id = ? AND holder = ?`, providerID, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("release webhook lease of provider %s: %w", providerID, err)
	}
	return nil
}

// ProvidersWithDueEvents lists up to limit providers with a pending production event due at
// now and no live flush lease at leaseNow (a running flusher will get to them itself). The
// range scan is on the events_due index (delivery_state, next_attempt_at), so the cost
// follows the number of due events, not the size of the table.
func (s *Store) ProvidersWithDueEvents(ctx context.Context, now, leaseNow time.Time, limit int) ([]string, error) {
	rows, err := s.R().Query(ctx, `SELECT DISTINCT e.provider_id FROM events e
		WHERE e.delivery_state = 'pending' AND e.next_attempt_at <= ? AND e.sandbox = FALSE
		AND NOT EXISTS (SELECT 1 FROM webhook_leases l WHERE l.provider_id = e.provider_id AND l.lease_until > ?)
		LIMIT ?`, now.UTC(), leaseNow.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("providers with due events: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("scan provider id: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("providers with due events: %w", err)
	}
	return out, nil
}

// EventsOfProvider lists the provider's events, newest first (the sandbox listing). A sandbox
// event's seq is its recording order, so it orders exactly even when two events share a
// created_at; production events not numbered yet follow in recording order (rec).
func (s *Store) EventsOfProvider(ctx context.Context, providerID string, limit int) ([]*subprov.WebhookEvent, error) {
	return sqltext.QueryAll(ctx, s.R(), "events of provider "+providerID, scanEvent, `SELECT `+eventColumns+` FROM events WHERE provider_id = ?
		ORDER BY seq DESC, rec DESC, id DESC LIMIT ?`, providerID, limit)
}

// Event returns one event of the provider, with its trace, to send it; another provider's
// event is subprov.ErrNotFound.
func (s *Store) Event(ctx context.Context, providerID, id string) (*subprov.WebhookEvent, error) {
	e, err := scanEventToSend(s.R().QueryRow(ctx, `SELECT `+eventToSendColumns+` FROM events WHERE id = ? AND provider_id = ?`, id, providerID))
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", id, err)
	}
	return e, nil
}

// WebhookAttempts lists the attempts of one event of the provider, oldest first.
func (s *Store) WebhookAttempts(ctx context.Context, providerID, eventID string) ([]*subprov.WebhookAttempt, error) {
	rows, err := s.R().Query(ctx, `SELECT a.id, a.event_id, a.url, a.status_code, a.latency_ms, a.error, a.attempted_at
		FROM webhook_attempts a JOIN events e ON e.id = a.event_id
		WHERE a.event_id = ? AND e.provider_id = ?
		ORDER BY a.attempted_at, a.id`, eventID, providerID)
	if err != nil {
		return nil, fmt.Errorf("webhook attempts of event %s: %w", eventID, err)
	}
	defer rows.Close()
	var out []*subprov.WebhookAttempt
	for rows.Next() {
		var a subprov.WebhookAttempt
		var status sql.NullInt64
		if err := rows.Scan(&a.ID, &a.EventID, &a.URL, &status, &a.LatencyMS, &a.Error, &a.AttemptedAt); err != nil {
			return nil, fmt.Errorf("scan webhook attempt: %w", err)
		}
		a.StatusCode = int(status.Int64)
		a.AttemptedAt = a.AttemptedAt.UTC()
		out = append(out, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook attempts of event %s: %w", eventID, err)
	}
	return out, nil
}
