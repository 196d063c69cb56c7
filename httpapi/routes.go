package httpapi

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/console"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/ratelimit"
)

// route is one entry of the surface: method, path, the credential it requires, the envelope
// its errors use, its rate limit, and its handler. A /partner route is also served under
// /api/v1 with identical authentication (docs/http.md).
type route struct {
	method string
	path   string
	auth   credential
	// perm is the permission an operator's role needs for a credOperator route (PermNone: any
	// operator, for its own password and second factor). The role is checked before anything
	// else, so a role without it gets 403 for any id; the capability checks it again.
	perm    subprov.Permission
	surface surface
	limit   ratelimit.Limit
	// failures, when set, limits the route's failed attempts from one client IP instead of
	// its requests (failureLimit): a route that takes a password or a mailed link is limited
	// to stop guessing, which only failures do. A route that takes a password is limited per
	// login as well, by auth.
	failures ratelimit.Limit
	handle   func(w http.ResponseWriter, r *http.Request) error
}

// with is the route served by handle.
func (rt route) with(handle func(w http.ResponseWriter, r *http.Request) error) route {
	rt.handle = handle
	return rt
}

// operatorLogin is the dashboard login, POST /api/v1/auth/login. The console's sign-in form
// is the same login and counts its failures in the same budget (consoleSignInFailures).
var operatorLogin = route{method: "POST", path: "/api/v1/auth/login", failures: failedPasswordLimit}

// paths returns the route's path and, for a partner route, its /api/v1 mirror.
func (rt route) paths() []string {
	if strings.HasPrefix(rt.path, "/partner/") {
		return []string{rt.path, "/api/v1/" + strings.TrimPrefix(rt.path, "/partner/")}
	}
	return []string{rt.path}
}

// Default limits for the agent, subscriber and checkout routes, which have no fixed limit of
// their own (docs/http.md, Rate limits): generous for reads, tight for guesses.
var (
	defaultLimit = ratelimit.PerMinute(600)
	// failedPasswordLimit bounds the failed password attempts (logins, a password change's
	// current password) of one client IP across every login to 100 a minute; successful ones
	// are not counted, however many one address (a shared office, a test suite) makes. It is the
	// per-client bound of the limits on guessing (auth, throttle.go): one login is guessed from
	// one address at most 10 times a minute, and from every address at once ever more slowly
	// after 10 failures in a row, so one client's failures, up to this bound, never refuse the
	// right password of another login behind the same address (a NAT, a load balancer).
	failedPasswordLimit = ratelimit.PerMinute(100)
	// failedLinkLimit bounds guessing a mailed link (reset, set-up, activation) from one client
	// IP to 10 failed attempts a minute.
	failedLinkLimit = ratelimit.PerMinute(10)
	// resetRequestLimit counts every password-reset request from one client IP: the request
	// has no failure to count (it answers 202 whether or not the address has an account, so
	// that nobody learns which do), and what it costs is a mail sent to someone else's inbox.
	// Counting per IP rather than per e-mail address keeps a stranger from using up a
	// customer's own resets; 30 a minute is room for a person who asks again and a test suite,
	// not for flooding.
	resetRequestLimit = ratelimit.PerMinute(30)
)

