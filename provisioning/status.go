package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
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
// lifts it; everything else is 409. The status and the port's desired setting are committed
// together, then the request waits for the switch (up to AwaitTimeout): port_changed says
// whether it confirmed. A suspension stands either way (the port.converge job keeps at it); a
// restore the switch does not confirm is put back in a second transaction and answered 409.
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
	return s.setServiceStatus(ctx, p, sub, action, partnerMove(p, action))
}

// statusMove is who suspends or restores a line and how it is recorded: whose suspension it
// is (SuspendedFor, which dunning's restore checks so it never lifts another's), the scope
// the line must be in when it is locked, the reason given (kept in the status history), and
// the audit entry written in the transaction of the change (before is the line as it was).
type statusMove struct {
	suspendedFor string
	scope        subprov.Scope
	reason       string
	// holds: the audit entry is written for a hold too (the install route audits the hold
	// itself, which is all the partner's records).
	holds bool
	audit func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, before subprov.Subscription, now time.Time) error
}

// partnerMove is the marketplace's suspend or restore of one of p's lines, audited as the
// partner's.
func partnerMove(p *subprov.Provider, action string) statusMove {
	name := map[string]string{ServiceSuspend: "subscription.suspended", ServiceRestore: "subscription.restored"}[action]
	return statusMove{suspendedFor: partnerSuspension, scope: subprov.Scope{ProviderID: p.ID},
		audit: func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, _ subprov.Subscription, now time.Time) error {
			return tx.InsertAudit(ctx, sub.ProviderID, "partner", name, sub.ID, "", now)
		}}
}

// setServiceStatus suspends or restores sub as SetServiceStatus describes, recorded as move
// says.
func (s *Service) setServiceStatus(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, action string, move statusMove) (*StatusResult, error) {
	act := ActSuspend
	if action == ServiceRestore {
		act = ActRestore
	}
	if _, err := Next(sub.Status, act); err != nil {
		return nil, err
	}
	if sub.Status == subprov.StatusPendingInstall {
		return s.setHold(ctx, p, sub, action == ServiceSuspend, move)
	}
	from := sub.Status
	to, _ := Next(from, act)
	var liftedReason string // a restore's: the suspension it lifted, put back if the port stays shut
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := s.lockInScope(ctx, tx, move.scope, sub.ID)
		if err != nil {
			return err
		}
		if cur.Status != from {
			return subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "The subscription changed status meanwhile (now %s); nothing was done", cur.Status)
		}
		if liftedReason, err = tx.SuspendedFor(ctx, sub.ID); err != nil {
			return err
		}
		suspendedFor, reason := move.suspendedFor, move.reason
		if action == ServiceRestore {
			suspendedFor = ""
		}
		if reason == "" {
			reason = suspendedFor
		}
		before := *cur
		if err := s.setStatus(ctx, tx, cur, to, suspendedFor, reason); err != nil {
			return err
		}
		*sub = *cur
		return move.audit(ctx, tx, cur, before, s.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	if sub.PortID == "" {
		return &StatusResult{Subscription: sub}, nil
	}
	werr := s.awaitPort(ctx, sub.PortID, AwaitTimeout)
	if werr == nil {
		return &StatusResult{Subscription: sub, PortChanged: true}, nil
	}
	if action == ServiceSuspend {
		s.Log.Warn("suspend: the switch has not confirmed yet; the port follows", "subscription_id", sub.ID, "err", werr)
		return &StatusResult{Subscription: sub}, nil
	}
	s.Log.Warn("restore: port did not re-open; put back", "subscription_id", sub.ID, "err", werr)
	err = s.Store.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		cur, err := tx.LockSubscription(ctx, p.ID, sub.ID)
		if err != nil || cur.Status != to {
			return err // changed meanwhile: the later change stands
		}
		if err := s.setStatus(ctx, tx, cur, from, liftedReason, "port_not_reopened"); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, p.ID, "partner", "subscription.restore_reverted", sub.ID,
			fmt.Sprintf(`{"reason":%q}`, failureReason(werr)), s.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	return nil, subprov.Errorf(subprov.ECONFLICT, "port_not_reopened", "The port could not be re-opened (%s); the subscription stays SUSPENDED", failureReason(werr))
}

// lockInScope locks a line inside tx; a line outside scope is not found, as an unknown id.
func (s *Service) lockInScope(ctx context.Context, tx *store.Tx, scope subprov.Scope, id string) (*subprov.Subscription, error) {
	cur, err := tx.LockSubscription(ctx, scope.ProviderID, id)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, subprov.NotFound("Subscription")
	}
	if err != nil {
		return nil, err
	}
	return cur, scope.Check(cur.ProviderID, "Subscription")
}

// SetStatus moves a line locked in tx to status with its suspension reason ("" for none) and
// lets its port follow: the partner's suspend and restore, and billing's cut-off and restore.
// The status history records the suspension's reason as the move's.
func (s *Service) SetStatus(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, status subprov.Status, suspendedFor string) error {
	return s.setStatus(ctx, tx, sub, status, suspendedFor, suspendedFor)
}

// setStatus is SetStatus with the reason the status history records.
func (s *Service) setStatus(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, status subprov.Status, suspendedFor, reason string) error {
	now := s.Clock.Now()
	if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{Status: &status, StatusReason: reason}, now); err != nil {
		return err
	}
	if err := tx.SetSuspendedFor(ctx, sub.ID, suspendedFor, now); err != nil {
		return err
	}
	sub.Status = status
	return s.FollowPort(ctx, tx, sub.PortID)
}

// setHold puts a PENDING_INSTALL line on hold or lifts the hold through the install route.
// Suspending a held line answers it as it is; restoring a line that is not held is 409.
// The install route audits the hold; move adds its own entry when it records more (the
// operator's reason).
func (s *Service) setHold(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, hold bool, move statusMove) (*StatusResult, error) {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := s.lockInScope(ctx, tx, move.scope, sub.ID)
		if err != nil {
			return err
		}
		if cur.Status != subprov.StatusPendingInstall {
			return subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "The subscription changed status meanwhile (now %s); nothing was done", cur.Status)
		}
		before := *cur
		*sub = *cur
		if hold {
			err = s.Installs.Hold(ctx, tx, p, sub)
		} else {
			err = s.Installs.Restore(ctx, tx, p, sub)
		}
		if err != nil || !move.holds {
			return err
		}
		return move.audit(ctx, tx, sub, before, s.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	return &StatusResult{Subscription: sub}, nil
}
