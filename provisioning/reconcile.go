package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// Reconciliation: the switches are read port by port on a schedule and compared with what the
// lines say each port should be doing (its desired setting). A port that reads otherwise has
// drifted: someone changed it behind subprov's back. The drift is reported once per episode
// (a network.drift_detected event, the drift counter, one open operator ticket per port) and,
// where the line's provider opts in (auto_repair), repaired by the one converge operation. A
// line billed as ACTIVE on a port that does not read in service is a billing risk.

// DefaultReconcileEvery is how often each switch is reconciled when the configuration names
// no interval.
const DefaultReconcileEvery = 15 * time.Minute

// Actions a reconciliation takes on a port (the ACTION column of `subprov reconcile`).
const (
	ReconcileInLine     = "ok"       // the port reads as its desired setting
	ReconcileDrift      = "drift"    // drifted and reported (or still reported: its ticket is open)
	ReconcileRepaired   = "repaired" // drifted and converged back
	ReconcileRepairFail = "repair_failed"
	ReconcileConverging = "converging" // a convergence is under way or behind: not judged
	ReconcileRetried    = "retried"    // unconverged (its retries ran out): its convergence is queued again
	ReconcileUnreadable = "unreadable" // the switch did not answer the read
)

// DriftFields lists the fields in which the port as found differs from the state it should
// be in (mode, vlan, download_mbps, upload_mbps, mac_address), in that order; none when it
// reads as it should.
func DriftFields(want, found switches.State) []string {
	var out []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"mode", want.Mode == found.Mode},
		{"vlan", want.VLAN == found.VLAN},
		{"download_mbps", want.DownloadMbps == found.DownloadMbps},
		{"upload_mbps", want.UploadMbps == found.UploadMbps},
		{"mac_address", want.MAC == found.MAC},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}

// BillingRisk reports whether a line billed as ACTIVE sits on a port that does not read in
// service: the subscriber is charged for service the port does not give.
func BillingRisk(line *subprov.Subscription, found switches.State) bool {
	return line != nil && line.Status == subprov.StatusActive && found.Mode != switches.ModeService
}

// PortReconciled is what a reconciliation found and did on one port.
type PortReconciled struct {
	Switch, Port, PortID string
	LineID               string // the line that decides the port's setting (portLine; "" when none)
	Expected, Found      switches.State
	Fields               []string // the fields that differ (DriftFields)
	BillingRisk          bool
	Action               string // one of the Reconcile* actions
	Err                  error  // the read's or the repair's failure
}

// ReconcileSwitchJob is the switch.reconcile job: reconcile one switch, repairing only where
// the provider opts in. A switch too large (or too slow) to read within the job's time stops
// while a port's read and repair still fit, and queues a run that continues after the last
// port it judged: every port is read, and no job is cut off halfway through a port.
func (s *Service) ReconcileSwitchJob(ctx context.Context, a jobs.ReconcileSwitch) error {
	var stopBy time.Time
	if deadline, ok := ctx.Deadline(); ok {
		stopBy = deadline.Add(-2 * convergeTimeout)
	}
	_, next, err := s.reconcile(ctx, a.Switch, a.After, false, stopBy)
	if err != nil || next == "" {
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		return s.Jobs.Enqueue(ctx, tx, jobs.ReconcileSwitch{Switch: a.Switch, After: next})
	})
}

// Reconcile reads every port of the switch that has a desired setting and judges it: a port
// whose convergence is under way (or has not caught up) is left to its converger. Drift opens
// one operator ticket per port and records network.drift_detected when no ticket about the
// port is open yet, and is repaired (converged back) when fix is set or the line's provider
// opts in to auto_repair. What was found is kept on the port (drift, billing risk).
func (s *Service) Reconcile(ctx context.Context, switchName string, fix bool) ([]PortReconciled, error) {
	out, _, err := s.reconcile(ctx, switchName, "", fix, time.Time{})
	return out, err
}

