package providers

import (
	"context"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// Overlap bounds of a webhook secret rotation, in hours.
const (
	DefaultOverlapHours = 24
	MaxOverlapHours     = 72
)

// Rotated is a provider's new webhook secret, shown this once, and when the previous one stops
// being accepted.
type Rotated struct {
	WebhookSecret   string
	PreviousExpires time.Time
}

// RotateSecret gives a provider a new webhook secret. Outgoing webhooks are signed with it
// from the commit on; an inbound X-Webhook-Secret may still be the previous one for
// overlapHours (nil: the default 24; 0 to 72) on the service clock, then it is refused. A
// secret older than the previous one stops at once.
func (s *Service) RotateSecret(ctx context.Context, op *subprov.Operator, providerID string, overlapHours *int) (*Rotated, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	hours := DefaultOverlapHours
	if overlapHours != nil {
		hours = *overlapHours
	}
	var out *Rotated
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		p, err := readForUpdate(ctx, tx, op, providerID)
		if err != nil {
			return err
		}
		if hours < 0 || hours > MaxOverlapHours {
			return subprov.Invalid(map[string]string{"overlap_hours": "want 0 to 72"})
		}
		now := s.Clock.Now()
		secret := NewWebhookSecret()
		expires := now.Add(time.Duration(hours) * time.Hour).UTC()
		if _, err := tx.RotateWebhookSecret(ctx, p.ID, secret, identity.HashSecret(secret), identity.HashSecret(p.WebhookSecret), expires); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, p.ID, "provider.webhook_secret_rotated", "provider", p.ID)
		e.Changes.SetRedacted("webhook_secret")
		e.Changes.Set("previous_expires_at", nil, expires.Format(time.RFC3339))
		out = &Rotated{WebhookSecret: secret, PreviousExpires: expires}
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
