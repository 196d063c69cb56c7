// Package provisioning turns orders into subscriptions on the provider's network: it routes an
// order by the building's line type and the caller's delivery mode, verifies billing before
// writing, creates the line idempotently, provisions the port through a durable job or opens
// an install job, and runs the subscription state machine (install confirmation, plan change,
// cancellation and the deprovisioner).
package provisioning

import (
	"context"
	"log/slog"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/tickets"
)

// Events records webhook events inside the caller's transaction.
type Events interface {
	Record(ctx context.Context, tx *store.Tx, p *subprov.Provider, typ string, sub *subprov.Subscription, extra map[string]any) (*subprov.Event, error)
}

// Billing is told when a line starts being billed (activation) so the platform-billed ones get
// their first invoice; the billing engine implements it.
type Billing interface {
	Activated(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error
	// Reinstalled is told when a reactivated line's reinstall job is done: recurring billing
	// resumes with the rest of the current period (no setup fee, one invoice per reinstall
	// job) and the customer is told.
	Reinstalled(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, reinstallJobID string) error
}

// InstallJobs is the install route after the order; the install package implements it. Open
// opens a line's install job. Hold pauses a PENDING_INSTALL line (a booked visit cancelled, its
// slot released, the booking link stopped, on_hold set); Restore lifts the hold and sends a
// fresh booking link (409 not_on_hold when there is no hold). Hold and Restore run on a line
// the caller locked in tx.
type InstallJobs interface {
	Open(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, b *subprov.Building, kind string, now time.Time) (*subprov.InstallJob, error)
	Hold(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error
	Restore(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error
}

// Service runs the provisioning rules.
type Service struct {
	Store     *store.Store
	Clock     subprov.Clock
	Switch    switches.Driver
	Processor payments.Processor
	Events    Events
	Jobs      jobs.Enqueuer
	Tickets   tickets.Desk
	Billing   Billing // nil: nothing is billed
	Installs  InstallJobs
	Metrics   *metrics.Recorder // nil: nothing is recorded
	Log       *slog.Logger
	// ReconcileEvery is how often each switch is reconciled (0: DefaultReconcileEvery).
	ReconcileEvery time.Duration
}

// Provisioning attempts for a transient switch failure before the line is declared failed.
const maxProvisionAttempts = 5

// Workflow states (the finer progress inside a status).
const (
	WorkflowProvisioning       = "provisioning"
	WorkflowProvisioned        = "provisioned"
	WorkflowProvisioningFailed = "provisioning_failed"
	WorkflowAwaitingInstall    = "awaiting_install"
	WorkflowInstalled          = "installed"
	WorkflowCancelled          = "cancelled"
	WorkflowDeprovisioned      = "deprovisioned" // an ended line whose port was reset (Store.MarkDeprovisioned)
)

func (s *Service) provider(ctx context.Context, id string) (*subprov.Provider, error) {
	return s.Store.Provider(ctx, id)
}

func strPtr(s string) *string { return &s }
