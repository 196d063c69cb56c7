package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// Mailer queues a message inside the caller's transaction.
type Mailer interface {
	QueueLocalized(ctx context.Context, tx *store.Tx, providerID, to string, m locale.Mail) error
}

// Service is the billing engine.
type Service struct {
	Store     *store.Store
	Clock     subprov.Clock
	Processor payments.Processor
	Jobs      jobs.Enqueuer
	Mail      Mailer
	Lines     Lines
	Ledger    Ledger
	Log       *slog.Logger
	Metrics   *metrics.Recorder // nil: nothing is recorded
	PublicURL string            // base of the pay links mailed with invoices of lines with AutoPay off
	// Outages are the connection events of lines' ports the outage credit policy reads; nil:
	// no monitoring, nothing is credited.
	Outages monitoring.Source
}

// Lines moves a line's status with its suspension reason and lets its port follow, inside the
// transaction that changes it; the provisioning service implements it.
type Lines interface {
	SetStatus(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, status subprov.Status, suspendedFor string) error
}

// Dunning: after a declined AutoPay attempt the card is tried again after these waits; the
// failure after the last one cuts the line off (suspended through the switch). Paying the
// invoice restores it. Day 0, 3, 7 and 14 after the invoice. An invoice the holder pays
// (AutoPay off) follows the same days from its due date, a reminder in place of each retry.
var dunningWaits = []time.Duration{3 * 24 * time.Hour, 4 * 24 * time.Hour, 7 * 24 * time.Hour}

// dunningNext is when dunning's step after step (1 for the first: the first declined attempt,
// or an invoice the holder pays falling due) comes, taken at now; nil when step was the last
// and the line is cut off.
func dunningNext(step int, now time.Time) *time.Time {
	if step < 1 || step > len(dunningWaits) {
		return nil
	}
	t := now.Add(dunningWaits[step-1])
	return &t
}

// claimExpiry is how long a claim on an invoice's charge stays under way. A claim older than
// that was left by a process that died mid-charge: the next pay-now or the charge sweep takes
// it over and charges under the same idempotency key, so a charge the processor took is
// answered again, not made twice.
const claimExpiry = 5 * time.Minute

// claimLive reports whether a charge of the invoice is under way at now.
func claimLive(st *subprov.InvoiceChargeState, now time.Time) bool {
	return st.ClaimedAt != nil && now.Sub(*st.ClaimedAt) < claimExpiry
}

// Activated issues the first invoice of a platform-billed line when it goes live (port live,
// or the technician completed the install): the plan's setup fee plus the current calendar
// month prorated from today to the month's end (FirstInvoiceQuote, what the portal quoted). It is charged at once to the adopted card.
// Partner-billed lines are never invoiced.
func (s *Service) Activated(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error {
	if sub.BillingOwner != subprov.BillingPlatform {
		return nil
	}
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return err
	}
	q := s.FirstInvoiceQuote(p, plan)
	_, err = s.issue(ctx, tx, p, sub, q.Kind, "", q.Period, q.Day, q.Lines, s.Clock.Now())
	return err
}

// CancellationOccasion names a line's cancellation (subprov.Invoice.Occasion) by the instant
// it was made: the final invoice that settles it and the reactivation invoice of the
// reactivation that undoes it carry it, so each cancellation and each reactivation is invoiced
// once, however many a month has. "" when the line carries no cancellation.
func CancellationOccasion(sub *subprov.Subscription) string {
	if sub.CanceledAt == nil {
		return ""
	}
	return "cancellation:" + sub.CanceledAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
}

// reinstallOccasion names a reactivation completed by a technician by its reinstall job.
func reinstallOccasion(jobID string) string { return "reinstall:" + jobID }

