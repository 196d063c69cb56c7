package events

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrAddressRefused is wrapped by every dial SafeClient refuses: the receiver's name resolved
// to (or was) an address inside a network the service must never be steered into.
var ErrAddressRefused = errors.New("webhook address refused")

// ErrBadWebhookURL is wrapped by every CheckWebhookURL rejection, so surfaces can answer 422.
var ErrBadWebhookURL = errors.New("invalid webhook URL")

// refused lists the networks a webhook may never reach. Loopback is deliberately absent:
// Sandbox receivers may run on http://localhost and http://127.0.0.1 (docs/checkout.md, Sandbox).
var refused = []struct {
	net netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network"; 0.0.0.0 reaches the local host
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"}, // cloud metadata lives here
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"}, // deprecated; ::1 is allowed before this is checked
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// refusal says why a webhook may not connect to ip, or "" when it may.
func refusal(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if !ip.IsValid() {
		return "invalid"
	}
	if ip.IsLoopback() {
		return ""
	}
	for _, r := range refused {
		if r.net.Contains(ip) {
			return r.why
		}
	}
	// IPv6 forms that embed an IPv4 address are judged by the address they lead to.
	if nat64.Contains(ip) || sixToFour.Contains(ip) {
		b := ip.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:16]))
		if sixToFour.Contains(ip) {
			v4 = netip.AddrFrom4([4]byte(b[2:6]))
		}
		if why := refusal(v4); why != "" || v4.IsLoopback() {
			return "embedded " + or(why, "loopback")
		}
	}
	return ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// dialControl runs for every address the dialer is about to connect to: after DNS
// resolution and before connect(2). Refusing here, not when the URL is saved, is what stops
// DNS rebinding: a name that resolved to a public address yesterday and to 10.0.0.1 now is
// judged by the address actually dialed, and no packet is sent to a refused one.
func dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot judge address %q", ErrAddressRefused, address)
	}
	if why := refusal(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s is a %s address", ErrAddressRefused, ap.Addr(), why)
	}
	return nil
}

// SafeClient returns an http.Client for calling receivers the service does not control. It
// never follows redirects (a 3xx is returned as is: a redirect is a second URL nobody
// checked), ignores proxy settings (a proxy would dial for us, past the check), and refuses
// at dial time, after DNS resolution, private (10/8, 172.16/12, 192.168/16, fc00::/7),
// link-local (169.254/16, fe80::/10), unspecified, multicast, CGNAT (100.64/10) and other
// reserved addresses. Loopback is allowed: sandbox receivers and tests listen there.
// timeout bounds the whole exchange; 0 or less means AttemptTimeout.
func SafeClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = AttemptTimeout
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: dialControl}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   2, // one flusher per provider at a time
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// CheckWebhookURL validates a receiver URL before it is saved: https:// with any public host,
// or http://localhost / http://127.0.0.1 on any port for local receivers. Literal IP hosts in
// refused networks are rejected here with a clear message; names are judged again by
// SafeClient when dialed, since what a name resolves to can change.
func CheckWebhookURL(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("%w: it is empty", ErrBadWebhookURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q does not parse as a URL", ErrBadWebhookURL, raw)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return fmt.Errorf("%w: %q must start with https:// (http:// only for localhost or 127.0.0.1)", ErrBadWebhookURL, raw)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: %q has no host", ErrBadWebhookURL, raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: %q has an invalid port", ErrBadWebhookURL, raw)
		}
	}
	if scheme == "http" {
		if strings.EqualFold(host, "localhost") || host == "127.0.0.1" {
			return nil
		}
		return fmt.Errorf("%w: %q must use https:// (plain http:// is allowed only for localhost and 127.0.0.1)", ErrBadWebhookURL, raw)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := refusal(ip); why != "" {
			return fmt.Errorf("%w: host %s of %q is a %s address", ErrBadWebhookURL, host, raw, why)
		}
		return nil
	}
	// Some resolvers read "167772161" or "0x0a.0.0.1" as 10.0.0.1. No real host name ends in
	// a numeric label, so such hosts are refused rather than left to a resolver's reading.
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if last := strings.ToLower(labels[len(labels)-1]); isNumericLabel(last) {
		return fmt.Errorf("%w: host %q of %q is not a valid host name or IP address", ErrBadWebhookURL, host, raw)
	}
	return nil
}

func isNumericLabel(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CheckWebhookTarget is CheckWebhookURL plus a look at what the host resolves to now: a name
// that resolves to a private, link-local or otherwise refused address is rejected when saved,
// with a message that says so. A name that does not resolve is not refused here (the ping
// reports it); SafeClient judges the address again at every dial.
func CheckWebhookTarget(ctx context.Context, raw string) error {
	if err := CheckWebhookURL(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil || strings.EqualFold(host, "localhost") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if why := refusal(a.Unmap()); why != "" {
			return fmt.Errorf("%w: host %s of %q resolves to %s, a %s address", ErrBadWebhookURL, host, raw, a, why)
		}
	}
	return nil
}
