package main

import (
	"bytes"
	"testing"

	"github.com/subprov/subprov/counters"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/switches"
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

// The sample table: the bytes since each port's last reading, a port not read marked so.
func TestSampleTable(t *testing.T) {
	var out bytes.Buffer
	writeSampled(&out, []sampledRow{
		{"sw-a", counters.PortSampled{Port: "ge-0/0/1", Reading: counters.Reading{LinkUp: true}, Step: counters.Step{Download: 3456789012, Upload: 1234}}},
		{"sw-a", counters.PortSampled{Port: "ge-0/0/2", Reading: counters.Reading{LinkUp: false}}},
		{"sw-a", counters.PortSampled{Port: "ge-0/0/3", Reading: counters.Reading{LinkUp: true}, Stale: true}},
		{"sw-b", counters.PortSampled{Port: "swp1", Err: switches.ErrUnavailable}},
	})
	want := `SWITCH  PORT      LINK        DOWNLOAD    UPLOAD
sw-a    ge-0/0/1  up          3456789012  1234
sw-a    ge-0/0/2  down        0           0
sw-a    ge-0/0/3  up          -           -
sw-b    swp1      unreadable  -           -
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}
