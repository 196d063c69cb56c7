package portal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/preferences"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// Reactivation cases and paths (docs/portal.md, Reactivation).
const (
	CaseWithdraw   = "withdraw"
	CaseReactivate = "reactivate"
	CaseResume     = "resume"

	PathRemote     = "remote"
	PathTechnician = "technician"
	PathNone       = "none"
	PathActivate   = "activate"
)

// ReactivationView is the preview of the account's most recently cancelled line.
type ReactivationView struct {
	Subscription  *subprov.Subscription // nil when nothing is cancelled
	Case          string                // "" when nothing is cancelled
	Path          string
	Blockers      []string
	HolderOnly    bool
	FirstCharge   *subprov.Money // net before tax
	BillingStarts string         // now, activation, or ""
	MonthlyPrice  *subprov.Money
	Booking       string // customer or operator on a path with an install visit

	plan     *subprov.PlanVersion
	building *subprov.Building
	portID   string
}

// Eligible reports whether the case can be acted on.
func (v *ReactivationView) Eligible() bool { return v.Case != "" && len(v.Blockers) == 0 }

// Reactivation previews the account's most recently cancelled line (all account users).
func (s *Service) Reactivation(ctx context.Context, acc *subprov.AccountLogin) (*ReactivationView, error) {
	p, err := s.account(ctx, acc)
	if err != nil {
		return nil, err
	}
	sub, err := s.Store.LatestCancelled(ctx, p.ID, acc.SubscriberID)
	if errors.Is(err, subprov.ErrNotFound) {
		return &ReactivationView{Path: PathNone, Blockers: []string{}, HolderOnly: !acc.IsHolder()}, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := s.assess(ctx, p, sub)
	if err != nil {
		return nil, err
	}
	v.HolderOnly = !acc.IsHolder()
	return v, nil
}

// assess works out a cancelled line's case, path, blockers and money (docs/portal.md, Reactivation).
func (s *Service) assess(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription) (*ReactivationView, error) {
	now := s.Clock.Now()
	v := &ReactivationView{Subscription: sub, Blockers: []string{}}
	switch {
	case sub.EndedAt != nil && sub.EndedAt.After(now):
		v.Case, v.Path, v.BillingStarts = CaseWithdraw, PathNone, "now"
	case sub.ActivatedAt != nil:
		v.Case = CaseReactivate
	default:
		v.Case = CaseResume
	}
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return nil, err
	}
	v.plan, v.MonthlyPrice = plan, &plan.MonthlyPrice
	if sub.BillingOwner != subprov.BillingPlatform {
		v.Blockers = append(v.Blockers, "The line is billed directly by the provider; ask them to restart it.")
	}
	withdrawn := ""
	if v.Case == CaseWithdraw {
		withdrawn = sub.ID // its unpaid final invoice is voided by the withdrawal
	}
	unpaid, err := s.Store.UnpaidInvoices(ctx, p.ID, sub.SubscriberID, withdrawn)
	if err != nil {
		return nil, err
	}
	if unpaid > 0 {
		v.Blockers = append(v.Blockers, "There are unpaid invoices on the account.")
	}
	if strings.Contains(sub.CancelReason, "provider_switch") {
		v.Blockers = append(v.Blockers, "The line ended through a switch to another provider.")
	}
	if v.Case == CaseWithdraw {
		return v, nil
	}
	if sub.UnitID != "" {
		held, err := s.Store.UnitHeldByOther(ctx, sub.UnitID, sub.ID)
		if err != nil {
			return nil, err
		}
		if held {
			v.Blockers = append(v.Blockers, "The suite has been served by someone else since.")
		}
	}
	b, err := s.Store.CoveredBuilding(ctx, p.ID, sub.BuildingID)
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return nil, err
	}
	if err != nil || !b.LineType.Valid() {
		v.Path = PathNone
		v.Blockers = append(v.Blockers, "The provider no longer takes orders in this building.")
		return v, nil
	}
	v.building = b
	if v.portID = sub.PortID; v.portID == "" && sub.UnitID != "" {
		if v.portID, err = s.Store.PortIDOfUnit(ctx, sub.UnitID); err != nil {
			return nil, err
		}
	}
	firstLineWired := b.LineType == subprov.LineFirst && v.portID != ""
	v.Booking = "operator"
	if b.LineType == subprov.LineThird || (v.Case == CaseReactivate && b.LineType == subprov.LineFirst) {
		v.Booking = "customer"
	}
	switch {
	case v.Case == CaseReactivate && firstLineWired:
		v.Path, v.BillingStarts, v.Booking = PathRemote, "now", ""
		v.FirstCharge = &s.Billing.RestOfPeriodQuote(p, plan).Net
	case v.Case == CaseReactivate:
		v.Path, v.BillingStarts = PathTechnician, "activation"
	case b.LineType == subprov.LineFirst && firstLineWired:
		v.Path, v.BillingStarts, v.Booking = PathActivate, "now", ""
		v.FirstCharge = &s.Billing.FirstInvoiceQuote(p, plan).Net
	case b.LineType == subprov.LineFirst:
		v.Path, v.BillingStarts, v.Booking = PathNone, "activation", ""
		v.Blockers = append(v.Blockers, "The suite is not wired yet, so the order cannot be resumed.")
	default:
		v.Path, v.BillingStarts = PathTechnician, "activation"
	}
	return v, nil
}

