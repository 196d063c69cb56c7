package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// cancellationMoney is the money of ending a platform-billed line at endedAt, for the month
// of the end date. If that month was invoiced, the unused days (end date to month end) come
// back as a credit note and every open credit is swept into the refund; if not, a final
// invoice bills the days served (from the month's start, or activation, to the day before the
// end date) minus open credits. A line waiting for its install or reinstall has neither.
// Amounts are gross. Credits are negative, charges positive, so a negative total is money
// going back to the customer.
func (s *Service) cancellationMoney(ctx context.Context, q store.Querier, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) ([]provisioning.CancelQuoteLine, bool, subprov.Money, error) {
	loc := p.Location()
	endDay := LocalDay(endedAt, loc)
	period := PeriodOf(endDay)
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return nil, false, 0, err
	}
	in := period.Days()
	var finalNet subprov.Money
	_, err = s.Store.PeriodInvoice(ctx, q, sub.ID, period.String())
	invoiced := err == nil
	if err != nil && !store.IsNoRows(err) {
		return nil, false, 0, err
	}
	status := sub.Status // before the cancellation: ApplyCancellation gets the line already cancelled
	if status == subprov.StatusCancelled && sub.StatusBeforeCancel != "" {
		status = sub.StatusBeforeCancel
	}
	var lines []provisioning.CancelQuoteLine
	switch {
	case status == subprov.StatusPendingInstall:
		// A line waiting for its install, or for a reinstall after a technician reactivation,
		// has been billed nothing since it last ended (billing starts at the visit): no days
		// come back and none were served.
	case invoiced:
		unused := DaysFrom(endDay)
		net := Prorate(plan.MonthlyPrice, unused, in)
		if gross := net + Tax(net, p.TaxRateBP); gross > 0 {
			lines = append(lines, provisioning.CancelQuoteLine{Type: "credit_note", Amount: -gross,
				Description: fmt.Sprintf("Unused days %s to %s (%d of %d)", endDay.Format("2 Jan"), period.Day(in).Format("2 Jan 2006"), unused, in)})
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
			net := Prorate(plan.MonthlyPrice, served, in)
			finalNet = net
			lines = append(lines, provisioning.CancelQuoteLine{Type: "final_invoice", Amount: net + Tax(net, p.TaxRateBP),
				Description: fmt.Sprintf("Days served %s to %s (%d of %d)", start.Format("2 Jan"), endDay.AddDate(0, 0, -1).Format("2 Jan 2006"), served, in)})
		}
	}
	credits, err := s.Store.OpenCredits(ctx, q, sub.ID)
	if err != nil {
		return nil, false, 0, err
	}
	for _, c := range credits {
		lines = append(lines, provisioning.CancelQuoteLine{Type: "open_credit", Amount: -c.Remaining, Description: "Open credit note " + c.Number})
	}
	return lines, invoiced, finalNet, nil
}

// QuoteCancellation quotes the money of a cancellation (provisioning.CancellationMoney).
func (s *Service) QuoteCancellation(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) ([]provisioning.CancelQuoteLine, error) {
	lines, _, _, err := s.cancellationMoney(ctx, s.Store.R(), p, sub, endedAt)
	return lines, err
}

// ApplyCancellation books what the quote shows, inside the cancellation's transaction: a
// credit note for the unused days and a refund job for every open credit, or a final invoice
// from which open credits are deducted.
func (s *Service) ApplyCancellation(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, endedAt time.Time) error {
	lines, invoiced, finalNet, err := s.cancellationMoney(ctx, tx, p, sub, endedAt)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	endDay := LocalDay(endedAt, p.Location())
	if invoiced {
		for _, l := range lines {
			if l.Type == "credit_note" {
				if _, err := s.IssueCredit(ctx, tx, p, sub, -l.Amount, "cancellation", "", now); err != nil {
					return err
				}
			}
		}
		return s.Jobs.Enqueue(ctx, tx, jobs.RefundCredits{SubscriptionID: sub.ID})
	}
	if finalNet == 0 {
		return s.Jobs.Enqueue(ctx, tx, jobs.RefundCredits{SubscriptionID: sub.ID})
	}
	var desc string
	for _, l := range lines {
		if l.Type == "final_invoice" {
			desc = l.Description
		}
	}
	final := []store.InvoiceLine{{Kind: "final", Description: desc, UnitPrice: finalNet, Amount: finalNet}}
	if _, err = s.issue(ctx, tx, p, sub, "final", CancellationOccasion(sub), PeriodOf(endDay), endDay, final, now); err != nil {
		return err
	}
	// Credits larger than the final invoice leave money to give back.
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
