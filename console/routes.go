package console

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
)

// route is one console page or form: its method and path, the permission the operator's role
// needs (checked before the handler, as the API's route table does; the capability checks it
// again), whether it is served without a session, and, for a section of the navigation, its
// label there. The navigation lists the sections the operator's role may read.
type route struct {
	method string
	path   string
	perm   subprov.Permission
	public bool   // no session: the sign-in form and the assets
	nav    string // the label of a navigation section ("": none)
	handle func(w http.ResponseWriter, r *http.Request, v *View) error
}

// pattern is the route's path as the mux matches it: a path ending in a slash matches only
// itself.
func (rt route) pattern() string {
	if strings.HasSuffix(rt.path, "/") {
		return rt.path + "{$}"
	}
	return rt.path
}

// routes lists every console page and form. Read it top to bottom to know what the console
// serves; add a page here.
func (h *Handler) routes() []route {
	return []route{
		{method: "GET", path: Prefix + "assets/{version}/{name}", public: true, handle: h.asset},
		{method: "GET", path: Prefix + "sign-in", public: true, handle: h.signInPage},
		{method: "POST", path: Prefix + "sign-in", public: true, handle: h.signIn},
		{method: "POST", path: Prefix + "sign-out", perm: subprov.PermNone, handle: h.signOut},

		{method: "GET", path: Prefix, perm: subprov.PermNone, nav: "Home", handle: h.home},

		// The operator's own account: every role.
		{method: "GET", path: Prefix + "account/password", perm: subprov.PermNone, handle: h.passwordPage},
		{method: "POST", path: Prefix + "account/password", perm: subprov.PermNone, handle: h.changePassword},
		{method: "GET", path: Prefix + "account/second-factor", perm: subprov.PermNone, handle: h.secondFactorPage},
		{method: "POST", path: Prefix + "account/second-factor", perm: subprov.PermNone, handle: h.startSecondFactor},
		{method: "POST", path: Prefix + "account/second-factor/confirm", perm: subprov.PermNone, handle: h.confirmSecondFactor},

		// Billing, webhook events, tickets and privacy requests.
		{method: "GET", path: Prefix + "invoices", perm: subprov.PermRead, nav: "Invoices", handle: h.invoices},
		{method: "GET", path: Prefix + "invoices/{invoice_id}", perm: subprov.PermRead, handle: h.invoice},
		{method: "GET", path: Prefix + "invoices/{invoice_id}/document", perm: subprov.PermRead, handle: h.invoiceDocument},
		{method: "POST", path: Prefix + "invoices/{invoice_id}/retry-charge", perm: subprov.PermInvoices, handle: h.retryCharge},
		{method: "POST", path: Prefix + "invoices/{invoice_id}/credit-notes", perm: subprov.PermInvoices, handle: h.creditInvoice},
		{method: "GET", path: Prefix + "bill-runs", perm: subprov.PermRead, handle: h.billRuns},
		{method: "GET", path: Prefix + "webhook-events", perm: subprov.PermRead, nav: "Webhook events", handle: h.webhookEvents},
		{method: "GET", path: Prefix + "webhook-events/{event_id}", perm: subprov.PermRead, handle: h.webhookEvent},
		{method: "POST", path: Prefix + "webhook-events/{event_id}/replay", perm: subprov.PermSupport, handle: h.replayWebhookEvent},
		{method: "GET", path: Prefix + "tickets", perm: subprov.PermRead, nav: "Tickets", handle: h.ticketList},
		{method: "GET", path: Prefix + "tickets/{ticket_id}", perm: subprov.PermRead, handle: h.ticket},
		{method: "POST", path: Prefix + "tickets/{ticket_id}", perm: subprov.PermSupport, handle: h.updateTicket},
		{method: "GET", path: Prefix + "privacy-requests", perm: subprov.PermRead, nav: "Privacy requests", handle: h.privacyRequests},
		{method: "POST", path: Prefix + "privacy-requests/{request_id}/approve", perm: subprov.PermLineActions, handle: h.approvePrivacyRequest},
		{method: "POST", path: Prefix + "privacy-requests/{request_id}/reject", perm: subprov.PermLineActions, handle: h.rejectPrivacyRequest},
	}
}

// RouteInfo describes one console route, for tests: its method, path, the permission it
// needs and whether it is served without a session.
type RouteInfo struct {
	Method, Path string
	Perm         subprov.Permission
	Public       bool
}

// Routes lists the console's routes.
func Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range (&Handler{}).routes() {
		out = append(out, RouteInfo{Method: rt.method, Path: rt.path, Perm: rt.perm, Public: rt.public})
	}
	return out
}

// navItem is one section of the navigation.
type navItem struct {
	Label, Path string
	Current     bool
}

// navFor lists the sections role may read, marking the one at path.
func (h *Handler) navFor(role subprov.Role, path string) []navItem {
	var out []navItem
	for _, rt := range h.routes() {
		if rt.nav != "" && rt.method == "GET" && role.Can(rt.perm) {
			out = append(out, navItem{Label: rt.nav, Path: rt.path, Current: rt.path == path})
		}
	}
	return out
}