// ReactivationResult is what acting on a case did.
type ReactivationResult struct {
	View         *ReactivationView
	Subscription *subprov.Subscription
	Provisioned  *bool               // remote and activate: whether the port is switched on
	Invoice      *subprov.Invoice    // the invoice the reactivation issued (remote, activate)
	Withdrawal   *billing.Withdrawal // withdraw: what was done to the money
}

func notEligible(v *ReactivationView) error {
	return subprov.Errorf(subprov.ECONFLICT, "not_eligible", "%s", strings.Join(v.Blockers, " "))
}

// Reactivate acts on the preview's case for one of the holder's cancelled lines.
func (s *Service) Reactivate(ctx context.Context, acc *subprov.AccountLogin, subscriptionID string) (*ReactivationResult, error) {
	p, err := s.holderAccount(ctx, acc)
	if err != nil {
		return nil, err
	}
	sub, err := s.Store.Subscription(ctx, p.ID, subscriptionID)
	if err != nil || sub.SubscriberID != acc.SubscriberID {
		if err == nil || errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Subscription")
		}
		return nil, err
	}
	if sub.Status != subprov.StatusCancelled {
		return nil, subprov.Errorf(subprov.ECONFLICT, "not_cancelled", "The line is not cancelled")
	}
	v, err := s.assess(ctx, p, sub)
	if err != nil {
		return nil, err
	}
	if !v.Eligible() {
		return nil, notEligible(v)
	}
	actor := "subscriber:" + acc.ID
	switch {
	case v.Case == CaseWithdraw:
		return s.withdraw(ctx, p, v, actor)
	case v.Path == PathRemote:
		return s.reactivateRemote(ctx, p, v, actor)
	case v.Path == PathActivate:
		return s.resumeActivate(ctx, p, v, actor)
	default:
		return s.reopenInstall(ctx, p, v, actor)
	}
}

func (s *Service) audit(ctx context.Context, tx *store.Tx, p *subprov.Provider, actor, action string, v *ReactivationView) error {
	return tx.InsertAudit(ctx, p.ID, actor, action, v.Subscription.ID, fmt.Sprintf(`{"case":%q,"path":%q}`, v.Case, v.Path), s.Clock.Now())
}

// withdraw takes back a cancellation that has not taken effect: the line returns to the
// status it had, billing continues.
func (s *Service) withdraw(ctx context.Context, p *subprov.Provider, v *ReactivationView, actor string) (*ReactivationResult, error) {
	sub := v.Subscription
	status := sub.StatusBeforeCancel
	if status == "" {
		status = subprov.StatusActive
	}
	r := provisioning.Reinstatement{Reinstatement: subprov.Reinstatement{Status: status,
		WorkflowState: provisioning.WorkflowOf(status, sub.PortID != "" && sub.ActivatedAt != nil)}}
	if status == subprov.StatusPendingInstall {
		// The cancellation closed the line's install job: open one of the same kind again (a
		// reinstall after a technician reactivation stays a reinstall).
		jobs, err := s.Store.InstallJobsOf(ctx, sub.ID)
		if err != nil {
			return nil, err
		}
		r.InstallKind = "install"
		if len(jobs) > 0 {
			r.InstallKind = jobs[len(jobs)-1].Kind
		}
	}
	res := &ReactivationResult{View: v}
	out, err := s.Provisioning.Reinstate(ctx, p, sub.ID, r, func(tx *store.Tx, cur *subprov.Subscription) error {
		w, err := s.Billing.WithdrawCancellation(ctx, tx, p, sub)
		if err != nil {
			return err
		}
		res.Withdrawal = w
		return s.audit(ctx, tx, p, actor, "subscription.cancellation_withdrawn", v)
	})
	if err != nil {
		return nil, err
	}
	res.Subscription = out
	return res, nil
}

// reactivateRemote puts the line back ACTIVE with its port switched on from here, and only once
// the switch confirms it invoices the rest of the month through AutoPay; a port that does not
// switch on leaves the line cancelled as it was (provisioning.ReinstateLive).
func (s *Service) reactivateRemote(ctx context.Context, p *subprov.Provider, v *ReactivationView, actor string) (*ReactivationResult, error) {
	sub := v.Subscription
	if sub.BillingOwner == subprov.BillingPlatform {
		if _, _, err := s.savedCard(ctx, p, sub.SubscriberID); err != nil {
			return nil, err
		}
	}
	res := &ReactivationResult{View: v, Provisioned: boolPtr(true)}
	out, err := s.Provisioning.ReinstateLive(ctx, p, sub.ID, v.portID, func(tx *store.Tx, cur *subprov.Subscription) error {
		inv, err := s.Billing.InvoiceRestOfPeriod(ctx, tx, p, cur, v.plan, billing.CancellationOccasion(sub))
		if err != nil {
			return err
		}
		res.Invoice = inv
		if err := s.mailHolder(ctx, tx, p, cur.SubscriberID, locale.Mail{Subject: locale.Msg("portal.back.subject"),
			Body: locale.Texts{locale.Msg("mail.hello"), locale.Msg("portal.back.body", p.Name, v.plan.PlanName)}}); err != nil {
			return err
		}
		return s.audit(ctx, tx, p, actor, "subscription.reactivated", v)
	})
	if err != nil {
		return nil, err
	}
	res.Subscription = out
	return res, nil
}

