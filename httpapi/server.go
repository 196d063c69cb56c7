// Package httpapi is the HTTP edge of subprov: routes.go lists every route on one page; each
// surface is a package of handlers (partner, portal, agent, checkout, pages, dev) over the
// small API they share (package api); middleware authenticates each kind of credential,
// limits rates, tags requests and renders errors in the surface's envelope. Handlers decode,
// call a capability package, and encode: they hold no rules.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/console"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/httpapi/ops"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/preferences"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/ratelimit"
	"github.com/subprov/subprov/sandbox"
	"github.com/subprov/subprov/serviceability"
	"github.com/subprov/subprov/store"
)

// Deps is everything the HTTP layer calls into.
type Deps struct {
	Log            *slog.Logger
	Store          *store.Store
	Clock          subprov.Clock
	DevClock       *clock.Adjustable // nil unless dev mode
	Faults         *faults.Switches
	Auth           *auth.Service
	Limiter        ratelimit.Limiter
	Serviceability *serviceability.Service
	Provisioning   *provisioning.Service
	Billing        *billing.Service
	Install        *install.Service
	Portal         *portal.Service
	Preferences    *preferences.Service
	Checkout       *checkout.Service
	Sandbox        *sandbox.Service
	PublicURL      string // base of links and of the sandbox payment page
	Agent          *agent.Service
	// Ops holds the capabilities of the operations surface, as its handler calls them.
	Ops            ops.Handler
	Registry       *prometheus.Registry
	Ready          func(ctx context.Context) error
	OnClockChange  func(ctx context.Context) // persists the dev clock
	OnFaultsChange func(ctx context.Context) // persists the fault switches
	// TrustedProxies are the peers whose X-Forwarded-For is believed (SUBPROV_TRUSTED_PROXIES);
	// none by default.
	TrustedProxies []netip.Prefix
}

// NewServer returns the service's whole HTTP handler.
func NewServer(d Deps) http.Handler {
	s := newServer(d, newMetrics(d.Registry))
	s.routes = addRoutes(s.mux, s)
	return s.handler()
}

// handler wraps the server's routes in its middleware.
func (s *server) handler() http.Handler {
	var h http.Handler = s.mux
	h = s.rateLimit(h)
	h = s.observe(h)
	h = s.recoverPanics(h)
	h = securityHeaders(h)
	h = withRequestID(s.Log, h)
	return h
}

type server struct {
	Deps
	surfaces
	console  *console.Handler
	metrics  *metrics
	routes   []route
	mux      *http.ServeMux
	patterns map[string]registered // by registered pattern ("GET /partner/…")
	// docsPage renders the docs page once: it depends only on the embedded OpenAPI document and
	// the route table, and rendering every description's Markdown is too slow for each request.
	docsPage func() ([]byte, error)
}

// registered is what the server keeps of a registered pattern: its route's rate limit and
// the envelope its errors answer in.
type registered struct {
	limit   routeLimit
	surface surface
}

func newServer(d Deps, m *metrics) *server {
	s := &server{Deps: d, surfaces: newSurfaces(d), metrics: m, mux: http.NewServeMux(), patterns: map[string]registered{}}
	s.console = &console.Handler{Log: d.Log, Auth: d.Auth, Ops: &s.Ops, ClientIP: s.clientIP, HTTPS: s.overHTTPS,
		SignInFailures: s.consoleSignInFailures}
	s.console.Install = d.Install
	s.docsPage = sync.OnceValues(s.renderDocs)
	return s
}

// overHTTPS reports whether r came over HTTPS: directly, by the service's public URL, or as a
// trusted proxy says (X-Forwarded-Proto).
func (s *server) overHTTPS(r *http.Request) bool {
	if r.TLS != nil || strings.HasPrefix(s.PublicURL, "https://") {
		return true
	}
	return s.trusted(remoteAddr(r)) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// Routes lists the served routes (method and pattern), for the OpenAPI and auth-matrix tests.
func Routes() []RouteInfo {
	s := newServer(Deps{DevClock: clock.NewAdjustable(0)}, newMetrics(nil))
	var out []RouteInfo
	for _, r := range addRoutes(s.mux, s) {
		for _, p := range r.paths() {
			ri := RouteInfo{Method: r.method, Path: p, Auth: r.auth.String(), Surface: r.surface.String()}
			if r.auth == credOperator {
				ri.Perm = r.perm.String()
			}
			out = append(out, ri)
		}
	}
	return out
}

// RouteInfo describes one served route: its method, path, credential and error envelope
// (partner, subscriber, agent or page).
type RouteInfo struct {
	Method, Path, Auth, Surface string
	// Perm is the permission an operator route's role must hold ("" on other routes).
	Perm string
}
