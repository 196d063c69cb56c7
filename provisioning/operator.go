package provisioning

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// Line actions of the operations surface (docs/operations.md, Subscribers and lines): the
// partner's rules, with the operator's scope checked where the line is read and again where
// it is locked (another provider's line is not found, exactly as an unknown id), and each
// action audited with the operator's reason in the transaction of the change.

// maxReasonLen bounds an operator's reason.
const maxReasonLen = 500

// operatorSuspension is whose suspension an operator's is: neither the partner's nor
// dunning's, so a payment never lifts it.
const operatorSuspension = "operator"

// ScopedLine reads a line and its provider for an operator: a line outside scope is not
// found, as an unknown id.
func (s *Service) ScopedLine(ctx context.Context, scope subprov.Scope, id string) (*subprov.Subscription, *subprov.Provider, error) {
	return s.operatorSubscription(ctx, scope, strings.TrimSpace(id))
}

// checkReason refuses a reason that is missing or too long.
func checkReason(reason string) error {
	switch r := strings.TrimSpace(reason); {
	case r == "":
		return subprov.Invalid(map[string]string{"reason": "required"})
	case utf8.RuneCountInString(r) > maxReasonLen:
		return subprov.Invalid(map[string]string{"reason": "at most 500 characters"})
	}
	return nil
}

// SuspendLine is an operator's suspend (action ServiceSuspend) or restore (ServiceRestore) of a
// line in scope, with the rules of the partner's (SetServiceStatus): ACTIVE→SUSPENDED,
// SUSPENDED→ACTIVE only when the port re-opens (else 409, still SUSPENDED), a hold or its
// lifting on PENDING_INSTALL, 409 otherwise. The audit entry (subscription.suspended or
// subscription.restored) carries the reason and the status's change; the status history the
// reason.
func (s *Service) SuspendLine(ctx context.Context, scope subprov.Scope, subscriptionID, action, reason string) (*StatusResult, error) {
	if action != ServiceSuspend && action != ServiceRestore {
		return nil, subprov.Invalid(map[string]string{"action": "want suspend or restore"})
	}
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	sub, p, err := s.ScopedLine(ctx, scope, subscriptionID)
	if err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	name := map[string]string{ServiceSuspend: "subscription.suspended", ServiceRestore: "subscription.restored"}[action]
	move := statusMove{suspendedFor: operatorSuspension, scope: scope, reason: reason, holds: true,
		audit: func(ctx context.Context, tx *store.Tx, cur *subprov.Subscription, before subprov.Subscription, now time.Time) error {
			e := subprov.NewAudit(ctx, cur.ProviderID, name, "subscription", cur.ID)
			e.Reason = reason
			e.Changes.Set("status", string(before.Status), string(cur.Status))
			e.Changes.Set("on_hold", before.OnHold, cur.OnHold)
			return tx.RecordAudit(ctx, e, now)
		}}
	return s.setServiceStatus(ctx, p, sub, action, move)
}

// PreviewLinePlanChange quotes a plan change of a line in scope, counting the once-a-day limit
// in the provider's calendar day.
func (s *Service) PreviewLinePlanChange(ctx context.Context, scope subprov.Scope, subscriptionID, planVersionID string) (*PlanChangeQuote, error) {
	sub, p, err := s.ScopedLine(ctx, scope, subscriptionID)
	if err != nil {
		return nil, err
	}
	return s.quote(ctx, p, sub, planVersionID, ProviderDay)
}

// ChangeLinePlan applies a plan change to a line in scope with the partner's rules
// (ChangePlan), the once-a-day limit counted in the provider's calendar day.
func (s *Service) ChangeLinePlan(ctx context.Context, scope subprov.Scope, subscriptionID, planVersionID, actor string) (*PlanChangeResult, error) {
	_, p, err := s.ScopedLine(ctx, scope, subscriptionID)
	if err != nil {
		return nil, err
	}
	// ChangePlan locks the line by its provider, which is in scope.
	return s.ChangePlan(ctx, p, strings.TrimSpace(subscriptionID), planVersionID, actor, ProviderDay)
}

// Reprovision converges a line's switch port again to the setting its lines decide, whatever
// the switch was last told: the port's desired setting is recomputed and a port.converge job
// queued, both with the audit entry (subscription.reprovisioned) in one transaction. It
// returns the job's id. A line without a port, or of a sandbox provider (not wired to a
// switch), is 409.
func (s *Service) Reprovision(ctx context.Context, scope subprov.Scope, subscriptionID string) (string, error) {
	_, p, err := s.ScopedLine(ctx, scope, subscriptionID)
	if err != nil {
		return "", err
	}
	if p.Sandbox {
		return "", subprov.Errorf(subprov.ECONFLICT, "no_port", "A sandbox line is not wired to a switch")
	}
	jobID := store.NewID()
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := s.lockInScope(ctx, tx, scope, subscriptionID)
		if err != nil {
			return err
		}
		if cur.PortID == "" {
			return subprov.Errorf(subprov.ECONFLICT, "no_port", "The line has no switch port to converge")
		}
		if _, err := s.wantPort(ctx, tx, cur.PortID); err != nil {
			return err
		}
		if err := s.Jobs.Enqueue(ctx, tx, jobs.ConvergePort{PortID: cur.PortID, JobID: jobID}); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, cur.ProviderID, "subscription.reprovisioned", "subscription", cur.ID)
		e.Details = `{"job_id":"` + jobID + `","port_id":"` + cur.PortID + `"}`
		return tx.RecordAudit(ctx, e, s.Clock.Now())
	})
	if errors.Is(err, subprov.ErrNotFound) {
		return "", subprov.NotFound("Subscription")
	}
	return jobID, err
}

// CancelAs is Cancel for an operator: its role must hold the line actions (403 for any id
// otherwise, nothing changed) and its scope the line.
func (s *Service) CancelAs(ctx context.Context, op *subprov.Operator, subscriptionID, endDate, reason string) (*subprov.Subscription, error) {
	if err := op.Authorize(subprov.PermLineActions); err != nil {
		return nil, err
	}
	return s.Cancel(ctx, op.Scope(), subscriptionID, endDate, reason, "operator:"+op.Email)
}

// QuoteCancellationAs is QuoteCancellation for an operator whose role may read.
func (s *Service) QuoteCancellationAs(ctx context.Context, op *subprov.Operator, subscriptionID, endDate string) (*CancelQuote, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	return s.QuoteCancellation(ctx, op.Scope(), subscriptionID, endDate)
}

// CancellationAs is Cancellation for an operator whose role may read.
func (s *Service) CancellationAs(ctx context.Context, op *subprov.Operator, subscriptionID string) (*subprov.Subscription, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	return s.Cancellation(ctx, op.Scope(), subscriptionID)
}
