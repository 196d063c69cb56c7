package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/ratelimit"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tracing"
)

type ctxKey int

const keyRequest ctxKey = iota // *requestInfo

// requestInfo is what the middleware learns about a request on its way to the handler. It
// rides in the context as a pointer, so a middleware can add to it without handing the
// handlers a copy of the request: the mux records the matched pattern on the request it is
// given, and observe reads it from the one it passed on.
type requestInfo struct {
	log    *slog.Logger // the server's configured logger, for the causes of 500s
	apiKey *keyLookup   // the X-API-Key as the rate limiter resolved it, for authentication
}

func infoOf(r *http.Request) *requestInfo {
	info, _ := r.Context().Value(keyRequest).(*requestInfo)
	return info
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// withRequestID tags every request and response with X-Request-Id, keeping a sane one the
// client sent so a partner can follow one call through both systems' logs. It also hands the
// request the server's logger, so an error rendered anywhere below logs where the server logs.
func withRequestID(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			id = store.NewID()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := api.WithRequestID(r.Context(), id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, keyRequest, &requestInfo{log: log})))
	})
}

// logOf is the logger of r's server, or the default one for a request that did not come
// through NewServer.
func logOf(r *http.Request) *slog.Logger {
	if info := infoOf(r); info != nil && info.log != nil {
		return info.log
	}
	return slog.Default()
}

// contentSecurityPolicy is the pages' policy. No page runs a script of its own, inline or
// not, so no inline script may run: an injected <script> or on* attribute is refused by the
// browser. The pages' stylesheets are inline (one <style> in the layout, no asset to fetch),
// so inline style stays allowed; style cannot run code.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// securityHeaders sets headers that cost nothing and close whole classes of page attacks.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panic into a logged 500 in the surface's envelope.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, r, s.surfaceAt(r), fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe logs one line per request and feeds the request metrics. It logs the route pattern,
// never headers, bodies or query strings, which can hold credentials and personal data.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		span := noSpan
		if tracing.Enabled() {
			var ctx context.Context
			ctx, span = startRequestSpan(r)
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		endRequestSpan(span, route, sw.status)
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		s.metrics.latency.WithLabelValues(route).Observe(d.Seconds())
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelError
		}
		if s.Log != nil {
			s.Log.LogAttrs(r.Context(), level, "request", slog.String("method", r.Method), slog.String("route", route),
				slog.Int("status", sw.status), slog.Float64("ms", float64(d.Microseconds())/1000), slog.Int("bytes", sw.bytes),
				slog.String("request_id", api.RequestID(r)))
		}
	})
}

// noSpan is the span of a request when tracing is off.
var noSpan = trace.SpanFromContext(context.Background())

// startRequestSpan starts the server span of r, continuing the trace of r's traceparent
// header when it has one, and carrying r's request id to every span of its work. The span is
// named by the route pattern once the mux has matched it (endRequestSpan).
func startRequestSpan(r *http.Request) (context.Context, trace.Span) {
	ctx := tracing.FromHeaders(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx = tracing.WithRequestID(ctx, api.RequestID(r))
	return tracing.Start(ctx, r.Method, trace.SpanKindServer, attribute.String("http.request.method", r.Method))
}

// endRequestSpan names the request's span by its route and ends it with the status answered;
// a 5xx is a failed span.
func endRequestSpan(span trace.Span, route string, status int) {
	if !span.IsRecording() {
		return
	}
	span.SetName(route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_http_requests_total",
			Help: "HTTP requests by route pattern and status."}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "subprov_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern.", Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}},
			[]string{"route"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency)
	}
	return m
}

