package provisioning

import (
	"context"
	"errors"
	"fmt"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// The line steps of portal orders and reactivation: writing a portal line, putting a
// cancelled line back, and switching a port on while the subscriber waits.

// PortalLine is a new line ordered from the subscriber portal, already checked by the portal.
type PortalLine struct {
	SubscriberID        string
	Plan                *subprov.PlanVersion
	Building            *subprov.Building
	UnitID              string
	PortID              string // the suite's port ("" when it has none)
	Provision           bool   // switch the port on now (first-line, port resolves, starts today)
	RequestedStartDate  string
	ProcessorCustomerID string
	PaymentMethodID     string
}

// Also runs the caller's part of a write (money, audit) inside the same transaction.
type Also func(tx *store.Tx, sub *subprov.Subscription) error

func heldSuite() error {
	return subprov.Errorf(subprov.ECONFLICT, "suite_held", "The suite is held by another order or line")
}

// PlacePortalLine writes a portal line in one transaction: the provision route goes live now
// (ACTIVE, the port switched on by the provisioning job), the install route waits as
// PENDING_INSTALL with its install job, provider install ticket and, on a third-line
// building, the booking invitation (openInstall). also books the money and the audit entry.
// It records no event, and its provisioning job none either: the subscriber surface emits
// none (docs/portal.md, No events); the provider learns of the line from its install ticket or
// its lines.
func (s *Service) PlacePortalLine(ctx context.Context, p *subprov.Provider, l *PortalLine, also Also) (*subprov.Subscription, error) {
	now := s.Clock.Now()
	sub := &subprov.Subscription{ID: store.NewID(), ProviderID: p.ID, SubscriberID: l.SubscriberID, PlanVersionID: l.Plan.ID,
		BuildingID: l.Building.ID, UnitID: l.UnitID, PortID: l.PortID, DeliveryMode: subprov.DeliveryHomeDrop,
		BillingOwner: subprov.BillingPlatform, BillingDay: 1, ProcessorCustomerID: l.ProcessorCustomerID, PaymentMethodID: l.PaymentMethodID,
		Source: "portal", RequestedStartDate: l.RequestedStartDate}
	action, workflow := ActAwaitInstall, WorkflowAwaitingInstall
	if l.Provision {
		port, err := s.Store.PortByID(ctx, l.PortID)
		if err != nil {
			return nil, err
		}
		sub.DeliveryMode = subprov.DeliveryDirect
		sub.VLAN = switches.ServiceVLAN(switches.Port{Switch: port.Switch, Name: port.Name})
		action, workflow = ActProvision, WorkflowProvisioning
	}
	status, err := Next(fresh, action)
	if err != nil {
		return nil, err
	}
	sub.Status, sub.WorkflowState = status, workflow
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		inserted, err := tx.InsertSubscription(ctx, sub, now)
		if err != nil {
			return err
		}
		if !inserted {
			return heldSuite()
		}
		if !l.Provision {
			if err := s.openInstall(ctx, tx, p, sub, l.Building, "install", now); err != nil {
				return err
			}
			return also(tx, sub)
		}
		// Billing starts now (the card was charged), so the provisioning job does not bill again.
		today := p.Today(now)
		if err := tx.SetActivation(ctx, sub.ID, now, today); err != nil {
			return err
		}
		sub.ActivatedAt, sub.StartedAt = &now, today
		if _, err := s.enqueueProvision(ctx, tx, sub, true); err != nil {
			return err
		}
		return also(tx, sub)
	})
	route := "install"
	if l.Provision {
		route = "provision"
	}
	if err != nil {
		s.Metrics.Order(route, metrics.OrderRefused, subprov.ErrorReason(err))
		return nil, err
	}
	s.Metrics.Order(route, metrics.OrderCreated, "")
	return sub, nil
}

// CancelForMove ends a running line on the move-in date with reason moving (a portal order
// that replaces it stands already). The portal has checked that the line is the subscriber's.
func (s *Service) CancelForMove(ctx context.Context, subscriptionID, moveIn, actor string) (*subprov.Subscription, error) {
	return s.Cancel(ctx, subprov.Everything, subscriptionID, moveIn, "moving", actor)
}

// Reinstatement puts a cancelled line back: the state it returns to, and the install job to
// open ("" for none).
type Reinstatement struct {
	subprov.Reinstatement
	InstallKind string // install, reinstall, or ""
}

