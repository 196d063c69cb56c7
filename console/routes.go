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
	upload bool   // a multipart form carrying a file (readUpload)
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

		// Subscribers and their accounts (subscribers.go). The cancellation and plan change pages
		// are the first step of their action: they need its permission.
		{method: "GET", path: Prefix + "subscribers", perm: subprov.PermRead, nav: "Subscribers", handle: h.subscriberList},
		{method: "GET", path: Prefix + "subscribers/{subscriber_id}", perm: subprov.PermRead, handle: h.subscriberPage},
		{method: "POST", path: Prefix + "subscriptions/{subscription_id}/suspend", perm: subprov.PermLineActions, handle: h.lineForm},
		{method: "POST", path: Prefix + "subscriptions/{subscription_id}/restore", perm: subprov.PermLineActions, handle: h.lineForm},
		{method: "POST", path: Prefix + "subscriptions/{subscription_id}/reprovision", perm: subprov.PermLineActions, handle: h.lineForm},
		{method: "POST", path: Prefix + "subscriptions/{subscription_id}/notes", perm: subprov.PermLineActions, handle: h.lineForm},
		{method: "GET", path: Prefix + "subscriptions/{subscription_id}/cancel", perm: subprov.PermLineActions, handle: h.cancelPage},
		{method: "POST", path: Prefix + "subscriptions/{subscription_id}/cancel", perm: subprov.PermLineActions, handle: h.cancel},
		{method: "GET", path: Prefix + "subscriptions/{subscription_id}/plan-change", perm: subprov.PermLineActions, handle: h.planChangePage},
		{method: "POST", path: Prefix + "subscriptions/{subscription_id}/plan-change", perm: subprov.PermLineActions, handle: h.changePlan},
		// Providers, their API keys and webhook secrets (providers.go): the capabilities of
		// /api/v1/providers.
		{method: "GET", path: Prefix + "providers", perm: subprov.PermRead, nav: "Providers", handle: h.providerList},
		{method: "GET", path: Prefix + "providers/new", perm: subprov.PermAdminister, handle: h.newProviderPage},
		{method: "POST", path: Prefix + "providers", perm: subprov.PermAdminister, handle: h.createProvider},
		{method: "GET", path: Prefix + "providers/{provider_id}", perm: subprov.PermRead, handle: h.providerPage},
		{method: "POST", path: Prefix + "providers/{provider_id}", perm: subprov.PermAdminister, handle: h.updateProvider},
		{method: "GET", path: Prefix + "providers/{provider_id}/api-keys", perm: subprov.PermRead, handle: h.apiKeys},
		{method: "POST", path: Prefix + "providers/{provider_id}/api-keys", perm: subprov.PermAdminister, handle: h.issueAPIKey},
		{method: "GET", path: Prefix + "providers/{provider_id}/api-keys/{key_id}/revoke", perm: subprov.PermAdminister, handle: h.revokeAPIKeyPage},
		{method: "POST", path: Prefix + "providers/{provider_id}/api-keys/{key_id}/revoke", perm: subprov.PermAdminister, handle: h.revokeAPIKey},
		{method: "GET", path: Prefix + "providers/{provider_id}/webhook-secret", perm: subprov.PermAdminister, handle: h.webhookSecretPage},
		{method: "POST", path: Prefix + "providers/{provider_id}/webhook-secret", perm: subprov.PermAdminister, handle: h.rotateWebhookSecret},
		// Operators (operators.go): the capabilities of /api/v1/operators.
		{method: "GET", path: Prefix + "operators", perm: subprov.PermAdminister, nav: "Operators", handle: h.operatorList},
		{method: "GET", path: Prefix + "operators/new", perm: subprov.PermAdminister, handle: h.newOperatorPage},
		{method: "POST", path: Prefix + "operators", perm: subprov.PermAdminister, handle: h.createOperator},
		{method: "GET", path: Prefix + "operators/{operator_id}", perm: subprov.PermAdminister, handle: h.operatorPage},
		{method: "POST", path: Prefix + "operators/{operator_id}/role", perm: subprov.PermAdminister, handle: h.changeOperatorRole},
		{method: "POST", path: Prefix + "operators/{operator_id}/status", perm: subprov.PermAdminister, handle: h.changeOperatorStatus},
		{method: "POST", path: Prefix + "operators/{operator_id}/second-factor/reset", perm: subprov.PermAdminister, handle: h.resetOperatorSecondFactor},
		// The audit log (audit.go): GET /api/v1/audit's capability.
		{method: "GET", path: Prefix + "audit", perm: subprov.PermRead, nav: "Audit log", handle: h.auditLog},
		// The install queue and the install windows (installs.go).
		{method: "GET", path: Prefix + "installs", perm: subprov.PermReadNetwork, nav: "Installs", handle: h.installs},
		{method: "GET", path: Prefix + "installs/{job_id}", perm: subprov.PermReadNetwork, handle: h.installJobPage},
		{method: "POST", path: Prefix + "installs/{job_id}/assign", perm: subprov.PermInstall, handle: h.assignInstallJob},
		{method: "POST", path: Prefix + "installs/{job_id}/book", perm: subprov.PermInstall, handle: h.bookInstallJob},
		{method: "POST", path: Prefix + "installs/{job_id}/complete", perm: subprov.PermInstall, handle: h.completeInstallJob},
		{method: "GET", path: Prefix + "install-windows", perm: subprov.PermReadNetwork, handle: h.installWindows},
		{method: "POST", path: Prefix + "install-windows", perm: subprov.PermInstall, handle: h.createInstallWindow},
		{method: "POST", path: Prefix + "install-windows/{window_id}/delete", perm: subprov.PermInstall, handle: h.deleteInstallWindow},
		// The network: buildings, units, ports and the CSV import (network.go).
		{method: "GET", path: Prefix + "network", perm: subprov.PermReadNetwork, nav: "Network", handle: h.network},
		{method: "POST", path: Prefix + "network/buildings", perm: subprov.PermAdminister, handle: h.createBuilding},
		{method: "GET", path: Prefix + "network/buildings/{building_id}", perm: subprov.PermReadNetwork, handle: h.buildingPage},
		{method: "POST", path: Prefix + "network/buildings/{building_id}", perm: subprov.PermAdminister, handle: h.editBuilding},
		{method: "POST", path: Prefix + "network/buildings/{building_id}/units", perm: subprov.PermAdminister, handle: h.createUnit},
		{method: "POST", path: Prefix + "network/buildings/{building_id}/ports", perm: subprov.PermAdminister, handle: h.createPort},
		{method: "GET", path: Prefix + "network/switches", perm: subprov.PermReadNetwork, handle: h.switchesPage},
		{method: "GET", path: Prefix + "network/import", perm: subprov.PermAdminister, handle: h.importPage},
		{method: "POST", path: Prefix + "network/import", perm: subprov.PermAdminister, upload: true, handle: h.importBuildings},
		// Plans and their versions (plans.go).
		{method: "GET", path: Prefix + "plans", perm: subprov.PermRead, nav: "Plans", handle: h.plans},
		{method: "POST", path: Prefix + "plans", perm: subprov.PermAdminister, handle: h.createPlan},
		{method: "POST", path: Prefix + "plans/{plan_id}/versions", perm: subprov.PermAdminister, handle: h.createPlanVersion},
		{method: "POST", path: Prefix + "plan-versions/{plan_version_id}/sellable", perm: subprov.PermAdminister, handle: h.sellPlanVersion},
		// Billing, webhook events, tickets and privacy requests.
		{method: "GET", path: Prefix + "invoices", perm: subprov.PermRead, nav: "Invoices", handle: h.invoices},
		{method: "GET", path: Prefix + "invoices/{invoice_id}", perm: subprov.PermRead, handle: h.invoice},
		{method: "GET", path: Prefix + "invoices/{invoice_id}/document", perm: subprov.PermRead, handle: h.invoiceDocument},
		{method: "GET", path: Prefix + "credit-notes/{credit_note_id}/document", perm: subprov.PermRead, handle: h.creditNoteDocument},
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
