package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// CreditedOutage is an outage of a line's port credited on a credit note: the once-per-outage
// record of the outage credit policy (docs/billing.md, Outage credits).
type CreditedOutage struct {
	SubscriptionID string
	OutageID       string
	ProviderID     string
	CreditNoteID   string
	StartedAt      time.Time
	ResolvedAt     time.Time
}

// OutageCreditCandidates lists, after afterID in id order, a provider's platform-billed lines
// on a port that were activated and had not ended before since: the lines whose outages the
// policy may credit (the rule decides which outages).
func (s *Store) OutageCreditCandidates(ctx context.Context, providerID string, since time.Time, afterID string, limit int) ([]*subprov.Subscription, error) {
	return listSubscriptions(ctx, s.R(), "outage credit candidates", `WHERE s.provider_id = ? AND s.billing_owner = 'platform'
			AND s.port_id IS NOT NULL AND s.activated_at IS NOT NULL AND (s.ended_at IS NULL OR s.ended_at > ?) AND s.id > ?
		ORDER BY s.id LIMIT ?`, providerID, since.UTC(), afterID, limit)
}

// CreditedOutages lists the ids of the outages of a line already credited.
func (s *Store) CreditedOutages(ctx context.Context, subscriptionID string) ([]string, error) {
	return sqltext.Strings(ctx, s.R(), "credited outages", `SELECT outage_id FROM outage_credits WHERE subscription_id = ? ORDER BY started_at, outage_id`, subscriptionID)
}

// RecordCreditedOutage records that an outage of a line was credited by a credit note written
// in the same transaction. It reports false, writing nothing, when the outage was credited
// already (by an earlier run, or by another process meanwhile: on PostgreSQL the insert waits
// for that process's transaction), and the caller must then roll its credit note back.
func (tx *Tx) RecordCreditedOutage(ctx context.Context, o CreditedOutage, now time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `INSERT INTO outage_credits (subscription_id, outage_id, provider_id, credit_note_id, started_at, resolved_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (subscription_id, outage_id) DO NOTHING`,
		o.SubscriptionID, o.OutageID, o.ProviderID, o.CreditNoteID, o.StartedAt.UTC(), o.ResolvedAt.UTC(), now.UTC())
	if err != nil {
		return false, fmt.Errorf("record credited outage %s of %s: %w", o.OutageID, o.SubscriptionID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("record credited outage %s of %s: %w", o.OutageID, o.SubscriptionID, err)
	}
	return n == 1, nil
}