// Reinstate undoes a line's cancellation in one transaction, opening an install job of the
// given kind when the line waits for a visit, and returns the line as it now is (no
// canceled_at or ended_at; the caller knows the cancellation it undid). The line's port follows
// it. A suite someone else took since loses at the live-location constraint: 409, nothing
// changed.
func (s *Service) Reinstate(ctx context.Context, p *subprov.Provider, subscriptionID string, r Reinstatement, also Also) (*subprov.Subscription, error) {
	out, _, err := s.reinstate(ctx, p, subscriptionID, r, also)
	return out, err
}

// reinstate is Reinstate, also returning the cancellation it undid.
func (s *Service) reinstate(ctx context.Context, p *subprov.Provider, subscriptionID string, r Reinstatement, also Also) (*subprov.Subscription, *subprov.Cancellation, error) {
	var out *subprov.Subscription
	var undone *subprov.Cancellation
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, p.ID, subscriptionID)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return subprov.NotFound("Subscription")
			}
			return err
		}
		if sub.Status != subprov.StatusCancelled {
			return subprov.Errorf(subprov.ECONFLICT, "not_cancelled", "The line is not cancelled")
		}
		if undone, err = tx.CancellationOf(ctx, sub.ID); err != nil {
			return err
		}
		now := s.Clock.Now()
		if err := tx.ReinstateSubscription(ctx, sub.ID, r.Reinstatement, now); err != nil {
			if errors.Is(err, subprov.ErrDuplicate) {
				return heldSuite()
			}
			return err
		}
		if sub, err = tx.LockSubscription(ctx, p.ID, subscriptionID); err != nil {
			return err
		}
		if err := s.FollowPort(ctx, tx, sub.PortID); err != nil {
			return err
		}
		if r.InstallKind != "" {
			b, err := tx.CoveredBuilding(ctx, p.ID, sub.BuildingID)
			if err != nil || !b.LineType.Valid() {
				return installUnavailable()
			}
			if err := s.openInstall(ctx, tx, p, sub, b, r.InstallKind, now); err != nil {
				s.Log.Warn("reinstall job could not be opened", "subscription_id", sub.ID, "err", err)
				return installUnavailable()
			}
		}
		out = sub // the line as it now is: no cancellation
		if also == nil {
			return nil
		}
		return also(tx, sub)
	})
	return out, undone, err
}

// ReinstateLive puts a cancelled line back in service on portID while the subscriber waits: the
// line is reinstated ACTIVE with its port's desired setting in service, the request waits for
// the switch (up to ReactivationTimeout), and only a confirmed port runs also (the money,
// mail and audit of the reactivation) with the line marked provisioned. A port that does not
// switch on puts the cancellation back as it was, raises an operator ticket and answers
// PortWriteError; nothing else was written.
func (s *Service) ReinstateLive(ctx context.Context, p *subprov.Provider, subscriptionID, portID string, also Also) (*subprov.Subscription, error) {
	if p.Sandbox {
		return nil, PortWriteError(fmt.Errorf("%w: sandbox providers have no switch", switches.ErrUnavailable))
	}
	port, err := s.Store.PortByID(ctx, portID)
	if err != nil {
		return nil, err
	}
	vlan := switches.ServiceVLAN(switches.Port{Switch: port.Switch, Name: port.Name})
	r := Reinstatement{Reinstatement: subprov.Reinstatement{Status: subprov.StatusActive, WorkflowState: WorkflowProvisioning,
		PortID: &portID, VLAN: &vlan}}
	sub, undone, err := s.reinstate(ctx, p, subscriptionID, r, nil)
	if err != nil {
		return nil, err
	}
	werr := s.awaitPort(ctx, portID, ReactivationTimeout)
	if werr == nil {
		werr = s.Store.InTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.LockSubscription(ctx, p.ID, sub.ID)
			if err != nil {
				return err
			}
			if err := s.MarkPortLive(ctx, tx, cur, vlan); err != nil {
				return err
			}
			*sub = *cur
			return also(tx, cur)
		})
		if werr == nil {
			return sub, nil
		}
	}
	s.Log.Warn("reactivation: port did not switch on; cancellation put back", "subscription_id", sub.ID, "err", werr)
	err = s.Store.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		if err := tx.RestoreCancellation(ctx, sub.ID, undone, s.Clock.Now()); err != nil {
			return err
		}
		if err := s.FollowPort(ctx, tx, portID); err != nil {
			return err
		}
		return s.portTicket(ctx, tx, p, sub, port, werr)
	})
	if err != nil {
		return nil, err
	}
	var ce *ConvergeError
	if !errors.As(werr, &ce) {
		return nil, werr // the reactivation's own writes failed, not the switch
	}
	return nil, PortWriteError(werr)
}

