package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestClientIPBelievesForwardedForOnlyFromTrustedProxies: the client is the peer, unless the
// peer is a trusted proxy; then it is the right-most X-Forwarded-For address that is not a
// trusted proxy, over every X-Forwarded-For header in order.
func TestClientIPBelievesForwardedForOnlyFromTrustedProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.10/32")}
	for _, tt := range []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no trusted proxies: the header is ignored", nil, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"an untrusted peer: the header is ignored", trusted, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"a trusted peer without the header", trusted, "10.1.2.3:5000", nil, "10.1.2.3"},
		{"a trusted peer names the client", trusted, "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"the right-most untrusted address wins over a client's own", trusted, "10.1.2.3:5000", []string{"6.6.6.6, 203.0.113.9"}, "203.0.113.9"},
		{"trusted hops are skipped", trusted, "10.1.2.3:5000", []string{"203.0.113.9, 192.0.2.10, 10.9.9.9"}, "203.0.113.9"},
		{"several headers read as one list", trusted, "10.1.2.3:5000", []string{"6.6.6.6", "203.0.113.9, 10.9.9.9"}, "203.0.113.9"},
		{"only trusted addresses: the left-most", trusted, "10.1.2.3:5000", []string{"10.5.5.5, 192.0.2.10"}, "10.5.5.5"},
		{"garbage stops the walk at the last good address", trusted, "10.1.2.3:5000", []string{"nonsense, 10.9.9.9"}, "10.9.9.9"},
		{"IPv6 peer and client", []netip.Prefix{netip.MustParsePrefix("2001:db8::/32")}, "[2001:db8::1]:443", []string{"2001:db8:ffff::1, 2a00::5"}, "2a00::5"},
		{"an IPv4-mapped peer is its IPv4 address", trusted, "[::ffff:10.1.2.3]:5000", []string{"203.0.113.9"}, "203.0.113.9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{Deps: Deps{TrustedProxies: tt.trusted}}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientIP(r); got != tt.want {
				t.Fatalf("client %q, want %q", got, tt.want)
			}
		})
	}
}
