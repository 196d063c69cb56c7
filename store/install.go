package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// UpsertInstallWindow creates or replaces a window (fixtures and operator setup).
func (tx *Tx) UpsertInstallWindow(ctx context.Context, w *subprov.InstallWindow, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO install_windows (id, provider_id, weekday, starts_at, ends_at, technicians, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET weekday = excluded.weekday, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
			technicians = excluded.technicians`,
		w.ID, w.ProviderID, w.Weekday, w.Starts, w.Ends, w.Technicians, now.UTC())
	if err != nil {
		return fmt.Errorf("upsert install window %s: %w", w.ID, err)
	}
	return nil
}

// InstallWindows lists a provider's windows by weekday and start time.
func (s *Store) InstallWindows(ctx context.Context, providerID string) ([]subprov.InstallWindow, error) {
	return installWindows(ctx, s.R(), providerID)
}

// InstallWindows is the same read inside tx.
func (tx *Tx) InstallWindows(ctx context.Context, providerID string) ([]subprov.InstallWindow, error) {
	return installWindows(ctx, tx, providerID)
}

func installWindows(ctx context.Context, q Querier, providerID string) ([]subprov.InstallWindow, error) {
	rows, err := q.Query(ctx, `SELECT id, provider_id, weekday, starts_at, ends_at, technicians FROM install_windows
		WHERE provider_id = ? AND deleted_at IS NULL ORDER BY weekday, starts_at, id`, providerID)
	if err != nil {
		return nil, fmt.Errorf("install windows: %w", err)
	}
	defer rows.Close()
	var out []subprov.InstallWindow
	for rows.Next() {
		var w subprov.InstallWindow
		if err := rows.Scan(&w.ID, &w.ProviderID, &w.Weekday, &w.Starts, &w.Ends, &w.Technicians); err != nil {
			return nil, fmt.Errorf("install windows: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// SlotsBooked returns the places taken per slot of a provider between two dates (inclusive).
func (s *Store) SlotsBooked(ctx context.Context, providerID, from, to string) (map[subprov.InstallSlot]int, error) {
	return slotsBooked(ctx, s.R(), providerID, from, to)
}

// SlotsBooked is the same read inside tx.
func (tx *Tx) SlotsBooked(ctx context.Context, providerID, from, to string) (map[subprov.InstallSlot]int, error) {
	return slotsBooked(ctx, tx, providerID, from, to)
}

func slotsBooked(ctx context.Context, q Querier, providerID, from, to string) (map[subprov.InstallSlot]int, error) {
	rows, err := q.Query(ctx, `SELECT window_id, slot_date, booked FROM install_slots
		WHERE provider_id = ? AND slot_date >= ? AND slot_date <= ?`, providerID, from, to)
	if err != nil {
		return nil, fmt.Errorf("slots booked: %w", err)
	}
	defer rows.Close()
	out := map[subprov.InstallSlot]int{}
	for rows.Next() {
		var k subprov.InstallSlot
		var n int
		if err := rows.Scan(&k.WindowID, &k.Date, &n); err != nil {
			return nil, fmt.Errorf("slots booked: %w", err)
		}
		out[k] = n
	}
	return out, rows.Err()
}

// TakeSlotPlace takes one place in a slot of the provider's window, false when the slot is
// full. The place is taken by a single conditional UPDATE: on PostgreSQL a concurrent booking
// of the same slot waits for the row lock and re-checks booked < technicians against the
// committed count; on SQLite the one writer connection serialises the two transactions.
func (tx *Tx) TakeSlotPlace(ctx context.Context, providerID string, k subprov.InstallSlot) (bool, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO install_slots (window_id, slot_date, provider_id, booked) VALUES (?, ?, ?, 0)
		ON CONFLICT DO NOTHING`, k.WindowID, k.Date, providerID); err != nil {
		return false, fmt.Errorf("open slot: %w", err)
	}
	res, err := tx.Exec(ctx, `UPDATE install_slots SET booked = booked + 1
		WHERE window_id = ? AND slot_date = ? AND provider_id = ?
		AND booked < (SELECT w.technicians FROM install_windows w WHERE w.id = ? AND w.provider_id = ? AND w.deleted_at IS NULL)`,
		k.WindowID, k.Date, providerID, k.WindowID, providerID)
	if err != nil {
		return false, fmt.Errorf("take slot place: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("take slot place: %w", err)
	}
	return n == 1, nil
}

// ReleaseSlotPlace gives a place back (a cancelled or held visit).
func (tx *Tx) ReleaseSlotPlace(ctx context.Context, providerID string, k subprov.InstallSlot) error {
	_, err := tx.Exec(ctx, `UPDATE install_slots SET booked = booked - 1 WHERE window_id = ? AND slot_date = ? AND provider_id = ? AND booked > 0`,
		k.WindowID, k.Date, providerID)
	if err != nil {
		return fmt.Errorf("release slot place: %w", err)
	}
	return nil
}

const installJobColumns = `j.id, j.provider_id, j.subscription_id, j.kind, COALESCE(j.booking, ''), j.state, j.flags, j.assigned_to,
	j.appointment_at, COALESCE(j.invitation_due_on, ''), COALESCE(j.slot_window_id, ''), COALESCE(j.slot_date, ''), j.created_at, j.updated_at`

func scanInstallJob(row interface{ Scan(...any) error }, extra ...any) (*subprov.InstallJob, error) {
	var j subprov.InstallJob
	var appt sql.NullTime
	dest := append([]any{&j.ID, &j.ProviderID, &j.SubscriptionID, &j.Kind, &j.Booking, &j.State, &j.Flags, &j.AssignedTo,
		&appt, &j.InvitationDueOn, &j.SlotWindowID, &j.SlotDate, &j.CreatedAt, &j.UpdatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	j.AppointmentAt = timePtr(appt)
	return &j, nil
}

// InstallJob returns one install job, scoped to its provider ("" for the operator, who acts
// across providers).
func (s *Store) InstallJob(ctx context.Context, providerID, id string) (*subprov.InstallJob, error) {
	q, args := `SELECT `+installJobColumns+` FROM install_jobs j WHERE j.id = ?`, []any{id}
	if providerID != "" {
		q += ` AND j.provider_id = ?`
		args = append(args, providerID)
	}
	j, err := scanInstallJob(s.R().QueryRow(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("install job %s: %w", id, err)
	}
	return j, nil
}

// LockInstallJob reads an install job for update inside tx.
func (tx *Tx) LockInstallJob(ctx context.Context, id string) (*subprov.InstallJob, error) {
	j, err := scanInstallJob(tx.QueryRow(ctx, `SELECT `+installJobColumns+` FROM install_jobs j WHERE j.id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("lock install job %s: %w", id, err)
	}
	return j, nil
}

// LockLiveInstallJob reads a line's newest install job that is not finished (open, booked or
// held) for update.
func (tx *Tx) LockLiveInstallJob(ctx context.Context, subscriptionID string) (*subprov.InstallJob, error) {
	j, err := scanInstallJob(tx.QueryRow(ctx, `SELECT `+installJobColumns+` FROM install_jobs j
		WHERE j.subscription_id = ? AND j.state IN ('open', 'booked', 'held') ORDER BY j.created_at DESC, j.id DESC LIMIT 1`+tx.d.ForUpdate(),
		subscriptionID))
	if err != nil {
		return nil, fmt.Errorf("lock live install job of %s: %w", subscriptionID, err)
	}
	return j, nil
}

// SaveInstallJob writes a job's changeable columns (read it with a lock first).
func (tx *Tx) SaveInstallJob(ctx context.Context, j *subprov.InstallJob, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE install_jobs SET booking = ?, state = ?, flags = ?, assigned_to = ?, appointment_at = ?,
		invitation_due_on = ?, slot_window_id = ?, slot_date = ?, updated_at = ? WHERE id = ?`,
		nullStr(j.Booking), j.State, j.Flags, j.AssignedTo, nullTime(j.AppointmentAt), nullStr(j.InvitationDueOn),
		nullStr(j.SlotWindowID), nullStr(j.SlotDate), now.UTC(), j.ID)
	if err != nil {
		return fmt.Errorf("save install job %s: %w", j.ID, err)
	}
	j.UpdatedAt = now.UTC()
	return nil
}

// SetSubscriptionAppointment sets (or clears, with nil) a line's appointment_at.
func (tx *Tx) SetSubscriptionAppointment(ctx context.Context, subscriptionID string, at *time.Time, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE subscriptions SET appointment_at = ?, updated_at = ? WHERE id = ?`, nullTime(at), now.UTC(), subscriptionID); err != nil {
		return fmt.Errorf("set appointment of %s: %w", subscriptionID, err)
	}
	return nil
}

// DueInvitations lists customer-booked jobs whose invitation is due on or before day (the
// latest "today" of any time zone; the caller checks each provider's own today).
func (s *Store) DueInvitations(ctx context.Context, day string, limit int) ([]*subprov.InstallJob, error) {
	return sqltext.QueryAll(ctx, s.R(), "due invitations", func(r rowScanner) (*subprov.InstallJob, error) { return scanInstallJob(r) },
		`SELECT `+installJobColumns+` FROM install_jobs j
		WHERE j.state = 'open' AND j.booking = 'customer' AND j.invitation_due_on IS NOT NULL AND j.invitation_due_on <= ?
		ORDER BY j.invitation_due_on, j.id LIMIT ?`, day, limit)
}

// InstallQueue lists install jobs, oldest first.
func (s *Store) InstallQueue(ctx context.Context, f subprov.InstallJobFilter) ([]*subprov.InstallQueueEntry, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.ID != "" {
		add("j.id = ?", f.ID)
	}
	if f.ProviderID != "" {
		add("j.provider_id = ?", f.ProviderID)
	}
	if f.State != "" {
		add("j.state = ?", f.State)
	}
	if f.Kind != "" {
		add("j.kind = ?", f.Kind)
	}
	if f.Booking != "" {
		add("j.booking = ?", f.Booking)
	}
	if f.AssignedTo != "" {
		add("j.assigned_to = ?", f.AssignedTo)
	}
	if f.Flag != "" {
		// flags is a comma-separated list; match whole entries only.
		add("(',' || j.flags || ',') LIKE ?", "%,"+strings.NewReplacer("%", "", "_", "").Replace(f.Flag)+",%")
	}
	q := `SELECT ` + installJobColumns + `, s.status, s.on_hold, s.booking_link_sent, b.street, b.city, b.postal_code, COALESCE(u.unit_number, '')
		FROM install_jobs j JOIN subscriptions s ON s.id = j.subscription_id JOIN buildings b ON b.id = s.building_id
		LEFT JOIN units u ON u.id = s.unit_id`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY j.created_at, j.id LIMIT ?`
	args = append(args, f.Limit)
	rows, err := s.R().Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("install queue: %w", err)
	}
	defer rows.Close()
	var out []*subprov.InstallQueueEntry
	for rows.Next() {
		var r subprov.InstallQueueEntry
		j, err := scanInstallJob(rows, &r.SubscriptionStatus, &r.OnHold, &r.BookingLinkSent, &r.Street, &r.City, &r.PostalCode, &r.UnitNumber)
		if err != nil {
			return nil, fmt.Errorf("install queue: %w", err)
		}
		r.InstallJob = *j
		out = append(out, &r)
	}
	return out, rows.Err()
}

// InsertBookingLink stores a new live link of a job.
func (tx *Tx) InsertBookingLink(ctx context.Context, tokenHash, providerID, jobID string, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO booking_links (token_hash, provider_id, install_job_id, state, created_at) VALUES (?, ?, ?, 'live', ?)`,
		tokenHash, providerID, jobID, now.UTC()); err != nil {
		return fmt.Errorf("insert booking link: %w", err)
	}
	return nil
}

// MoveBookingLinks moves a job's links in state from to state to.
func (tx *Tx) MoveBookingLinks(ctx context.Context, jobID, from, to string) error {
	if _, err := tx.Exec(ctx, `UPDATE booking_links SET state = ? WHERE install_job_id = ? AND state = ?`, to, jobID, from); err != nil {
		return fmt.Errorf("move booking links: %w", err)
	}
	return nil
}

// UseBookingLink marks a link used.
func (tx *Tx) UseBookingLink(ctx context.Context, tokenHash string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE booking_links SET state = 'used', used_at = ? WHERE token_hash = ?`, now.UTC(), tokenHash); err != nil {
		return fmt.Errorf("use booking link: %w", err)
	}
	return nil
}

// BookingLinkByHash finds a link by its token hash.
func (s *Store) BookingLinkByHash(ctx context.Context, tokenHash string) (*subprov.BookingLink, error) {
	return bookingLink(ctx, s.R(), tokenHash, "")
}

// LockBookingLink finds a link by its token hash for update.
func (tx *Tx) LockBookingLink(ctx context.Context, tokenHash string) (*subprov.BookingLink, error) {
	return bookingLink(ctx, tx, tokenHash, tx.d.ForUpdate())
}

func bookingLink(ctx context.Context, q Querier, tokenHash, suffix string) (*subprov.BookingLink, error) {
	var l subprov.BookingLink
	err := q.QueryRow(ctx, `SELECT provider_id, install_job_id, state FROM booking_links WHERE token_hash = ?`+suffix, tokenHash).
		Scan(&l.ProviderID, &l.InstallJobID, &l.State)
	if err != nil {
		return nil, fmt.Errorf("booking link: %w", err)
	}
	return &l, nil
}

// releaseSlotsOfBookedJobs gives back the places held by a line's booked jobs (the line is
// cancelled before its visit).
func (tx *Tx) releaseSlotsOfBookedJobs(ctx context.Context, subscriptionID string) error {
	_, err := tx.Exec(ctx, `UPDATE install_slots SET booked = booked - 1 WHERE booked > 0 AND EXISTS (
		SELECT 1 FROM install_jobs j WHERE j.subscription_id = ? AND j.state = 'booked'
		AND j.slot_window_id = install_slots.window_id AND j.slot_date = install_slots.slot_date)`, subscriptionID)
	if err != nil {
		return fmt.Errorf("release slots of %s: %w", subscriptionID, err)
	}
	return nil
}
