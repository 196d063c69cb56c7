package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/switches/netconf/lab"
)

// demoBuildingVancouver is the building whose ports van-georgia-sw1 carries.
const demoBuildingVancouver = "b1000000-0000-4000-8000-000000000005"

// demoSwitchSlow is how long the lab switch may take to start before the demo says so.
const demoSwitchSlow = 2 * time.Second

// demoSwitch is what the demo did about a real switch: the Vancouver building's switch runs
// the netconf driver against a lab switch on this machine (lab set), or stays on sim (why).
type demoSwitch struct {
	lab  *lab.Switch
	why  string
	took time.Duration
}

// startDemoSwitch gives the Vancouver building's switch a real driver when the machine can run
// a NETCONF lab switch (netconfd on loopback, in a temporary directory): its row takes the
// lab switch's address, host key and credentials (the password sealed, as any switch row's),
// and its ports are provisioned over NETCONF. SUBPROV_DEMO_SWITCH=sim skips it. Anything that
// goes wrong leaves the switch on sim, with the reason; it never stops the demo.
func startDemoSwitch(ctx context.Context, a *app.App, demo *fixture.File, getenv func(string) string) *demoSwitch {
	start := time.Now()
	ds := &demoSwitch{}
	err := func() error {
		if v := getenv("SUBPROV_DEMO_SWITCH"); v == "sim" {
			return errors.New("SUBPROV_DEMO_SWITCH=sim")
		}
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		sw, err := lab.Start(sctx)
		if err != nil {
			return err
		}
		ds.lab = sw
		row := fixture.Switch{ID: fixture.DemoSwitchVancouver, Name: fixture.DemoSwitchVancouverName, Driver: "netconf",
			Address: sw.Addr, Username: sw.Username, Password: sw.Password, HostKey: sw.HostKey, Model: netconf.ModelOpenConfig}
		if err := demoSwitchRow(sctx, a, row); err != nil {
			return err
		}
		return provisionPorts(sctx, a, demoBuildingVancouver, row.Name)
	}()
	ds.took = time.Since(start)
	if err == nil {
		return ds
	}
	ds.why = err.Error()
	if ds.lab != nil {
		ds.lab.Close()
		ds.lab = nil
	}
	// A previous run may have left the switch on the netconf driver: back to the fixture's row.
	for _, w := range demo.Switches {
		if w.Name == fixture.DemoSwitchVancouverName {
			if err := demoSwitchRow(ctx, a, w); err != nil {
				a.Log.Warn("demo: could not put the switch back on sim", "switch", w.Name, "err", err)
			}
		}
	}
	return ds
}

// demoSwitchRow writes the switch row as a fixture would, over the row already there.
func demoSwitchRow(ctx context.Context, a *app.App, w fixture.Switch) error {
	_, err := fixture.LoadWith(ctx, a.Store, &fixture.File{Switches: []fixture.Switch{w}}, a.Clock.Now(),
		fixture.Options{Update: true, Sealer: a.Sealer})
	if err != nil {
		return fmt.Errorf("switch %s: %w", w.Name, err)
	}
	return nil
}

// Close stops the lab switch, if one runs.
func (ds *demoSwitch) Close() {
	if ds.lab != nil {
		ds.lab.Close()
	}
}

// banner tells what the demo did: the real switch and how to see it, or why every switch
// stays on sim.
func (ds *demoSwitch) banner(databaseURL string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	name := fixture.DemoSwitchVancouverName
	if ds.lab == nil {
		w("Switches: every demo switch stays on the sim driver: %s", ds.why)
		w("")
		return b.String()
	}
	w("A real switch: %s (1055 W Georgia St, Vancouver) runs the netconf driver against a NETCONF lab switch on this machine:", name)
	w("  netconfd with subprov's YANG module behind an SSH server on %s, in a temporary directory, stopped and removed when the demo exits", ds.lab.Addr)
	w("  its ports were provisioned over NETCONF at start (%.1f s); its password is sealed in the switch row like any switch's", ds.took.Seconds())
	if ds.took > demoSwitchSlow {
		w("  the lab switch took %.1f s to start: SUBPROV_DEMO_SWITCH=sim skips it", ds.took.Seconds())
	}
	w(`  curl -s "$B/api/v1/switches/%s" -H "Authorization: Bearer $OP"   # driver netconf, address %s, has_password true`, fixture.DemoSwitchVancouver, ds.lab.Addr)
	cmd, note := "subprov reconcile --switch "+name, ""
	if strings.HasPrefix(databaseURL, "sqlite://") {
		cmd = "DATABASE_URL=" + databaseURL + " " + cmd
	} else {
		note = "with the DATABASE_URL the demo runs on; "
	}
	w("  %s   # %sreads each port over NETCONF: xe-1/0/1 in service, ok", cmd, note)
	w("")
	return b.String()
}

// provisionPorts gives each port of the building on the switch its desired setting from its
// lines (the fixture's lines have none yet) and writes it to the switch at once, rather than
// by the queue.
func provisionPorts(ctx context.Context, a *app.App, buildingID, switchName string) error {
	ports, err := store.PortsOf(ctx, a.Store.R(), buildingID)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if p.Switch != switchName {
			continue
		}
		if err := a.Store.InTx(ctx, func(tx *store.Tx) error { return a.Provisioning.FollowPort(ctx, tx, p.ID) }); err != nil {
			return fmt.Errorf("port %s: %w", p.Name, err)
		}
		if err := a.Provisioning.ConvergePort(ctx, jobs.ConvergePort{PortID: p.ID}, 1); err != nil {
			return fmt.Errorf("provision %s/%s: %w", switchName, p.Name, err)
		}
	}
	return nil
}