// SwitchOnResumed waits (up to ReactivationTimeout) for the port of a line just put back
// ACTIVE and paid for: a confirmed port marks it provisioned; one that will not switch on
// leaves it ACTIVE with workflow provisioning_failed, its port back on the captive portal and
// the provider's ticket. A portal reactivation calls it, so it records no event.
func (s *Service) SwitchOnResumed(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription) (provisioned bool, err error) {
	port, err := s.Store.PortByID(ctx, sub.PortID)
	if err != nil {
		return false, err
	}
	werr := s.awaitPort(ctx, sub.PortID, ReactivationTimeout)
	if p.Sandbox {
		werr = &ConvergeError{Reason: "switch_unavailable", Err: fmt.Errorf("%w: sandbox providers have no switch", switches.ErrUnavailable)}
	}
	err = s.Store.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := tx.LockSubscription(ctx, p.ID, sub.ID)
		if err != nil {
			return err
		}
		defer func() { *sub = *cur }()
		if werr == nil {
			return s.MarkPortLive(ctx, tx, cur, switches.ServiceVLAN(switches.Port{Switch: port.Switch, Name: port.Name}))
		}
		if err := tx.UpdateSubscription(ctx, cur.ID, subprov.SubscriptionChange{WorkflowState: strPtr(WorkflowProvisioningFailed)}, s.Clock.Now()); err != nil {
			return err
		}
		cur.WorkflowState = WorkflowProvisioningFailed
		if err := s.FollowPort(ctx, tx, cur.PortID); err != nil {
			return err
		}
		return s.portTicket(ctx, tx, p, cur, port, werr)
	})
	return werr == nil && err == nil, err
}

// portTicket raises the operator ticket of a port that would not switch on for a subscriber.
func (s *Service) portTicket(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, port *subprov.Port, cause error) error {
	reason := failureReason(cause)
	s.Log.Warn("port did not switch on", "subscription_id", sub.ID, "reason", reason, "err", cause)
	return s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: p.ID, SubscriberID: sub.SubscriberID, Kind: "operator", Priority: "high",
		Subject: "Port did not switch on for a subscriber", InternalNote: fmt.Sprintf("Subscription %s on %s/%s: %s", sub.ID, port.Switch, port.Name, reason)})
}

func installUnavailable() error {
	return subprov.Errorf(subprov.EUNCONFIGURED, "install_unavailable", "The install job could not be opened; the line was left as it was")
}

// PortWriteError is the answer to a port that would not switch on while the subscriber
// waited: another device on the port, or a write the switch did not confirm.
func PortWriteError(err error) error {
	if errors.Is(err, switches.ErrPortInUse) {
		return subprov.Errorf(subprov.ECONFLICT, "port_in_use", "Another device is on the port; an operator was asked to look at it and nothing was changed")
	}
	return subprov.Errorf(subprov.ECONFLICT, "provisioning_failed", "The switch did not confirm the port; an operator was asked to look at it and nothing was changed")
}

// MarkPortLive records that a live line's port is switched on. A portal reactivation calls
// it, so it records no event (the subscriber surface emits none).
func (s *Service) MarkPortLive(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, vlan int) error {
	if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{WorkflowState: strPtr(WorkflowProvisioned), VLAN: &vlan}, s.Clock.Now()); err != nil {
		return err
	}
	sub.WorkflowState, sub.VLAN = WorkflowProvisioned, vlan
	return nil
}

// WorkflowOf is the workflow state a reinstated line returns to.
func WorkflowOf(status subprov.Status, portLive bool) string {
	switch {
	case status == subprov.StatusPendingInstall:
		return WorkflowAwaitingInstall
	case portLive:
		return WorkflowProvisioned
	default:
		return WorkflowInstalled
	}
}
