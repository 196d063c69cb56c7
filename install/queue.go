package install

import (
	"context"
	"errors"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Queue limits.
const (
	DefaultQueueLimit = 100
	MaxQueueLimit     = 500
)

// QueueFilter narrows the operator's install queue.
type QueueFilter = subprov.InstallJobFilter

// ValidateFilter checks a queue filter's values; it returns field -> problem.
func ValidateFilter(f *QueueFilter) map[string]string {
	p := map[string]string{}
	if f.State != "" && !oneOf(f.State, StateOpen, StateBooked, StateHeld, StateDone, StateCancelled) {
		p["query:state"] = "want open, booked, held, done or cancelled"
	}
	if f.Kind != "" && !oneOf(f.Kind, KindInstall, KindReinstall) {
		p["query:kind"] = "want install or reinstall"
	}
	if f.Booking != "" && !oneOf(f.Booking, BookingCustomer, BookingOperator) {
		p["query:booking"] = "want customer or operator"
	}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultQueueLimit
	case f.Limit < 1 || f.Limit > MaxQueueLimit:
		p["query:limit"] = "want 1 to 500"
	}
	return p
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// Queue lists the install jobs in scope for the operator, oldest first: a provider-scoped
// operator's queue holds its provider's jobs only, and asking for another provider's lists
// nothing.
func (s *Service) Queue(ctx context.Context, scope subprov.Scope, f QueueFilter) ([]*subprov.InstallQueueEntry, error) {
	if p := ValidateFilter(&f); len(p) > 0 {
		return nil, subprov.Invalid(p)
	}
	if f.ProviderID != "" && !scope.Allows(f.ProviderID) {
		return []*subprov.InstallQueueEntry{}, nil
	}
	if scope.ProviderID != "" {
		f.ProviderID = scope.ProviderID
	}
	return s.Store.InstallQueue(ctx, f)
}

func jobNotFound() error { return subprov.NotFound("Install job") }

// Job returns one install job in scope; another provider's is not found, as an unknown id.
func (s *Service) Job(ctx context.Context, scope subprov.Scope, id string) (*subprov.InstallJob, error) {
	j, err := s.Store.InstallJob(ctx, scope.ProviderID, id)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, jobNotFound()
		}
		return nil, err
	}
	return j, nil
}

// lockTarget locks a job and its line for an operator action.
func (s *Service) lockTarget(ctx context.Context, tx *store.Tx, scope subprov.Scope, id string) (*linkTarget, error) {
	job, err := s.lockJob(ctx, tx, scope, id)
	if err != nil {
		return nil, err
	}
	sub, err := tx.LockSubscription(ctx, job.ProviderID, job.SubscriptionID)
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, &subprov.BookingLink{ProviderID: job.ProviderID, InstallJobID: job.ID, State: "live"}, job, sub)
}

// requireActionable refuses operator actions on a job that is finished or on hold.
func requireActionable(job *subprov.InstallJob) error {
	switch job.State {
	case StateDone, StateCancelled:
		return subprov.Errorf(subprov.ECONFLICT, "job_closed", "The install job is %s", job.State)
	case StateHeld:
		return subprov.Errorf(subprov.ECONFLICT, "on_hold", "The line is on hold; restore it first")
	}
	return nil
}

// lockJob locks one install job in scope for an operator action; another provider's job is
// not found, as an unknown id.
func (s *Service) lockJob(ctx context.Context, tx *store.Tx, scope subprov.Scope, id string) (*subprov.InstallJob, error) {
	job, err := tx.LockInstallJob(ctx, id)
	if errors.Is(err, subprov.ErrNotFound) || (err == nil && !scope.Allows(job.ProviderID)) {
		return nil, jobNotFound()
	}
	if err != nil {
		return nil, err
	}
	return job, nil
}

// Assign gives a job in scope to a technician or team ("" unassigns).
// The operator's role needs the install permission (403 for any id), checked here as well as
// by the route.
func (s *Service) Assign(ctx context.Context, op *subprov.Operator, id, assignee string) (*subprov.InstallJob, error) {
	if err := op.Authorize(subprov.PermInstall); err != nil {
		return nil, err
	}
	scope, operator := op.Scope(), op.Email
	assignee = strings.TrimSpace(assignee)
	if len(assignee) > 200 {
		return nil, subprov.Invalid(map[string]string{"assigned_to": "at most 200 characters"})
	}
	var out *subprov.InstallJob
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		job, err := s.lockJob(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if job.State == StateDone || job.State == StateCancelled {
			return requireActionable(job)
		}
		now := s.Clock.Now()
		job.AssignedTo = assignee
		if err := tx.SaveInstallJob(ctx, job, now); err != nil {
			return err
		}
		out = job
		return tx.InsertAudit(ctx, job.ProviderID, "operator:"+operator, "install.assigned", job.ID, "", now)
	})
	return out, err
}

// Slots lists the slots the operator can book for a job.
func (s *Service) Slots(ctx context.Context, scope subprov.Scope, id string) ([]Day, *subprov.Provider, error) {
	job, err := s.Job(ctx, scope, id)
	if err != nil {
		return nil, nil, err
	}
	sub, err := s.Store.Subscription(ctx, job.ProviderID, job.SubscriptionID)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.resolve(ctx, &subprov.BookingLink{ProviderID: job.ProviderID}, job, sub)
	if err != nil {
		return nil, nil, err
	}
	days, err := calendarFor(ctx, s.Store, t.p, t.b, s.Clock.Now())
	return days, t.p, err
}

// BookForCustomer books (or moves) a job's visit on the customer's behalf: the job's booking
// becomes `operator` and any live customer link is replaced.
// The operator's role needs the install permission.
func (s *Service) BookForCustomer(ctx context.Context, op *subprov.Operator, id, slotID string) (*subprov.InstallJob, error) {
	if err := op.Authorize(subprov.PermInstall); err != nil {
		return nil, err
	}
	scope, operator := op.Scope(), op.Email
	var out *subprov.InstallJob
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		t, err := s.lockTarget(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if err := requireActionable(t.job); err != nil {
			return err
		}
		if t.sub.Status != subprov.StatusPendingInstall {
			return subprov.Errorf(subprov.ECONFLICT, "not_pending_install", "The line is not waiting for an install")
		}
		if _, err := s.book(ctx, tx, t, slotID, BookingOperator, "operator:"+operator); err != nil {
			return err
		}
		out = t.job
		return nil
	})
	return out, err
}

// Complete records the technician's completion from the queue: the same path as
// confirm-install, so the line goes ACTIVE and billing starts.
// The operator's role needs the install permission.
func (s *Service) Complete(ctx context.Context, op *subprov.Operator, id, mac string) (*subprov.Subscription, error) {
	if err := op.Authorize(subprov.PermInstall); err != nil {
		return nil, err
	}
	job, err := s.Job(ctx, op.Scope(), id)
	if err != nil {
		return nil, err
	}
	if job.State != StateDone {
		if err := requireActionable(job); err != nil {
			return nil, err
		}
	}
	return s.Completer.CompleteInstall(ctx, job.ProviderID, job.SubscriptionID, mac, "operator")
}