// rateLimit applies each route's fixed limit (docs/http.md, Rate limits) to the
// request's bucket (bucketOf). If the shared limiter (Redis) fails, the request passes and the
// failure is logged: an outage of the rate limiter must not become an outage of the service.
func (s *server) rateLimit(next http.Handler) http.Handler {
	if s.Limiter == nil { // SUBPROV_RATE_LIMITS=0: not even the route lookup
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := s.mux.Handler(r)
		reg, ok := s.patterns[pattern]
		lim := reg.limit
		if !ok || lim.Rate <= 0 {
			next.ServeHTTP(w, r)
			return
		}
		bucket := s.bucketOf(r)
		res, err := s.Limiter.Allow(r.Context(), lim.name+"|"+bucket, lim.Limit)
		if err != nil {
			s.limiterDown(err)
			next.ServeHTTP(w, r)
			return
		}
		if !res.Allowed {
			refuse(w, r, reg.surface, res)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request the limiter refused: 429 in the surface's form with Retry-After.
func refuse(w http.ResponseWriter, r *http.Request, sf surface, res ratelimit.Result) {
	w.Header().Set("Retry-After", retryAfter(res.RetryAfter.Seconds()))
	writeError(w, r, sf, &subprov.Error{Code: subprov.ERATELIMITED})
}

// failureLimit is a route's limit on failed attempts (route.failures) applied to one request.
// Every attempt takes a place in the client IP's window before it is read (admit), so attempts
// sent at once cannot all pass while none has failed yet: a client IP with the route's Rate
// failures, or attempts under way, within its Period is answered 429. An attempt that fails
// keeps its place (count); one that succeeds, or is refused for anything but a wrong secret (a
// malformed body, a new password too short), gives it back, so one address signing in however
// often is never limited (but for more than Rate attempts at the same instant) while guessing
// from it is. The bucket is the client IP's, whatever X-API-Key the request carries:
// none of these routes takes one. If the shared limiter (Redis) fails, the attempt passes and
// the failure is logged, as in rateLimit. A nil *failureLimit limits nothing.
type failureLimit struct {
	s       *server
	surface surface
	limit   ratelimit.Limit
	key     string
	ticket  string // the place admit took
}

// failuresOf is rt's limit on failures for r, nil when rt has none.
func (s *server) failuresOf(rt route, r *http.Request) *failureLimit {
	if s.Limiter == nil || rt.failures.Rate <= 0 {
		return nil
	}
	return &failureLimit{s: s, surface: rt.surface, limit: rt.failures,
		key: "failed " + rt.method + " " + rt.path + "|ip:" + s.clientIP(r)} // the /api/v1 mirror shares it
}

// admit takes the attempt's place in the window and reports whether the attempt may be made;
// if not, it has answered 429.
func (f *failureLimit) admit(w http.ResponseWriter, r *http.Request) bool {
	res, ok := f.take(r)
	if !ok {
		refuse(w, r, f.surface, res)
	}
	return ok
}

// take takes the attempt's place in the window and reports whether the attempt may be made,
// with the limiter's answer (when not, how long to wait).
func (f *failureLimit) take(r *http.Request) (ratelimit.Result, bool) {
	if f == nil {
		return ratelimit.Result{Allowed: true}, true
	}
	res, err := f.s.Limiter.Allow(r.Context(), f.key, f.limit)
	if err != nil {
		f.s.limiterDown(err)
		return ratelimit.Result{Allowed: true}, true
	}
	f.ticket = res.Ticket
	return res, res.Allowed
}

// consoleSignInFailures is the console sign-in form's limit on failures
// (console.Handler.SignInFailures): the operator login's, in its bucket, so that one client
// IP's failures at the form and at POST /api/v1/auth/login count together. Refused, it says
// how long to wait; admitted, its end keeps the attempt's place if the sign-in failed for a
// wrong secret and gives it back otherwise, as the login's does.
func (s *server) consoleSignInFailures(r *http.Request) (time.Duration, func(error)) {
	f := s.failuresOf(operatorLogin, r)
	if res, ok := f.take(r); !ok {
		return max(res.RetryAfter, time.Second), func(error) {}
	}
	return 0, func(err error) { f.count(r, err) }
}

// count keeps the attempt's place if it failed (the handler returned a wrong secret's error,
// or answered one itself: api.AttemptFailed) and gives it back otherwise.
func (f *failureLimit) count(r *http.Request, err error) {
	if f == nil {
		return
	}
	if wrongSecret(err) || api.Failed(r) {
		return
	}
	if err := f.s.Limiter.Return(context.WithoutCancel(r.Context()), f.key, f.ticket); err != nil {
		f.s.limiterDown(err)
	}
}

// wrongSecret reports whether err refuses a guess: a wrong e-mail or password at a login, a
// wrong current password, a mailed link that is unknown, used or expired.
func wrongSecret(err error) bool {
	switch subprov.ErrorReason(err) {
	case "invalid_credentials", "incorrect_password", "invalid_token", "invalid_code":
		return true
	}
	return false
}

func (s *server) limiterDown(err error) {
	if s.Log != nil {
		s.Log.Warn("rate limiter unavailable; allowing request", "err", err)
	}
}

// bucketOf names the allowance a request draws from (docs/http.md, Rate limits). A
// request that sends a valid X-API-Key draws from that key's bucket, named by the hash the key
// is stored and looked up by: every key is a bucket of its own, however many keys a provider
// has and however alike they start (a provider's keys share their first characters, so a
// prefix of the key string would pool them), and the hash is the same on every replica. The
// key is resolved here for that. Any other request, one with a key that is not valid
// included, draws from its client IP's bucket: a bad key is answered 401 rather than some
// other key's 429, cannot pick a fresh bucket of its own, and guessing keys is bounded per
// address. The lookup is kept with the request (requestInfo), so authentication does not
// repeat it.
func (s *server) bucketOf(r *http.Request) string {
	raw := r.Header.Get("X-API-Key")
	if raw == "" {
		return "ip:" + s.clientIP(r)
	}
	l := &keyLookup{raw: raw}
	l.key, l.provider, l.err = s.Auth.APIKey(r.Context(), raw)
	if info := infoOf(r); info != nil {
		info.apiKey = l
	}
	if l.err != nil {
		return "ip:" + s.clientIP(r)
	}
	return "key:" + identity.HashSecret(raw)
}

// keyLookup is an X-API-Key resolved by the rate limiter, kept for authentication.
type keyLookup struct {
	raw      string
	key      *subprov.APIKey
	provider *subprov.Provider
	err      error
}

// clientIP is the address of the client that sent r, which rate limits and the limits on
// guessing passwords count by. It is the peer's address, unless the peer is a trusted proxy
// (Deps.TrustedProxies): then X-Forwarded-For is read from the right, past every trusted
// proxy, and the first address that is not one is the client (each proxy appends the address
// it received the request from, so only the addresses appended by trusted proxies are known
// to be true, and anything further left may have been written by the client). A header with
// nothing but trusted proxies names the left-most of them; one that does not parse is ignored.
func (s *server) clientIP(r *http.Request) string {
	peer := remoteAddr(r)
	if len(s.TrustedProxies) == 0 || !s.trusted(peer) {
		return peer.String()
	}
	client := peer
	values := r.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(values[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[j]))
			if err != nil {
				return client.String()
			}
			client = a.Unmap()
			if !s.trusted(client) {
				return client.String()
			}
		}
	}
	return client.String()
}

// trusted reports whether a is one of the trusted proxies.
func (s *server) trusted(a netip.Addr) bool {
	for _, p := range s.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// remoteAddr is r's peer address; an unparsable one (a test's handler-level request) is the
// unspecified address.
func remoteAddr(r *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		return a.Unmap()
	}
	return netip.IPv4Unspecified()
}

// routeLimit is a route's limit with the bucket name shared by its /partner and /api/v1 forms.
type routeLimit struct {
	ratelimit.Limit
	name string
}
