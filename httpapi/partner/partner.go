// Package partner is the provider's side of the HTTP surface: the API-key routes a partner's
// systems call (serviceability, provisioning, plan changes, the CPE's configuration pull) and
// the dashboard's (operator login, cancellation, billing retries, the install queue, the
// sandbox tools).
package partner

import (
	"log/slog"

	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/sandbox"
	"github.com/subprov/subprov/serviceability"
)

// Handler serves the partner routes.
type Handler struct {
	Log            *slog.Logger
	Auth           *auth.Service
	Serviceability *serviceability.Service
	Provisioning   *provisioning.Service
	Billing        *billing.Service
	Install        *install.Service
	Sandbox        *sandbox.Service
	PublicURL      string // base of the sandbox payment page's address
}
