// Package overview is the operations surface's summary of what needs attention: lines by
// status, install jobs by state, failed provisioning, webhook events failing and overdue
// invoices, counted in the operator's scope. The console's home page shows it and links each
// count to its filtered list.
package overview

import (
	"context"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// LineStatuses are the statuses lines are counted by, in the order they are shown.
var LineStatuses = []subprov.Status{subprov.StatusPendingInstall, subprov.StatusActive, subprov.StatusSuspended, subprov.StatusCancelled}

// InstallStates are the states of install jobs still to be done, counted in this order.
var InstallStates = []string{install.StateOpen, install.StateBooked, install.StateHeld}

// Service counts for one store.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
}

// Counts is the summary: how many lines are in each status and install jobs in each state
// that is still to be done (open, booked or held), how many lines failed provisioning, how
// many webhook events failed delivery, and how many open invoices are past their date
// (overdue, as the invoice list counts them).
type Counts = store.Overview

// Counts returns the summary of the operator's scope.
func (s *Service) Counts(ctx context.Context, by *subprov.Operator) (*Counts, error) {
	if err := by.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	// An open invoice is due on its date: dated before today (UTC, as the invoice list has it)
	// it is overdue.
	today := s.Clock.Now().UTC().Format(time.DateOnly)
	return s.Store.Overview(ctx, store.OverviewQuery{ProviderID: by.Scope().ProviderID, InstallStates: InstallStates,
		FailedWorkflow: provisioning.WorkflowProvisioningFailed, FailedDelivery: subprov.WebhookFailed, OpenInvoice: billing.InvoiceOpen, Today: today})
}
