// Package checkout is the marketplace's side of the HTTP surface: external checkout sessions,
// their completion, the subscription read and status push, and the marketplace's plan read.
package checkout

import (
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/checkout"
)

// Handler serves the checkout routes.
type Handler struct {
	Auth     *auth.Service
	Checkout *checkout.Service
}
