package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/preferences"
	"github.com/subprov/subprov/store"
)

// Quote is an invoice worked out before anything is written: what a portal order or a
// reactivation will bill. First is net before tax (first charges are quoted net).
type Quote struct {
	Kind   string // first, reactivation
	Period Period
	Day    time.Time
	Lines  []subprov.InvoiceLine
	Net    subprov.Money
	Tax    subprov.Money
	Total  subprov.Money
}

func (s *Service) quote(p *subprov.Provider, kind string, lines []subprov.InvoiceLine, day time.Time) *Quote {
	q := &Quote{Kind: kind, Period: PeriodOf(day), Day: day, Lines: lines}
	for _, l := range lines {
		q.Net += l.Amount
	}
	q.Tax = Tax(q.Net, p.TaxRateBP)
	q.Total = q.Net + q.Tax
	return q
}

// restOfMonth is the plan from today to the month's end, each day at its price.
func restOfMonth(plan *subprov.PlanVersion, today time.Time) []subprov.InvoiceLine {
	period := PeriodOf(today)
	return planLines(plan, today, period.Day(period.Days()), "")
}

// FirstInvoiceQuote is the first invoice of a line that goes live today: the setup fee plus
// the current month prorated from today (the same lines Activated issues).
func (s *Service) FirstInvoiceQuote(p *subprov.Provider, plan *subprov.PlanVersion) *Quote {
	today := LocalDay(s.Clock.Now(), p.Location())
	var lines []subprov.InvoiceLine
	if plan.SetupFee > 0 {
		lines = append(lines, subprov.InvoiceLine{Kind: "setup_fee", Description: "Setup fee — " + plan.PlanName, UnitPrice: plan.SetupFee, Amount: plan.SetupFee})
	}
	return s.quote(p, "first", append(lines, restOfMonth(plan, today)...), today)
}

// RestOfPeriodQuote is the reactivation invoice: the line's own price from today to the end
// of the current calendar month, no setup fee.
func (s *Service) RestOfPeriodQuote(p *subprov.Provider, plan *subprov.PlanVersion) *Quote {
	today := LocalDay(s.Clock.Now(), p.Location())
	return s.quote(p, "reactivation", restOfMonth(plan, today), today)
}

// ChargeError turns a processor refusal of an immediate charge into the subscriber's answer.
func ChargeError(err error) error {
	switch {
	case errors.Is(err, payments.ErrCardDeclined):
		return subprov.Errorf(subprov.ECONFLICT, "card_declined", "The card on file was declined; nothing was charged or created")
	case errors.Is(err, payments.ErrNoPaymentMethod), errors.Is(err, payments.ErrCustomerNotFound):
		return subprov.Errorf(subprov.ECONFLICT, "no_payment_method", "There is no saved card on the account; add one under payment method first")
	case errors.Is(err, payments.ErrNotConnected):
		return subprov.Errorf(subprov.ECONFLICT, "no_processor_connection", "The provider has no payment-processor connection")
	case errors.Is(err, payments.ErrUnavailable):
		return subprov.Errorf(subprov.EUNAVAILABLE, "processor_unavailable", "The payment processor did not answer; nothing was charged, try again")
	}
	return err
}

// ChargeNow charges a quote's total to a saved card before anything is written (the card
// decides whether the order stands). The idempotency key makes a retried call charge once.
func (s *Service) ChargeNow(ctx context.Context, p *subprov.Provider, customerID, methodID string, q *Quote, key, description string) (*payments.Charge, error) {
	if customerID == "" || methodID == "" {
		return nil, ChargeError(payments.ErrNoPaymentMethod)
	}
	ch, err := s.Processor.Charge(ctx, p, payments.ChargeRequest{CustomerID: customerID, MethodID: methodID, Amount: q.Total,
		Currency: p.Currency, IdempotencyKey: key, Description: description})
	if err != nil {
		return nil, ChargeError(err)
	}
	return ch, nil
}

// GiveBack refunds an immediate charge whose order could not be written after all (best
// effort: a failure is logged for the operator).
func (s *Service) GiveBack(ctx context.Context, p *subprov.Provider, ch *payments.Charge, amount subprov.Money, key string) {
	if _, err := s.Processor.Refund(ctx, p, ch.ID, amount, "giveback:"+key); err != nil {
		s.Log.Error("charge taken but the order was not written, and the refund failed", "charge", ch.ID, "err", err)
	}
}

// BookPaid issues the quoted invoice inside tx and records the charge that already paid it.
func (s *Service) BookPaid(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, q *Quote,
	ch *payments.Charge, key string) (*subprov.Invoice, error) {
	now := s.Clock.Now()
	inv, err := s.issue(ctx, tx, p, sub, q.Kind, "", q.Period, q.Day, q.Lines, now)
	if err != nil {
		return nil, err
	}
	if inv == nil {
		return nil, subprov.Errorf(subprov.ECONFLICT, "already_invoiced", "This period is already invoiced for the line")
	}
	if _, err := tx.RecordCharge(ctx, subprov.ChargeAttempt{InvoiceID: inv.ID, ProviderID: p.ID, IdempotencyKey: key, Amount: inv.Total,
		Status: "succeeded", ProcessorRef: ch.ID}, nil, now); err != nil {
		return nil, err
	}
	inv.Status, inv.PaidAt, inv.PaymentIntent = "paid", &now, ch.ID
	return inv, tx.InsertAudit(ctx, p.ID, "billing", "invoice.paid", sub.ID, fmt.Sprintf(`{"invoice_id":%q,"charge":%q,"amount":"%s"}`, inv.ID, ch.ID, inv.Total), now)
}