// addRoutes lists the whole HTTP surface. Read it top to bottom to know what subprov serves.
func addRoutes(mux *http.ServeMux, s *server) []route {
	rs := []route{
		// Operations.
		{method: "GET", path: "/healthz", handle: s.handleHealthz},
		{method: "GET", path: "/readyz", handle: s.handleReadyz},
		{method: "GET", path: "/metrics", handle: s.handleMetrics},
		{method: "GET", path: "/openapi.json", handle: s.handleOpenAPI},
		{method: "GET", path: "/docs", handle: s.handleDocs},

		// Logins (docs/security.md).
		{method: "POST", path: "/partner/subscriber/auth/login", surface: surfaceSubscriber, failures: failedPasswordLimit, handle: s.portal.SubscriberLogin},
		{method: "POST", path: "/partner/subscriber/auth/password-reset", surface: surfaceSubscriber, limit: resetRequestLimit, handle: s.portal.PasswordReset},
		{method: "POST", path: "/partner/subscriber/auth/password-reset/confirm", surface: surfaceSubscriber, failures: failedLinkLimit, handle: s.portal.PasswordResetConfirm},
		{method: "POST", path: "/partner/subscriber/auth/activate", surface: surfaceSubscriber, failures: failedLinkLimit, handle: s.portal.Activate},
		// The pages the links in set-up, activation and reset mails open.
		{method: "GET", path: "/portal/reset-password", surface: surfacePage, handle: s.pages.PasswordPage},
		{method: "POST", path: "/portal/reset-password", surface: surfacePage, failures: failedLinkLimit, handle: s.pages.PasswordSet},
		{method: "GET", path: "/portal/activate", surface: surfacePage, handle: s.pages.PasswordPage},
		{method: "POST", path: "/portal/activate", surface: surfacePage, failures: failedLinkLimit, handle: s.pages.PasswordSet},
		// The link in the personal-data export mail: the file, or a page when the link is dead.
		{method: "GET", path: "/portal/privacy/export", surface: surfacePage, failures: failedLinkLimit, handle: s.pages.PrivacyExport},
		operatorLogin.with(s.partner.OperatorLogin),

		// Serviceability and location.
		{method: "GET", path: "/partner/serviceability/autocomplete", auth: credAPIKey, limit: ratelimit.PerMinute(300), handle: s.partner.Autocomplete},
		{method: "POST", path: "/partner/serviceability/check", auth: credAPIKey, limit: ratelimit.PerMinute(120), handle: s.partner.Check},
		{method: "GET", path: "/partner/serviceability/units", auth: credAPIKey, limit: ratelimit.PerMinute(300), handle: s.partner.Units},
		{method: "POST", path: "/partner/location/", handle: s.partner.Location},
		{method: "POST", path: "/partner/location/details", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.partner.LocationDetails},

		// Provisioning (API key), the CPE's configuration pull, and cancellation (dashboard).
		{method: "POST", path: "/partner/provisioning/provider-initiated", auth: credAPIKey, limit: ratelimit.PerMinute(120), handle: s.partner.ProviderInitiated},
		{method: "POST", path: "/partner/provisioning/bulk", auth: credAPIKey, limit: ratelimit.PerMinute(30), handle: s.partner.Bulk},
		{method: "POST", path: "/partner/provisioning/confirm-install", auth: credAPIKey, handle: s.partner.ConfirmInstall},
		{method: "GET", path: "/partner/subscriptions/{subscription_id}/change-plan/preview", auth: credAPIKey, handle: s.partner.ChangePlanPreview},
		{method: "POST", path: "/partner/subscriptions/{subscription_id}/change-plan", auth: credAPIKey, handle: s.partner.ChangePlan},
		{method: "POST", path: "/partner/cpe/config", auth: credDevice, handle: s.partner.DevicePull},
		{method: "POST", path: "/api/v1/subscription/{subscription_id}/cancel", auth: credOperator, perm: subprov.PermLineActions, handle: s.partner.Cancel},
		{method: "GET", path: "/api/v1/subscription/{subscription_id}/cancel", auth: credOperator, perm: subprov.PermRead, handle: s.partner.Cancellation},
		{method: "GET", path: "/api/v1/subscription/{subscription_id}/cancel/preview", auth: credOperator, perm: subprov.PermRead, handle: s.partner.CancelPreview},

		// External checkout (marketplace hand-over) and the marketplace's plan read.
		{method: "POST", path: "/partner/external-checkout/sessions", auth: credOptionalSubscriber, handle: s.checkout.CreateSession},
		{method: "GET", path: "/partner/external-checkout/sessions/{session_id}", auth: credSessionSecret, handle: s.checkout.ReadSession},
		{method: "PATCH", path: "/partner/external-checkout/sessions/{session_id}", auth: credSessionSecret, handle: s.checkout.PatchSession},
		{method: "POST", path: "/partner/external-checkout/sessions/{session_id}/cancel", auth: credSessionSecret, handle: s.checkout.CancelSession},
		{method: "POST", path: "/partner/external-checkout/complete", auth: credSessionSecret, handle: s.checkout.Complete},
		{method: "POST", path: "/partner/external-checkout/anonymous-complete", auth: credSessionSecret, handle: s.checkout.AnonymousComplete},
		{method: "GET", path: "/partner/external-checkout/subscriptions/{external_subscription_id}", auth: credWebhookSecret, handle: s.checkout.CheckoutSubscription},
		{method: "POST", path: "/partner/external-checkout/subscription-status", auth: credWebhookSecret, handle: s.checkout.SubscriptionStatus},
		{method: "GET", path: "/partner/marketplace/plans/{plan_version_id}", handle: s.checkout.MarketplacePlan},

		// Sandbox (dashboard) and the sandbox payment page a sandbox provider's checkout URL points to.
		{method: "GET", path: "/api/v1/sandbox/provider-info", auth: credOperator, perm: subprov.PermAdminister, handle: s.partner.SandboxProviderInfo},
		{method: "POST", path: "/api/v1/sandbox/webhook-config", auth: credOperator, perm: subprov.PermAdminister, handle: s.partner.SandboxWebhookConfig},
		{method: "GET", path: "/api/v1/sandbox/webhook-events", auth: credOperator, perm: subprov.PermRead, handle: s.partner.SandboxEvents},
		{method: "POST", path: "/api/v1/sandbox/webhook-events/{event_id}/replay", auth: credOperator, perm: subprov.PermSupport, handle: s.partner.SandboxReplay},
		{method: "GET", path: "/sandbox/checkout", surface: surfacePage, handle: s.pages.PayPage},
		{method: "POST", path: "/sandbox/checkout", surface: surfacePage, limit: ratelimit.PerMinute(60), handle: s.pages.Pay},
		{method: "POST", path: "/sandbox/checkout/cancel", surface: surfacePage, limit: ratelimit.PerMinute(60), handle: s.pages.PayCancel},

		// Subscriber self-service (subscriber JWT; holder-only routes use credHolder).
		{method: "GET", path: "/partner/subscriber/me", auth: credSubscriberView, surface: surfaceSubscriber, handle: s.portal.Me},
		{method: "GET", path: "/partner/subscriber/me/details", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.MyDetails},
		{method: "PATCH", path: "/partner/subscriber/me/contact", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.MyContact},
		{method: "PATCH", path: "/partner/subscriber/me/password", auth: credSubscriber, surface: surfaceSubscriber, failures: failedPasswordLimit, handle: s.portal.MyPassword},
		{method: "GET", path: "/partner/subscriber/me/payment-method", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PaymentMethod},
		{method: "POST", path: "/partner/subscriber/me/payment-method/setup", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PaymentSetup},
		{method: "POST", path: "/partner/subscriber/me/payment-method/confirm", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PaymentConfirm},
		{method: "GET", path: "/partner/subscriber/me/usage", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.MyUsage},
		{method: "GET", path: "/partner/subscriber/status-history", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.StatusHistory},
		{method: "GET", path: "/partner/subscriber/me/authorized-users", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.AuthorizedUsers},
		{method: "POST", path: "/partner/subscriber/me/authorized-users", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.AddAuthorizedUser},
		{method: "POST", path: "/partner/subscriber/me/authorized-users/{id}/resend-invite", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.ResendInvite},
		{method: "DELETE", path: "/partner/subscriber/me/authorized-users/{id}", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.RemoveAuthorizedUser},
		{method: "POST", path: "/partner/subscriber/me/privacy/deletion-request", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PrivacyDeletionRequest},
		// The signed-in person's own settings (holder or authorized user): preferences, the
		// personal-data export, the second factor (turning it off takes a code: limited as a password).
		{method: "GET", path: "/partner/subscriber/me/preferences", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.MyPreferences},
		{method: "PATCH", path: "/partner/subscriber/me/preferences", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.PatchMyPreferences},
		{method: "POST", path: "/partner/subscriber/me/privacy/export", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.PrivacyExport},
		{method: "POST", path: "/partner/subscriber/me/totp", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.StartSecondFactor},
		{method: "POST", path: "/partner/subscriber/me/totp/confirm", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.ConfirmSecondFactor},
		{method: "DELETE", path: "/partner/subscriber/me/totp", auth: credSubscriber, surface: surfaceSubscriber, failures: failedPasswordLimit, handle: s.portal.TurnOffSecondFactor},

		// Portal orders and reactivation.
		{method: "GET", path: "/partner/subscriber/me/orders/options", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.OrderOptions},
		{method: "GET", path: "/partner/subscriber/me/orders/preview", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.OrderPreview},
		{method: "POST", path: "/partner/subscriber/me/orders", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PlaceOrder},
		{method: "GET", path: "/partner/subscriber/me/reactivation", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.ReactivationPreview},
		{method: "POST", path: "/partner/subscriber/me/subscriptions/{subscription_id}/reactivation", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.Reactivate},

		// Billing (dashboard) and the subscriber's billing documents.
		{method: "POST", path: "/api/v1/invoices/{invoice_id}/retry-charge", auth: credOperator, perm: subprov.PermInvoices, handle: s.partner.RetryCharge},
		{method: "GET", path: "/partner/subscriber/me/invoices", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.MyInvoices},
		{method: "GET", path: "/partner/subscriber/me/credit-notes", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.MyCreditNotes},
		{method: "GET", path: "/api/v1/credit-notes/{credit_note_id}/pdf", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.CreditNotePDF},
		{method: "GET", path: "/api/v1/invoices/{invoice_id}/pdf", auth: credSubscriber, surface: surfaceSubscriber, handle: s.portal.InvoicePDF},
		{method: "PATCH", path: "/partner/subscriber/me/billing-day", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.BillingDay},
		{method: "POST", path: "/partner/subscriber/me/invoices/{invoice_id}/pay", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PayInvoice},
		{method: "GET", path: "/partner/subscriber/me/autopay", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.AutoPay},
		{method: "PATCH", path: "/partner/subscriber/me/autopay", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.SetAutoPay},
		{method: "POST", path: "/partner/subscriber/me/paper-billing", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.PaperBilling},
		{method: "GET", path: "/portal/pay", surface: surfacePage, handle: s.pages.InvoicePayPage},
		{method: "POST", path: "/portal/pay", surface: surfacePage, limit: ratelimit.PerMinute(60), failures: failedLinkLimit, handle: s.pages.InvoicePay},
		{method: "PATCH", path: "/partner/subscriber/me/invoice-contact", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.InvoiceContact},
		{method: "POST", path: "/partner/subscriber/me/invoice-contact/use-holder", auth: credHolder, surface: surfaceSubscriber, handle: s.portal.UseHolder},

		// Installations (issue 8): the operator's install queue and the customer's booking page.
		{method: "GET", path: "/api/v1/install-jobs", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.partner.InstallJobs},
		{method: "GET", path: "/api/v1/install-jobs/{job_id}", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.partner.InstallJob},
		{method: "GET", path: "/api/v1/install-jobs/{job_id}/slots", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.partner.InstallJobSlots},
		{method: "POST", path: "/api/v1/install-jobs/{job_id}/assign", auth: credOperator, perm: subprov.PermInstall, handle: s.partner.AssignInstallJob},
		{method: "POST", path: "/api/v1/install-jobs/{job_id}/book", auth: credOperator, perm: subprov.PermInstall, handle: s.partner.BookInstallJob},
		{method: "POST", path: "/api/v1/install-jobs/{job_id}/complete", auth: credOperator, perm: subprov.PermInstall, handle: s.partner.CompleteInstallJob},
		{method: "GET", path: "/book", surface: surfacePage, handle: s.pages.BookingPage},
		{method: "POST", path: "/book", surface: surfacePage, limit: ratelimit.PerMinute(60), handle: s.pages.BookingConfirm},
		// Support-agent API (issue 7): agent key on every call; the verified session is
		// checked by package agent, after provider scoping.
		{method: "GET", path: "/partner/agent/customers/search", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.Search},
		{method: "POST", path: "/partner/agent/verify/issue", auth: credAgentKey, surface: surfaceAgent, limit: ratelimit.PerMinute(60), handle: s.agent.VerifyIssue},
		{method: "POST", path: "/partner/agent/verify/check", auth: credAgentKey, surface: surfaceAgent, limit: ratelimit.PerMinute(120), handle: s.agent.VerifyCheck},
		{method: "GET", path: "/partner/agent/customers/{customerId}", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.Profile},
		{method: "GET", path: "/partner/agent/customers/{customerId}/billing-summary", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.BillingSummary},
		{method: "GET", path: "/partner/agent/customers/{customerId}/payments", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.Payments},
		{method: "GET", path: "/partner/agent/customers/{customerId}/network-health", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.NetworkHealth},
		{method: "GET", path: "/partner/agent/customers/{customerId}/tickets", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.Tickets},
		{method: "POST", path: "/partner/agent/customers/{customerId}/notes", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.Note},
		{method: "PATCH", path: "/partner/agent/customers/{customerId}/contact", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.Contact},
		{method: "POST", path: "/partner/agent/customers/{customerId}/password-reset", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.PasswordReset},
		{method: "POST", path: "/partner/agent/customers/{customerId}/invoices/{invoiceId}/resend", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.InvoiceResend},
		{method: "POST", path: "/partner/agent/customers/{customerId}/plan-change/preview", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.PlanPreview},
		{method: "POST", path: "/partner/agent/customers/{customerId}/plan-change", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.PlanChange},
		{method: "POST", path: "/partner/agent/tickets", auth: credAgentKey, surface: surfaceAgent, handle: s.agent.OpenTicket},

		// The operations surface (package ops, docs/operations.md): dashboard JWT, each route
		// with the permission its role must hold; the capability checks it again, and scope.
		// What needs attention, counted.
		{method: "GET", path: "/api/v1/overview", auth: credOperator, perm: subprov.PermRead, handle: s.ops.Overview},
		// Audit log.
		{method: "GET", path: "/api/v1/audit", auth: credOperator, perm: subprov.PermRead, handle: s.ops.AuditEntries},
		// Providers, API keys and webhook secrets.
		{method: "GET", path: "/api/v1/providers", auth: credOperator, perm: subprov.PermRead, handle: s.ops.ListProviders},
		{method: "POST", path: "/api/v1/providers", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreateProvider},
		{method: "GET", path: "/api/v1/providers/{provider_id}", auth: credOperator, perm: subprov.PermRead, handle: s.ops.GetProvider},
		{method: "PATCH", path: "/api/v1/providers/{provider_id}", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.UpdateProvider},
		{method: "GET", path: "/api/v1/providers/{provider_id}/api-keys", auth: credOperator, perm: subprov.PermRead, handle: s.ops.ListAPIKeys},
		{method: "POST", path: "/api/v1/providers/{provider_id}/api-keys", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreateAPIKey},
		{method: "DELETE", path: "/api/v1/providers/{provider_id}/api-keys/{key_id}", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.RevokeAPIKey},
		{method: "POST", path: "/api/v1/providers/{provider_id}/webhook-secret/rotate", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.RotateWebhookSecret},
		// Webhook events.
		{method: "GET", path: "/api/v1/webhook-events", auth: credOperator, perm: subprov.PermRead, handle: s.ops.WebhookEvents},
		{method: "GET", path: "/api/v1/webhook-events/{event_id}", auth: credOperator, perm: subprov.PermRead, handle: s.ops.WebhookEvent},
		{method: "POST", path: "/api/v1/webhook-events/{event_id}/replay", auth: credOperator, perm: subprov.PermSupport, handle: s.ops.ReplayWebhookEvent},
		// Billing: invoices, their PDFs and credit notes, bill runs.
		{method: "GET", path: "/api/v1/invoices", auth: credOperator, perm: subprov.PermRead, handle: s.ops.ListInvoices},
		{method: "GET", path: "/api/v1/invoices/{invoice_id}/document", auth: credOperator, perm: subprov.PermRead, handle: s.ops.InvoiceDocument},
		{method: "GET", path: "/api/v1/credit-notes/{credit_note_id}/document", auth: credOperator, perm: subprov.PermRead, handle: s.ops.CreditNoteDocument},
		{method: "POST", path: "/api/v1/invoices/{invoice_id}/credit-notes", auth: credOperator, perm: subprov.PermInvoices, handle: s.ops.CreditInvoice},
		{method: "GET", path: "/api/v1/bill-runs", auth: credOperator, perm: subprov.PermRead, handle: s.ops.ListBillRuns},
		// Tickets.
		{method: "GET", path: "/api/v1/tickets", auth: credOperator, perm: subprov.PermRead, handle: s.ops.ListTickets},
		{method: "PATCH", path: "/api/v1/tickets/{ticket_id}", auth: credOperator, perm: subprov.PermSupport, handle: s.ops.UpdateTicket},
		// Privacy requests.
		{method: "GET", path: "/api/v1/privacy-requests", auth: credOperator, perm: subprov.PermRead, handle: s.ops.PrivacyRequests},
		{method: "POST", path: "/api/v1/privacy-requests/{request_id}/approve", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.ApprovePrivacyRequest},
		{method: "POST", path: "/api/v1/privacy-requests/{request_id}/reject", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.RejectPrivacyRequest},
		// Operators and the second factor. An operator's own password and second factor need no
		// permission; the password change limits its failures as a login does.
		{method: "GET", path: "/api/v1/operators", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.OperatorList},
		{method: "POST", path: "/api/v1/operators", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreateOperator},
		{method: "GET", path: "/api/v1/operators/{operator_id}", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.Operator},
		{method: "PATCH", path: "/api/v1/operators/{operator_id}", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.UpdateOperator},
		{method: "POST", path: "/api/v1/operators/{operator_id}/totp/reset", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.ResetSecondFactor},
		{method: "PATCH", path: "/api/v1/operators/me/password", auth: credOperator, perm: subprov.PermNone, failures: failedPasswordLimit, handle: s.ops.MyOperatorPassword},
		{method: "POST", path: "/api/v1/operators/me/totp", auth: credOperator, perm: subprov.PermNone, handle: s.ops.StartSecondFactor},
		{method: "POST", path: "/api/v1/operators/me/totp/confirm", auth: credOperator, perm: subprov.PermNone, handle: s.ops.ConfirmSecondFactor},
		// Inventory, plans and install windows.
		{method: "GET", path: "/api/v1/buildings", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.ops.Buildings},
		{method: "POST", path: "/api/v1/buildings", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreateBuilding},
		{method: "POST", path: "/api/v1/buildings/import", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.ImportBuildings},
		{method: "GET", path: "/api/v1/buildings/{building_id}", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.ops.Building},
		{method: "PATCH", path: "/api/v1/buildings/{building_id}", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.EditBuilding},
		{method: "POST", path: "/api/v1/buildings/{building_id}/units", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreateUnit},
		{method: "POST", path: "/api/v1/ports", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreatePort},
		{method: "GET", path: "/api/v1/plans", auth: credOperator, perm: subprov.PermRead, handle: s.ops.Plans},
		{method: "POST", path: "/api/v1/plans", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreatePlan},
		{method: "POST", path: "/api/v1/plans/{plan_id}/versions", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.CreatePlanVersion},
		{method: "PATCH", path: "/api/v1/plan-versions/{plan_version_id}", auth: credOperator, perm: subprov.PermAdminister, handle: s.ops.EditPlanVersion},
		{method: "GET", path: "/api/v1/install-windows", auth: credOperator, perm: subprov.PermReadNetwork, handle: s.ops.InstallWindows},
		{method: "POST", path: "/api/v1/install-windows", auth: credOperator, perm: subprov.PermInstall, handle: s.ops.CreateInstallWindow},
		{method: "DELETE", path: "/api/v1/install-windows/{window_id}", auth: credOperator, perm: subprov.PermInstall, handle: s.ops.DeleteInstallWindow},
		// Subscribers and lines.
		{method: "GET", path: "/api/v1/subscribers", auth: credOperator, perm: subprov.PermRead, handle: s.ops.SubscriberList},
		{method: "GET", path: "/api/v1/subscribers/{subscriber_id}", auth: credOperator, perm: subprov.PermRead, handle: s.ops.Subscriber},
		{method: "POST", path: "/api/v1/subscriptions/{subscription_id}/suspend", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.SuspendLine},
		{method: "POST", path: "/api/v1/subscriptions/{subscription_id}/restore", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.RestoreLine},
		{method: "POST", path: "/api/v1/subscriptions/{subscription_id}/plan-change/preview", auth: credOperator, perm: subprov.PermRead, handle: s.ops.PlanChangePreview},
		{method: "POST", path: "/api/v1/subscriptions/{subscription_id}/plan-change", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.PlanChange},
		{method: "POST", path: "/api/v1/subscriptions/{subscription_id}/reprovision", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.Reprovision},
		{method: "POST", path: "/api/v1/subscriptions/{subscription_id}/notes", auth: credOperator, perm: subprov.PermLineActions, handle: s.ops.LineNote},
	}
	if s.DevClock != nil {
		// Dev mode: absent, so 404, when dev mode is off.
		rs = append(rs,
			route{method: "GET", path: "/api/v1/dev/clock", auth: credOperator, perm: subprov.PermRead, handle: s.dev.ClockGet},
			route{method: "POST", path: "/api/v1/dev/clock", auth: credOperator, perm: subprov.PermAdminister, handle: s.dev.ClockSet},
			route{method: "GET", path: "/api/v1/dev/faults", auth: credOperator, perm: subprov.PermRead, handle: s.dev.FaultsGet},
			route{method: "POST", path: "/api/v1/dev/faults", auth: credOperator, perm: subprov.PermAdminister, handle: s.dev.FaultsSet},
			route{method: "GET", path: "/api/v1/dev/outbox", auth: credOperator, perm: subprov.PermRead, handle: s.dev.Outbox},
		)
	}
	for _, rt := range rs {
		// A route that limits its failures has no limit on its requests: only its failures,
		// and its attempts while under way, count (failureLimit).
		if rt.limit == (ratelimit.Limit{}) && rt.failures == (ratelimit.Limit{}) {
			rt.limit = defaultLimit
		}
		h := s.adapt(rt)
		for _, p := range rt.paths() {
			pattern := rt.method + " " + exactly(p)
			mux.Handle(pattern, h)
			s.patterns[pattern] = registered{limit: routeLimit{Limit: rt.limit, name: rt.method + " " + rt.path}, surface: rt.surface}
		}
	}
	// The operator console (package console, docs/console.md): its own pages, sessions and
	// errors, over the capabilities of the operations surface.
	mux.Handle(console.Prefix, s.console)
	mux.Handle("GET /console", http.RedirectHandler(console.Prefix, http.StatusPermanentRedirect))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allow, sf := s.methodsAt(r) // with no method served there, sf is the one the path's prefix names
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, r, sf, api.Errorf(subprov.EMETHOD, "method_not_allowed", "Method not allowed"))
			return
		}
		writeError(w, r, sf, api.Errorf(subprov.ENOTFOUND, "not_found", "Not found"))
	}))
	return rs
}

