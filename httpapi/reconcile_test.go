package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// A port changed behind subprov's back is found by the next reconciliation: one operator
// ticket naming the port, network.drift_detected delivered to the provider's webhook and the
// drift counter; a second run while the ticket is open reports nothing again; with the
// provider opted in to auto_repair the port is converged back (network.drift_repaired, a note
// on the ticket); a line billed as ACTIVE on a port not in service is a billing risk.
func TestReconciliationFindsAndRepairsDrift(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		op := s.Operator()
		h := newHook(t, s, fixture.DemoWebhookSecret)
		id := liveLineAt(t, s, hashKing1205, "drifting")
		portID := portIDOf(t, s, id)
		var sw, name string
		if err := s.Store.R().QueryRow(ctx, `SELECT switch_name, port_name FROM ports WHERE id = ?`, portID).Scan(&sw, &name); err != nil {
			t.Fatal(err)
		}
		apptest.Eventually(t, 15*time.Second, "the port to converge", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND converged_version = version`, portID) == 1
		})
		want, _ := portOfLine(t, s, portID)
		behindTheBack := func(st switches.State) {
			t.Helper()
			if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
				return switches.PutSimPort(ctx, tx, switches.SimPortState{Switch: sw, Port: name, State: string(st.Mode), VLAN: st.VLAN,
					DownloadMbps: st.DownloadMbps, UploadMbps: st.UploadMbps, MAC: st.MAC}, time.Now())
			}); err != nil {
				t.Fatal(err)
			}
		}
		reconcile := func() provisioning.PortReconciled {
			t.Helper()
			got, err := s.Provisioning.Reconcile(ctx, sw, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range got {
				if r.PortID == portID {
					return r
				}
			}
			t.Fatalf("port %s/%s not reconciled", sw, name)
			return provisioning.PortReconciled{}
		}
		events := func(typ string) int {
			n := 0
			for _, e := range h.all() {
				if e["type"] == typ && e["data"].(map[string]any)["port_id"] == portID {
					n++
				}
			}
			return n
		}
		tickets := func() int {
			return count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'operator' AND port_id = ? AND internal_note LIKE ?`, portID, "%"+sw+"/"+name+"%")
		}
		autoRepair := func(on bool) {
			t.Helper()
			if res := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/providers/" + northwind, Headers: op, Body: map[string]any{"auto_repair": on}}); res.Status != 200 || res.JSON["auto_repair"] != on {
				t.Fatalf("auto_repair %t: %d %s", on, res.Status, res.Raw)
			}
		}

		if r := reconcile(); r.Action != provisioning.ReconcileInLine {
			t.Fatalf("a port as its line wants: %s %v", r.Action, r.Fields)
		}
		drifted := want
		drifted.VLAN = want.VLAN + 1
		behindTheBack(drifted)
		for run := 1; run <= 2; run++ {
			r := reconcile()
			if r.Action != provisioning.ReconcileDrift || strings.Join(r.Fields, ",") != "vlan" || r.Found != drifted || r.Expected != want {
				t.Fatalf("run %d: %s %v found %v expected %v", run, r.Action, r.Fields, r.Found, r.Expected)
			}
			if n := tickets(); n != 1 {
				t.Errorf("run %d: %d drift tickets naming the port, want 1", run, n)
			}
			apptest.Eventually(t, 15*time.Second, "network.drift_detected delivered", func() bool { return events("network.drift_detected") >= 1 })
			awaitSeries(t, s, `subprov_port_drift_total{action="detected",switch="`+sw+`"}`, 1)
		}
		if _, got := portOfLine(t, s, portID); got != drifted {
			t.Errorf("not opted in: the port was changed to %v", got)
		}
		if n := events("network.drift_detected"); n != 1 {
			t.Errorf("%d network.drift_detected events, want 1", n)
		}

		found := func() (drift string, risk bool) {
			t.Helper()
			if err := s.Store.R().QueryRow(ctx, `SELECT drift, billing_risk FROM port_states WHERE port_id = ?`, portID).Scan(&drift, &risk); err != nil {
				t.Fatal(err)
			}
			return drift, risk
		}
		if drift, _ := found(); drift != "vlan" {
			t.Errorf("the drift kept on the port: %q", drift)
		}
		autoRepair(true)
		if r := reconcile(); r.Action != provisioning.ReconcileRepaired {
			t.Fatalf("opted in: %s %v", r.Action, r.Err)
		}
		if drift, _ := found(); drift != "" {
			t.Errorf("the repaired port still shows drift %q", drift)
		}
		if _, got := portOfLine(t, s, portID); got != want {
			t.Errorf("repaired port reads %v, want %v", got, want)
		}
		apptest.Eventually(t, 15*time.Second, "network.drift_repaired delivered", func() bool { return events("network.drift_repaired") == 1 })
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE port_id = ? AND internal_note LIKE '%Repaired at%'`, portID); n != 1 {
			t.Errorf("the repair is noted on %d tickets, want 1", n)
		}
		if r := reconcile(); r.Action != provisioning.ReconcileInLine {
			t.Errorf("after the repair: %s %v", r.Action, r.Fields)
		}

		autoRepair(false)
		behindTheBack(switches.CaptiveState)
		if r := reconcile(); !r.BillingRisk || r.Action != provisioning.ReconcileDrift {
			t.Errorf("an ACTIVE line on a captive port: billing risk %t, action %s", r.BillingRisk, r.Action)
		}
		awaitSeries(t, s, `subprov_billing_risk_ports{switch="`+sw+`"}`, 1)
		if r, err := s.Provisioning.Reconcile(ctx, sw, true); err != nil || len(r) == 0 {
			t.Fatalf("reconcile --fix: %v", err)
		}
		if drift, risk := found(); drift != "" || risk {
			t.Errorf("the port put back in service still shows drift %q, billing risk %t", drift, risk)
		}
	})
}

// The sweep queues one reconciliation per switch when it falls due, not one per sweep.
func TestReconciliationSweepQueuesOncePerInterval(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		switchesN := count(t, s, `SELECT COUNT(*) FROM switches`)
		if switchesN == 0 {
			t.Fatal("the fixture has no switch")
		}
		for range 3 {
			if err := s.Provisioning.SweepReconciliations(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM river_job WHERE kind = 'switch.reconcile'`); n != switchesN {
			t.Errorf("%d reconciliations queued for %d switches", n, switchesN)
		}
	})
}
