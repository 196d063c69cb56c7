package events

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

func TestRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip      string
		refused bool
	}{
		{"127.0.0.1", false}, {"127.5.6.7", false}, {"::1", false}, // loopback: sandbox receivers
		{"93.184.216.34", false}, {"2606:2800:220:1:248:1893:25c8:1946", false},
		{"10.0.0.1", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.1.1", true},
		{"172.32.0.1", false}, // just outside 172.16/12
		{"169.254.169.254", true}, {"100.64.0.1", true}, {"100.127.255.255", true}, {"100.128.0.1", false},
		{"0.0.0.0", true}, {"224.0.0.1", true}, {"255.255.255.255", true},
		{"::", true}, {"fd00::1", true}, {"fe80::1", true}, {"ff02::1", true},
		{"::ffff:10.0.0.1", true}, {"::ffff:127.0.0.1", false}, {"::10.0.0.1", true},
		{"64:ff9b::a00:1", true}, {"64:ff9b::5db8:d822", false}, // NAT64 of 10.0.0.1 / 93.184.216.34
		{"2002:a00:1::1", true}, {"2002:5db8:d822::1", false}, // 6to4 of 10.0.0.1 / 93.184.216.34
		{"fe80::1%eth0", true},
	}
	for _, tt := range tests {
		why := refusal(netip.MustParseAddr(tt.ip))
		if (why != "") != tt.refused {
			t.Errorf("refusal(%s) = %q, want refused %v", tt.ip, why, tt.refused)
		}
	}
}

// TestDialControl checks the hook judges the ip:port the dialer hands it, which is what the
// dialer passes after resolving a name.
func TestDialControl(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:443": true, "93.184.216.34:443": true,
		"10.0.0.1:80": false, "[fe80::1%eth0]:80": false, "169.254.169.254:80": false, "garbage": false,
	} {
		if err := dialControl("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("dialControl(%s) = %v, want ok %v", addr, err, ok)
		}
	}
}

// TestAttemptErrorNamesNothingOfThisSide: an attempt's error is shown to the provider, so a
// failed lookup names the receiver's host and never the resolver this machine asked; other
// failures keep their words.
func TestAttemptErrorNamesNothingOfThisSide(t *testing.T) {
	t.Parallel()
	post := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://hooks.example.invalid/in", Err: err}
	}
	tests := []struct {
		name       string
		err        error
		want, hide string
	}{
		{"unknown host", post(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "hooks.example.invalid",
			Server: "10.255.255.53:53", IsNotFound: true}}), "the receiver's host hooks.example.invalid was not found (DNS)", "10.255.255.53"},
		{"resolver timeout", post(&net.DNSError{Err: "i/o timeout", Name: "hooks.example.invalid", Server: "10.255.255.53:53", IsTimeout: true}),
			"the receiver's host hooks.example.invalid could not be resolved (DNS)", "10.255.255.53"},
		{"no answer in time", post(context.DeadlineExceeded), "no answer within 10s", ""},
		{"refused", post(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 443}, Err: syscall.ECONNREFUSED}),
			"dial 203.0.113.7:443: connection refused", ""},
		{"reset, from this side's address", post(&net.OpError{Op: "read", Net: "tcp", Source: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 41234},
			Addr: &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 443}, Err: syscall.ECONNRESET}), "read 203.0.113.7:443: connection reset by peer", "10.0.0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := attemptError(tt.err)
			if !strings.Contains(got, tt.want) || (tt.hide != "" && strings.Contains(got, tt.hide)) {
				t.Errorf("attemptError = %q, want it to say %q and not %q", got, tt.want, tt.hide)
			}
		})
	}
}
