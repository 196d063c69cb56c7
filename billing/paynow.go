package billing

import (
	"context"
	"errors"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/store"
)

// PayLinkKind is the kind of the single-purpose token a pay link carries: bound to one
// invoice, kept only as its hash, good while the invoice is open.
const PayLinkKind = "invoice_pay"

// PayLinkPath is where a pay link leads.
const PayLinkPath = "/portal/pay"

// payLinkLifetime bounds the token's row; the link really lives as long as its invoice is open.
const payLinkLifetime = 10 * 365 * 24 * time.Hour

func errNoPaymentMethod() error {
	return subprov.Errorf(subprov.ECONFLICT, "no_payment_method", "There is no saved card on the account; add one under payment method first")
}

// errNotPayable refuses to charge an invoice that is paid, void, or being charged already.
func errNotPayable(why string) error {
	return subprov.Errorf(subprov.ECONFLICT, "not_payable", "The invoice cannot be paid now: %s", why)
}

// PayNow charges the saved card for one of the holder's open invoices at once, through the
// AutoPay attempt (attempt), and answers the invoice as it then is. Only the holder pays (403
// holder_only); another account's invoice is not found. 409 not_payable when the invoice is
// paid, void, or a charge of it is under way (an AutoPay attempt queued, or another pay-now
// still charging: the claim is taken in one transaction, so of two clicks one charges and
// the other is refused); 409 no_payment_method without a card; 409 card_declined leaves the
// invoice open; 502 processor_unavailable changes nothing.
func (s *Service) PayNow(ctx context.Context, p *subprov.Provider, acc *subprov.Account, invoiceID string) (*subprov.Invoice, error) {
	if err := acc.CheckHolder(); err != nil {
		return nil, err
	}
	return s.pay(ctx, p.ID, acc.SubscriberID, invoiceID)
}

// pay claims an open invoice of subscriberID at providerID and charges it.
func (s *Service) pay(ctx context.Context, providerID, subscriberID, invoiceID string) (*subprov.Invoice, error) {
	// The charge is not abandoned with the request: once claimed, its outcome is recorded (or
	// the claim given back) whatever the caller does.
	ctx = context.WithoutCancel(ctx)
	var st *subprov.InvoiceChargeState
	var sub *subprov.Subscription
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		st, err = tx.LockInvoice(ctx, invoiceID)
		if errors.Is(err, subprov.ErrNotFound) || (err == nil && (st.Invoice.ProviderID != providerID || st.Invoice.SubscriberID != subscriberID)) {
			return subprov.NotFound("Invoice")
		}
		if err != nil {
			return err
		}
		switch inv := st.Invoice; {
		case inv.Status != "open":
			return errNotPayable("it is " + inv.Status)
		case claimLive(st, s.Clock.Now()):
			return errNotPayable("a payment of it is under way")
		}
		if sub, err = tx.LockSubscription(ctx, providerID, st.Invoice.SubscriptionID); err != nil {
			return err
		}
		if sub.ProcessorCustomerID == "" {
			return errNoPaymentMethod()
		}
		now := s.Clock.Now()
		claimed, err := tx.ClaimCharge(ctx, invoiceID, now, now.Add(-claimExpiry))
		if err == nil && !claimed {
			return errNotPayable("a payment of it is under way")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	p, err := s.Store.Provider(ctx, providerID)
	if err != nil {
		return nil, s.release(ctx, invoiceID, err)
	}
	if err := s.attempt(ctx, p, sub, st, true); err != nil {
		return nil, err
	}
	return s.Store.Invoice(ctx, providerID, invoiceID)
}

// release gives back a pay-now's claim that charged nothing, then answers err.
func (s *Service) release(ctx context.Context, invoiceID string, err error) error {
	if rerr := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.ReleaseCharge(ctx, invoiceID) }); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// invoiceTotal is the invoice's total as its reader's language writes money.
func invoiceTotal(inv *subprov.Invoice) locale.Amount {
	return locale.Amount{Money: inv.Total, Currency: inv.Currency}
}

// mailReceipt mails the receipt of an invoice the holder paid to its billing contact.
func (s *Service) mailReceipt(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, inv *subprov.Invoice) error {
	_, email, err := tx.SubscriberForInvoice(ctx, sub.SubscriberID)
	if err != nil {
		return err
	}
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg("billing.receipt.body", inv.Number, invoiceTotal(inv))}
	return s.Mail.QueueLocalized(ctx, tx, inv.ProviderID, email, locale.Mail{
		Subject: locale.Msg("billing.receipt.subject", inv.Number), Body: body, Account: sub.SubscriberID})
}

