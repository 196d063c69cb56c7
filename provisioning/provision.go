package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// recordOutcome records the job's provisioning.completed (reason "") or provisioning.failed
// event with its job_id, unless the job is quiet (a portal order's: the subscriber surface
// emits no events).
func (s *Service) recordOutcome(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, a jobs.ProvisionPort, reason string) error {
	if a.Quiet {
		return nil
	}
	typ := subprov.EventProvisioningCompleted
	if reason != "" {
		typ = subprov.EventProvisioningFailed
	}
	_, err := s.Events.Record(ctx, tx, p, typ, sub, provisioningOutcome(sub, reason))
	return err
}

// ProvisionPort is the port.provision job: converge the line's port to its desired setting
// (the order committed it: in service with the line's VLAN, bandwidth and MAC binding, or
// suspended with them if the line was suspended meanwhile), confirmed by read-back, then mark
// the line provisioned and record provisioning.completed (recordOutcome). A transient switch
// failure is retried by the queue; a refusal (another device on the port, a write the switch
// does not confirm) or the last attempt records provisioning.failed, puts the port back on
// the captive portal (its desired setting follows the failed line) and raises an operator
// ticket. Running it again after a crash changes nothing: a provisioned line is left alone.
func (s *Service) ProvisionPort(ctx context.Context, a jobs.ProvisionPort, attempt int) error {
	start := time.Now()
	outcome, reason, err := s.provisionPort(ctx, a, attempt)
	if outcome != "" {
		s.Metrics.ProvisioningJob(outcome, reason, time.Since(start))
	}
	return err
}

// provisionPort is ProvisionPort; it returns the attempt's outcome for the metrics ("" when
// it decided nothing: a line with nothing to provision, a busy port, a store failure) and the
// failure's reason.
func (s *Service) provisionPort(ctx context.Context, a jobs.ProvisionPort, attempt int) (outcome, reason string, _ error) {
	line, err := s.Store.LineToProvision(ctx, a.SubscriptionID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return "", "", nil
		}
		return "", "", err
	}
	sub, p := line.Line, line.Provider
	live := sub.Status == subprov.StatusActive || sub.Status == subprov.StatusSuspended
	if !live || sub.WorkflowState != WorkflowProvisioning || line.Port == nil {
		return "", "", nil
	}
	port := switches.Port{Switch: line.Port.Switch, Name: line.Port.Name}
	if p.Sandbox {
		// Sandbox buildings are not wired to a real switch: the job ends as provisioning.failed.
		err = fmt.Errorf("%w: sandbox providers have no switch", switches.ErrUnavailable)
		attempt = maxProvisionAttempts
	} else {
		err = s.convergeLine(ctx, line.Port.ID)
	}
	if wait, ok := s.switchWait(err); ok {
		return "", "", jobs.Snooze(wait)
	}
	if err == nil {
		err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.LockSubscription(ctx, "", sub.ID)
			if err != nil || cur.WorkflowState != WorkflowProvisioning {
				return err
			}
			now := s.Clock.Now()
			vlan := cur.VLAN
			if vlan == 0 {
				vlan = switches.ServiceVLAN(port) // a line that reached its port through an install
			}
			change := subprov.SubscriptionChange{WorkflowState: strPtr(WorkflowProvisioned), VLAN: &vlan}
			firstActivation := cur.ActivatedAt == nil // a provision-route line goes live now; an installed one already did
			if firstActivation {
				today := p.Today(now)
				change.ActivatedAt, change.StartedAt = &now, &today
				cur.ActivatedAt, cur.StartedAt = &now, today
			}
			if err := tx.UpdateSubscription(ctx, sub.ID, change, now); err != nil {
				return err
			}
			cur.WorkflowState, cur.VLAN = WorkflowProvisioned, vlan
			if err := s.recordOutcome(ctx, tx, p, cur, a, ""); err != nil {
				return err
			}
			if !firstActivation {
				return nil
			}
			return s.startBilling(ctx, tx, p, cur)
		})
		if err != nil {
			return "", "", err
		}
		return metrics.ProvisionSucceeded, "", nil
	}
	transient := errors.Is(err, switches.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
	if transient && attempt < maxProvisionAttempts {
		return metrics.ProvisionRetried, failureReason(err), fmt.Errorf("provision %s (attempt %d): %w", sub.ID, attempt, err)
	}
	s.Log.Warn("provisioning failed", "subscription_id", sub.ID, "attempt", attempt, "err", err)
	reason = failureReason(err)
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.LockSubscription(ctx, "", sub.ID)
		if err != nil || cur.WorkflowState != WorkflowProvisioning {
			return err
		}
		if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{WorkflowState: strPtr(WorkflowProvisioningFailed)}, s.Clock.Now()); err != nil {
			return err
		}
		cur.WorkflowState = WorkflowProvisioningFailed
		// Leave no half-configured port: the failed line asks for the captive portal.
		if err := s.FollowPort(ctx, tx, cur.PortID); err != nil {
			return err
		}
		if err := s.recordOutcome(ctx, tx, p, cur, a, reason); err != nil {
			return err
		}
		return s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: p.ID, SubscriberID: cur.SubscriberID, Kind: "operator", Priority: "high",
			Subject: "Port provisioning failed", InternalNote: fmt.Sprintf("Subscription %s on %s/%s: %s", cur.ID, port.Switch, port.Name, reason)})
	})
	if err != nil {
		return "", "", err
	}
	return metrics.ProvisionFailed, reason, nil
}

