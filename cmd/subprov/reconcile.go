package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

func cmdReconcile(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("reconcile", "reconcile [--switch NAME] [--fix]",
		"Reads every port of every switch (or of --switch NAME) that a line has ever held, through the\n"+
			"switch's own driver, and compares it with what its lines say it should be doing (service with\n"+
			"its VLAN, bandwidth and MAC binding, suspended, or the captive portal); prints one row per port:\n"+
			"SWITCH PORT LINE EXPECTED FOUND ACTION. ACTION is ok, drift (reported: one operator ticket per port\n"+
			"and network.drift_detected to the provider, once while the ticket is open), repaired (converged\n"+
			"back: with --fix, or where the provider's auto_repair is on), repair_failed, converging (a\n"+
			"convergence is under way: not judged), retried (an unconverged port: its convergence is queued\n"+
			"again, for the workers) or unreadable (the switch did not answer). A line billed\n"+
			"as ACTIVE on a port not in service is marked billing-risk. The scheduled reconciliation does the\n"+
			"same every SUBPROV_RECONCILE_INTERVAL (docs/network.md, Reconciliation). Exit status 1 also when\n"+
			"a port could not be read or repaired; drift that is only reported is not a failure.")
	switchName := fs.String("switch", "", "reconcile only the switch `NAME`")
	fix := fs.Bool("fix", false, "converge every drifted port back to its desired setting")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	cfg.Workers = false // jobs it queues (webhook deliveries) are worked by the service's workers
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	names, err := switchesNamed(ctx, a.Store, "reconcile", *switchName)
	if err != nil {
		return err
	}
	var all []provisioning.PortReconciled
	for _, name := range names {
		got, err := a.Provisioning.Reconcile(ctx, name, *fix)
		all = append(all, got...)
		if err != nil {
			writeReconciled(stdout, all)
			return fmt.Errorf("reconcile: %w", err)
		}
	}
	writeReconciled(stdout, all)
	failed := 0
	for _, r := range all {
		if r.Action == provisioning.ReconcileUnreadable || r.Action == provisioning.ReconcileRepairFail {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("reconcile: %d port(s) could not be read or repaired", failed)
	}
	return nil
}

// switchesNamed names the switches command reads: the one asked for (which must exist), or all.
func switchesNamed(ctx context.Context, st *store.Store, command, name string) ([]string, error) {
	if name != "" {
		if _, err := store.SwitchByName(ctx, st.R(), name); err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return nil, fmt.Errorf("%s: no switch named %q", command, name)
			}
			return nil, err
		}
		return []string{name}, nil
	}
	all, err := store.Switches(ctx, st.R())
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(all))
	for _, s := range all {
		out = append(out, s.Name)
	}
	return out, nil
}

// writeReconciled prints the reconciliation as a table, one row per port.
func writeReconciled(w io.Writer, rows []provisioning.PortReconciled) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tPORT\tLINE\tEXPECTED\tFOUND\tACTION")
	for _, r := range rows {
		found := "-"
		if r.Action != provisioning.ReconcileConverging && r.Action != provisioning.ReconcileUnreadable {
			found = shortState(r.Found)
		}
		action := r.Action
		if len(r.Fields) > 0 {
			action += " (" + strings.Join(r.Fields, ",") + ")"
		}
		if r.BillingRisk {
			action += " billing-risk"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Switch, r.Port, or(r.LineID, "-"), shortState(r.Expected), found, action)
	}
	tw.Flush()
}

// shortState is a port state in one column: the mode, then the VLAN, bandwidth down/up and
// MAC where the mode carries them.
func shortState(s switches.State) string {
	switch s.Mode {
	case switches.ModeOff:
		return "off"
	case switches.ModeCaptive:
		if s == switches.CaptiveState {
			return "captive"
		}
	}
	out := fmt.Sprintf("%s vlan=%d %d/%d", s.Mode, s.VLAN, s.DownloadMbps, s.UploadMbps)
	if s.MAC != "" {
		out += " mac=" + s.MAC
	}
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
