package httpapi

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/ratelimit"
)

// route is one entry of the surface: method, path, the credential it requires, the envelope
// its errors use, its rate limit, and its handler. A /partner route is also served under
// /api/v1 with identical authentication (docs/http.md).
type route struct {
	method  string
	path    string
	auth    credential
	surface surface
	limit   ratelimit.Limit
	// failures, when set, limits the route's failed attempts from one client IP instead of
	// its requests (failureLimit): a route that takes a password or a mailed link is limited
	// to stop guessing, which only failures do.
	failures ratelimit.Limit
	handle   func(w http.ResponseWriter, r *http.Request) error
}

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
	// failedLoginLimit bounds guessing a password (or a mailed link) from one client IP to 10
	// failed attempts a minute; successful logins are not counted, however many one address
	// (a shared office, a test suite) makes one after another. Guessing one account from many addresses is
	// bounded by the account's lockout (auth.CheckAccountPassword).
	failedLoginLimit = ratelimit.PerMinute(10)
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
		{method: "POST", path: "/partner/subscriber/auth/login", surface: surfaceSubscriber, failures: failedLoginLimit, handle: s.handleSubscriberLogin},
		{method: "POST", path: "/partner/subscriber/auth/password-reset", surface: surfaceSubscriber, limit: resetRequestLimit, handle: s.handlePasswordReset},
		{method: "POST", path: "/partner/subscriber/auth/password-reset/confirm", surface: surfaceSubscriber, failures: failedLoginLimit, handle: s.handlePasswordResetConfirm},
		{method: "POST", path: "/partner/subscriber/auth/activate", surface: surfaceSubscriber, failures: failedLoginLimit, handle: s.handleActivate},
		// The pages the links in set-up, activation and reset mails open (password_pages.go).
		{method: "GET", path: "/portal/reset-password", surface: surfacePage, handle: s.handlePasswordPage},
		{method: "POST", path: "/portal/reset-password", surface: surfacePage, failures: failedLoginLimit, handle: s.handlePasswordSet},
		{method: "GET", path: "/portal/activate", surface: surfacePage, handle: s.handlePasswordPage},
		{method: "POST", path: "/portal/activate", surface: surfacePage, failures: failedLoginLimit, handle: s.handlePasswordSet},
		{method: "POST", path: "/api/v1/auth/login", failures: failedLoginLimit, handle: s.handleOperatorLogin},

		// Serviceability and location.
		{method: "GET", path: "/partner/serviceability/autocomplete", auth: credAPIKey, limit: ratelimit.PerMinute(300), handle: s.handleAutocomplete},
		{method: "POST", path: "/partner/serviceability/check", auth: credAPIKey, limit: ratelimit.PerMinute(120), handle: s.handleCheck},
		{method: "GET", path: "/partner/serviceability/units", auth: credAPIKey, limit: ratelimit.PerMinute(300), handle: s.handleUnits},
		{method: "POST", path: "/partner/location/", handle: s.handleLocation},
		{method: "POST", path: "/partner/location/details", auth: credOperator, handle: s.handleLocationDetails},

		// Provisioning (API key), the CPE's configuration pull, and cancellation (dashboard).
		{method: "POST", path: "/partner/provisioning/provider-initiated", auth: credAPIKey, limit: ratelimit.PerMinute(120), handle: s.handleProviderInitiated},
		{method: "POST", path: "/partner/provisioning/bulk", auth: credAPIKey, limit: ratelimit.PerMinute(30), handle: s.handleBulk},
		{method: "POST", path: "/partner/provisioning/confirm-install", auth: credAPIKey, handle: s.handleConfirmInstall},
		{method: "GET", path: "/partner/subscriptions/{subscription_id}/change-plan/preview", auth: credAPIKey, handle: s.handleChangePlanPreview},
		{method: "POST", path: "/partner/subscriptions/{subscription_id}/change-plan", auth: credAPIKey, handle: s.handleChangePlan},
		{method: "POST", path: "/partner/cpe/config", auth: credDevice, handle: s.handleDevicePull},
		{method: "POST", path: "/api/v1/subscription/{subscription_id}/cancel", auth: credOperator, handle: s.handleCancel},
		{method: "GET", path: "/api/v1/subscription/{subscription_id}/cancel", auth: credOperator, handle: s.handleCancellation},
		{method: "GET", path: "/api/v1/subscription/{subscription_id}/cancel/preview", auth: credOperator, handle: s.handleCancelPreview},

		// External checkout (marketplace hand-over) and the marketplace's plan read.
		{method: "POST", path: "/partner/external-checkout/sessions", auth: credOptionalSubscriber, handle: s.handleCreateSession},
		{method: "GET", path: "/partner/external-checkout/sessions/{session_id}", auth: credSessionSecret, handle: s.handleReadSession},
		{method: "PATCH", path: "/partner/external-checkout/sessions/{session_id}", auth: credSessionSecret, handle: s.handlePatchSession},
		{method: "POST", path: "/partner/external-checkout/sessions/{session_id}/cancel", auth: credSessionSecret, handle: s.handleCancelSession},
		{method: "POST", path: "/partner/external-checkout/complete", auth: credSessionSecret, handle: s.handleComplete},
		{method: "POST", path: "/partner/external-checkout/anonymous-complete", auth: credSessionSecret, handle: s.handleAnonymousComplete},
		{method: "GET", path: "/partner/external-checkout/subscriptions/{external_subscription_id}", auth: credWebhookSecret, handle: s.handleCheckoutSubscription},
		{method: "POST", path: "/partner/external-checkout/subscription-status", auth: credWebhookSecret, handle: s.handleSubscriptionStatus},
		{method: "GET", path: "/partner/marketplace/plans/{plan_version_id}", handle: s.handleMarketplacePlan},

		// Sandbox (dashboard) and the sandbox payment page a sandbox provider's checkout URL points to.
		{method: "GET", path: "/api/v1/sandbox/provider-info", auth: credOperator, handle: s.handleSandboxProviderInfo},
		{method: "POST", path: "/api/v1/sandbox/webhook-config", auth: credOperator, handle: s.handleSandboxWebhookConfig},
		{method: "GET", path: "/api/v1/sandbox/webhook-events", auth: credOperator, handle: s.handleSandboxEvents},
		{method: "POST", path: "/api/v1/sandbox/webhook-events/{event_id}/replay", auth: credOperator, handle: s.handleSandboxReplay},
		{method: "GET", path: "/sandbox/checkout", surface: surfacePage, handle: s.handlePayPage},
		{method: "POST", path: "/sandbox/checkout", surface: surfacePage, limit: ratelimit.PerMinute(60), handle: s.handlePay},
		{method: "POST", path: "/sandbox/checkout/cancel", surface: surfacePage, limit: ratelimit.PerMinute(60), handle: s.handlePayCancel},

		// Subscriber self-service (subscriber JWT; holder-only routes use credHolder).
		{method: "GET", path: "/partner/subscriber/me", auth: credSubscriberView, surface: surfaceSubscriber, handle: s.handleMe},
		{method: "GET", path: "/partner/subscriber/me/details", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleMyDetails},
		{method: "PATCH", path: "/partner/subscriber/me/contact", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleMyContact},
		{method: "PATCH", path: "/partner/subscriber/me/password", auth: credSubscriber, surface: surfaceSubscriber, failures: failedLoginLimit, handle: s.handleMyPassword},
		{method: "GET", path: "/partner/subscriber/me/payment-method", auth: credHolder, surface: surfaceSubscriber, handle: s.handlePaymentMethod},
		{method: "POST", path: "/partner/subscriber/me/payment-method/setup", auth: credHolder, surface: surfaceSubscriber, handle: s.handlePaymentSetup},
		{method: "POST", path: "/partner/subscriber/me/payment-method/confirm", auth: credHolder, surface: surfaceSubscriber, handle: s.handlePaymentConfirm},
		{method: "GET", path: "/partner/subscriber/me/usage", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleMyUsage},
		{method: "GET", path: "/partner/subscriber/status-history", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleStatusHistory},
		{method: "GET", path: "/partner/subscriber/me/authorized-users", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleAuthorizedUsers},
		{method: "POST", path: "/partner/subscriber/me/authorized-users", auth: credHolder, surface: surfaceSubscriber, handle: s.handleAddAuthorizedUser},
		{method: "POST", path: "/partner/subscriber/me/authorized-users/{id}/resend-invite", auth: credHolder, surface: surfaceSubscriber, handle: s.handleResendInvite},
		{method: "DELETE", path: "/partner/subscriber/me/authorized-users/{id}", auth: credHolder, surface: surfaceSubscriber, handle: s.handleRemoveAuthorizedUser},

		// Portal orders and reactivation (httpapi/orders.go).
		{method: "GET", path: "/partner/subscriber/me/orders/options", auth: credHolder, surface: surfaceSubscriber, handle: s.handleOrderOptions},
		{method: "GET", path: "/partner/subscriber/me/orders/preview", auth: credHolder, surface: surfaceSubscriber, handle: s.handleOrderPreview},
		{method: "POST", path: "/partner/subscriber/me/orders", auth: credHolder, surface: surfaceSubscriber, handle: s.handlePlaceOrder},
		{method: "GET", path: "/partner/subscriber/me/reactivation", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleReactivationPreview},
		{method: "POST", path: "/partner/subscriber/me/subscriptions/{subscription_id}/reactivation", auth: credHolder, surface: surfaceSubscriber, handle: s.handleReactivate},

		// Billing (dashboard) and the subscriber's billing documents.
		{method: "POST", path: "/api/v1/invoices/{invoice_id}/retry-charge", auth: credOperator, handle: s.handleRetryCharge},
		{method: "GET", path: "/partner/subscriber/me/invoices", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleMyInvoices},
		{method: "GET", path: "/partner/subscriber/me/credit-notes", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleMyCreditNotes},
		{method: "GET", path: "/api/v1/credit-notes/{credit_note_id}/pdf", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleCreditNotePDF},
		{method: "GET", path: "/api/v1/invoices/{invoice_id}/pdf", auth: credSubscriber, surface: surfaceSubscriber, handle: s.handleInvoicePDF},
		{method: "PATCH", path: "/partner/subscriber/me/billing-day", auth: credHolder, surface: surfaceSubscriber, handle: s.handleBillingDay},
		{method: "PATCH", path: "/partner/subscriber/me/invoice-contact", auth: credHolder, surface: surfaceSubscriber, handle: s.handleInvoiceContact},
		{method: "POST", path: "/partner/subscriber/me/invoice-contact/use-holder", auth: credHolder, surface: surfaceSubscriber, handle: s.handleUseHolder},

		// Installations (issue 8): the operator's install queue and the customer's booking page.
		{method: "GET", path: "/api/v1/install-jobs", auth: credOperator, handle: s.handleInstallJobs},
		{method: "GET", path: "/api/v1/install-jobs/{job_id}", auth: credOperator, handle: s.handleInstallJob},
		{method: "GET", path: "/api/v1/install-jobs/{job_id}/slots", auth: credOperator, handle: s.handleInstallJobSlots},
		{method: "POST", path: "/api/v1/install-jobs/{job_id}/assign", auth: credOperator, handle: s.handleAssignInstallJob},
		{method: "POST", path: "/api/v1/install-jobs/{job_id}/book", auth: credOperator, handle: s.handleBookInstallJob},
		{method: "POST", path: "/api/v1/install-jobs/{job_id}/complete", auth: credOperator, handle: s.handleCompleteInstallJob},
		{method: "GET", path: "/book", surface: surfacePage, handle: s.handleBookingPage},
		{method: "POST", path: "/book", surface: surfacePage, limit: ratelimit.PerMinute(60), handle: s.handleBookingConfirm},
		// Support-agent API (issue 7): agent key on every call; the verified session is
		// checked by package agent, after provider scoping.
		{method: "GET", path: "/partner/agent/customers/search", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentSearch},
		{method: "POST", path: "/partner/agent/verify/issue", auth: credAgentKey, surface: surfaceAgent, limit: ratelimit.PerMinute(60), handle: s.handleAgentVerifyIssue},
		{method: "POST", path: "/partner/agent/verify/check", auth: credAgentKey, surface: surfaceAgent, limit: ratelimit.PerMinute(120), handle: s.handleAgentVerifyCheck},
		{method: "GET", path: "/partner/agent/customers/{customerId}", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentProfile},
		{method: "GET", path: "/partner/agent/customers/{customerId}/billing-summary", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentBillingSummary},
		{method: "GET", path: "/partner/agent/customers/{customerId}/payments", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentPayments},
		{method: "GET", path: "/partner/agent/customers/{customerId}/network-health", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentNetworkHealth},
		{method: "GET", path: "/partner/agent/customers/{customerId}/tickets", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentTickets},
		{method: "POST", path: "/partner/agent/customers/{customerId}/notes", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentNote},
		{method: "PATCH", path: "/partner/agent/customers/{customerId}/contact", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentContact},
		{method: "POST", path: "/partner/agent/customers/{customerId}/password-reset", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentPasswordReset},
		{method: "POST", path: "/partner/agent/customers/{customerId}/invoices/{invoiceId}/resend", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentInvoiceResend},
		{method: "POST", path: "/partner/agent/customers/{customerId}/plan-change/preview", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentPlanPreview},
		{method: "POST", path: "/partner/agent/customers/{customerId}/plan-change", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentPlanChange},
		{method: "POST", path: "/partner/agent/tickets", auth: credAgentKey, surface: surfaceAgent, handle: s.handleAgentOpenTicket},
	}
	if s.DevClock != nil {
		// Dev mode: absent, so 404, when dev mode is off.
		rs = append(rs,
			route{method: "GET", path: "/api/v1/dev/clock", auth: credOperator, handle: s.handleDevClockGet},
			route{method: "POST", path: "/api/v1/dev/clock", auth: credOperator, handle: s.handleDevClockSet},
			route{method: "GET", path: "/api/v1/dev/faults", auth: credOperator, handle: s.handleDevFaultsGet},
			route{method: "POST", path: "/api/v1/dev/faults", auth: credOperator, handle: s.handleDevFaultsSet},
			route{method: "GET", path: "/api/v1/dev/outbox", auth: credOperator, handle: s.handleDevOutbox},
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
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allow, sf := s.methodsAt(r) // with no method served there, sf is the one the path's prefix names
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, r, sf, errorsf(subprov.EMETHOD, "method_not_allowed", "Method not allowed"))
			return
		}
		writeError(w, r, sf, errorsf(subprov.ENOTFOUND, "not_found", "Not found"))
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
		r = r.WithContext(withCaller(r.Context(), c))
		err = rt.handle(w, r)
		if err != nil {
			writeError(w, r, rt.surface, err)
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
