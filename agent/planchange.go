package agent

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// PreviewRequest asks what a plan change would cost. subscription_id is needed only when the
// customer has more than one line that could change plan.
type PreviewRequest struct {
	PlanVersionID  string `json:"plan_version_id"`
	SubscriptionID string `json:"subscription_id,omitempty"`
}

// ApplyRequest applies a plan change: confirm must be true, after the customer heard the
// preview. quote_id, when sent, must still match what a preview gives now.
type ApplyRequest struct {
	PlanVersionID  string       `json:"plan_version_id"`
	SubscriptionID string       `json:"subscription_id,omitempty"`
	Confirm        Confirmation `json:"confirm,omitempty"`
	QuoteID        string       `json:"quote_id,omitempty"`
}

// Confirmation is the apply call's confirm field. Only the JSON value true confirms; any other
// value ("true", 1, null, false) leaves the change unconfirmed, which is 400
// confirmation_required (interface.md: "Must include confirm: true, else 400"), not a
// validation error.
type Confirmation bool

// UnmarshalJSON accepts any JSON value; only true confirms.
func (c *Confirmation) UnmarshalJSON(b []byte) error {
	*c = Confirmation(string(b) == "true")
	return nil
}

// PlanChangePreview is the exact billing impact of a plan change (plan-change preview rules).
type PlanChangePreview struct {
	QuoteID           string                   `json:"quote_id"`
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
	return PlanChangePreview{QuoteID: quoteID(p.ID, q), CustomerID: customerID, SubscriptionID: q.Subscription.ID, Eligible: q.Eligible,
		Blockers: q.Blockers, CurrentPlan: planView(q.From), NewPlan: planView(q.To), RecurringChange: q.RecurringChange,
		OneTimeAdjustment: q.Adjustment, Note: q.Note, EffectiveDate: q.EffectiveDate,
		BillingOwner: string(q.Subscription.BillingOwner), Currency: p.Currency}
}

// quoteID fingerprints everything a customer agreed to: the line, both plan versions and
// prices, the adjustment and the day. Apply recomputes it; any change makes the quote stale.
func quoteID(providerID string, q *provisioning.PlanChangeQuote) string {
	adj := "null"
	if a := q.Adjustment; a != nil {
		adj = fmt.Sprintf("%s:%d:%d:%d", a.Type, a.Amount, a.Days, a.DaysInPeriod)
	}
	raw := strings.Join([]string{providerID, q.Subscription.ID, q.From.ID, q.To.ID, fmt.Sprint(q.From.MonthlyPrice),
		fmt.Sprint(q.To.MonthlyPrice), adj, q.EffectiveDate}, "|")
	sum := sha256.Sum256([]byte(raw))
	return "q_" + hex.EncodeToString(sum[:16])
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

// PreviewPlanChange quotes a plan change without applying it, with a quote_id that apply
// can hold it to (verified session required).
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

// Reply is a JSON answer that can be replayed for an idempotency key.
type Reply struct {
	Status   int
	Body     json.RawMessage
	Replayed bool
}

// ApplyPlanChange applies a plan change live, once per calendar day of the provider (its
// time_zone; a change through the partner endpoint counts too), with automatic proration and
// an audit entry (verified session required). Without confirm: true it is 400
// confirmation_required; with a quote_id that no longer matches, 409 quote_stale. With an
// idempotency key, the same key and body replay the first answer and another body is 409
// idempotency_conflict.
func (s *Service) ApplyPlanChange(ctx context.Context, c Caller, customerID string, in ApplyRequest, idempotencyKey string) (*Reply, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	if !in.Confirm {
		return nil, subprov.Errorf(subprov.EBADREQUEST, "confirmation_required",
			"Read the previewed cost to the customer, then send confirm: true to apply the plan change")
	}
	idem := idempotency{store: s.Store, providerID: c.Provider.ID, scope: "agent.plan_change", key: strings.TrimSpace(idempotencyKey),
		request: requestHash(rec.ID, in), now: s.Clock.Now}
	if r, err := idem.replay(ctx); r != nil || err != nil {
		return r, err
	}
	q, err := s.quote(ctx, c, rec.ID, in.SubscriptionID, in.PlanVersionID)
	if err != nil {
		return nil, err
	}
	if in.QuoteID != "" && subtle.ConstantTimeCompare([]byte(in.QuoteID), []byte(quoteID(c.Provider.ID, q))) != 1 {
		return nil, subprov.Errorf(subprov.ECONFLICT, "quote_stale", "The price, plan or period changed since the preview; preview again and confirm the new cost")
	}
	res, err := s.Provisioning.ChangePlan(ctx, c.Provider, q.Subscription.ID, q.To.ID, c.actor(), provisioning.ProviderDay)
	if e, ok := subprov.AsError(err); ok && e.Reason == "invalid_transition" {
		// A line that is not ACTIVE cannot change plan however often the agent asks: a request
		// it cannot make, named on the line (the partner endpoint keeps its 409).
		return nil, subprov.Invalid(map[string]string{"subscription_id": e.Message})
	}
	if err != nil {
		return nil, err
	}
	out := PlanChangeApplied{PlanChangePreview: previewOf(rec.ID, c.Provider, res.Quote), Status: subprov.StatusActive,
		PlanVersionID: res.Quote.To.ID, BandwidthUpdated: res.BandwidthUpdated, AppliedAt: res.AppliedAt.UTC().Format(time.RFC3339)}
	out.QuoteID = quoteID(c.Provider.ID, q)
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	reply := &Reply{Status: http.StatusOK, Body: body}
	idem.save(ctx, reply, s.Log)
	return reply, nil
}

// requestHash identifies a request body for idempotency: the customer and the decoded fields.
func requestHash(customerID string, in ApplyRequest) string {
	b, _ := json.Marshal(struct {
		CustomerID string `json:"customer_id"`
		ApplyRequest
	}{customerID, in})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type idempotency struct {
	store                  *store.Store
	providerID, scope, key string
	request                string
	now                    func() time.Time
}

// replay returns the stored answer for the key, nil when there is none (or no key).
func (i idempotency) replay(ctx context.Context) (*Reply, error) {
	if i.key == "" {
		return nil, nil
	}
	if len(i.key) > 255 {
		return nil, subprov.Invalid(map[string]string{"header:Idempotency-Key": "at most 255 characters"})
	}
	prev, err := i.store.IdempotentReplyOf(ctx, i.providerID, i.scope, i.key)
	if err != nil || prev == nil {
		return nil, err
	}
	if prev.RequestHash != i.request {
		return nil, subprov.Errorf(subprov.ECONFLICT, "idempotency_conflict", "This Idempotency-Key was used with another request body")
	}
	return &Reply{Status: prev.Status, Body: json.RawMessage(prev.Body), Replayed: true}, nil
}

// save keeps the first answer for the key. Failing to save does not undo the change that
// already applied; the once-a-day rule still stops a repeat.
func (i idempotency) save(ctx context.Context, r *Reply, log interface{ Error(string, ...any) }) {
	if i.key == "" {
		return
	}
	err := i.store.SaveIdempotentReply(context.WithoutCancel(ctx), i.providerID, i.scope, i.key,
		store.IdempotentReply{RequestHash: i.request, Status: r.Status, Body: string(r.Body)}, i.now())
	if err != nil {
		log.Error("agent: idempotency key not saved", "err", err)
	}
}
