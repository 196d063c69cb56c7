package provisioning

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// Service actions of the marketplace's subscription-status call.
const (
	ServiceSuspend = "suspend"
	ServiceRestore = "restore"
)

// StatusResult is a line after a suspend or restore.
type StatusResult struct {
	Subscription *subprov.Subscription
	PortChanged  bool // the switch port was written
}

// partnerSuspension is the reason recorded for a suspension the partner asked for, so the
// dunning restore (which only lifts its own cut-off) never re-opens it.
const partnerSuspension = "partner"

// SetServiceStatus suspends or restores a line addressed by the partner's external id
// (docs/checkout.md, Suspend/restore): ACTIVE→SUSPENDED; SUSPENDED→ACTIVE only when the port
// re-opens, else 409 and it stays SUSPENDED; on PENDING_INSTALL suspend is a hold and restore
// lifts it; everything else is 409. The switch is written before the status, so a switch
// failure changes nothing.
func (s *Service) SetServiceStatus(ctx context.Context, p *subprov.Provider, externalID, action string) (*StatusResult, error) {
	if action != ServiceSuspend && action != ServiceRestore {
		return nil, subprov.Invalid(map[string]string{"action": "want suspend or restore"})
	}
	sub, err := s.Store.SubscriptionByExternalID(ctx, p.ID, externalID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Subscription")
		}
		return nil, err
	}
	act := ActSuspend
	if action == ServiceRestore {
		act = ActRestore
	}
	if _, err := Next(sub.Status, act); err != nil {
		return nil, err
	}
	if sub.Status == subprov.StatusPendingInstall {
		return s.setHold(ctx, p, sub, action == ServiceSuspend)
	}
	portChanged, err := s.writePortService(ctx, sub, action == ServiceRestore)
	if err != nil {
		return nil, err
	}
	to, _ := Next(sub.Status, act)
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.LockSubscription(ctx, p.ID, sub.ID)
		if err != nil {
			return err
		}
		if cur.Status != sub.Status {
			return subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "The subscription changed status meanwhile (now %s); nothing was done", cur.Status)
		}
		now := s.Clock.Now()
		if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{Status: &to}, now); err != nil {
			return err
		}
		reason := partnerSuspension
		if action == ServiceRestore {
			reason = ""
		}
		if err := tx.SetSuspendedFor(ctx, sub.ID, reason, now); err != nil {
			return err
		}
		sub.Status = to
		return tx.InsertAudit(ctx, p.ID, "partner", map[string]string{ServiceSuspend: "subscription.suspended", ServiceRestore: "subscription.restored"}[action], sub.ID, "", now)
	})
	if err != nil {
		return nil, err
	}
	return &StatusResult{Subscription: sub, PortChanged: portChanged}, nil
}

// writePortService suspends or re-opens the line's port; a line without a port has nothing to
// write. A restore the switch does not confirm is 409: the line stays SUSPENDED.
func (s *Service) writePortService(ctx context.Context, sub *subprov.Subscription, on bool) (bool, error) {
	if sub.PortID == "" {
		return false, nil
	}
	port, err := s.Store.PortByID(ctx, sub.PortID)
	if err != nil {
		return false, err
	}
	sp := switches.Port{Switch: port.Switch, Name: port.Name}
	if !on {
		if err := s.Switch.Suspend(ctx, sp); err != nil && !errors.Is(err, switches.ErrNotConfigured) {
			return false, subprov.Errorf(subprov.EUNAVAILABLE, "switch_unavailable", "The switch did not take the suspension; nothing changed, retry later")
		}
		return true, nil
	}
	if err := s.Switch.Restore(ctx, sp); err != nil {
		s.Log.Warn("restore: port did not re-open", "subscription_id", sub.ID, "err", err)
		return false, subprov.Errorf(subprov.ECONFLICT, "port_not_reopened", "The port could not be re-opened (%s); the subscription stays SUSPENDED", failureReason(err))
	}
	return true, nil
}

// setHold puts a PENDING_INSTALL line on hold or lifts the hold through the install route.
// Suspending a held line answers it as it is; restoring a line that is not held is 409.
func (s *Service) setHold(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, hold bool) (*StatusResult, error) {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.LockSubscription(ctx, p.ID, sub.ID)
		if err != nil {
			return err
		}
		if cur.Status != subprov.StatusPendingInstall {
			return subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "The subscription changed status meanwhile (now %s); nothing was done", cur.Status)
		}
		*sub = *cur
		if hold {
			return s.Installs.Hold(ctx, tx, p, sub)
		}
		return s.Installs.Restore(ctx, tx, p, sub)
	})
	if err != nil {
		return nil, err
	}
	return &StatusResult{Subscription: sub}, nil
}
