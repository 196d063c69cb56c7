package billing

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// BillingDayResult is the answer to a billing-day change.
type BillingDayResult struct {
	SubscriptionID  string
	BillingDay      int
	EffectivePeriod time.Time  // first day of the first month the new day applies to
	NextSendDate    *time.Time // nil while the line has no recurring invoice to send
}

// LastBillingDay is the latest day of a month a line's recurring invoice can fall on
// (a billing day is 1 to 10: docs/billing.md).
const LastBillingDay = 10

// ChangeBillingDay sets the day (1 to 10) a line's recurring invoice is sent and charged. It
// changes when money is collected, never what is owed: no invoice, credit note or correction
// results. If the current month is already invoiced the new day applies from next month;
// otherwise it must still be ahead this month (today or past is 409). If the billing system
// cannot reschedule the next invoice, the day stays saved and the answer is 502 (retry). Only
// the account holder may move it (403 holder_only for an authorized user).
func (s *Service) ChangeBillingDay(ctx context.Context, p *subprov.Provider, acc *subprov.Account, subscriptionID string, day int) (*BillingDayResult, error) {
	if err := acc.CheckHolder(); err != nil {
		return nil, err
	}
	subscriberID := acc.SubscriberID
	if day < 1 || day > LastBillingDay {
		return nil, subprov.Invalid(map[string]string{"billing_day": "want a whole number from 1 to 10"})
	}
	sub, err := s.Store.Subscription(ctx, p.ID, subscriptionID)
	if err != nil || sub.SubscriberID != subscriberID {
		if err == nil || errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Subscription")
		}
		return nil, err
	}
	today := LocalDay(s.Clock.Now(), p.Location())
	period := PeriodOf(today)
	_, err = s.Store.PeriodInvoice(ctx, s.Store.R(), sub.ID, period.String())
	invoiced := err == nil
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return nil, err
	}
	effective := period
	if invoiced {
		effective = period.Next()
	} else if day <= today.Day() {
		return nil, subprov.Errorf(subprov.ECONFLICT, "billing_day_passed",
			"This month is not invoiced yet and day %d is today or already past; choose a later day", day)
	}
	res := &BillingDayResult{SubscriptionID: sub.ID, BillingDay: day, EffectivePeriod: effective.First()}
	billed := sub.BillingOwner == subprov.BillingPlatform && sub.ActivatedAt != nil &&
		(sub.Status == subprov.StatusActive || sub.Status == subprov.StatusSuspended)
	if billed {
		next := effective.Day(day)
		res.NextSendDate = &next
	}
	now := s.Clock.Now()
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{BillingDay: &day}, now); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, p.ID, "subscriber", "subscription.billing_day_changed", sub.ID, `{"billing_day":`+strconv.Itoa(day)+`}`, now)
	})
	if err != nil {
		return nil, err
	}
	if billed {
		if err := s.Ledger.RescheduleNextInvoice(ctx, p, sub.ID, *res.NextSendDate); errors.Is(err, ErrBillingSystemUnavailable) {
			return nil, subprov.Errorf(subprov.EUNAVAILABLE, "reschedule_failed",
				"The billing day is saved, but the next invoice could not be rescheduled; retry")
		} else if err != nil {
			return nil, err
		}
	}
	return res, nil
}