// InvoiceRestOfPeriod issues the invoice of one reactivation inside tx, charged through
// AutoPay as every other invoice (the usual invoice path). reactivation names it (the
// cancellation it undoes, CancellationOccasion, or its reinstall job): each reactivation of a
// month gets its own invoice, and the same one is invoiced once.
func (s *Service) InvoiceRestOfPeriod(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, plan *subprov.PlanVersion,
	reactivation string) (*subprov.Invoice, error) {
	if sub.BillingOwner != subprov.BillingPlatform {
		return nil, nil
	}
	q := s.RestOfPeriodQuote(p, plan)
	return s.issue(ctx, tx, p, sub, q.Kind, reactivation, q.Period, q.Day, q.Lines, s.Clock.Now())
}

// Withdrawal is what withdrawing a pending cancellation did to the money.
type Withdrawal struct {
	VoidedCreditNotes []string // numbers of refund credits voided before any money went back
	VoidedInvoices    []string // unpaid final invoices voided
	Reinvoiced        *subprov.Invoice
}

// WithdrawCancellation undoes the money of a cancellation that has not taken effect, inside
// tx: billing simply continues. A refund credit still untouched is voided; days whose money
// already went back, wholly or in part (credit refunded, paid out or applied), are invoiced
// again, less what is left of a partly used credit; an unpaid final invoice nothing has acted
// on is voided. A final invoice that stands (paid, being charged by AutoPay, or with credits
// spent on it) keeps the days it bills (the month up to the end date), and the rest of that
// month is invoiced now, as the days taken back are: the month's recurring invoice, which the
// bill run skips for a line the month is invoiced for, would otherwise bill those days a
// second time.
func (s *Service) WithdrawCancellation(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) (*Withdrawal, error) {
	w := &Withdrawal{VoidedCreditNotes: []string{}, VoidedInvoices: []string{}}
	if sub.BillingOwner != subprov.BillingPlatform || sub.CanceledAt == nil || sub.EndedAt == nil {
		return w, nil
	}
	now := s.Clock.Now()
	credits, err := tx.CancellationCredits(ctx, sub.ID, *sub.CanceledAt)
	if err != nil {
		return nil, err
	}
	invoiceRest := false // the days from the end date to the month's end are billed again
	for _, c := range credits {
		if c.State == subprov.CreditOpen && c.Remaining == c.Amount {
			if err := tx.VoidCredit(ctx, c.ID, now); err != nil {
				return nil, err
			}
			// Plan-change lines it had netted are owed again, on the next invoice.
			if err := tx.ReopenAdjustmentsOfCredit(ctx, c.ID); err != nil {
				return nil, err
			}
			w.VoidedCreditNotes = append(w.VoidedCreditNotes, c.Number)
			continue
		}
		// Some of its money went back (refunded, paid out, or spent on another invoice of the
		// line): the days it gave back are invoiced again. What is left of a partly used note
		// stays open, so that invoice spends it (issue deducts open credits): the customer pays
		// again only the part that was used. Voiding the rest as well would bill it twice.
		invoiceRest = true
	}
	final, status, err := tx.CancellationFinalInvoice(ctx, sub.ID, CancellationOccasion(sub))
	if err != nil {
		return nil, err
	}
	switch status {
	case "open":
		voided, err := tx.VoidUntouchedInvoice(ctx, final)
		if err != nil {
			return nil, err
		}
		if voided {
			w.VoidedInvoices = append(w.VoidedInvoices, final)
		} else {
			invoiceRest = true // AutoPay is charging it, or credits were spent on it: it stands, as a paid one does
		}
	case "paid": // its days stay paid
		invoiceRest = true
	}
	if invoiceRest {
		plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
		if err != nil {
			return nil, err
		}
		endDay := LocalDay(*sub.EndedAt, p.Location())
		period := PeriodOf(endDay)
		lines := planLines(plan, endDay, period.Day(period.Days()), " (cancellation withdrawn)")
		if w.Reinvoiced, err = s.issue(ctx, tx, p, sub, "reactivation", CancellationOccasion(sub), period, LocalDay(now, p.Location()), lines, now); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Reinstalled resumes a reactivated line's billing once its reinstall job is done (state
// table: "ACTIVE and billing after technician visit; reactivation e-mail then"): the rest of
// the current period is invoiced through AutoPay, with no setup fee, once per reinstall job,
// and the holder is told.
func (s *Service) Reinstalled(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, reinstallJobID string) error {
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return err
	}
	if _, err := s.InvoiceRestOfPeriod(ctx, tx, p, sub, plan, reinstallOccasion(reinstallJobID)); err != nil {
		return err
	}
	if sub.SubscriberID == "" {
		return nil
	}
	_, email, err := tx.SubscriberForInvoice(ctx, sub.SubscriberID)
	if err != nil || email == "" {
		return err
	}
	// A service notice: the recipient's choices may hold it back.
	if send, err := preferences.Sends(ctx, tx, sub.SubscriberID, email, preferences.MailServiceNotice); err != nil || !send {
		return err
	}
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg("billing.reinstalled.body", p.Name, plan.PlanName)}
	return s.Mail.QueueLocalized(ctx, tx, p.ID, email, locale.Mail{Subject: locale.Msg("billing.reinstalled.subject"), Body: body, Account: sub.SubscriberID})
}
