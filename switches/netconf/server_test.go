package netconf_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/switches/netconf/netconftest"
)

// These tests run against a real netconfd (with the subprov-access YANG module) behind a real
// sshd on loopback; see package netconftest.

func driver(t *testing.T, srv *netconftest.Server, mod func(*netconf.Config)) *netconf.Driver {
	t.Helper()
	cfg := netconf.Config{Address: srv.Addr, Username: netconftest.User, Password: netconftest.Password,
		HostKey: srv.HostKey, Model: netconf.ModelOpenConfig, DialTimeout: 5 * time.Second, OpTimeout: 10 * time.Second,
		ConfirmTimeout: 30 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	d, err := netconf.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// confirmedPort is a test's context, the raw driver of srv, that driver as Confirmed, and the
// port name on switch "sw".
func confirmedPort(t *testing.T, srv *netconftest.Server, name string) (context.Context, *netconf.Driver, switches.Driver, switches.Port) {
	raw := driver(t, srv, nil)
	return ctxFor(t), raw, switches.Confirmed(raw), switches.Port{Switch: "sw", Name: name}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var (
	serviceA = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2100, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:00:11:22"}}
	// serviceB is the same device on another VLAN and plan.
	serviceB     = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 3100, DownloadMbps: 1000, UploadMbps: 1000, MAC: serviceA.MAC}}
	serviceNoMAC = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 3100, DownloadMbps: 1000, UploadMbps: 1000}}
	serviceOther = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2100, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:00:99:99"}}
	suspendedNoB = switches.State{Mode: switches.ModeSuspended, Config: serviceB.Config}
)

