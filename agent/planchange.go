package agent

import (
	"context"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
)

// PreviewRequest asks what a plan change would cost. subscription_id is needed only when the
// customer has more than one line that could change plan.
type PreviewRequest struct {
	PlanVersionID  string `json:"plan_version_id"`
	SubscriptionID string `json:"subscription_id,omitempty"`
}

// ApplyRequest applies a plan change: confirm must be true, after the customer heard the
// preview.
type ApplyRequest struct {
	PlanVersionID  string       `json:"plan_version_id"`
	SubscriptionID string       `json:"subscription_id,omitempty"`
	Confirm        Confirmation `json:"confirm,omitempty"`
	// QuoteID is accepted and ignored. A signed quote token is planned and not shipped
	// (docs/agent.md, Writes), so no preview gives one; a client built for it may still echo a
	// quote_id, which must not make the call 422 as an unknown field would.
	QuoteID string `json:"quote_id,omitempty" jsonschema:"ignored: a signed quote is not shipped"`
}

// Confirmation is the apply call's confirm field. Only the JSON value true confirms; any other
// value ("true", 1, null, false) leaves the change unconfirmed, which is 400
// confirmation_required (the call must include confirm: true, else 400), not a
// validation error.
type Confirmation bool

// UnmarshalJSON accepts any JSON value; only true confirms.
func (c *Confirmation) UnmarshalJSON(b []byte) error {
	*c = Confirmation(string(b) == "true")
	return nil
}

// PlanChangePreview is the exact billing impact of a plan change (plan-change preview rules).
type PlanChangePreview struct {
	CustomerID        string                   `json:"customer_id"`
	SubscriptionID    string                   `json:"subscription_id"`
	Eligible          bool                     `json:"eligible"`
	Blockers          []string                 `json:"blockers"`
	CurrentPlan       PlanView                 `json:"current_plan"`
	NewPlan           PlanView                 `json:"new_plan"`
	RecurringChange   subprov.Money            `json:"recurring_change"`
	OneTimeAdjustment *provisioning.Adjustment `json:"one_time_adjustment"`
	Note              string                   `json:"note"`
	EffectiveDate     string                   `json:"effective_date"`
	BillingOwner      string                   `json:"billing_owner"`
	Currency          string                   `json:"currency"`
}

// PlanChangeApplied is an applied plan change.
type PlanChangeApplied struct {
	PlanChangePreview
	Status           subprov.Status `json:"status"`
	PlanVersionID    string         `json:"plan_version_id"`
	BandwidthUpdated bool           `json:"bandwidth_updated"`
	AppliedAt        string         `json:"applied_at"`
}

func previewOf(customerID string, p *subprov.Provider, q *provisioning.PlanChangeQuote) PlanChangePreview {
	return PlanChangePreview{CustomerID: customerID, SubscriptionID: q.Subscription.ID, Eligible: q.Eligible,
		Blockers: q.Blockers, CurrentPlan: planView(q.From), NewPlan: planView(q.To), RecurringChange: q.RecurringChange,
		OneTimeAdjustment: q.Adjustment, Note: q.Note, EffectiveDate: q.EffectiveDate,
		BillingOwner: string(q.Subscription.BillingOwner), Currency: p.Currency}
}

// line picks the customer's line to change: the one named, else the only ACTIVE line (or the
// only line that is not cancelled, whose preview then says why it cannot change).
func (s *Service) planLine(ctx context.Context, c Caller, customerID, subscriptionID string) (string, error) {
	subs, err := s.Store.SubscriptionsOfSubscriber(ctx, c.Provider.ID, customerID)
	if err != nil {
		return "", err
	}
	if id := strings.TrimSpace(subscriptionID); id != "" {
		for _, sub := range subs {
			if sub.ID == id {
				return id, nil
			}
		}
		return "", subprov.NotFound("Subscription")
	}
	var active, live []string
	for _, sub := range subs {
		if sub.Status == subprov.StatusActive {
			active = append(active, sub.ID)
		}
		if sub.Status != subprov.StatusCancelled {
			live = append(live, sub.ID)
		}
	}
	switch {
	case len(active) == 1:
		return active[0], nil
	case len(active) == 0 && len(live) == 1:
		return live[0], nil
	case len(live) == 0:
		return "", subprov.Invalid(map[string]string{"subscription_id": "the customer has no line that can change plan"})
	default:
		return "", subprov.Invalid(map[string]string{"subscription_id": "required: the customer has several lines"})
	}
}

func (s *Service) quote(ctx context.Context, c Caller, customerID, subscriptionID, planVersionID string) (*provisioning.PlanChangeQuote, error) {
	if strings.TrimSpace(planVersionID) == "" {
		return nil, subprov.Invalid(map[string]string{"plan_version_id": "required"})
	}
	subID, err := s.planLine(ctx, c, customerID, subscriptionID)
	if err != nil {
		return nil, err
	}
	return s.Provisioning.PreviewPlanChange(ctx, c.Provider, subID, strings.TrimSpace(planVersionID), provisioning.ProviderDay)
}

// PreviewPlanChange quotes a plan change without applying it (verified session required).
func (s *Service) PreviewPlanChange(ctx context.Context, c Caller, customerID string, in PreviewRequest) (*PlanChangePreview, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	q, err := s.quote(ctx, c, rec.ID, in.SubscriptionID, in.PlanVersionID)
	if err != nil {
		return nil, err
	}
	out := previewOf(rec.ID, c.Provider, q)
	return &out, nil
}

// ApplyPlanChange applies a plan change live, once per calendar day of the provider (its
// time_zone; a change through the partner endpoint counts too), with automatic proration and
// an audit entry (verified session required). Without confirm: true it is 400
// confirmation_required. A second change the same day, the same one sent again included, is
// 409 plan_change_limit: an Idempotency-Key is planned and not shipped (docs/agent.md, Writes), so
// nothing replays an earlier answer.
func (s *Service) ApplyPlanChange(ctx context.Context, c Caller, customerID string, in ApplyRequest) (*PlanChangeApplied, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	if !in.Confirm {
		return nil, subprov.Errorf(subprov.EBADREQUEST, "confirmation_required",
			"Read the previewed cost to the customer, then send confirm: true to apply the plan change")
	}
	q, err := s.quote(ctx, c, rec.ID, in.SubscriptionID, in.PlanVersionID)
	if err != nil {
		return nil, err
	}
	res, err := s.Provisioning.ChangePlan(ctx, c.Provider, q.Subscription.ID, q.To.ID, c.actor(), provisioning.ProviderDay)
	if e, ok := subprov.AsError(err); ok && e.Reason == "invalid_transition" {
		// A line that is not ACTIVE cannot change plan: a conflict with the line's state, 409
		// as at the partner endpoint (state conflicts are 409), not a body to correct.
		// None of the other agent codes names it, so it has one of its own; the message says
		// which state the line is in.
		return nil, subprov.Errorf(subprov.ECONFLICT, "invalid_state", "%s", e.Message)
	}
	if err != nil {
		return nil, err
	}
	return &PlanChangeApplied{PlanChangePreview: previewOf(rec.ID, c.Provider, res.Quote), Status: subprov.StatusActive,
		PlanVersionID: res.Quote.To.ID, BandwidthUpdated: res.BandwidthUpdated, AppliedAt: res.AppliedAt.UTC().Format(time.RFC3339)}, nil
}
