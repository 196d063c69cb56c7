package provisioning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Adjustment is the one-time money effect of a plan change on a platform-billed line; the
// billing engine computes it. Nil when nothing is invoiced or credited.
type Adjustment struct {
	Type         string // next_invoice_line, credit, none
	Amount       subprov.Money
	Days         int
	DaysInPeriod int
	Note         string
}

// MarshalJSON writes the preview's one_time_adjustment, with the deprecated fields
// proration_factor and due_in_days kept until the next release.
func (a Adjustment) MarshalJSON() ([]byte, error) {
	var factor float64
	if a.DaysInPeriod > 0 {
		factor = float64(int64(a.Days)*10000/int64(a.DaysInPeriod)) / 10000
	}
	return json.Marshal(struct {
		Type            string        `json:"type"`
		Amount          subprov.Money `json:"amount"`
		Days            int           `json:"days"`
		DaysInPeriod    int           `json:"days_in_period"`
		Note            string        `json:"note"`
		ProrationFactor float64       `json:"proration_factor"` // deprecated
		DueInDays       int           `json:"due_in_days"`      // deprecated
	}{a.Type, a.Amount, a.Days, a.DaysInPeriod, a.Note, factor, 0})
}

// PlanChangeMoney lets the billing engine price and book a plan change.
type PlanChangeMoney interface {
	PreviewPlanChange(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, from, to *subprov.PlanVersion) (*Adjustment, string, error)
	ApplyPlanChange(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, from, to *subprov.PlanVersion) (*Adjustment, error)
}

// PlanChangeQuote is the preview of a plan change.
type PlanChangeQuote struct {
	Subscription    *subprov.Subscription
	From, To        *subprov.PlanVersion
	RecurringChange subprov.Money
	Adjustment      *Adjustment
	Note            string
	Eligible        bool
	Blockers        []string
	EffectiveDate   string
	day             changeDay // the caller's calendar day the quote counted changes in
}

// PlanChangeResult is an applied plan change.
type PlanChangeResult struct {
	Quote            *PlanChangeQuote
	BandwidthUpdated bool
	AppliedAt        time.Time
}

// Calendar says whose calendar day limits a line to one plan change (once per calendar day: UTC for
// the partner endpoint, the provider's day for the agent; docs/provisioning.md). Each caller counts
// every change, through any surface, made within its own day.
type Calendar int

const (
	// ProviderDay is the provider's calendar day (its time_zone): the agent's limit.
	ProviderDay Calendar = iota
	// UTCDay is the UTC calendar day: the partner endpoint's limit.
	UTCDay
)

// changeDay is the calendar day a plan change falls on: its date and zone, and the instants it
// starts and ends (exclusive).
type changeDay struct {
	Date, Zone string
	Start, End time.Time
}

// planChangeDay is the day containing now in cal's calendar.
func planChangeDay(p *subprov.Provider, cal Calendar, now time.Time) changeDay {
	loc := time.UTC
	if cal == ProviderDay {
		loc = p.Location()
	}
	local := now.In(loc)
	start := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	return changeDay{Date: local.Format(time.DateOnly), Zone: loc.String(), Start: start, End: start.AddDate(0, 0, 1)}
}

func (d changeDay) limitReached() error {
	return subprov.Errorf(subprov.ECONFLICT, "plan_change_limit", "The plan already changed today (%s); one plan change per calendar day", d.Zone)
}

// PreviewPlanChange quotes a plan change without applying it; cal is the caller's calendar for
// the once-a-day limit; the effective date is the provider's day, as the money's. An
// ineligible line is not an error: the quote says why in Blockers. A target that is the
// line's own plan is (422), or, once the day's change is made, 409 plan_change_limit: sent
// again, the day's change is a second one.
func (s *Service) PreviewPlanChange(ctx context.Context, p *subprov.Provider, subscriptionID, planVersionID string, cal Calendar) (*PlanChangeQuote, error) {
	sub, err := s.Store.Subscription(ctx, p.ID, subscriptionID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Subscription")
		}
		return nil, err
	}
	return s.quote(ctx, p, sub, planVersionID, cal)
}

func (s *Service) quote(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, planVersionID string, cal Calendar) (*PlanChangeQuote, error) {
	if strings.TrimSpace(planVersionID) == "" {
		return nil, subprov.Invalid(map[string]string{"plan_version_id": "required"})
	}
	from, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return nil, err
	}
	to, err := s.Store.PlanVersion(ctx, p.ID, planVersionID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.Invalid(map[string]string{"plan_version_id": "no plan version of this provider with this id"})
		}
		return nil, err
	}
	if !to.Sellable {
		return nil, subprov.Invalid(map[string]string{"plan_version_id": "this plan version is no longer sold"})
	}
	now := s.Clock.Now()
	day := planChangeDay(p, cal, now)
	changed, err := s.Store.PlanChangedBetween(ctx, s.Store.R(), sub.ID, day.Start, day.End)
	if err != nil {
		return nil, err
	}
	if to.ID == from.ID {
		if changed { // the day's change already made: a repeated call is the second change of the day
			return nil, day.limitReached()
		}
		return nil, subprov.Invalid(map[string]string{"plan_version_id": "the line already has this plan version"})
	}
	q := &PlanChangeQuote{Subscription: sub, From: from, To: to, RecurringChange: to.MonthlyPrice - from.MonthlyPrice,
		EffectiveDate: planChangeDay(p, ProviderDay, now).Date, Eligible: true, Blockers: []string{}, day: day}
	if _, err := Next(sub.Status, ActChangePlan); err != nil {
		q.Eligible = false
		q.Blockers = append(q.Blockers, fmt.Sprintf("the line is %s; only an ACTIVE line can change plan", sub.Status))
	}
	if changed {
		q.Eligible = false
		q.Blockers = append(q.Blockers, fmt.Sprintf("the plan already changed today (%s); one change per calendar day", day.Zone))
	}
	q.Note = "No invoice line or credit note: the service does not invoice this line."
	if sub.BillingOwner == subprov.BillingPlatform {
		if money, ok := s.Billing.(PlanChangeMoney); ok {
			adj, note, err := money.PreviewPlanChange(ctx, p, sub, from, to)
			if err != nil {
				return nil, err
			}
			q.Adjustment, q.Note = adj, note
		}
	}
	return q, nil
}

