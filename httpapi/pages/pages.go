// Package pages serves the server-rendered pages a person opens from a link: setting a
// password, booking an installation, paying on the sandbox payment page, paying an invoice from its pay link. Errors render as
// pages, never JSON.
package pages

import (
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/privacy"
)

// Handler serves the pages.
type Handler struct {
	Auth     *auth.Service
	Checkout *checkout.Service
	Install  *install.Service
	Privacy  *privacy.Service
	Billing  *billing.Service
}
