package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/search"
)

// SQL of the support-agent API: service locations, notes, verification codes, tickets read
// by e-mail, the holder's portal login, contact edits and idempotent replays. Every query
// takes the provider it is scoped to.

// serviceLocationsOf reads the lines of n of a provider's subscribers, named by id, newest
// first, through the subscriber index (unindexed). Arguments: the provider, then the
// ids.
func serviceLocationsOf(n int) string {
	return `SELECT s.subscriber_id, ` + search.LocationColumns + `
		FROM subscriptions s JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
		WHERE ` + sqltext.ProvidersKeys("s.provider_id", "s.subscriber_id", n) + `
		ORDER BY s.created_at DESC, s.id`
}

// ServiceLocations reads where each line of a provider's subscribers in ids is, newest first.
func (s *Store) ServiceLocations(ctx context.Context, providerID string, ids []string) ([]subprov.ServiceLocation, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.R().Query(ctx, serviceLocationsOf(len(ids)), sqltext.Args(providerID, ids)...)
	if err != nil {
		return nil, fmt.Errorf("service locations: %w", err)
	}
	defer rows.Close()
	var out []subprov.ServiceLocation
	for rows.Next() {
		var l subprov.ServiceLocation
		if err := rows.Scan(append([]any{&l.SubscriberID}, search.LocationFields(&l)...)...); err != nil {
			return nil, fmt.Errorf("service locations: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Address is a postal address.
type Address struct {
	Street, City, PostalCode, Province, Country string
}

// InvoiceAddress reads the postal address kept on a subscriber's billing contact (the
// separate one if any, else the holder's); empty when none was recorded.
func (s *Store) InvoiceAddress(ctx context.Context, subscriberID string) (Address, error) {
	var a Address
	err := s.R().QueryRow(ctx, `SELECT street, city, postal_code, province, country FROM contacts
		WHERE subscriber_id = ? AND street <> '' ORDER BY CASE role WHEN 'invoice' THEN 0 ELSE 1 END LIMIT 1`, subscriberID).
		Scan(&a.Street, &a.City, &a.PostalCode, &a.Province, &a.Country)
	if IsNoRows(err) {
		return Address{}, nil
	}
	if err != nil {
		return a, fmt.Errorf("invoice address: %w", err)
	}
	return a, nil
}

// ServiceAddress reads where one of a provider's lines is: its building's address and the
// suite as the postal address writes it (the postal label where the suite has one, else its
// number; "" without a suite).
func (s *Store) ServiceAddress(ctx context.Context, providerID, subscriptionID string) (Address, string, error) {
	var a Address
	var suite string
	err := s.R().QueryRow(ctx, `SELECT g.street, g.city, g.postal_code, g.province, g.country,
			COALESCE(NULLIF(u.postal_unit, ''), u.unit_number, '')
		FROM subscriptions s JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
		WHERE s.provider_id = ? AND s.id = ?`, providerID, subscriptionID).
		Scan(&a.Street, &a.City, &a.PostalCode, &a.Province, &a.Country, &suite)
	if err != nil {
		return a, "", fmt.Errorf("service address of %s: %w", subscriptionID, err)
	}
	return a, suite, nil
}

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

// VerificationCode is a one-time code sent to a customer; only its hash is stored.
type VerificationCode struct {
	ID, ProviderID, SubscriberID, APIKeyID, Channel, CodeHash string
	Checks                                                    int
	ExpiresAt, CreatedAt                                      time.Time
}

// InsertVerificationCode stores a new code and kills the customer's earlier live ones: only
// the newest code works.
func (tx *Tx) InsertVerificationCode(ctx context.Context, c *VerificationCode) error {
	if _, err := tx.Exec(ctx, `UPDATE verification_codes SET consumed_at = ? WHERE provider_id = ? AND subscriber_id = ? AND consumed_at IS NULL`,
		c.CreatedAt.UTC(), c.ProviderID, c.SubscriberID); err != nil {
		return fmt.Errorf("retire verification codes: %w", err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO verification_codes (id, provider_id, subscriber_id, api_key_id, channel, code_hash, checks, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)`, c.ID, c.ProviderID, c.SubscriberID, c.APIKeyID, c.Channel, c.CodeHash, c.ExpiresAt.UTC(), c.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert verification code: %w", err)
	}
	return nil
}

// DeleteVerificationCode removes a code that could not be sent.
func (s *Store) DeleteVerificationCode(ctx context.Context, id string) error {
	return s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM verification_codes WHERE id = ?`, id)
		return err
	})
}

// UnverifiedCodesSince counts the codes issued since t that never verified a session, for a
// customer and by an API key.
func (s *Store) UnverifiedCodesSince(ctx context.Context, providerID, subscriberID, apiKeyID string, t time.Time) (perCustomer, perKey int, err error) {
	err = s.R().QueryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM verification_codes WHERE provider_id = ? AND subscriber_id = ? AND created_at >= ? AND verified_at IS NULL),
			(SELECT COUNT(*) FROM verification_codes WHERE api_key_id = ? AND created_at >= ? AND verified_at IS NULL)`,
		providerID, subscriberID, t.UTC(), apiKeyID, t.UTC()).Scan(&perCustomer, &perKey)
	if err != nil {
		return 0, 0, fmt.Errorf("count verification codes: %w", err)
	}
	return perCustomer, perKey, nil
}

// LockLiveCode reads a customer's newest live code (unconsumed, unexpired) for update and
// counts one more check against it.
func (tx *Tx) LockLiveCode(ctx context.Context, providerID, subscriberID string, now time.Time) (*VerificationCode, error) {
	var c VerificationCode
	err := tx.QueryRow(ctx, `SELECT id, provider_id, subscriber_id, api_key_id, channel, code_hash, checks, expires_at, created_at
		FROM verification_codes WHERE provider_id = ? AND subscriber_id = ? AND consumed_at IS NULL AND expires_at > ?
		ORDER BY created_at DESC LIMIT 1`+tx.d.ForUpdate(), providerID, subscriberID, now.UTC()).
		Scan(&c.ID, &c.ProviderID, &c.SubscriberID, &c.APIKeyID, &c.Channel, &c.CodeHash, &c.Checks, &c.ExpiresAt, &c.CreatedAt)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// RecordCodeCheck counts a check. verified marks the code as the one that verified a session,
// which ends it; consumed ends it otherwise (the last check).
func (tx *Tx) RecordCodeCheck(ctx context.Context, id string, verified, consumed bool, now time.Time) error {
	q := `UPDATE verification_codes SET checks = checks + 1 WHERE id = ?`
	args := []any{id}
	switch {
	case verified:
		q = `UPDATE verification_codes SET checks = checks + 1, consumed_at = ?, verified_at = ? WHERE id = ?`
		args = []any{now.UTC(), now.UTC(), id}
	case consumed:
		q = `UPDATE verification_codes SET checks = checks + 1, consumed_at = ? WHERE id = ?`
		args = []any{now.UTC(), id}
	}
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("record code check: %w", err)
	}
	return nil
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

// HolderAccount returns the portal login of a subscriber's holder, if one exists.
func (tx *Tx) HolderAccount(ctx context.Context, providerID, subscriberID string) (*AccountLogin, error) {
	return scanAccount(tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts a WHERE a.provider_id = ? AND a.subscriber_id = ?
		AND a.authorized_user_id IS NULL`+tx.d.ForUpdate(), providerID, subscriberID))
}

