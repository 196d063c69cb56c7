// Package ops is the operations surface (/api/v1, dashboard JWT): what the platform's and the
// providers' staff use to run subprov, and what the web console is built on. Each file serves
// one family of routes; the capability it calls checks the operator's role and scope.
package ops

import (
	"github.com/subprov/subprov/audit"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/inventory"
	"github.com/subprov/subprov/operators"
	"github.com/subprov/subprov/overview"
	"github.com/subprov/subprov/privacy"
	"github.com/subprov/subprov/providers"
	"github.com/subprov/subprov/subscribers"
	"github.com/subprov/subprov/tickets"
	"github.com/subprov/subprov/webhookevents"
)

// Handler serves the operations routes.
type Handler struct {
	Audit     *audit.Service
	Operators *operators.Service
	Providers *providers.Service
	Events    *webhookevents.Service
	// Billing serves invoices, credit notes and bill runs; Tickets the ticket queue; Privacy
	// the subscribers' deletion requests.
	Billing *billing.Service
	Tickets *tickets.Service
	Privacy *privacy.Service
	// Inventory: buildings, units, ports, plans and install windows.
	Inventory *inventory.Service
	// Subscribers serves the subscriber list, accounts and line actions.
	Subscribers *subscribers.Service
	// Summary counts what needs attention (GET /api/v1/overview, the console's home page).
	Summary *overview.Service
}