// reconcile judges the switch's ports named after after, in name order, until stopBy (zero:
// no limit); next names the last port judged when it stopped before the end ("" otherwise).
func (s *Service) reconcile(ctx context.Context, switchName, after string, fix bool, stopBy time.Time) (out []PortReconciled, next string, err error) {
	ports, err := s.Store.PortsToReconcile(ctx, switchName, after, s.Clock.Now())
	if err != nil {
		return nil, "", err
	}
	out = make([]PortReconciled, 0, len(ports))
	for i, p := range ports {
		if ctx.Err() != nil {
			return out, "", ctx.Err()
		}
		if i > 0 && !stopBy.IsZero() && time.Now().After(stopBy) {
			return out, ports[i-1].Name, nil
		}
		r, err := s.reconcilePort(ctx, switchName, p, fix)
		if err != nil {
			return out, "", fmt.Errorf("reconcile %s/%s: %w", switchName, p.Name, err)
		}
		out = append(out, r)
	}
	return out, "", nil
}

func (s *Service) reconcilePort(ctx context.Context, switchName string, p store.ReconciledPort, fix bool) (PortReconciled, error) {
	r := PortReconciled{Switch: switchName, Port: p.Name, PortID: p.PortID, Expected: switches.StateOf(p.Want)}
	line, err := s.portLine(ctx, p.PortID)
	if err != nil {
		return r, err
	}
	if line != nil {
		r.LineID = line.ID
	}
	if p.Unconverged && !p.Leased {
		// Its retries ran out (a switch down for long): each run tries again, so the port
		// follows its lines once the switch is back, without waiting for a line to change.
		r.Action = ReconcileRetried
		return r, s.Store.InTx(ctx, func(tx *store.Tx) error { return s.Jobs.Enqueue(ctx, tx, jobs.ConvergePort{PortID: p.PortID}) })
	}
	if p.Leased || p.Unconverged || !p.Converged(p.Version) {
		r.Action = ReconcileConverging
		return r, nil
	}
	sp := switches.Port{Switch: switchName, Name: p.Name}
	judged, err := s.readSettled(ctx, sp, &r)
	if err != nil || !judged {
		return r, err
	}
	if r.Err != nil {
		r.Action = ReconcileUnreadable
		s.Log.Warn("reconciliation could not read the port", "port", sp.String(), "err", r.Err)
		return r, nil
	}
	r.Fields = DriftFields(r.Expected, r.Found)
	r.BillingRisk = BillingRisk(line, r.Found)
	if err := s.Store.SetPortFound(ctx, p.PortID, strings.Join(r.Fields, ","), r.BillingRisk); err != nil {
		return r, err
	}
	if len(r.Fields) == 0 {
		r.Action = ReconcileInLine
		return r, nil
	}
	r.Action = ReconcileDrift
	var provider *subprov.Provider
	if line != nil {
		if provider, err = s.provider(ctx, line.ProviderID); err != nil {
			return r, err
		}
	}
	if err := s.reportDrift(ctx, sp, &r, line, provider); err != nil {
		return r, err
	}
	if !fix && (provider == nil || !provider.AutoRepair) {
		return r, nil
	}
	return r, s.repairDrift(ctx, sp, &r, line, provider)
}

// readSettled reads the port into r.Found (a failed read into r.Err) while its setting is
// settled: holding the port's convergence lease, so no converger writes it meanwhile, with
// the desired setting confirmed before the read and unchanged after it (r.Expected). A port
// that a converger holds, that has not caught up, or whose lines changed during the read is
// left to its converger (judged false, r.Action converging): its state in between is no drift.
func (s *Service) readSettled(ctx context.Context, sp switches.Port, r *PortReconciled) (judged bool, err error) {
	token := store.NewID()
	now := s.Clock.Now()
	c, ok, err := s.Store.LeasePort(ctx, r.PortID, token, now.Add(leaseFor), now)
	switch {
	case errors.Is(err, subprov.ErrNotFound): // no desired setting any more
		r.Action = ReconcileConverging
		return false, nil
	case err != nil:
		return false, err
	case !ok:
		r.Action = ReconcileConverging
		return false, nil
	}
	defer func() {
		if rerr := s.Store.ReleasePort(context.WithoutCancel(ctx), r.PortID, token); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if c.Unconverged || !c.Converged(c.Version) {
		r.Action = ReconcileConverging
		return false, nil
	}
	r.Expected = switches.StateOf(c.Want)
	rctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	r.Found, r.Err = s.Switch.Read(rctx, sp)
	cancel()
	after, err := s.Store.PortConvergence(ctx, r.PortID)
	if err != nil {
		return false, err
	}
	if after.Version != c.Version {
		r.Action = ReconcileConverging
		return false, nil
	}
	return true, nil
}

// reportDrift opens the port's drift ticket and records network.drift_detected, unless an
// operator ticket about the port is still open: one report per drift, not one per run.
func (s *Service) reportDrift(ctx context.Context, sp switches.Port, r *PortReconciled, line *subprov.Subscription, provider *subprov.Provider) error {
	if line == nil {
		return nil // a port no line ever held has no provider to tell
	}
	reported := false
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		reported = false
		if open, err := tx.PortTicketOpen(ctx, r.PortID); err != nil || open {
			return err
		}
		reported = true
		if err := s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: line.ProviderID, SubscriberID: line.SubscriberID, PortID: r.PortID,
			Kind: "operator", Priority: "high", Subject: "Switch port " + sp.String() + " drifted from its line",
			InternalNote: fmt.Sprintf("Reconciliation found port %s in a state its lines do not ask for (%s differ); subscription %s.\nExpected: %s\nFound:    %s",
				sp, strings.Join(r.Fields, ", "), line.ID, r.Expected, r.Found)}); err != nil {
			return err
		}
		_, err := s.Events.Record(ctx, tx, provider, subprov.EventDriftDetected, line, driftData(sp, r))
		return err
	})
	if err != nil {
		return fmt.Errorf("report drift: %w", err)
	}
	if reported {
		s.Log.Warn("port drifted from its line", "port", sp.String(), "fields", r.Fields, "expected", r.Expected.String(), "found", r.Found.String())
		s.Metrics.Drift(sp.Switch, "detected")
	}
	return nil
}

