package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// holderPays mails an open invoice of a line with AutoPay off with its pay link and schedules
// its dunning by due date: nothing is charged, but an invoice left unpaid is reminded and cut
// off on dunning's days (dunningWaits) as a declined one is. Falling due is dunning's first
// step, as the first declined attempt is: an invoice already due takes it with this mail,
// one dated later takes it, with a reminder, on its date.
func (s *Service) holderPays(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, d *draft, now time.Time) error {
	if !sub.AutoPayOff || d.inv.Status != "open" || d.dueAt == nil {
		return nil
	}
	if err := s.mailPayLink(ctx, tx, sub, d.inv, now); err != nil {
		return err
	}
	at, taken := d.dueAt, 0
	if !at.After(now) {
		at, taken = dunningNext(1, now), 1
	}
	return tx.ScheduleReminder(ctx, d.inv.ID, at, taken)
}

// sweepReminders takes the due dunning step of every open invoice the holder pays, each in
// its own transaction. Paying the invoice clears its schedule, so a paid invoice is never
// reminded.
func (s *Service) sweepReminders(ctx context.Context, now time.Time) error {
	ids, err := s.Store.DueReminders(ctx, now, 1000)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.remind(ctx, id, now); err != nil {
			return err
		}
	}
	return nil
}

// remind takes one dunning step of an unpaid invoice the holder pays: the reminder with the
// next date, or, after the last, the cut-off.
func (s *Service) remind(ctx context.Context, invoiceID string, now time.Time) error {
	step, cutoff := 0, false
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		step = 0
		st, err := tx.LockInvoice(ctx, invoiceID)
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		inv := st.Invoice
		if inv.Status != "open" || st.RemindAt == nil || st.RemindAt.After(now) {
			return nil // paid, or stepped by another sweep
		}
		sub, err := tx.LockSubscription(ctx, "", inv.SubscriptionID)
		if err != nil {
			return err
		}
		p, err := s.Store.Provider(ctx, inv.ProviderID)
		if err != nil {
			return err
		}
		step = st.Reminders + 1
		next := dunningNext(step, now)
		cutoff = next == nil
		if err := tx.ScheduleReminder(ctx, inv.ID, next, step); err != nil {
			return err
		}
		if err := tx.InsertAudit(ctx, p.ID, "billing", "invoice.unpaid_reminded", sub.ID, fmt.Sprintf(`{"invoice_id":%q,"step":%d}`, inv.ID, step), now); err != nil {
			return err
		}
		return s.dunningStep(ctx, tx, p, sub, inv, next, "billing.unpaid")
	})
	if err == nil && step > 0 {
		s.Metrics.DunningStep("unpaid", step, cutoff)
	}
	return err
}
