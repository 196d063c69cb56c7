package subscribers

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// maxNoteLen bounds an operator's note, as an agent's.
const maxNoteLen = 10_000

// Suspend suspends a line in the operator's scope (a hold on a PENDING_INSTALL line), with
// the partner's rules, and returns the line as it is now.
func (s *Service) Suspend(ctx context.Context, op *subprov.Operator, subscriptionID, reason string) (*Line, error) {
	return s.setStatus(ctx, op, subscriptionID, provisioning.ServiceSuspend, reason)
}

// Restore restores a suspended line in the operator's scope once its port re-opens (or lifts
// a PENDING_INSTALL line's hold), with the partner's rules.
func (s *Service) Restore(ctx context.Context, op *subprov.Operator, subscriptionID, reason string) (*Line, error) {
	return s.setStatus(ctx, op, subscriptionID, provisioning.ServiceRestore, reason)
}

func (s *Service) setStatus(ctx context.Context, op *subprov.Operator, subscriptionID, action, reason string) (*Line, error) {
	if err := op.Authorize(subprov.PermLineActions); err != nil {
		return nil, err
	}
	if _, err := s.Provisioning.SuspendLine(ctx, op.Scope(), subscriptionID, action, reason); err != nil {
		return nil, err
	}
	return s.line(ctx, op.Scope(), subscriptionID)
}

// PreviewPlanChange quotes a plan change of a line in the operator's scope; the once-a-day
// limit counts the provider's calendar day.
func (s *Service) PreviewPlanChange(ctx context.Context, op *subprov.Operator, subscriptionID, planVersionID string) (*provisioning.PlanChangeQuote, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	return s.Provisioning.PreviewLinePlanChange(ctx, op.Scope(), subscriptionID, strings.TrimSpace(planVersionID))
}

// ChangePlan changes the plan of a line in the operator's scope with the partner's rules and
// returns the line as it is now.
func (s *Service) ChangePlan(ctx context.Context, op *subprov.Operator, subscriptionID, planVersionID string) (*Line, error) {
	if err := op.Authorize(subprov.PermLineActions); err != nil {
		return nil, err
	}
	if _, err := s.Provisioning.ChangeLinePlan(ctx, op.Scope(), subscriptionID, strings.TrimSpace(planVersionID), "operator:"+op.Email); err != nil {
		return nil, err
	}
	return s.line(ctx, op.Scope(), subscriptionID)
}

// Reprovision converges the switch port of a line in the operator's scope again and returns
// the convergence job's id.
func (s *Service) Reprovision(ctx context.Context, op *subprov.Operator, subscriptionID string) (string, error) {
	if err := op.Authorize(subprov.PermLineActions); err != nil {
		return "", err
	}
	return s.Provisioning.Reprovision(ctx, op.Scope(), subscriptionID)
}

// Note is an operator's note on a line's subscriber.
type Note struct {
	subprov.CustomerNote
	SubscriptionID string
}

// AddNote writes an internal note on the subscriber of a line in the operator's scope,
// authored by the operator and audited (note.created, without its text) in one transaction.
// A line without a subscriber record (an anonymous checkout's) takes no note: 409.
func (s *Service) AddNote(ctx context.Context, op *subprov.Operator, subscriptionID, body string) (*Note, error) {
	if err := op.Authorize(subprov.PermLineActions); err != nil {
		return nil, err
	}
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		return nil, subprov.Invalid(map[string]string{"note": "required"})
	case utf8.RuneCountInString(body) > maxNoteLen:
		return nil, subprov.Invalid(map[string]string{"note": "at most 10000 characters"})
	}
	now := s.Clock.Now()
	n := &Note{CustomerNote: subprov.CustomerNote{ID: store.NewID(), Author: "operator:" + op.Email, Body: body, CreatedAt: now}}
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		sub, err := tx.LockSubscription(ctx, op.ProviderID, strings.TrimSpace(subscriptionID))
		if err != nil {
			return notFound(err)
		}
		if err := op.Scope().Check(sub.ProviderID, "Subscription"); err != nil {
			return err
		}
		if sub.SubscriberID == "" {
			return subprov.Errorf(subprov.ECONFLICT, "no_subscriber", "The line has no subscriber record to note on")
		}
		n.ProviderID, n.SubscriberID, n.SubscriptionID = sub.ProviderID, sub.SubscriberID, sub.ID
		if err := tx.InsertNote(ctx, &n.CustomerNote); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, sub.ProviderID, "note.created", "note", n.ID)
		e.Details = `{"subscriber_id":"` + sub.SubscriberID + `","subscription_id":"` + sub.ID + `"}`
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}