// issue writes an invoice due for AutoPay now, once per line, period, kind and occasion (""
// for first and recurring invoices, see subprov.Invoice.Occasion); nil when the line already
// has it. Lines waiting for the line's next invoice (plan-change upgrades) are added, tax is
// applied to the net, and open credit notes are deducted from the total, oldest first.
func (s *Service) issue(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, kind, occasion string, period Period,
	date time.Time, lines []subprov.InvoiceLine, now time.Time) (*subprov.Invoice, error) {
	var adjustments []subprov.Adjustment
	if kind != "first" {
		var err error
		if adjustments, err = s.Store.OpenAdjustments(ctx, tx, sub.ID); err != nil {
			return nil, err
		}
	}
	credits, err := s.Store.OpenCredits(ctx, tx, sub.ID)
	if err != nil {
		return nil, err
	}
	customerNumber, _, err := tx.SubscriberForInvoice(ctx, sub.SubscriberID)
	if err != nil {
		return nil, err
	}
	d := newDraft(p, sub, kind, period, date, lines, adjustments, credits, customerNumber, now)
	d.inv.Occasion = occasion
	if d.inv.Number, err = documentNumber(ctx, tx, p.ID, InvoicePrefix); err != nil {
		return nil, err
	}
	inserted, err := tx.InsertInvoice(ctx, d.inv, d.lines, d.chargeAt, now)
	if err != nil || !inserted {
		return nil, err
	}
	if err := d.settle(ctx, tx, now); err != nil {
		return nil, err
	}
	if err := tx.InsertAudit(ctx, p.ID, "billing", "invoice.issued", sub.ID, d.auditDetails(), now); err != nil {
		return nil, err
	}
	if err := s.holderPays(ctx, tx, sub, d, now); err != nil {
		return nil, err
	}
	return d.inv, nil
}

// draft is an invoice about to be written, numbered last: its lines with the line's pending
// adjustments added, and the credit notes it spends.
type draft struct {
	inv      *subprov.Invoice
	lines    []subprov.InvoiceLine
	consumed []string // adjustments folded into the invoice
	spent    []spend
	chargeAt *time.Time
	dueAt    *time.Time // an invoice the holder pays (AutoPay off): when it falls due
}

type spend struct {
	id     string
	amount subprov.Money
}

// newDraft prices an invoice: lines plus the next_invoice_line adjustments (kind "first" is
// given none), tax on the net, then open credits deducted from the total, oldest first; an
// invoice left at zero is paid at once, any other is charged from its date (chargeableFrom):
// now, or, for one dated later (a cancellation's final invoice, dated on its end date), then;
// a line with AutoPay off has nothing scheduled.
func newDraft(p *subprov.Provider, sub *subprov.Subscription, kind string, period Period, date time.Time, lines []subprov.InvoiceLine,
	adjustments []subprov.Adjustment, credits []*subprov.CreditNote, customerNumber string, now time.Time) *draft {
	d := &draft{}
	for _, a := range adjustments {
		if a.Kind != "next_invoice_line" {
			continue
		}
		lines = append(lines, subprov.InvoiceLine{Kind: "plan_change", Description: a.Description, UnitPrice: a.UnitPrice,
			Days: a.Days, DaysInPeriod: a.DaysInPeriod, Amount: a.Amount})
		d.consumed = append(d.consumed, a.ID)
	}
	var net subprov.Money
	for _, l := range lines {
		net += l.Amount
	}
	tax := Tax(net, p.TaxRateBP)
	total := net + tax
	creditLines, spent, total := applyCredits(credits, total)
	d.lines, d.spent = append(lines, creditLines...), spent
	d.inv = &subprov.Invoice{ID: store.NewOrderedID(), ProviderID: p.ID, SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID,
		CustomerNumber: customerNumber, InvoiceDate: date.Format(time.DateOnly), Period: period.String(), Kind: kind, Status: "open",
		Net: net, Tax: tax, Total: total, Currency: p.Currency}
	due := chargeableFrom(d.inv.InvoiceDate, p.Location())
	d.chargeAt = &due
	if due.Before(now) {
		d.chargeAt = &now
	}
	if total <= 0 {
		d.inv.Status, d.chargeAt = "paid", nil // fully covered by credit: nothing to charge
	}
	if sub.AutoPayOff {
		d.dueAt, d.chargeAt = d.chargeAt, nil // the holder pays it (pay link, pay now), dunned from then
	}
	return d
}

