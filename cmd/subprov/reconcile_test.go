package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/switches/netconf/lab"
)

// The reconcile table: one row per port; drift names its fields, a billing risk is marked, a
// port not read shows no found state.
func TestReconcileTable(t *testing.T) {
	svc := switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2100, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:ff"}}
	moved := svc
	moved.VLAN = 2101
	var out bytes.Buffer
	writeReconciled(&out, []provisioning.PortReconciled{
		{Switch: "sw-a", Port: "ge-0/0/1", LineID: "L1", Expected: svc, Found: svc, Action: provisioning.ReconcileInLine},
		{Switch: "sw-a", Port: "ge-0/0/2", LineID: "L2", Expected: svc, Found: moved, Fields: []string{"vlan"}, Action: provisioning.ReconcileRepaired},
		{Switch: "sw-a", Port: "ge-0/0/3", LineID: "L3", Expected: svc, Found: switches.CaptiveState, Fields: []string{"mode", "vlan"}, BillingRisk: true, Action: provisioning.ReconcileDrift},
		{Switch: "sw-b", Port: "ge-0/0/4", Expected: switches.CaptiveState, Action: provisioning.ReconcileUnreadable},
	})
	want := `SWITCH  PORT      LINE  EXPECTED                                         FOUND                                            ACTION
sw-a    ge-0/0/1  L1    service vlan=2100 500/100 mac=aa:bb:cc:dd:ee:ff  service vlan=2100 500/100 mac=aa:bb:cc:dd:ee:ff  ok
sw-a    ge-0/0/2  L2    service vlan=2100 500/100 mac=aa:bb:cc:dd:ee:ff  service vlan=2101 500/100 mac=aa:bb:cc:dd:ee:ff  repaired (vlan)
sw-a    ge-0/0/3  L3    service vlan=2100 500/100 mac=aa:bb:cc:dd:ee:ff  captive                                          drift (mode,vlan) billing-risk
sw-b    ge-0/0/4  -     captive                                          -                                                unreadable
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReconcileCommand runs `subprov reconcile` on a real database (both engines) whose demo
// lines' ports were provisioned, one of them then changed on its switch behind subprov's
// back: on a sim switch, and on the NETCONF lab switch the demo gives van-georgia-sw1 (when
// the machine runs one; CI=true requires it). The table names the drifted field; --fix
// repairs it and a second run finds the port in line; an unknown switch is a clear error
// with exit status 1 and a flag the command does not take a usage error (2).
func TestReconcileCommand(t *testing.T) {
	keepGCPercent(t)
	tests := []struct {
		name                 string
		building, switchName string
		port                 string
		real                 bool // the NETCONF lab switch
	}{
		{"sim", fixture.DemoBuildingFirst, "mtl-king-sw1", "ge-0/0/12", false},
		{"netconf", demoBuildingVancouver, fixture.DemoSwitchVancouverName, "xe-1/0/1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.real {
				if err := lab.Available(); err != nil {
					if os.Getenv("CI") == "true" {
						t.Fatalf("lab switch: %v (CI=true: CI installs netconfd)", err)
					}
					t.Skipf("lab switch: %v", err)
				}
			}
			testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				e := env(map[string]string{"DATABASE_URL": u, "SUBPROV_LOG_FORMAT": "json"})
				a := demoApp(t, ctx, e)
				// The switch the port is on, and a way to change the port behind subprov's back.
				var drift func(switches.State) error
				var read func() (switches.State, error)
				sp := switches.Port{Switch: tt.switchName, Name: tt.port}
				if tt.real {
					f, err := fixture.Parse(fixture.DemoJSON)
					if err != nil {
						t.Fatal(err)
					}
					ds := startDemoSwitch(ctx, a, f, e)
					t.Cleanup(ds.Close)
					if ds.lab == nil {
						t.Fatalf("the lab switch did not start: %s", ds.why)
					}
					raw, err := netconf.New(netconf.Config{Address: ds.lab.Addr, Username: ds.lab.Username, Password: ds.lab.Password,
						HostKey: ds.lab.HostKey, Model: netconf.ModelOpenConfig})
					if err != nil {
						t.Fatal(err)
					}
					drift = func(s switches.State) error { return raw.Write(ctx, sp, s) }
					read = func() (switches.State, error) { return raw.Read(ctx, sp) }
				} else {
					if err := provisionPorts(ctx, a, tt.building, tt.switchName); err != nil {
						t.Fatal(err)
					}
					sim, err := switches.Open("sim", a.Store, a.Faults, a.Clock)
					if err != nil {
						t.Fatal(err)
					}
					drift = func(s switches.State) error {
						return a.Store.InTx(ctx, func(tx *store.Tx) error {
							return switches.PutSimPort(ctx, tx, switches.SimPortState{Switch: sp.Switch, Port: sp.Name, State: string(s.Mode),
								VLAN: s.VLAN, DownloadMbps: s.DownloadMbps, UploadMbps: s.UploadMbps, MAC: s.MAC}, a.Clock.Now())
						})
					}
					read = func() (switches.State, error) { return sim.Read(ctx, sp) }
				}
				want, err := read()
				if err != nil || want.Mode != switches.ModeService {
					t.Fatalf("the provisioned port reads %v, %v; want it in service", want, err)
				}
				moved := want
				moved.VLAN++
				if err := drift(moved); err != nil {
					t.Fatalf("drift the port: %v", err)
				}
				if got, err := read(); err != nil || got != moved {
					t.Fatalf("after the change behind subprov's back the port reads %v, %v; want %v", got, err, moved)
				}
				reconcile := func(args ...string) (string, error) {
					var out, errOut bytes.Buffer
					err := run(ctx, append([]string{"reconcile"}, args...), e, &out, &errOut)
					return out.String(), err
				}
				row := func(out string) string {
					for _, l := range strings.Split(out, "\n") {
						if f := strings.Fields(l); len(f) > 1 && f[0] == tt.switchName && f[1] == tt.port {
							return l
						}
					}
					t.Fatalf("no row for %s %s in:\n%s", tt.switchName, tt.port, out)
					return ""
				}
				for _, step := range []struct {
					args []string
					want string
				}{
					{[]string{"--switch", tt.switchName}, " drift (vlan)"},
					{[]string{"--switch", tt.switchName}, " drift (vlan)"}, // reported, not repaired: still there
					{[]string{"--switch", tt.switchName, "--fix"}, " repaired (vlan)"},
					{[]string{"--switch", tt.switchName}, " ok"},
				} {
					out, err := reconcile(step.args...)
					if err != nil {
						t.Fatalf("reconcile %v: %v\n%s", step.args, err, out)
					}
					if r := row(out); !strings.HasSuffix(r, step.want) || (step.want != " ok" && !strings.Contains(r, fmt.Sprintf("vlan=%d", moved.VLAN))) {
						t.Fatalf("reconcile %v: row %q, want it to end in %q and show the VLAN found (%d)", step.args, r, step.want, moved.VLAN)
					}
				}
				if got, err := read(); err != nil || got != want {
					t.Fatalf("after --fix the port reads %v, %v; want %v", got, err, want)
				}

				out, err := reconcile("--switch", "no-such-switch")
				if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), `no switch named "no-such-switch"`) || out != "" {
					t.Errorf("unknown switch: %v (exit status %d), output %q; want a clear error, exit status 1, no table", err, exitCode(err), out)
				}
				out, err = reconcile("--repair")
				if err == nil || exitCode(err) != 2 || out != "" {
					t.Errorf("unknown flag: %v (exit status %d), output %q; want a usage error", err, exitCode(err), out)
				}
			})
		})
	}
}

// demoApp is the service on e's database with the demo fixture loaded and no workers.
func demoApp(t *testing.T, ctx context.Context, e func(string) string) *app.App {
	t.Helper()
	cfg, log, err := loadConfig(e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workers = false
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.LoadAtCost(ctx, a.Store, f, a.Clock.Now(), identity.TestPasswordCost); err != nil {
		t.Fatal(err)
	}
	return a
}
