package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// The one-time codes an agent sends a caller to verify them (table verification_codes). Every
// query takes the provider it is scoped to.

// InsertVerificationCode stores a new code and kills the customer's earlier live ones: only
// the newest code works.
func (tx *Tx) InsertVerificationCode(ctx context.Context, c *subprov.VerificationCode) error {
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

// UnverifiedCodeIssuedAt returns when the code at offset n (0 the oldest) was issued among the
// codes issued at or after t that verified no session: a customer's (apiKeyID "") or an API
// key's (providerID and subscriberID ""). The issue limit waits for it to leave its window.
func (s *Store) UnverifiedCodeIssuedAt(ctx context.Context, providerID, subscriberID, apiKeyID string, t time.Time, n int) (time.Time, error) {
	q, args := `provider_id = ? AND subscriber_id = ?`, []any{providerID, subscriberID}
	if apiKeyID != "" {
		q, args = `api_key_id = ?`, []any{apiKeyID}
	}
	var at time.Time
	err := s.R().QueryRow(ctx, `SELECT created_at FROM verification_codes WHERE `+q+` AND created_at >= ? AND verified_at IS NULL
		ORDER BY created_at LIMIT 1 OFFSET ?`, append(args, t.UTC(), n)...).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("issue time of verification code: %w", err)
	}
	return at, nil
}

// LockLiveCode reads a customer's newest live code (unconsumed, unexpired) for update and
// counts one more check against it.
func (tx *Tx) LockLiveCode(ctx context.Context, providerID, subscriberID string, now time.Time) (*subprov.VerificationCode, error) {
	var c subprov.VerificationCode
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