// applyCredits takes what credits cover of due, in their order: an invoice line and a spend for
// each credit used (its Remaining lowered by it), and what is left due.
func applyCredits(credits []*subprov.CreditNote, due subprov.Money) ([]subprov.InvoiceLine, []spend, subprov.Money) {
	var lines []subprov.InvoiceLine
	var spent []spend
	for _, c := range credits {
		use := min(c.Remaining, due)
		if use <= 0 {
			continue
		}
		lines = append(lines, subprov.InvoiceLine{Kind: "credit", Description: "Credit note " + c.Number, UnitPrice: -use, Amount: -use})
		spent = append(spent, spend{c.ID, use})
		c.Remaining -= use
		due -= use
	}
	return lines, spent, due
}

// settle marks the folded adjustments used and spends the credits, once the invoice is written.
func (d *draft) settle(ctx context.Context, tx *store.Tx, now time.Time) error {
	if err := tx.ConsumeAdjustments(ctx, d.consumed, d.inv.ID, now); err != nil {
		return err
	}
	for _, sp := range d.spent {
		if err := tx.SpendCredit(ctx, sp.id, sp.amount, subprov.CreditApplied, d.inv.ID, now); err != nil {
			return err
		}
	}
	return nil
}

func (d *draft) auditDetails() string {
	return fmt.Sprintf(`{"invoice_id":%q,"total":"%s","kind":%q}`, d.inv.ID, d.inv.Total, d.inv.Kind)
}

// chargeableFrom is the first instant AutoPay charges an invoice dated date (YYYY-MM-DD): the
// start of that day in the provider's time zone. AutoPay never charges an invoice before its
// date (a card saved meanwhile included); only an operator's retry (RetryNow) does.
func chargeableFrom(date string, loc *time.Location) time.Time {
	d, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return time.Time{} // no date to wait for
	}
	return d
}

// SweepCharges enqueues an AutoPay attempt for every open invoice whose attempt is due. The
// claim is written in the same transaction as the job, so two sweeps never queue one twice.
func (s *Service) SweepCharges(ctx context.Context) error {
	now := s.Clock.Now()
	ids, err := s.Store.DueCharges(ctx, now, now.Add(-claimExpiry), 1000)
	if err != nil {
		return err
	}
	err = jobs.ClaimAndEnqueue(ctx, s.Store, s.Jobs, ids,
		func(ctx context.Context, tx *store.Tx, id string) (bool, error) {
			return tx.ClaimCharge(ctx, id, now, now.Add(-claimExpiry))
		},
		func(id string) jobs.Args { return jobs.ChargeInvoice{InvoiceID: id} })
	if err != nil {
		return err
	}
	return s.sweepReminders(ctx, now)
}

// Charge is the billing.charge job: one AutoPay attempt. Its idempotency key names the
// invoice and the attempt, so a job that runs again after a crash is answered by the
// processor with the first result and never charges twice.
func (s *Service) Charge(ctx context.Context, a jobs.ChargeInvoice) error {
	var st *subprov.InvoiceChargeState
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		st, err = tx.LockInvoice(ctx, a.InvoiceID)
		return err
	})
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		return err
	}
	inv := st.Invoice
	if inv.Status != "open" || st.ClaimedAt == nil {
		return nil // paid, void, or the claim it was queued under settled by another attempt
	}
	sub, p, err := s.line(ctx, inv.SubscriptionID)
	if err != nil || sub == nil {
		return err
	}
	if sub.ProcessorCustomerID == "" {
		return s.withoutAutoPay(ctx, sub, inv, "no_processor_customer")
	}
	return s.attempt(ctx, p, sub, st, false)
}