func TestServer(t *testing.T) {
	srv := netconftest.Start(t)

	// Each mode written from an unconfigured port, then rewritten as it is (the raw write, which
	// Confirmed would skip): the rewrite changes nothing.
	for i, want := range []switches.State{
		serviceA,
		serviceB,
		{Mode: switches.ModeSuspended, Config: serviceA.Config},
		switches.CaptiveState,
		{Mode: switches.ModeOff},
	} {
		t.Run("write and rewrite "+string(want.Mode), func(t *testing.T) {
			t.Parallel()
			ctx := ctxFor(t)
			raw := driver(t, srv, nil)
			port := switches.Port{Switch: "sw", Name: fmt.Sprintf("ge-0/1/%d", i)}
			if err := switches.Confirmed(raw).Converge(ctx, port, want); err != nil {
				t.Fatalf("converge %v: %v", want, err)
			}
			if err := raw.Write(ctx, port, want); err != nil {
				t.Fatalf("rewrite %v: %v", want, err)
			}
			if got, err := raw.Read(ctx, port); err != nil || got != want {
				t.Fatalf("after rewrite: read %v, %v; want %v", got, err, want)
			}
		})
	}

	// One port through the transitions a line goes through: each write replaces the port's whole
	// config (the service without a MAC drops the binding; captive drops the rate limits).
	t.Run("transitions", func(t *testing.T) {
		t.Parallel()
		ctx, _, d, port := confirmedPort(t, srv, "ge-0/0/1")
		if got, err := d.Read(ctx, port); err != nil || got != (switches.State{Mode: switches.ModeOff}) {
			t.Fatalf("fresh port reads %v, %v; want off", got, err)
		}
		for _, want := range []switches.State{
			serviceA,
			serviceB,
			suspendedNoB,
			serviceNoMAC,
			serviceA,
			switches.CaptiveState,
			{Mode: switches.ModeOff},
		} {
			if err := d.Converge(ctx, port, want); err != nil {
				t.Fatalf("converge %v: %v", want, err)
			}
		}
	})

	// A port serving one device is not put in service for another, or for none (Confirmed's
	// rule, on the port as read): the port is left as it was.
	t.Run("another device on the port", func(t *testing.T) {
		t.Parallel()
		ctx, raw, d, port := confirmedPort(t, srv, "ge-0/0/5")
		if err := d.Converge(ctx, port, serviceA); err != nil {
			t.Fatal(err)
		}
		for _, want := range []switches.State{serviceOther, serviceNoMAC} {
			if err := d.Converge(ctx, port, want); !errors.Is(err, switches.ErrPortInUse) {
				t.Errorf("converge %v onto a port serving %s: %v; want ErrPortInUse", want, serviceA.MAC, err)
			}
			if got, err := raw.Read(ctx, port); err != nil || got != serviceA {
				t.Errorf("after the refusal the port reads %v, %v; want %v", got, err, serviceA)
			}
		}
	})

	t.Run("server validation refuses out of range values", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		raw := driver(t, srv, nil)
		port := switches.Port{Switch: "sw", Name: "ge-0/0/2"}
		if err := raw.Write(ctx, port, serviceA); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			bad  switches.State
			// what the server's own message names
			want string
		}{
			{"VLAN 5000", switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 5000, DownloadMbps: 10, UploadMbps: 10}}, "5000"},
			{"download 200000 Mbps", switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2000, DownloadMbps: 200000, UploadMbps: 10}}, "200000"},
			{"MAC pattern", switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2000, DownloadMbps: 10, UploadMbps: 10, MAC: "aa-bb"}}, "aa-bb"},
		} {
			// Sent raw: no Go check stands between the value and the server.
			err := raw.Write(ctx, port, tc.bad)
			if !errors.Is(err, switches.ErrInvalid) || errors.Is(err, switches.ErrUnavailable) {
				t.Errorf("%s: %v; want ErrInvalid", tc.name, err)
				continue
			}
			var re *netconf.RPCError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v; want the server's rpc-error naming %s", tc.name, err, tc.want)
			}
			if got, err := raw.Read(ctx, port); err != nil || got != serviceA {
				t.Errorf("%s: port reads %v, %v after the refusal; want it unchanged %v", tc.name, got, err, serviceA)
			}
		}
		// Confirmed lets 200000 Mbps through (it checks only that bandwidth is positive): the
		// refusal comes from the switch and is final.
		err := switches.Confirmed(raw).Converge(ctx, port, switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2000, DownloadMbps: 200000, UploadMbps: 10, MAC: serviceA.MAC}})
		if !errors.Is(err, switches.ErrInvalid) {
			t.Errorf("converge at 200000 Mbps: %v; want ErrInvalid", err)
		}
	})

	t.Run("wrong password is final", func(t *testing.T) {
		t.Parallel()
		d := driver(t, srv, func(c *netconf.Config) { c.Password = "not-the-password" })
		_, err := d.Read(ctxFor(t), switches.Port{Switch: "sw", Name: "ge-0/0/3"})
		if !errors.Is(err, netconf.ErrAuth) || errors.Is(err, switches.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("wrong password: %v; want ErrAuth, not ErrUnavailable", err)
		}
		if !strings.Contains(err.Error(), netconftest.User) {
			t.Errorf("error %q does not name the user", err)
		}
	})

	t.Run("host key mismatch is final", func(t *testing.T) {
		t.Parallel()
		key := filepath.Join(t.TempDir(), "other")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		other := readFile(t, key+".pub")
		rsa := filepath.Join(t.TempDir(), "rsa")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "rsa", "-N", "", "-f", rsa).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		for name, hostKey := range map[string]string{
			"another key":                   other,
			"known_hosts form":              "[127.0.0.1]:1 " + other,
			"a type the server lacks (RSA)": readFile(t, rsa+".pub"),
		} {
			d := driver(t, srv, func(c *netconf.Config) { c.HostKey = hostKey })
			err := d.Write(ctxFor(t), switches.Port{Switch: "sw", Name: "ge-0/0/4"}, serviceA)
			if !errors.Is(err, netconf.ErrHostKey) || errors.Is(err, switches.ErrUnavailable) {
				t.Errorf("%s: %v; want ErrHostKey, not ErrUnavailable", name, err)
			}
		}
		// The right key in known_hosts form connects.
		d := driver(t, srv, func(c *netconf.Config) { c.HostKey = "[127.0.0.1]:830 " + srv.HostKey })
		if _, err := d.Read(ctxFor(t), switches.Port{Switch: "sw", Name: "ge-0/0/4"}); err != nil {
			t.Errorf("right key, known_hosts form: %v", err)
		}
	})
}

// Host keys of every common type connect when pinned; an RSA key is asked for with SHA-2
// signatures, which OpenSSH requires.
func TestHostKeyTypes(t *testing.T) {
	for _, typ := range []string{"rsa", "ecdsa"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			srv := netconftest.StartWith(t, netconftest.Options{HostKeyType: typ})
			got, err := driver(t, srv, nil).Read(ctxFor(t), switches.Port{Switch: "sw", Name: "ge-0/0/1"})
			if err != nil || got.Mode != switches.ModeOff {
				t.Fatalf("read with a pinned %s host key: %v, %v", typ, got, err)
			}
		})
	}
}

