package httpapi

import (
	"github.com/subprov/subprov/httpapi/agent"
	"github.com/subprov/subprov/httpapi/checkout"
	"github.com/subprov/subprov/httpapi/dev"
	"github.com/subprov/subprov/httpapi/ops"
	"github.com/subprov/subprov/httpapi/pages"
	"github.com/subprov/subprov/httpapi/partner"
	"github.com/subprov/subprov/httpapi/portal"
)

// surfaces holds each surface's handlers, each given only what its routes call into.
type surfaces struct {
	partner  *partner.Handler
	portal   *portal.Handler
	agent    *agent.Handler
	checkout *checkout.Handler
	pages    *pages.Handler
	dev      *dev.Handler
	ops      *ops.Handler
}

func newSurfaces(d Deps) surfaces {
	return surfaces{
		partner: &partner.Handler{Log: d.Log, Auth: d.Auth, Serviceability: d.Serviceability, Provisioning: d.Provisioning,
			Billing: d.Billing, Install: d.Install, Sandbox: d.Sandbox, PublicURL: d.PublicURL},
		portal: &portal.Handler{Store: d.Store, Clock: d.Clock, Auth: d.Auth, Billing: d.Billing, Checkout: d.Checkout, Portal: d.Portal,
			Privacy: d.Ops.Privacy, Preferences: d.Preferences},
		agent:    &agent.Handler{Agent: d.Agent},
		checkout: &checkout.Handler{Auth: d.Auth, Checkout: d.Checkout},
		pages:    &pages.Handler{Auth: d.Auth, Checkout: d.Checkout, Install: d.Install, Privacy: d.Ops.Privacy, Billing: d.Billing},
		dev: &dev.Handler{Store: d.Store, Clock: d.DevClock, Faults: d.Faults,
			OnClockChange: d.OnClockChange, OnFaultsChange: d.OnFaultsChange},
		ops: &d.Ops,
	}
}