// attempt charges an open invoice whose charge the caller claimed (ClaimCharge): an AutoPay
// attempt (the charge job) or the holder's pay-now (payNow). Both take the idempotency key
// invoice:<id>:attempt:<n>, n counting every attempt made, so a charge repeated after a crash or
// a lost answer is answered by the processor with its first result and charges once, and an
// AutoPay attempt and a pay-now racing for one attempt are one charge.
//
// AutoPay: a decline is dunned (the next attempt scheduled, the customer mailed, the line cut
// off after the last); an unreachable processor is an error, so the job retries with the same
// key. Pay-now: a decline is recorded but leaves the AutoPay schedule and dunning as they were
// (card_declined); no card or no processor connection (no_payment_method) and an unreachable
// processor (processor_unavailable) give the claim back and record nothing; a payment mails the
// receipt.
func (s *Service) attempt(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, st *subprov.InvoiceChargeState, payNow bool) error {
	inv := st.Invoice
	key := fmt.Sprintf("invoice:%s:attempt:%d", inv.ID, st.Attempts+1)
	ch, err := s.Processor.Charge(ctx, p, payments.ChargeRequest{CustomerID: sub.ProcessorCustomerID, MethodID: sub.PaymentMethodID,
		Amount: inv.Total, Currency: inv.Currency, IdempotencyKey: key, Description: "Invoice " + inv.Number})
	now := s.Clock.Now()
	switch {
	case err == nil:
		return s.Store.InTx(ctx, func(tx *store.Tx) error {
			// Lock the line first: two invoices of one line paid at once must not each see the
			// other still open and both skip the restore.
			if _, err := tx.LockSubscription(ctx, "", sub.ID); err != nil {
				return err
			}
			ok, err := tx.RecordCharge(ctx, subprov.ChargeAttempt{InvoiceID: inv.ID, ProviderID: p.ID, IdempotencyKey: key, Amount: inv.Total,
				Status: "succeeded", ProcessorRef: ch.ID, PayNow: payNow}, nil, now)
			if err != nil || !ok {
				return err
			}
			if err := tx.InsertAudit(ctx, p.ID, "billing", "invoice.paid", sub.ID, fmt.Sprintf(`{"invoice_id":%q,"charge":%q,"amount":"%s","pay_now":%t}`,
				inv.ID, ch.ID, inv.Total, payNow), now); err != nil {
				return err
			}
			if payNow {
				if err := s.mailReceipt(ctx, tx, sub, inv); err != nil {
					return err
				}
			}
			return s.restoreIfPaidUp(ctx, tx, sub)
		})
	case payNow && (errors.Is(err, payments.ErrNotConnected) || errors.Is(err, payments.ErrNoPaymentMethod) || errors.Is(err, payments.ErrCustomerNotFound)):
		return s.release(ctx, inv.ID, errNoPaymentMethod())
	case errors.Is(err, payments.ErrNotConnected):
		return s.withoutAutoPay(ctx, sub, inv, "no_processor_connection")
	case payNow && errors.Is(err, payments.ErrCardDeclined):
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			ok, err := tx.RecordCharge(ctx, subprov.ChargeAttempt{InvoiceID: inv.ID, ProviderID: p.ID, IdempotencyKey: key, Amount: inv.Total,
				Status: "declined", FailureCode: "card_declined", PayNow: true}, nil, now)
			if err != nil || !ok {
				return err
			}
			return tx.InsertAudit(ctx, p.ID, "billing", "invoice.charge_declined", sub.ID,
				fmt.Sprintf(`{"invoice_id":%q,"attempt":%d,"pay_now":true}`, inv.ID, st.Attempts+1), now)
		})
		if err != nil {
			return err
		}
		return ChargeError(payments.ErrCardDeclined)
	case errors.Is(err, payments.ErrCardDeclined), errors.Is(err, payments.ErrNoPaymentMethod):
		// Dunning counts AutoPay's attempts only: the holder's own tries do not bring the
		// cut-off nearer.
		dunned := st.Attempts - st.PayNow + 1
		next := dunningNext(dunned, now)
		stepped := false
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			stepped = false
			ok, err := tx.RecordCharge(ctx, subprov.ChargeAttempt{InvoiceID: inv.ID, ProviderID: p.ID, IdempotencyKey: key, Amount: inv.Total,
				Status: "declined", FailureCode: "card_declined"}, next, now)
			if err != nil || !ok {
				return err
			}
			if err := tx.InsertAudit(ctx, p.ID, "billing", "invoice.charge_declined", sub.ID, fmt.Sprintf(`{"invoice_id":%q,"attempt":%d}`, inv.ID, dunned), now); err != nil {
				return err
			}
			stepped = true
			return s.dunningStep(ctx, tx, p, sub, inv, next, "billing.declined")
		})
		if err == nil && stepped {
			s.Metrics.DunningStep("declined", dunned, next == nil)
		}
		return err
	case payNow:
		s.Log.Warn("pay now: processor unreachable", "invoice_id", inv.ID, "err", err)
		return s.release(ctx, inv.ID, ChargeError(payments.ErrUnavailable))
	default:
		return fmt.Errorf("charge invoice %s: %w", inv.ID, err) // processor unreachable: retried with the same key
	}
}

