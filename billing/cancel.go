package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// cancellation is the money of ending a line, worked out once for its quote and its booking.
type cancellation struct {
	lines        []provisioning.CancelQuoteLine
	credit       subprov.Money         // gross credit note, 0 for none
	final        []subprov.InvoiceLine // the final invoice's own lines (issue folds in the plan changes)
	finalInvoice bool                  // whether a final invoice is issued
	adjustments  []subprov.Adjustment  // plan-change lines not yet invoiced, which the cancellation settles
	carries      []subprov.Adjustment  // plan-change corrections under 0.50 carried so far, settled with them
	period       Period
	endDay       time.Time
}

// cancellationMoney is the money of ending a platform-billed line at endedAt, for the month
// of the end date. If that month was invoiced, the unused days (end date to month end) at the
// line's price come back as a credit note and every open credit is swept into the refund; if
// not, a final invoice bills the days served (from the month's start, or activation, to the
// day before the end date) minus open credits. Each day is at the plan's price that day
// (PlanVersion.PriceOn: a live promotion's), as the month was invoiced. A line waiting for its
// install or reinstall has neither. What plan changes left to settle is settled here, as no
// later invoice or correction will come to carry it: the lines waiting for the next invoice
// (upgrades), and the corrections under 0.50 carried to the next change. In an invoiced month
// they are taken off the unused days (the month costs the old price up to the change and the
// new one after it, until the end date), and when they exceed them the customer owes the
// difference on a final invoice; in a month not invoiced the final invoice carries them, as
// issue folds the upgrades into every invoice (a carried credit larger than what is owed comes
// back as a credit note). The quote and the booking both read this, so the quote is what the
// cancellation writes. Amounts are gross. Credits are negative, charges positive, so a
// negative total is money going back to the customer.
func (s *Service) cancellationMoney(ctx context.Context, q store.Querier, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) (*cancellation, error) {
	loc := p.Location()
	endDay := LocalDay(endedAt, loc)
	period := PeriodOf(endDay)
	c := &cancellation{period: period, endDay: endDay}
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return nil, err
	}
	in := period.Days()
	_, err = s.Store.PeriodInvoice(ctx, q, sub.ID, period.String())
	invoiced := err == nil
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return nil, err
	}
	status := sub.Status // before the cancellation: ApplyCancellation gets the line already cancelled
	if status == subprov.StatusCancelled && sub.StatusBeforeCancel != "" {
		status = sub.StatusBeforeCancel
	}
	var adjusted, carried subprov.Money
	if status != subprov.StatusPendingInstall {
		adjs, err := s.Store.OpenAdjustments(ctx, q, sub.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range adjs {
			switch a.Kind {
			case "next_invoice_line": // as newDraft folds them
				c.adjustments = append(c.adjustments, a)
				adjusted += a.Amount
			case "carry":
				c.carries = append(c.carries, a)
				carried += a.Amount
			}
		}
	}
	pending := pendingPhrase(adjusted, carried)
	toSettle := len(c.adjustments)+len(c.carries) > 0
	// owed is the net the cancellation settles: positive is a final invoice, negative a credit note.
	var owed subprov.Money
	var desc string
	switch {
	case status == subprov.StatusPendingInstall:
		// A line waiting for its install, or for a reinstall after a technician reactivation,
		// has been billed nothing since it last ended (billing starts at the visit): no days
		// come back and none were served.
	case invoiced:
		runs := planRuns(plan, endDay, period.Day(in))
		unused, unusedNet := DaysFrom(endDay), amountOf(runs)
		desc = fmt.Sprintf("Unused days %s to %s (%d of %d)", endDay.Format("2 Jan"), period.Day(in).Format("2 Jan 2006"), unused, in)
		for _, r := range runs {
			c.final = append(c.final, subprov.InvoiceLine{Kind: "unused_days", UnitPrice: -r.price, Days: r.days, DaysInPeriod: in, Amount: -r.amount,
				Description: fmt.Sprintf("Unused days %s to %s (%d of %d)%s", r.first.Format("2 Jan"), r.last.Format("2 Jan 2006"), r.days, in, priceNote(plan, r.price))})
		}
		owed = adjusted + carried - unusedNet
		switch {
		case owed < 0 && pending != "":
			desc += ", less " + pending
		case owed >= 0 && toSettle:
			// The plan changes cost more than the unused days give back (or as much): the
			// difference is owed, on a final invoice that shows both.
			desc = upperFirst(pending) + ", less " + strings.ToLower(desc[:1]) + desc[1:]
		}
	default:
		start := period.First()
		if sub.ActivatedAt != nil {
			if a := LocalDay(*sub.ActivatedAt, loc); a.After(start) {
				start = a
			}
		}
		served := int(endDay.Sub(start).Hours() / 24)
		if served > 0 && sub.ActivatedAt != nil { // a line that never went live served nothing
			last := endDay.AddDate(0, 0, -1)
			for _, r := range planRuns(plan, start, last) {
				c.final = append(c.final, subprov.InvoiceLine{Kind: "final", UnitPrice: r.amount, Amount: r.amount,
					Description: fmt.Sprintf("Days served %s to %s (%d of %d)%s", r.first.Format("2 Jan"), r.last.Format("2 Jan 2006"), r.days, in, priceNote(plan, r.price))})
				owed += r.amount
			}
			desc = fmt.Sprintf("Days served %s to %s (%d of %d)", start.Format("2 Jan"), last.Format("2 Jan 2006"), served, in)
		}
		owed += adjusted + carried
		// What plan changes left is on the final invoice, as issue folds the upgrades into
		// every invoice: it is issued for them alone if no day was served.
		switch {
		case pending != "" && desc == "":
			desc = upperFirst(pending)
		case pending != "":
			desc += ", plus " + pending
		}
	}
	switch {
	case owed < 0:
		c.credit, c.final = -owed+Tax(-owed, p.TaxRateBP), nil
		c.lines = append(c.lines, provisioning.CancelQuoteLine{Type: "credit_note", Amount: -c.credit, Description: desc})
	case owed > 0 || (owed == 0 && toSettle):
		for _, a := range c.carries {
			c.final = append(c.final, subprov.InvoiceLine{Kind: "plan_change", Description: a.Description + " (correction carried)",
				UnitPrice: a.Amount, Amount: a.Amount})
		}
		c.finalInvoice = true
		c.lines = append(c.lines, provisioning.CancelQuoteLine{Type: "final_invoice", Amount: owed + Tax(owed, p.TaxRateBP), Description: desc})
	}
	credits, err := s.Store.OpenCredits(ctx, q, sub.ID)
	if err != nil {
		return nil, err
	}
	for _, cn := range credits {
		c.lines = append(c.lines, provisioning.CancelQuoteLine{Type: "open_credit", Amount: -cn.Remaining, Description: "Open credit note " + cn.Number})
	}
	return c, nil
}