// CreateHolderAccount creates the portal login of a subscriber's holder, without a password.
// taken reports that another login already uses the e-mail; that login is left as it is.
func (tx *Tx) CreateHolderAccount(ctx context.Context, providerID, subscriberID, email string, now time.Time) (id string, taken bool, err error) {
	err = tx.QueryRow(ctx, `INSERT INTO accounts (id, email, provider_id, subscriber_id, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING id`, NewID(), email, providerID, subscriberID, now.UTC()).Scan(&id)
	if IsNoRows(err) {
		return "", true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("create holder account: %w", err)
	}
	return id, false, nil
}

// ChangeHolderEmail moves a subscriber's holder e-mail (contact, subscriber and portal login).
// taken reports that another subscriber or login already uses it.
func (tx *Tx) ChangeHolderEmail(ctx context.Context, providerID, subscriberID, email string, now time.Time) (taken bool, err error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var n int
	err = tx.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM subscribers WHERE provider_id = ? AND email = ? AND id <> ?)
		+ (SELECT COUNT(*) FROM accounts WHERE email = ? AND (subscriber_id IS NULL OR subscriber_id <> ? OR authorized_user_id IS NOT NULL))`,
		providerID, email, subscriberID, email, subscriberID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check e-mail in use: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE subscribers SET email = ?, updated_at = ? WHERE provider_id = ? AND id = ?`, email, now.UTC(), providerID, subscriberID); err != nil {
		return false, fmt.Errorf("change subscriber e-mail: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE accounts SET email = ? WHERE subscriber_id = ? AND authorized_user_id IS NULL`, email, subscriberID); err != nil {
		return false, fmt.Errorf("change login e-mail: %w", err)
	}
	return false, nil
}