// withoutAutoPay leaves an invoice open with no attempt scheduled when there is nothing
// AutoPay could charge: a platform-billed line with no processor customer (a
// fixture line may name none) or a provider with no processor connection. Retrying cannot
// succeed, and it is no decline either: no attempt is recorded, nobody is dunned or cut off.
// Saving a card in the portal, or an operator's retry-charge, makes the invoice due again.
// Only the claim this job was queued under is released: a reschedule since (a card saved
// meanwhile) stands.
func (s *Service) withoutAutoPay(ctx context.Context, sub *subprov.Subscription, inv *subprov.Invoice, reason string) error {
	now := s.Clock.Now()
	var parked bool
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if parked, err = tx.ParkCharge(ctx, inv.ID); err != nil || !parked {
			return err
		}
		return tx.InsertAudit(ctx, inv.ProviderID, "billing", "invoice.autopay_unavailable", sub.ID,
			fmt.Sprintf(`{"invoice_id":%q,"reason":%q}`, inv.ID, reason), now)
	})
	if err == nil && parked {
		s.Log.Info("invoice left open without AutoPay", "invoice_id", inv.ID, "subscription_id", sub.ID, "reason", reason)
	}
	return err
}

// dunningStep mails the customer after a declined attempt, or an invoice the holder pays
// still unpaid (notice names the mail: billing.declined, billing.unpaid), with the next date
// and, after the last step, cuts the line off.
func (s *Service) dunningStep(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, inv *subprov.Invoice,
	next *time.Time, notice string) error {
	_, email, err := tx.SubscriberForInvoice(ctx, sub.SubscriberID)
	if err != nil {
		return err
	}
	total := invoiceTotal(inv)
	if next != nil {
		body := locale.Texts{locale.Msg("mail.hello"), locale.Msg(notice+".body", inv.Number, total,
			locale.DateOf(next.In(p.Location()).Format(time.DateOnly)))}
		return s.Mail.QueueLocalized(ctx, tx, p.ID, email, locale.Mail{Subject: locale.Msg(notice+".subject", inv.Number), Body: body, Account: sub.SubscriberID})
	}
	suspended := "billing.suspended.body" // after the card's declined attempts
	if notice == "billing.unpaid" {
		suspended = "billing.suspended.unpaid_body" // after the reminders of an invoice the holder pays
	}
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg(suspended, inv.Number, total)}
	if err := s.Mail.QueueLocalized(ctx, tx, p.ID, email, locale.Mail{Subject: locale.Msg("billing.suspended.subject", inv.Number), Body: body, Account: sub.SubscriberID}); err != nil {
		return err
	}
	return s.Jobs.Enqueue(ctx, tx, jobs.SetLineService{SubscriptionID: sub.ID, On: false, Reason: "dunning"})
}

