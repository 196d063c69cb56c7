// Package tickets is the built-in ticket store behind the Desk interface: operator tickets
// raised by failed provisioning, provider install tickets, and support tickets opened by the
// agent. A provider's real helpdesk would be another Desk.
package tickets

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Desk opens tickets inside the caller's transaction, so a ticket exists exactly when the
// change that raised it committed.
type Desk interface {
	Open(ctx context.Context, tx *store.Tx, t *subprov.Ticket) error
}

// Builtin keeps tickets in the service's own database.
type Builtin struct {
	Clock subprov.Clock
}

// Kinds of ticket.
const (
	KindOperator = "operator" // something an operator must look at (failed switch write, …)
	KindInstall  = "install"  // the provider's install ticket for a new line
	KindSupport  = "support"  // opened for a customer by the support agent
)

// GroupBilling is the group of a provider's billing staff: requests about how the account is
// billed (paper invoices) go to it rather than to the support group.
const GroupBilling = "Billing"

// Open numbers the ticket per provider (T-000123), routes it to the provider's support group
// when none is set, and stores it.
func (b *Builtin) Open(ctx context.Context, tx *store.Tx, t *subprov.Ticket) error {
	now := b.Clock.Now()
	if t.ID == "" {
		t.ID = store.NewID()
	}
	seq, group, err := tx.NextTicketNumber(ctx, t.ProviderID)
	if err != nil {
		return err
	}
	t.Number = fmt.Sprintf("T-%06d", seq)
	if t.Group == "" {
		t.Group = group
	}
	if t.Status == "" {
		t.Status = "open"
	}
	if t.Priority == "" {
		t.Priority = "normal"
	}
	t.CreatedAt = now
	return tx.InsertTicket(ctx, t)
}

// Since is a helper for tests and the operator queue: tickets of a provider opened at or after t.
func Since(ctx context.Context, st *store.Store, providerID string, t time.Time) ([]*subprov.Ticket, error) {
	return st.TicketsSince(ctx, providerID, t)
}