// mailPayLink mails an invoice of a line with AutoPay off to its billing contact, with a link
// that pays it: a new token, stored as its hash only, bound to the invoice.
func (s *Service) mailPayLink(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, inv *subprov.Invoice, now time.Time) error {
	raw := identity.NewToken(32)
	if err := tx.InsertToken(ctx, identity.HashSecret(raw), subprov.MailedToken{Kind: PayLinkKind, ProviderID: inv.ProviderID,
		SubjectID: inv.ID, ExpiresAt: now.Add(payLinkLifetime)}, now); err != nil {
		return err
	}
	_, email, err := tx.SubscriberForInvoice(ctx, sub.SubscriberID)
	if err != nil {
		return err
	}
	link := s.PublicURL + PayLinkPath + "?token=" + raw
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg("billing.pay_link.body", inv.Number, invoiceTotal(inv)),
		locale.Msg("billing.pay_link.pay"), locale.Verbatim(link)}
	return s.Mail.QueueLocalized(ctx, tx, inv.ProviderID, email, locale.Mail{
		Subject: locale.Msg("billing.pay_link.subject", inv.Number, invoiceTotal(inv)), Body: body, Links: []string{link}, Account: sub.SubscriberID})
}

// ErrDeadPayLink answers a pay link that names no invoice (unknown, or never issued).
var ErrDeadPayLink = subprov.Errorf(subprov.ENOTFOUND, "invalid_token", "The link is invalid")

// PayLinkInvoice returns the invoice a pay link pays, in whatever status it now is, with its
// provider; ErrDeadPayLink for a link that names none.
func (s *Service) PayLinkInvoice(ctx context.Context, token string) (*subprov.Invoice, *subprov.Provider, error) {
	if token == "" {
		return nil, nil, ErrDeadPayLink
	}
	invoiceID, providerID, err := s.Store.TokenSubject(ctx, identity.HashSecret(token), PayLinkKind, s.Clock.Now())
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, nil, ErrDeadPayLink
	}
	if err != nil {
		return nil, nil, err
	}
	inv, err := s.Store.Invoice(ctx, providerID, invoiceID)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, nil, ErrDeadPayLink
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := s.Store.Provider(ctx, providerID)
	return inv, p, err
}

// PayWithLink pays the invoice a pay link names with the saved card, exactly as PayNow does,
// with the same refusals; the link is the credential.
func (s *Service) PayWithLink(ctx context.Context, token string) (*subprov.Invoice, error) {
	inv, _, err := s.PayLinkInvoice(ctx, token)
	if err != nil {
		return nil, err
	}
	// The link is the holder's: its payment is audited as the subscriber's.
	r := subprov.RequestOf(ctx)
	r.Actor = subprov.Actor{Type: subprov.ActorSubscriber, ID: inv.SubscriberID}
	ctx = subprov.WithRequest(ctx, r)
	return s.pay(ctx, inv.ProviderID, inv.SubscriberID, inv.ID)
}

// AutoPayLine is one platform-billed line's AutoPay setting.
type AutoPayLine struct {
	SubscriptionID string
	Enabled        bool
}

// AutoPay lists the AutoPay setting of each of the holder's platform-billed lines.
func (s *Service) AutoPay(ctx context.Context, p *subprov.Provider, acc *subprov.Account) ([]AutoPayLine, error) {
	if err := acc.CheckHolder(); err != nil {
		return nil, err
	}
	subs, err := s.Store.PlatformLinesOfSubscriber(ctx, p.ID, acc.SubscriberID)
	if err != nil {
		return nil, err
	}
	out := make([]AutoPayLine, 0, len(subs))
	for _, sub := range subs {
		out = append(out, AutoPayLine{SubscriptionID: sub.ID, Enabled: !sub.AutoPayOff})
	}
	return out, nil
}

// SetAutoPay turns AutoPay on or off for one of the holder's platform-billed lines (another
// line is not found). Turning it on needs a saved card (409 no_payment_method). With it off,
// the line's invoices from then on are issued with nothing scheduled and mailed with a pay
// link; attempts already scheduled (dunning's) are left as they are. A change is audited
// (subscription.autopay_changed).
func (s *Service) SetAutoPay(ctx context.Context, p *subprov.Provider, acc *subprov.Account, subscriptionID string, enabled bool) (*AutoPayLine, error) {
	if err := acc.CheckHolder(); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, p.ID, subscriptionID)
		if errors.Is(err, subprov.ErrNotFound) || (err == nil && (sub.SubscriberID != acc.SubscriberID || sub.BillingOwner != subprov.BillingPlatform)) {
			return subprov.NotFound("Subscription")
		}
		if err != nil {
			return err
		}
		if enabled && (sub.ProcessorCustomerID == "" || p.PaymentProcessor == "none") {
			return errNoPaymentMethod()
		}
		if sub.AutoPayOff == !enabled {
			return nil
		}
		if err := tx.SetAutoPayOff(ctx, sub.ID, !enabled, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, p.ID, "subscription.autopay_changed", "subscription", sub.ID)
		e.Changes.Set("autopay", !sub.AutoPayOff, enabled)
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return &AutoPayLine{SubscriptionID: subscriptionID, Enabled: enabled}, nil
}
