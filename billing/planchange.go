package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// minCorrection: a plan-change correction below 0.50 is skipped and folded into the next one.
const minCorrection subprov.Money = 50

// planChange is the money of a plan change made today, worked out once for its preview and its
// booking.
type planChange struct {
	adj     *provisioning.Adjustment // nil when nothing is booked
	note    string
	raw     subprov.Money // the correction before the 0.50 threshold, carries included
	unit    subprov.Money // the monthly price difference today
	carries []subprov.Adjustment
}

// planChangeMoney computes the one-time adjustment of a plan change made today (docs/billing.md,
// Plan-change money): nil with a note while the month is not invoiced (the monthly invoice will
// carry the new price) or when its billing documents are incomplete; otherwise the price
// difference x days left / days in the month, each day at each plan's price that day
// (PlanVersion.PriceOn, as the month was invoiced and as the portal shows it), plus any
// correction carried from earlier changes, as a line on the next invoice (upgrade), a credit now
// (downgrade), or none below 0.50. Preview and apply both call it, so the preview is what
// applying bills, to the cent.
func (s *Service) planChangeMoney(ctx context.Context, q store.Querier, p *subprov.Provider, sub *subprov.Subscription,
	from, to *subprov.PlanVersion) (*planChange, error) {
	today := LocalDay(s.Clock.Now(), p.Location())
	period := PeriodOf(today)
	inv, err := s.Store.PeriodInvoice(ctx, q, sub.ID, period.String())
	if errors.Is(err, subprov.ErrNotFound) {
		return &planChange{note: "The current month is not invoiced yet: the monthly invoice will reflect the new price."}, nil
	}
	if err != nil {
		return nil, err
	}
	if ok, err := s.Store.LedgerHasInvoice(ctx, q, inv.ID); err != nil {
		return nil, err
	} else if !ok {
		return &planChange{note: "This month's invoice has no billing document; no adjustment is made now (an operator reconciles it)."}, nil
	}
	days, in := DaysFrom(today), period.Days()
	diff := func(day string) subprov.Money { return to.PriceOn(day) - from.PriceOn(day) }
	pc := &planChange{unit: diff(today.Format(time.DateOnly))}
	pc.raw = amountOf(runsOf(today, period.Day(in), diff))
	adjs, err := s.Store.OpenAdjustments(ctx, q, sub.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range adjs {
		if a.Kind == "carry" {
			pc.raw += a.Amount
			pc.carries = append(pc.carries, a)
		}
	}
	adj := &provisioning.Adjustment{Days: days, DaysInPeriod: in}
	abs := pc.raw
	if abs < 0 {
		abs = -abs
	}
	switch {
	case abs < minCorrection:
		adj.Type, adj.Amount = "none", 0
		adj.Note = fmt.Sprintf("The correction (%s) is below 0.50: skipped and folded into the next correction.", pc.raw)
	case pc.raw > 0:
		adj.Type, adj.Amount = "next_invoice_line", pc.raw
		adj.Note = "Nothing is charged today: the amount is a line on the next monthly invoice."
	default:
		adj.Type, adj.Amount = "credit", abs
		adj.Note = "Credited now and applied to the next invoice."
	}
	pc.adj, pc.note = adj, adj.Note
	return pc, nil
}

// PreviewPlanChange quotes the money of a plan change (provisioning.PlanChangeMoney).
func (s *Service) PreviewPlanChange(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, from, to *subprov.PlanVersion) (*provisioning.Adjustment, string, error) {
	pc, err := s.planChangeMoney(ctx, s.Store.R(), p, sub, from, to)
	if err != nil {
		return nil, "", err
	}
	return pc.adj, pc.note, nil
}

// ApplyPlanChange books the money of a plan change inside the change's transaction.
func (s *Service) ApplyPlanChange(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, from, to *subprov.PlanVersion) (*provisioning.Adjustment, error) {
	pc, err := s.planChangeMoney(ctx, tx, p, sub, from, to)
	if err != nil || pc.adj == nil {
		return nil, err
	}
	adj := pc.adj
	now := s.Clock.Now()
	if err := tx.ConsumeAdjustments(ctx, adjustmentIDs(pc.carries), "", now); err != nil {
		return nil, err
	}
	desc := fmt.Sprintf("Plan change %s to %s, %d of %d days", from.PlanName, to.PlanName, adj.Days, adj.DaysInPeriod)
	switch adj.Type {
	case "none":
		err = tx.InsertAdjustment(ctx, p.ID, sub.ID, subprov.Adjustment{Kind: "carry", Description: desc, Amount: pc.raw}, now)
	case "next_invoice_line":
		err = tx.InsertAdjustment(ctx, p.ID, sub.ID, subprov.Adjustment{Kind: "next_invoice_line", Description: desc,
			UnitPrice: pc.unit, Days: adj.Days, DaysInPeriod: adj.DaysInPeriod, Amount: adj.Amount}, now)
	case "credit":
		_, err = s.IssueCredit(ctx, tx, p, sub, adj.Amount+Tax(adj.Amount, p.TaxRateBP), "plan_change", "", now)
	}
	return adj, err
}

// adjustmentIDs lists the ids of adjustments a document uses up.
func adjustmentIDs(adjs []subprov.Adjustment) []string {
	ids := make([]string, len(adjs))
	for i, a := range adjs {
		ids[i] = a.ID
	}
	return ids
}
