package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
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
		if _, err := s.enqueueProvision(ctx, tx, sub.ID, true); err != nil {
			return err
		}
		return also(tx, sub)
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// CancelForMove ends a running line on the move-in date with reason moving (a portal order
// that replaces it stands already).
func (s *Service) CancelForMove(ctx context.Context, subscriptionID, moveIn, actor string) (*subprov.Subscription, error) {
	return s.Cancel(ctx, subscriptionID, moveIn, "moving", actor)
}

// Reinstatement puts a cancelled line back: the state it returns to, and the install job to
// open ("" for none).
type Reinstatement struct {
	subprov.Reinstatement
	InstallKind string // install, reinstall, or ""
}

// Reinstate undoes a line's cancellation in one transaction, opening an install job of the
// given kind when the line waits for a visit, and returns the line as it now is (no
// canceled_at or ended_at; the caller knows the cancellation it undid). A suite someone else
// took since loses at the live-location constraint: 409, nothing changed.
func (s *Service) Reinstate(ctx context.Context, p *subprov.Provider, subscriptionID string, r Reinstatement, also Also) (*subprov.Subscription, error) {
	var out *subprov.Subscription
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
		if r.InstallKind != "" {
			b, err := s.Store.CoveredBuilding(ctx, p.ID, sub.BuildingID)
			if err != nil || !b.LineType.Valid() {
				return installUnavailable()
			}
			if err := s.openInstall(ctx, tx, p, sub, b, r.InstallKind, now); err != nil {
				s.Log.Warn("reinstall job could not be opened", "subscription_id", sub.ID, "err", err)
				return installUnavailable()
			}
		}
		out = sub // the line as it now is: no cancellation
		return also(tx, sub)
	})
	return out, err
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

// SwitchOnNow writes the line's port (VLAN, bandwidth, device MAC) and waits for the
// switch's read-back, up to a minute. A failed write leaves no half-configured port behind
// (a port another device uses is not touched) and raises an operator ticket.
func (s *Service) SwitchOnNow(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, portID string) (int, error) {
	port, err := s.Store.PortByID(ctx, portID)
	if err != nil {
		return 0, err
	}
	plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
	if err != nil {
		return 0, err
	}
	sp := switches.Port{Switch: port.Switch, Name: port.Name}
	vlan := switches.ServiceVLAN(sp)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if p.Sandbox {
		err = fmt.Errorf("%w: sandbox providers have no switch", switches.ErrUnavailable)
	} else {
		err = s.Switch.Activate(wctx, sp, switches.Config{VLAN: vlan, DownloadMbps: plan.DownloadMbps, UploadMbps: plan.UploadMbps, MAC: sub.MACAddress})
	}
	if err == nil {
		return vlan, nil
	}
	if !p.Sandbox && !errors.Is(err, switches.ErrPortInUse) {
		_ = s.Switch.ResetToCaptive(ctx, sp)
	}
	reason := failureReason(err)
	s.Log.Warn("port did not switch on", "subscription_id", sub.ID, "reason", reason, "err", err)
	terr := s.Store.InTx(ctx, func(tx *store.Tx) error {
		return s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: p.ID, SubscriberID: sub.SubscriberID, Kind: "operator", Priority: "high",
			Subject: "Port did not switch on for a subscriber", InternalNote: fmt.Sprintf("Subscription %s on %s/%s: %s", sub.ID, port.Switch, port.Name, reason)})
	})
	if terr != nil {
		return 0, terr
	}
	return 0, PortWriteError(err)
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

// MarkPortFailed records that a live, paid line's port would not switch on: the line stays
// ACTIVE with workflow provisioning_failed and the provider gets the ticket (SwitchOnNow
// raised it). A portal reactivation calls it, so it records no event.
func (s *Service) MarkPortFailed(ctx context.Context, sub *subprov.Subscription) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{WorkflowState: strPtr(WorkflowProvisioningFailed)}, s.Clock.Now()); err != nil {
			return err
		}
		sub.WorkflowState = WorkflowProvisioningFailed
		return nil
	})
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