// restoreIfPaidUp restores a line cut off for non-payment once no invoice is open.
func (s *Service) restoreIfPaidUp(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error {
	reason, err := tx.SuspendedFor(ctx, sub.ID)
	if err != nil || reason != "dunning" {
		return err
	}
	open, err := tx.OpenInvoicesOf(ctx, sub.ID)
	if err != nil || open > 0 {
		return err
	}
	return s.Jobs.Enqueue(ctx, tx, jobs.SetLineService{SubscriptionID: sub.ID, On: true, Reason: "dunning"})
}

// SetLineService is the line.service job: cut a line off for non-payment (SUSPENDED) or
// restore it (ACTIVE), with its port's desired setting in the same transaction; the port
// follows through its port.converge job, which retries a switch that does not take it.
func (s *Service) SetLineService(ctx context.Context, a jobs.SetLineService) error {
	action := provisioning.ActSuspend
	if a.On {
		action = provisioning.ActRestore
	}
	now := s.Clock.Now()
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, "", a.SubscriptionID)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return nil
			}
			return err
		}
		to, err := provisioning.Next(sub.Status, action)
		if err != nil || (action == provisioning.ActSuspend && sub.Status != subprov.StatusActive) {
			return nil // nothing to do from here (already suspended, cancelled, …)
		}
		if a.On {
			if reason, err := tx.SuspendedFor(ctx, sub.ID); err != nil || reason != a.Reason {
				return err
			}
		}
		reason := a.Reason
		if a.On {
			reason = ""
		}
		if err := s.Lines.SetStatus(ctx, tx, sub, to, reason); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, sub.ProviderID, "billing", map[bool]string{true: "subscription.restored_after_payment", false: "subscription.cut_off_for_" + a.Reason}[a.On], sub.ID, "", now)
	})
}

// line loads a subscription and its provider for a job; (nil, nil, nil) when the line is gone.
func (s *Service) line(ctx context.Context, subscriptionID string) (*subprov.Subscription, *subprov.Provider, error) {
	sub, err := s.Store.SubscriptionByID(ctx, subscriptionID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	p, err := s.Store.Provider(ctx, sub.ProviderID)
	if err != nil {
		return nil, nil, err
	}
	return sub, p, nil
}

// RetryNow makes an open invoice's next AutoPay attempt due at once: an operator's retry,
// which charges even an invoice dated later (a cancellation's final invoice) on the spot. The
// operator's role needs the invoices permission (403 for any id); an invoice outside its
// scope is not found. The retry is audited (invoice.charge_retried) with its scheduling.
func (s *Service) RetryNow(ctx context.Context, op *subprov.Operator, invoiceID string) (*subprov.Invoice, error) {
	if err := op.Authorize(subprov.PermInvoices); err != nil {
		return nil, err
	}
	scope := op.Scope()
	now := s.Clock.Now()
	var inv *subprov.Invoice
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		st, err := tx.LockInvoice(ctx, invoiceID)
		if errors.Is(err, subprov.ErrNotFound) || (err == nil && !scope.Allows(st.Invoice.ProviderID)) {
			return subprov.NotFound("Invoice")
		}
		if err != nil {
			return err
		}
		inv = st.Invoice
		if inv.Status != "open" {
			return subprov.Errorf(subprov.ECONFLICT, "not_open", "The invoice is %s", inv.Status)
		}
		if err := tx.ScheduleCharge(ctx, invoiceID, now); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, subprov.NewAudit(ctx, inv.ProviderID, "invoice.charge_retried", "invoice", inv.ID), now)
	})
	return inv, err
}