// pendingPhrase names what plan changes left to settle: the lines not yet invoiced and the
// corrections carried, with their net amounts; "" for nothing.
func pendingPhrase(adjusted, carried subprov.Money) string {
	var parts []string
	if adjusted != 0 {
		parts = append(parts, fmt.Sprintf("plan changes not yet invoiced (%s)", adjusted))
	}
	if carried != 0 {
		parts = append(parts, fmt.Sprintf("corrections carried from plan changes (%s)", carried))
	}
	return strings.Join(parts, " and ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// QuoteCancellation quotes the money of a cancellation (provisioning.CancellationMoney).
func (s *Service) QuoteCancellation(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) ([]provisioning.CancelQuoteLine, error) {
	c, err := s.cancellationMoney(ctx, s.Store.R(), p, sub, endedAt)
	if err != nil {
		return nil, err
	}
	return c.lines, nil
}

// ApplyCancellation books what the quote shows, inside the cancellation's transaction: a
// credit note for the unused days, which uses up the plan-change lines and carried corrections
// netted against it, or a final invoice, which carries them and from which open credits are
// deducted; then a refund job for what open credit is left.
func (s *Service) ApplyCancellation(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) error {
	c, err := s.cancellationMoney(ctx, tx, p, sub, endedAt)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	settled := adjustmentIDs(append(append([]subprov.Adjustment{}, c.adjustments...), c.carries...))
	switch {
	case c.credit > 0:
		cn, err := s.IssueCredit(ctx, tx, p, sub, c.credit, "cancellation", "", now)
		if err != nil {
			return err
		}
		if err := tx.ConsumeAdjustmentsByCredit(ctx, settled, cn.ID, now); err != nil {
			return err
		}
	case c.finalInvoice:
		// Dated on the end date, and so charged then (newDraft): a cancellation for a later
		// month is not charged before the days it bills are served.
		inv, err := s.issue(ctx, tx, p, sub, "final", CancellationOccasion(sub), c.period, c.endDay, c.final, now)
		if err != nil {
			return err
		}
		if inv != nil { // issue used up the upgrades' lines; the carried corrections are its own lines
			if err := tx.ConsumeAdjustments(ctx, adjustmentIDs(c.carries), inv.ID, now); err != nil {
				return err
			}
		}
	}
	// Credits larger than the final invoice, or swept from an invoiced month, go back.
	return s.Jobs.Enqueue(ctx, tx, jobs.RefundCredits{SubscriptionID: sub.ID})
}

// RefundCredits is the billing.refund job: the line's open credit notes first settle what it
// still owes (settleUnpaid), then what is left of them is refunded to the card of its last
// paid invoice (each under its own idempotency key); with nothing to refund against, the note
// is marked for payout.
func (s *Service) RefundCredits(ctx context.Context, a jobs.RefundCredits) error {
	sub, p, err := s.line(ctx, a.SubscriptionID)
	if err != nil || sub == nil {
		return err
	}
	if err := s.settleUnpaid(ctx, p, sub); err != nil {
		return err
	}
	credits, err := s.Store.OpenCredits(ctx, s.Store.R(), sub.ID)
	if err != nil {
		return err
	}
	invs, err := s.Store.InvoicesOfSubscription(ctx, sub.ID)
	if err != nil {
		return err
	}
	chargeID := ""
	for _, inv := range invs {
		if inv.Status == "paid" && inv.PaymentIntent != "" {
			chargeID = inv.PaymentIntent
			break
		}
	}
	for _, c := range credits {
		state := subprov.CreditPaidOut
		if chargeID != "" {
			_, err := s.Processor.Refund(ctx, p, chargeID, c.Remaining, "refund:"+c.ID)
			if err != nil && !errors.Is(err, payments.ErrInvalidRequest) {
				return fmt.Errorf("refund credit note %s: %w", c.Number, err)
			}
			if err == nil {
				state = subprov.CreditRefunded
			}
		}
		now := s.Clock.Now()
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.SpendCredit(ctx, c.ID, c.Remaining, state, "", now); err != nil {
				return err
			}
			return tx.InsertAudit(ctx, p.ID, "billing", "credit_note."+state, sub.ID, fmt.Sprintf(`{"credit_note_id":%q,"amount":"%s"}`, c.ID, c.Remaining), now)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// settleUnpaid spends a line's open credit notes on its unpaid invoices, oldest first, each
// note applied to the invoice (a credit line on it, the note applied when nothing is left,
// the invoice paid when it asks for nothing more): a refund gives back money the customer
// paid, never money an unpaid invoice still asks for, as when a line is cancelled again
// before its reactivation invoice was paid. While an AutoPay attempt on one of them is under
// way the job waits (it fails and is retried), because that attempt charges the invoice's
// whole total.
func (s *Service) settleUnpaid(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription) error {
	now := s.Clock.Now()
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		// The line first, as a paid charge takes it: the two never cross.
		if _, err := tx.LockSubscription(ctx, "", sub.ID); err != nil {
			return err
		}
		unpaid, err := tx.LockUnpaidInvoices(ctx, sub.ID)
		if err != nil || len(unpaid) == 0 {
			return err
		}
		credits, err := s.Store.OpenCredits(ctx, tx, sub.ID)
		if err != nil || len(credits) == 0 {
			return err
		}
		for _, inv := range unpaid {
			if inv.Attempted {
				return fmt.Errorf("settle credits of line %s: invoice %s has an AutoPay attempt under way", sub.ID, inv.ID)
			}
		}
		settled := false
		for _, inv := range unpaid {
			lines, spent, due := applyCredits(credits, inv.Total)
			for i, sp := range spent {
				if err := tx.DeductFromInvoice(ctx, inv.ID, lines[i], now); err != nil {
					return err
				}
				if err := tx.SpendCredit(ctx, sp.id, sp.amount, subprov.CreditApplied, inv.ID, now); err != nil {
					return err
				}
				if err := tx.InsertAudit(ctx, p.ID, "billing", "credit_note.applied", sub.ID,
					fmt.Sprintf(`{"credit_note_id":%q,"invoice_id":%q,"amount":"%s"}`, sp.id, inv.ID, sp.amount), now); err != nil {
					return err
				}
			}
			settled = settled || (len(spent) > 0 && due == 0)
		}
		if !settled {
			return nil
		}
		return s.restoreIfPaidUp(ctx, tx, sub)
	})
}
