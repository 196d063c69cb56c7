package main

import (
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/switches/netconf/lab"
)

// TestDemoSwitch: where the machine runs a NETCONF lab switch, the demo puts van-georgia-sw1 on
// the netconf driver against it (its address, host key and a sealed password in the row), its
// line's port provisioned over NETCONF, and stops it on exit; restarted with
// SUBPROV_DEMO_SWITCH=sim, the switch is back on sim, without a password, and the demo says why.
func TestDemoSwitch(t *testing.T) {
	keepGCPercent(t)
	if err := lab.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("lab switch: %v (CI=true: CI installs netconfd)", err)
		}
		t.Skipf("lab switch: %v", err)
	}
	running := regexp.MustCompile(`running at (http://127\.0\.0\.1:\d+)`)
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		e := map[string]string{"DATABASE_URL": u, "SUBPROV_LOG_FORMAT": "json"}
		base, out, stop := startServerOut(t, []string{"demo", "--addr", "127.0.0.1:0"}, env(e), running)
		m := regexp.MustCompile(`A real switch: van-georgia-sw1 .*\n.*SSH server on (127\.0\.0\.1:\d+)`).FindStringSubmatch(out.String())
		if m == nil {
			stop()
			t.Fatalf("the demo did not put van-georgia-sw1 on the lab switch:\n%s", tail(out.String(), 600))
		}
		addr := m[1]
		op := operatorLogin(t, base)
		status, body := call(t, "GET", base+"/api/v1/switches/"+fixture.DemoSwitchVancouver, op, nil)
		for _, want := range []string{`"driver":"netconf"`, `"address":"` + addr + `"`, `"has_password":true`, `"model":"openconfig"`, `"host_key":"ssh-ed25519 `, `"unconverged_ports":0`} {
			if status != 200 || !strings.Contains(body, want) {
				t.Errorf("GET the switch: %d %s; want %s", status, body, want)
			}
		}
		s := testdb.Open(t, u)
		defer s.Close()
		secret := testdb.Strings(t, s.R().Query, `SELECT secret FROM switches WHERE id = ?`, fixture.DemoSwitchVancouver)
		if len(secret) != 1 || secret[0] == "" {
			t.Errorf("the switch row keeps no sealed password: %q", secret)
		}
		converged := testdb.Strings(t, s.R().Query, `SELECT ps.mode FROM port_states ps JOIN ports p ON p.id = ps.port_id
			WHERE p.switch_name = 'van-georgia-sw1' AND ps.converged_version = ps.version ORDER BY p.port_name`)
		if strings.Join(converged, " ") != "service captive" {
			t.Errorf("van-georgia-sw1's ports converged: %q; want xe-1/0/1 in service and xe-1/0/2 captive", converged)
		}
		stop()
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("the lab switch still answers on %s after the demo stopped", addr)
		}

		e["SUBPROV_DEMO_SWITCH"] = "sim"
		base, out, stop = startServerOut(t, []string{"demo", "--addr", "127.0.0.1:0"}, env(e), running)
		defer stop()
		if !strings.Contains(out.String(), "Switches: every demo switch stays on the sim driver: SUBPROV_DEMO_SWITCH=sim\n") {
			t.Errorf("the demo on sim does not say why:\n%s", tail(out.String(), 600))
		}
		status, body = call(t, "GET", base+"/api/v1/switches/"+fixture.DemoSwitchVancouver, operatorLogin(t, base), nil)
		if status != 200 || !strings.Contains(body, `"driver":"sim"`) || !strings.Contains(body, `"has_password":false`) {
			t.Errorf("after a restart on sim the switch is %d %s; want the fixture's sim row", status, body)
		}
	})
}

func operatorLogin(t *testing.T, base string) map[string]string {
	t.Helper()
	status, body := call(t, "POST", base+"/api/v1/auth/login", nil, map[string]string{"email": fixture.DemoOperatorEmail, "password": fixture.DemoOperatorPassword})
	m := accessToken.FindStringSubmatch(body)
	if status != 200 || m == nil {
		t.Fatalf("operator login: %d %s", status, body)
	}
	return map[string]string{"Authorization": "Bearer " + m[1]}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