// ChangePlan applies a plan change at once, at most once per calendar day of cal. Under the
// subscription's row lock it looks for any change, through any surface, made within the
// caller's day, so changes through the agent (the provider's day) and the partner endpoint
// (the UTC day) count against each other and two racing calls record one change; the port's
// desired bandwidth is committed with the change, so the refused call never touches the
// switch. Then, for a port in service, the request waits for the switch (up to AwaitTimeout):
// a bandwidth the switch does not confirm still applies the plan, answers bandwidth_updated
// false and raises an operator ticket (the port.converge job keeps at it); it is not a reason
// to retry. A line still being provisioned gets the new bandwidth from its provisioning job.
func (s *Service) ChangePlan(ctx context.Context, p *subprov.Provider, subscriptionID, planVersionID, actor string, cal Calendar) (*PlanChangeResult, error) {
	q, err := s.PreviewPlanChange(ctx, p, subscriptionID, planVersionID, cal)
	if err != nil {
		return nil, err
	}
	if !q.Eligible {
		if q.Subscription.Status != subprov.StatusActive {
			return nil, subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "%s", q.Blockers[0])
		}
		return nil, q.day.limitReached()
	}
	sub := q.Subscription
	now := s.Clock.Now()
	res := &PlanChangeResult{Quote: q, BandwidthUpdated: true, AppliedAt: now}
	var inService bool
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.LockSubscription(ctx, p.ID, sub.ID)
		if err != nil {
			return err
		}
		if _, err := Next(cur.Status, ActChangePlan); err != nil {
			return err
		}
		day := planChangeDay(p, cal, now)
		if cur.PlanVersionID != q.From.ID {
			return day.limitReached()
		}
		if changed, err := s.Store.PlanChangedBetween(ctx, tx, sub.ID, day.Start, day.End); err != nil {
			return err
		} else if changed {
			return day.limitReached()
		}
		ok, err := tx.InsertPlanChange(ctx, subprov.PlanChange{SubscriptionID: sub.ID, From: q.From.ID, To: q.To.ID, Day: day.Date,
			TimeZone: day.Zone, Actor: actor}, now)
		if err != nil {
			return err
		}
		if !ok {
			return day.limitReached()
		}
		if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{PlanVersionID: &q.To.ID}, now); err != nil {
			return err
		}
		if err := s.FollowPort(ctx, tx, cur.PortID); err != nil {
			return err
		}
		inService = cur.PortID != "" && (cur.WorkflowState == WorkflowProvisioned || cur.WorkflowState == WorkflowInstalled)
		if sub.BillingOwner == subprov.BillingPlatform {
			if money, ok := s.Billing.(PlanChangeMoney); ok {
				adj, err := money.ApplyPlanChange(ctx, tx, p, cur, q.From, q.To)
				if err != nil {
					return err
				}
				q.Adjustment = adj
			}
		}
		details := fmt.Sprintf(`{"from":%q,"to":%q}`, q.From.ID, q.To.ID)
		e := subprov.NewAudit(ctx, p.ID, "subscription.plan_changed", "subscription", sub.ID)
		e.Actor, e.Details = subprov.ActorNamed(ctx, actor), details
		e.Changes.Set("plan_version_id", q.From.ID, q.To.ID)
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	sub.PlanVersionID = q.To.ID
	if !inService {
		return res, nil
	}
	werr := s.awaitPort(ctx, sub.PortID, AwaitTimeout)
	if werr == nil {
		return res, nil
	}
	s.Log.Warn("plan change: bandwidth not confirmed", "subscription_id", sub.ID, "err", werr)
	res.BandwidthUpdated = false
	err = s.Store.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		if err := tx.InsertAudit(ctx, p.ID, actor, "subscription.bandwidth_unconfirmed", sub.ID,
			fmt.Sprintf(`{"to":%q,"reason":%q}`, q.To.ID, failureReason(werr)), s.Clock.Now()); err != nil {
			return err
		}
		return s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: p.ID, SubscriberID: sub.SubscriberID, Kind: "operator",
			Subject: "Confirm bandwidth after plan change", InternalNote: fmt.Sprintf("Subscription %s changed to %s (%d/%d Mbps); the switch did not confirm the bandwidth (%s).",
				sub.ID, q.To.PlanName, q.To.DownloadMbps, q.To.UploadMbps, failureReason(werr))})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
