package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// SetAutoPayOff records whether the holder turned AutoPay off for a line.
func (tx *Tx) SetAutoPayOff(ctx context.Context, subscriptionID string, off bool, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE subscriptions SET autopay_off = ?, updated_at = ? WHERE id = ?`, off, now.UTC(), subscriptionID); err != nil {
		return fmt.Errorf("set autopay of %s: %w", subscriptionID, err)
	}
	return nil
}

// PlatformLinesOfSubscriber lists a subscriber's platform-billed lines, oldest first.
func (s *Store) PlatformLinesOfSubscriber(ctx context.Context, providerID, subscriberID string) ([]*subprov.Subscription, error) {
	return listSubscriptions(ctx, s.R(), "platform lines of subscriber", `WHERE s.provider_id = ? AND s.subscriber_id = ?
		AND s.billing_owner = 'platform' ORDER BY s.created_at, s.id`, providerID, subscriberID)
}

// ReleaseCharge gives up a pay-now's claim on an open invoice without recording an attempt
// (nothing was charged): its AutoPay schedule stays as it was.
func (tx *Tx) ReleaseCharge(ctx context.Context, id string) error {
	if _, err := tx.Exec(ctx, `UPDATE invoices SET charge_queued_at = NULL WHERE id = ? AND status = 'open'`, id); err != nil {
		return fmt.Errorf("release charge of %s: %w", id, err)
	}
	return nil
}

// TokenSubject returns the subject and provider of the live token of kind with hash; a used,
// expired or unknown token gives subprov.ErrNotFound. The token is found by its hash, the only
// form it is kept in.
func (s *Store) TokenSubject(ctx context.Context, hash, kind string, now time.Time) (subjectID, providerID string, err error) {
	err = s.R().QueryRow(ctx, `SELECT subject_id, COALESCE(provider_id, '') FROM tokens WHERE token_hash = ? AND kind = ? AND used_at IS NULL
		AND expires_at > ?`, hash, kind, now.UTC()).Scan(&subjectID, &providerID)
	if err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	return subjectID, providerID, nil
}