// convergeLine converges a line's port for the job that provisions it. A port with no desired
// setting yet (a job queued before port states were kept) gets it from its lines first.
func (s *Service) convergeLine(ctx context.Context, portID string) error {
	c, err := s.convergePort(ctx, portID)
	if err != nil || c != nil {
		return err
	}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { _, err := s.wantPort(ctx, tx, portID); return err }); err != nil {
		return err
	}
	_, err = s.convergePort(ctx, portID)
	return err
}

func failureReason(err error) string {
	var ce *ConvergeError
	switch {
	case errors.As(err, &ce) && ce.Reason != "":
		return ce.Reason
	case errors.Is(err, switches.ErrPortInUse):
		return "port_in_use"
	case errors.Is(err, switches.ErrUnconfirmed):
		return "switch_write_unconfirmed"
	case errors.Is(err, switches.ErrInvalid):
		return "switch_rejected"
	case errors.Is(err, switches.ErrCredentials):
		return "switch_credentials"
	default:
		return "switch_unavailable"
	}
}

// startBilling marks the start of service and hands platform-billed lines to billing.
func (s *Service) startBilling(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error {
	if s.Billing == nil {
		return nil
	}
	return s.Billing.Activated(ctx, tx, p, sub)
}

// DeprovisionPort is the port.deprovision job: mark an ended line deprovisioned, which frees
// its place for the next order and lets its port follow the lines that still hold it (the
// captive portal when none does; the port.converge job writes it). A port that another line's
// service runs on stays as that line asks, and an operator is asked to look: no order can take
// a place before its line is deprovisioned, but a database from before that rule may hold a
// place twice (migration 0022). Running it twice is harmless.
func (s *Service) DeprovisionPort(ctx context.Context, a jobs.DeprovisionPort) error {
	sub, err := s.Store.SubscriptionByID(ctx, a.SubscriptionID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		return err
	}
	var shared *subprov.Ticket
	if sub.PortID != "" {
		port, err := s.Store.PortByID(ctx, sub.PortID)
		if err != nil {
			return err
		}
		other, err := s.Store.LineInServiceOnPort(ctx, sub)
		switch {
		case err == nil:
			s.Log.Warn("deprovision: the port serves another line; not reset", "subscription_id", sub.ID, "other", other)
			shared = &subprov.Ticket{ProviderID: sub.ProviderID, SubscriberID: sub.SubscriberID, Kind: "operator", Priority: "high",
				Subject: "Ended line's port serves another line", InternalNote: fmt.Sprintf("Subscription %s ended on %s/%s, "+
					"but subscription %s is in service on the same port, so the port was not reset. Check which line the suite belongs to.",
					sub.ID, port.Switch, port.Name, other)}
		case !errors.Is(err, subprov.ErrNotFound):
			return err
		}
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if shared != nil {
			if err := s.Tickets.Open(ctx, tx, shared); err != nil {
				return err
			}
		}
		if err := tx.MarkDeprovisioned(ctx, sub.ID, s.Clock.Now()); err != nil {
			return err
		}
		return s.FollowPort(ctx, tx, sub.PortID)
	})
}

// SweepDeprovisions enqueues the deprovisioner for every line whose ended_at has passed. It is
// driven by the clock (the scheduler calls it every second and whenever the dev clock moves).
func (s *Service) SweepDeprovisions(ctx context.Context) error {
	now := s.Clock.Now()
	ids, err := s.Store.DueDeprovisions(ctx, now, 500)
	if err != nil {
		return err
	}
	return jobs.ClaimAndEnqueue(ctx, s.Store, s.Jobs, ids,
		func(ctx context.Context, tx *store.Tx, id string) (bool, error) {
			return tx.ClaimDeprovision(ctx, id, now)
		},
		func(id string) jobs.Args { return jobs.DeprovisionPort{SubscriptionID: id} })
}