// TestSessionLostMidCommit drops the session, or kills netconfd, between the steps of a write:
// the port reads as it was, the error is ErrUnavailable (the job retries), and the retry lands.
func TestSessionLostMidCommit(t *testing.T) {
	for _, tc := range []struct {
		name, step string
		kill       bool // kill netconfd (and restart it) rather than drop the connection
		// killOnCommit, instead of a step, has the server killed as its nth commit arrives,
		// with no help from the driver.
		killOnCommit int
	}{
		{name: "connection dropped after edit-config", step: "edited"},
		{name: "connection dropped after the confirmed commit", step: "confirmed"},
		{name: "netconfd killed after edit-config", step: "edited", kill: true},
		{name: "netconfd killed after the confirmed commit", step: "confirmed", kill: true},
		{name: "netconfd killed as the confirmed commit arrives", killOnCommit: 1, kill: true},
		{name: "netconfd killed as the confirmation arrives", killOnCommit: 2, kill: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := netconftest.Start(t)
			ctx := ctxFor(t)
			raw := driver(t, srv, nil)
			port := switches.Port{Switch: "sw", Name: "ge-0/0/9"}
			if err := raw.Write(ctx, port, serviceA); err != nil {
				t.Fatal(err)
			}
			fired := false
			if tc.killOnCommit > 0 {
				srv.KillOnCommit(tc.killOnCommit)
				fired = true
			}
			netconf.SetHook(raw, func(step string, drop func()) {
				if step != tc.step || fired {
					return
				}
				fired = true
				if tc.kill {
					srv.KillNetconfd()
				} else {
					drop()
				}
			})
			err := switches.Confirmed(raw).Converge(ctx, port, serviceB)
			if !fired || srv.Armed() {
				t.Fatalf("the write never reached step %q or commit %d (err %v)", tc.step, tc.killOnCommit, err)
			}
			if !errors.Is(err, switches.ErrUnavailable) {
				t.Fatalf("converge with the session lost: %v; want ErrUnavailable", err)
			}
			if tc.kill {
				srv.StartNetconfd()
			}
			// The switch may take a moment to roll a confirmed commit back after the session ends.
			var got switches.State
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				got, err = raw.Read(ctx, port)
				if (err == nil && got == serviceA) || time.Now().After(deadline) {
					break
				}
			}
			if err != nil || got != serviceA {
				t.Fatalf("after the lost session the port reads %v, %v; want it as it was, %v", got, err, serviceA)
			}
			// The retry of the job lands.
			if err := switches.Confirmed(raw).Converge(ctx, port, serviceB); err != nil {
				t.Fatalf("retry: %v", err)
			}
			if got, err := raw.Read(ctx, port); err != nil || got != serviceB {
				t.Fatalf("after the retry the port reads %v, %v; want %v", got, err, serviceB)
			}
		})
	}
}

// A session lost after the confirmed commit, whose end the switch has not noticed yet, leaves
// the change in running until the confirm timeout rolls it back. The retry must not take the
// port for converged on reading it: it writes again, which cannot land while the lost session
// holds the candidate (the retry fails and is retried), and lands with its own confirmation once
// the switch lets the lost session go. The port then keeps the change past the confirm timeout.
func TestUnnoticedSessionLossAfterConfirmedCommit(t *testing.T) {
	t.Parallel()
	srv := netconftest.Start(t)
	ctx := ctxFor(t)
	const confirm = 3 * time.Second
	raw := driver(t, srv, func(c *netconf.Config) { c.ConfirmTimeout = confirm; c.OpTimeout = 2 * time.Second })
	port := switches.Port{Switch: "sw", Name: "ge-0/0/11"}
	if err := raw.Write(ctx, port, serviceA); err != nil {
		t.Fatal(err)
	}
	srv.HoldSessions()
	fired := false
	netconf.SetHook(raw, func(step string, drop func()) {
		if step == "confirmed" && !fired {
			fired = true
			drop()
		}
	})
	d := switches.Confirmed(raw)
	if err := d.Converge(ctx, port, serviceB); !errors.Is(err, switches.ErrUnavailable) {
		t.Fatalf("converge with the session lost after the confirmed commit: %v; want ErrUnavailable", err)
	}
	if got, err := raw.Read(ctx, port); err != nil || got != serviceB {
		t.Fatalf("the switch, not having noticed, should still show the unconfirmed change: %v, %v", got, err)
	}
	if err := d.Converge(ctx, port, serviceB); err == nil {
		t.Fatal("the retry took an unconfirmed change for converged")
	}
	srv.ReleaseSessions()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = d.Converge(ctx, port, serviceB); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("once the switch let the lost session go, the retry: %v", err)
	}
	time.Sleep(confirm + time.Second)
	if got, err := raw.Read(ctx, port); err != nil || got != serviceB {
		t.Fatalf("past the confirm timeout the port reads %v, %v; want the retry's change to stand, %v", got, err, serviceB)
	}
}