// reopenInstall puts the line back as PENDING_INSTALL with its suite held: job reinstall for a
// line that ran before, install for one that never went live, where the
// requested start date is kept while still ahead. Nothing is charged.
func (s *Service) reopenInstall(ctx context.Context, p *subprov.Provider, v *ReactivationView, actor string) (*ReactivationResult, error) {
	sub := v.Subscription
	kind, action := "reinstall", "subscription.reactivated"
	r := provisioning.Reinstatement{Reinstatement: subprov.Reinstatement{Status: subprov.StatusPendingInstall, WorkflowState: provisioning.WorkflowAwaitingInstall}}
	if v.Case == CaseResume {
		kind, action = "install", "subscription.resumed"
		start := s.today(p)
		if sub.RequestedStartDate > start {
			start = sub.RequestedStartDate
		}
		r.RequestedStartDate = &start
	}
	r.InstallKind = kind
	out, err := s.Provisioning.Reinstate(ctx, p, sub.ID, r, func(tx *store.Tx, _ *subprov.Subscription) error {
		return s.audit(ctx, tx, p, actor, action, v)
	})
	if err != nil {
		return nil, err
	}
	return &ReactivationResult{View: v, Subscription: out}, nil
}

// resumeActivate charges the first invoice before anything is written (a decline leaves
// everything as it was), puts the line back ACTIVE, then switches the port on; a port that
// will not switch on after the money moved leaves the line active with provisioned false and
// the provider's ticket.
func (s *Service) resumeActivate(ctx context.Context, p *subprov.Provider, v *ReactivationView, actor string) (*ReactivationResult, error) {
	sub := v.Subscription
	customer, method, err := s.savedCard(ctx, p, sub.SubscriberID)
	if err != nil {
		return nil, err
	}
	q := s.Billing.FirstInvoiceQuote(p, v.plan)
	key := fmt.Sprintf("resume:%s:%d:%s", sub.ID, sub.CanceledAt.Unix(), method) // a retry with another card is another charge
	ch, err := s.Billing.ChargeNow(ctx, p, customer, method, q, key, "First invoice — "+v.plan.PlanName)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	today := s.today(p)
	res := &ReactivationResult{View: v}
	r := provisioning.Reinstatement{Reinstatement: subprov.Reinstatement{Status: subprov.StatusActive, WorkflowState: provisioning.WorkflowProvisioning,
		PortID: &v.portID, ActivatedAt: &now, StartedAt: &today}}
	out, err := s.Provisioning.Reinstate(ctx, p, sub.ID, r, func(tx *store.Tx, cur *subprov.Subscription) error {
		cur.ProcessorCustomerID, cur.PaymentMethodID = customer, method
		if err := tx.SetSubscriberPaymentMethod(ctx, cur.SubscriberID, customer, method, now); err != nil {
			return err
		}
		inv, err := s.Billing.BookPaid(ctx, tx, p, cur, q, ch, key)
		if err != nil {
			return err
		}
		res.Invoice = inv
		if err := s.mailHolder(ctx, tx, p, cur.SubscriberID, locale.Mail{Subject: locale.Msg("portal.welcome.subject", p.Name),
			Body: locale.Texts{locale.Msg("mail.hello"), locale.Msg("portal.welcome.body", p.Name, v.plan.PlanName)}}); err != nil {
			return err
		}
		return s.audit(ctx, tx, p, actor, "subscription.resumed", v)
	})
	if err != nil {
		s.Billing.GiveBack(ctx, p, ch, q.Total, key)
		return nil, err
	}
	res.Subscription = out
	provisioned, err := s.Provisioning.SwitchOnResumed(ctx, p, out)
	res.Provisioned = boolPtr(provisioned)
	return res, err
}

func boolPtr(b bool) *bool { return &b }

// mailHolder queues a service notice to the account holder inside tx, unless the holder
// turned service notifications off.
func (s *Service) mailHolder(ctx context.Context, tx *store.Tx, p *subprov.Provider, subscriberID string, m locale.Mail) error {
	holder, _, err := tx.Contacts(ctx, subscriberID)
	if err != nil || holder.Email == "" {
		return err
	}
	if send, err := preferences.Sends(ctx, tx, subscriberID, holder.Email, preferences.MailServiceNotice); err != nil || !send {
		return err
	}
	m.Account = subscriberID
	return s.Mail.QueueLocalized(ctx, tx, p.ID, holder.Email, m)
}
