package provisioning

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// CancelQuoteLine is one money line of a cancellation quote.
type CancelQuoteLine struct {
	Type        string // credit_note, final_invoice, open_credit
	Description string
	Amount      subprov.Money
}

// CancelQuote is the read-only quote of a cancellation.
type CancelQuote struct {
	Subscription *subprov.Subscription
	EndDate      string
	EndedAt      time.Time
	Period       string // YYYY-MM
	Lines        []CancelQuoteLine
	Total        subprov.Money
}

// CancellationMoney lets the billing engine quote and book a platform-billed cancellation.
type CancellationMoney interface {
	QuoteCancellation(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) ([]CancelQuoteLine, error)
	ApplyCancellation(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) error
}

// endOfService parses end_date and returns the instant service stops: midnight at the start
// of that day in the provider's time zone (ended_at is exclusive). A date before today is 422.
func endOfService(p *subprov.Provider, endDate string, now time.Time) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, strings.TrimSpace(endDate))
	if err != nil {
		return time.Time{}, subprov.Invalid(map[string]string{"end_date": "want a date YYYY-MM-DD"})
	}
	loc := p.Location()
	today := now.In(loc).Format(time.DateOnly)
	if d.Format(time.DateOnly) < today {
		return time.Time{}, subprov.Invalid(map[string]string{"end_date": "must be today (" + today + ") or later"})
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).UTC(), nil
}

// cancelledStatus is the status a cancellation gives sub, or the 409 when the line cannot be
// cancelled (it is already): the one check the preview and the cancellation share, so the
// preview never quotes a cancellation that would be refused.
func cancelledStatus(sub *subprov.Subscription) (subprov.Status, error) {
	return Next(sub.Status, ActCancel)
}

// QuoteCancellation previews a cancellation for end_date without changing anything. A line
// outside scope is not found.
func (s *Service) QuoteCancellation(ctx context.Context, scope subprov.Scope, subscriptionID, endDate string) (*CancelQuote, error) {
	sub, p, err := s.operatorSubscription(ctx, scope, subscriptionID)
	if err != nil {
		return nil, err
	}
	endedAt, err := endOfService(p, endDate, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	// The preview answers as the cancellation would: a line it refuses is refused here too,
	// before anything is quoted.
	if _, err := cancelledStatus(sub); err != nil {
		return nil, err
	}
	q := &CancelQuote{Subscription: sub, EndDate: strings.TrimSpace(endDate), EndedAt: endedAt,
		Period: endedAt.In(p.Location()).Format("2006-01"), Lines: []CancelQuoteLine{}}
	if sub.BillingOwner == subprov.BillingPlatform {
		if money, ok := s.Billing.(CancellationMoney); ok {
			lines, err := money.QuoteCancellation(ctx, p, sub, endedAt)
			if err != nil {
				return nil, err
			}
			q.Lines = lines
		}
	}
	for _, l := range q.Lines {
		q.Total += l.Amount
	}
	return q, nil
}

// Cancel ends a line on end_date (today or later): CANCELLED at once with canceled_at and
// ended_at set; the port stays up until ended_at, when the deprovisioner resets it. A line
// outside scope is not found, and nothing changes.
func (s *Service) Cancel(ctx context.Context, scope subprov.Scope, subscriptionID, endDate, reason, actor string) (*subprov.Subscription, error) {
	_, p, err := s.operatorSubscription(ctx, scope, subscriptionID)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	endedAt, err := endOfService(p, endDate, now)
	if err != nil {
		return nil, err
	}
	if len(reason) > 500 {
		return nil, subprov.Invalid(map[string]string{"reason": "at most 500 characters"})
	}
	var out *subprov.Subscription
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, "", subscriptionID)
		if err != nil {
			return err
		}
		to, err := cancelledStatus(sub)
		if err != nil {
			return err
		}
		before := sub.Status
		change := subprov.SubscriptionChange{Status: &to, CanceledAt: &now, EndedAt: &endedAt, CancelReason: &reason,
			StatusBeforeCancel: &before, WorkflowState: strPtr(WorkflowCancelled)}
		if err := tx.UpdateSubscription(ctx, sub.ID, change, now); err != nil {
			return err
		}
		if err := tx.CloseInstallJobs(ctx, sub.ID, "cancelled", now); err != nil {
			return err
		}
		sub.Status, sub.CanceledAt, sub.EndedAt, sub.CancelReason, sub.StatusBeforeCancel = to, &now, &endedAt, reason, before
		sub.WorkflowState = WorkflowCancelled
		if err := s.FollowPort(ctx, tx, sub.PortID); err != nil { // the port keeps serving until the line ends
			return err
		}
		if sub.BillingOwner == subprov.BillingPlatform {
			if money, ok := s.Billing.(CancellationMoney); ok {
				if err := money.ApplyCancellation(ctx, tx, p, sub, endedAt); err != nil {
					return err
				}
			}
		}
		out = sub
		return tx.InsertAudit(ctx, p.ID, actor, "subscription.cancelled", sub.ID, `{"end_date":"`+strings.TrimSpace(endDate)+`"}`, now)
	})
	return out, err
}

// Cancellation returns a line for the operator (GET of the cancellation route); a line
// outside scope is not found.
func (s *Service) Cancellation(ctx context.Context, scope subprov.Scope, subscriptionID string) (*subprov.Subscription, error) {
	sub, _, err := s.operatorSubscription(ctx, scope, subscriptionID)
	return sub, err
}

// operatorSubscription loads a line for the dashboard: another provider's line than the
// scope's answers exactly as an unknown id.
func (s *Service) operatorSubscription(ctx context.Context, scope subprov.Scope, id string) (*subprov.Subscription, *subprov.Provider, error) {
	sub, err := s.Store.SubscriptionByID(ctx, id)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, nil, subprov.NotFound("Subscription")
		}
		return nil, nil, err
	}
	if err := scope.Check(sub.ProviderID, "Subscription"); err != nil {
		return nil, nil, err
	}
	p, err := s.provider(ctx, sub.ProviderID)
	if err != nil {
		return nil, nil, err
	}
	return sub, p, nil
}
