package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

const checkoutColumns = `id, provider_id, plan_version_id, building_id, COALESCE(unit_id, ''), location_hash, mac_address, delivery_mode,
	status, COALESCE(account_id, ''), partner_reference_id, COALESCE(subscription_id, ''), created_at, redirected_at, expired_at,
	completed_at, cancelled_at`

func scanCheckoutSession(row rowScanner) (*subprov.CheckoutSession, error) {
	var c subprov.CheckoutSession
	var redirected, expired, completed, cancelled nullTimeScan
	if err := row.Scan(&c.ID, &c.ProviderID, &c.PlanVersionID, &c.BuildingID, &c.UnitID, &c.LocationHash, &c.MACAddress,
		&c.DeliveryMode, &c.Status, &c.AccountID, &c.PartnerReferenceID, &c.SubscriptionID, &c.CreatedAt, &redirected, &expired,
		&completed, &cancelled); err != nil {
		return nil, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	c.RedirectedAt, c.ExpiredAt, c.CompletedAt, c.CancelledAt = redirected.ptr(), expired.ptr(), completed.ptr(), cancelled.ptr()
	return &c, nil
}

// InsertCheckoutSession stores a new session.
func (tx *Tx) InsertCheckoutSession(ctx context.Context, c *subprov.CheckoutSession) error {
	_, err := tx.Exec(ctx, `INSERT INTO checkout_sessions (id, provider_id, plan_version_id, building_id, unit_id, location_hash,
			mac_address, delivery_mode, status, account_id, partner_reference_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.ProviderID, c.PlanVersionID, c.BuildingID, nullStr(c.UnitID), c.LocationHash, c.MACAddress, string(c.DeliveryMode),
		c.Status, nullStr(c.AccountID), c.PartnerReferenceID, c.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert checkout session: %w", err)
	}
	return nil
}

// CheckoutSession returns a session by id, whichever provider it belongs to: the caller
// checks the session's age before it checks who is asking (docs/checkout.md).
func (s *Store) CheckoutSession(ctx context.Context, id string) (*subprov.CheckoutSession, error) {
	c, err := scanCheckoutSession(s.R().QueryRow(ctx, `SELECT `+checkoutColumns+` FROM checkout_sessions WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("checkout session %s: %w", id, err)
	}
	return c, nil
}

// LockCheckoutSession reads a session for update inside tx.
func (tx *Tx) LockCheckoutSession(ctx context.Context, id string) (*subprov.CheckoutSession, error) {
	c, err := scanCheckoutSession(tx.QueryRow(ctx, `SELECT `+checkoutColumns+` FROM checkout_sessions WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("lock checkout session %s: %w", id, err)
	}
	return c, nil
}

// ExpireCheckoutSession marks a still-pending session expired at the moment it went stale;
// false when it was no longer pending (read, completed or already expired meanwhile).
func (tx *Tx) ExpireCheckoutSession(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = 'expired', expired_at = ? WHERE id = ? AND status = 'pending'`, at.UTC(), id)
	if err != nil {
		return false, fmt.Errorf("expire checkout session: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RedirectCheckoutSession records the first read of a pending session.
func (tx *Tx) RedirectCheckoutSession(ctx context.Context, id string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = 'redirected', redirected_at = ? WHERE id = ? AND status = 'pending'`, now.UTC(), id)
	if err != nil {
		return fmt.Errorf("redirect checkout session: %w", err)
	}
	return nil
}

// PatchCheckoutSession changes the two patchable fields of an open session; false when the
// session is no longer pending or redirected.
func (tx *Tx) PatchCheckoutSession(ctx context.Context, id string, planVersionID, partnerRef *string) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE checkout_sessions SET plan_version_id = COALESCE(?, plan_version_id),
		partner_reference_id = COALESCE(?, partner_reference_id) WHERE id = ? AND status IN ('pending', 'redirected')`,
		optStr(planVersionID), optStr(partnerRef), id)
	if err != nil {
		return false, fmt.Errorf("patch checkout session: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CancelCheckoutSession cancels an open session; false when it was not pending or redirected.
func (tx *Tx) CancelCheckoutSession(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = 'cancelled', cancelled_at = ? WHERE id = ? AND status IN ('pending', 'redirected')`,
		now.UTC(), id)
	if err != nil {
		return false, fmt.Errorf("cancel checkout session: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CompleteCheckoutSession marks a session completed by subscriptionID in tx.
func (tx *Tx) CompleteCheckoutSession(ctx context.Context, id, subscriptionID string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = 'completed', completed_at = ?, subscription_id = ? WHERE id = ?`,
		now.UTC(), subscriptionID, id)
	if err != nil {
		return fmt.Errorf("complete checkout session: %w", err)
	}
	return nil
}

// CheckoutSessionsOfAccount lists the sessions created while signed in to an account, newest first.
func (s *Store) CheckoutSessionsOfAccount(ctx context.Context, accountID string) ([]*subprov.CheckoutSession, error) {
	return sqltext.QueryAll(ctx, s.R(), "checkout sessions of account", scanCheckoutSession,
		`SELECT `+checkoutColumns+` FROM checkout_sessions WHERE account_id = ? ORDER BY created_at DESC, id`, accountID)
}

// SubscriptionByCheckoutSession returns the line a session completed into.
func (tx *Tx) SubscriptionByCheckoutSession(ctx context.Context, sessionID string) (*subprov.Subscription, error) {
	return scanSubscription(tx.QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s WHERE s.checkout_session_id = ?`, sessionID))
}

func optStr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// SubscriptionByExternalID returns a provider's line by the partner's own id.
func (s *Store) SubscriptionByExternalID(ctx context.Context, providerID, externalID string) (*subprov.Subscription, error) {
	return scanSubscription(s.R().QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s
		WHERE s.provider_id = ? AND s.external_subscription_id = ?`, providerID, externalID))
}
