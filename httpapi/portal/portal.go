// Package portal is the subscriber's side of the HTTP surface: login and password links,
// the account, contacts, authorized users, payment method, billing documents, orders and
// reactivation. Errors answer in the subscriber envelope.
package portal

import (
	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/preferences"
	"github.com/subprov/subprov/privacy"
	"github.com/subprov/subprov/store"
)

// Handler serves the subscriber routes.
type Handler struct {
	Store    *store.Store
	Clock    subprov.Clock
	Auth     *auth.Service
	Billing  *billing.Service
	Checkout *checkout.Service
	Portal   *portal.Service
	Privacy  *privacy.Service
	// Preferences keeps the signed-in person's choices.
	Preferences *preferences.Service
}