// exactly is the mux pattern serving path and nothing below it: a path ending in a slash
// (POST /partner/location/) would otherwise match every path under it.
func exactly(path string) string {
	if strings.HasSuffix(path, "/") {
		return path + "{$}"
	}
	return path
}

// adapt wraps a route's handler with its authentication, its limit on failures and error
// rendering.
func (s *server) adapt(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		failures := s.failuresOf(rt, r)
		if !failures.admit(w, r) {
			return
		}
		c, err := s.authenticate(r, rt.auth)
		if err != nil {
			writeError(w, r, rt.surface, err)
			return
		}
		if rt.auth == credOperator {
			if err := c.Operator.Authorize(rt.perm); err != nil {
				writeError(w, r, rt.surface, err)
				return
			}
		}
		c.Client = s.clientIP(r)
		ctx := subprov.WithRequest(r.Context(), subprov.Request{ID: api.RequestID(r), IP: c.Client, Actor: c.Actor()})
		r = r.WithContext(api.WithCaller(ctx, c))
		err = rt.handle(w, r)
		if err != nil {
			writeError(w, s.inReaderLanguage(r, rt.surface), rt.surface, err)
		}
		failures.count(r, err)
	})
}

// methodsAt lists the methods served at r's path, so a wrong method answers 405 with Allow
// instead of the catch-all 404, and the envelope of the routes served there: a wrong method on
// a subscriber route's path answers in the subscriber envelope, one on a dashboard route's in
// the partner envelope, whatever prefixes they share (/api/v1/invoices/{id}/pdf and
// /api/v1/invoices/{id}/retry-charge).
func (s *server) methodsAt(r *http.Request) ([]string, surface) {
	var out []string
	sf := surfaceOf(r.URL.Path)
	for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			if len(out) == 0 {
				sf = s.patterns[pattern].surface
			}
			out = append(out, m)
		}
	}
	return out, sf
}

// surfaceAt picks the envelope of an answer given around a route rather than by it (a panic,
// which may come before the mux has matched r): the envelope of the route serving r, else of
// the routes at its path, else the one its prefix names.
func (s *server) surfaceAt(r *http.Request) surface {
	if _, pattern := s.mux.Handler(r); pattern != "/" && pattern != "" {
		return s.patterns[pattern].surface
	}
	_, sf := s.methodsAt(r)
	return sf
}
