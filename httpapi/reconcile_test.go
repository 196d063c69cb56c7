package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/jobs"
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
			return reconciled(t, s, sw, portID, false)
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
		if r := reconciled(t, s, sw, portID, true); r.Action != provisioning.ReconcileRepaired {
			t.Fatalf("reconcile --fix: %s %v", r.Action, r.Err)
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

// readMoving is the port's switch as a reconciliation reads it while the port's lines change:
// during the read the desired setting moves on (as a plan change would) and its converger has
// already written the new setting, which the read shows.
type readMoving struct {
	switches.Driver
	during func() switches.State
}

func (d readMoving) Read(ctx context.Context, p switches.Port) (switches.State, error) {
	return d.during(), nil
}

// A port whose desired setting moves on while a reconciliation reads it is left to its
// converger: the read shows neither setting for sure, so it is no drift (no ticket, no event).
func TestReconciliationLeavesAPortWhoseLinesChangeDuringTheRead(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		id := liveLineAt(t, s, hashKing1205, "moving")
		portID := portIDOf(t, s, id)
		apptest.Eventually(t, 15*time.Second, "the port to converge", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND converged_version = version`, portID) == 1
		})
		var sw string
		if err := s.Store.R().QueryRow(ctx, `SELECT switch_name FROM ports WHERE id = ?`, portID).Scan(&sw); err != nil {
			t.Fatal(err)
		}
		want, _ := portOfLine(t, s, portID)
		moved := want
		moved.DownloadMbps *= 2
		svc := *s.Provisioning
		svc.Switch = readMoving{Driver: s.Provisioning.Switch, during: func() switches.State {
			if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
				_, _, err := tx.SetPortWant(ctx, portID, moved.Setting(), time.Now())
				return err
			}); err != nil {
				t.Error(err)
			}
			return moved
		}}
		got, err := svc.Reconcile(ctx, sw, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.PortID == portID && r.Action != provisioning.ReconcileConverging {
				t.Errorf("a port read while its setting moved: %s %v (expected %v, found %v)", r.Action, r.Fields, r.Expected, r.Found)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'operator' AND port_id = ?`, portID); n != 0 {
			t.Errorf("%d operator tickets about the port", n)
		}
	})
}

// queued records the jobs a service queues instead of running them.
type queued struct{ args []jobs.Args }

func (q *queued) Enqueue(ctx context.Context, tx *store.Tx, args jobs.Args) error {
	q.args = append(q.args, args)
	return nil
}

// A reconciliation job whose time is running out stops between two ports and queues the rest:
// the next run starts after the last port judged, and a run with time reads every port.
func TestReconciliationJobContinuesWhereItStopped(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		for _, hash := range []string{hashKing1205, hashKing1206} {
			liveLineAt(t, s, hash, "continued-"+hash)
		}
		ports, err := s.Store.PortsToReconcile(ctx, "mtl-king-sw1", "", time.Now())
		if err != nil || len(ports) < 2 {
			t.Fatalf("%d ports to reconcile (%v), want 2 or more", len(ports), err)
		}
		q := &queued{}
		svc := *s.Provisioning
		svc.Jobs = q
		// A job left less time than a port's read and repair: one port, then the rest queued.
		short, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := svc.ReconcileSwitchJob(short, jobs.ReconcileSwitch{Switch: "mtl-king-sw1"}); err != nil {
			t.Fatal(err)
		}
		wantNext := jobs.ReconcileSwitch{Switch: "mtl-king-sw1", After: ports[0].Name}
		if len(q.args) != 1 || q.args[0] != wantNext {
			t.Fatalf("queued %v, want %v", q.args, wantNext)
		}
		// The continuation, with time, reads the others and queues nothing.
		long, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		if err := svc.ReconcileSwitchJob(long, wantNext); err != nil {
			t.Fatal(err)
		}
		if len(q.args) != 1 {
			t.Errorf("a run with time queued %v", q.args[1:])
		}
		rest, err := s.Store.PortsToReconcile(ctx, "mtl-king-sw1", ports[0].Name, time.Now())
		if err != nil || len(rest) != len(ports)-1 {
			t.Errorf("after %s: %d ports (%v), want %d", ports[0].Name, len(rest), err, len(ports)-1)
		}
	})
}

// An unconverged port (its retries ran out while its switch was down) is queued for
// convergence again by each reconciliation, and converges once the switch answers.
func TestReconciliationRetriesAnUnconvergedPort(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		portID := portIDOf(t, s, liveLineAt(t, s, hashKing1205, "retried"))
		apptest.Eventually(t, 15*time.Second, "the port to converge", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND converged_version = version`, portID) == 1
		})
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE port_states SET unconverged = TRUE, version = version + 1 WHERE port_id = ?`, portID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if r := reconciled(t, s, "mtl-king-sw1", portID, false); r.Action != provisioning.ReconcileRetried {
			t.Errorf("an unconverged port: %s", r.Action)
		}
		apptest.Eventually(t, 15*time.Second, "the port to converge again", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND converged_version = version AND NOT unconverged`, portID) == 1
		})
	})
}

// reconciled reconciles the switch and returns what it found on the port. A port that another
// reconciliation is reading (the service's own scheduled one, queued when it starts) is left
// to it, converging: that run is tried again, for a few seconds, until this one judges it.
func reconciled(t *testing.T, s *apptest.Service, sw, portID string, fix bool) provisioning.PortReconciled {
	t.Helper()
	var out provisioning.PortReconciled
	apptest.Eventually(t, 10*time.Second, "a reconciliation that judges port "+portID, func() bool {
		got, err := s.Provisioning.Reconcile(context.Background(), sw, fix)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.PortID == portID {
				out = r
				return r.Action != provisioning.ReconcileConverging
			}
		}
		t.Fatalf("port %s not reconciled on %s", portID, sw)
		return false
	})
	return out
}