// repairDrift converges the port back to its desired setting and records the repair: a note
// on the port's open ticket, an audit entry and network.drift_repaired.
func (s *Service) repairDrift(ctx context.Context, sp switches.Port, r *PortReconciled, line *subprov.Subscription, provider *subprov.Provider) error {
	after, err := s.convergePort(ctx, r.PortID)
	if err == nil && after == nil {
		err = errors.New("the port has no desired setting")
	}
	if err != nil {
		var ce *ConvergeError
		if !errors.As(err, &ce) && !errors.Is(err, errPortBusy) {
			return fmt.Errorf("repair drift: %w", err)
		}
		r.Action, r.Err = ReconcileRepairFail, err
		s.Log.Warn("drifted port not repaired", "port", sp.String(), "err", err)
		return nil
	}
	r.Action = ReconcileRepaired
	s.Metrics.Drift(sp.Switch, "repaired")
	if line == nil {
		return nil
	}
	now := s.Clock.Now()
	note := fmt.Sprintf("Repaired at %s: port %s converged back to %s (it read %s).", now.UTC().Format(time.RFC3339), sp, r.Expected, r.Found)
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.NotePortTicket(ctx, r.PortID, note, now); err != nil {
			return err
		}
		if err := tx.InsertAudit(ctx, line.ProviderID, "reconciliation", "port.drift_repaired", r.PortID, note, now); err != nil {
			return err
		}
		_, err := s.Events.Record(ctx, tx, provider, subprov.EventDriftRepaired, line, driftData(sp, r))
		return err
	})
	if err != nil {
		return fmt.Errorf("record drift repair: %w", err)
	}
	return nil
}

// driftData is the data of the drift events: the port, the fields that differ, and the port's
// state as expected and as found.
func driftData(sp switches.Port, r *PortReconciled) map[string]any {
	return map[string]any{"switch": sp.Switch, "port": sp.Name, "port_id": r.PortID, "fields": r.Fields,
		"expected": stateData(r.Expected), "found": stateData(r.Found)}
}

func stateData(st switches.State) map[string]any {
	return map[string]any{"mode": string(st.Mode), "vlan": st.VLAN, "download_mbps": st.DownloadMbps,
		"upload_mbps": st.UploadMbps, "mac_address": st.MAC}
}

// SweepReconciliations queues one switch.reconcile job per switch whose reconciliation is due
// (every ReconcileEvery); the reads happen in the jobs, never in the sweep.
func (s *Service) SweepReconciliations(ctx context.Context) error {
	every := s.ReconcileEvery
	if every <= 0 {
		every = DefaultReconcileEvery
	}
	now := s.Clock.Now()
	return jobs.ClaimDueAndEnqueue(ctx, s.Store, s.Jobs,
		func(ctx context.Context, tx *store.Tx) ([]string, error) {
			return tx.ClaimDueSwitches(ctx, now.Add(-every), now)
		},
		func(name string) jobs.Args { return jobs.ReconcileSwitch{Switch: name} })
}
