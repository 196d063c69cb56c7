package httpapi_test

import (
	"strings"
	"testing"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

// TestPagesCarrySecurityHeaders: every server-rendered page (and every API answer) forbids
// framing, sniffing, referrers and caching, and limits where scripts come from.
func TestPagesCarrySecurityHeaders(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		want := map[string]string{
			"X-Content-Type-Options": "nosniff",
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "no-referrer",
			"Cache-Control":          "no-store",
		}
		for _, path := range []string{"/book?token=" + fixture.DemoBookingToken, "/book", "/sandbox/checkout", "/docs", "/partner/subscriber/me", "/nope"} {
			res := s.Do(apptest.Request{Method: "GET", Path: path})
			for h, v := range want {
				if got := res.Header.Get(h); got != v {
					t.Errorf("%s: %s = %q, want %q", path, h, got, v)
				}
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("%s: Content-Security-Policy %q", path, csp)
			}
		}
	})
}

// TestRequestSizeLimit: a body over 1 MiB is refused with 413 before anything is decoded or
// written, on every surface.
func TestRequestSizeLimit(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		big := `{"email":"` + strings.Repeat("a", 1<<20) + `@example.ca"}`
		for _, r := range []apptest.Request{
			{Method: "POST", Path: "/partner/subscriber/auth/login", Body: big},
			{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: apptest.Key(storeKey), Body: big},
			{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoAgentKey), Body: big},
			{Method: "POST", Path: "/partner/external-checkout/sessions", Body: big},
		} {
			if res := s.Do(r); res.Status != 413 {
				t.Errorf("%s: %d, want 413: %.200s", r.Path, res.Status, res.Raw)
			}
		}
	})
}
