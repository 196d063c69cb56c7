package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/counters"
	"github.com/subprov/subprov/switches"
)

func cmdSample(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("sample", "sample [--switch NAME]",
		"Samples the interface counters and link state of every port that a line holds, on every switch\n"+
			"whose driver reads them (not the sim) or on --switch NAME, and records them as the scheduled\n"+
			"sampling does every SUBPROV_COUNTERS_INTERVAL (docs/network.md, Counters and outages); prints\n"+
			"one row per port: SWITCH PORT LINK DOWNLOAD UPLOAD, the bytes since the port's last reading\n"+
			"(baseline for a port's first). Exit status 1 when a port could not be read.")
	switchName := fs.String("switch", "", "sample only the switch `NAME`")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	cfg.Workers = false
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	names, err := switchesNamed(ctx, a.Store, "sample", *switchName)
	if err != nil {
		return err
	}
	var rows []sampledRow
	var failed error
	for _, name := range names {
		got, err := a.Counters.Sample(ctx, name)
		if errors.Is(err, switches.ErrNoCounters) && *switchName == "" {
			continue // a switch on the sim: nothing to sample
		}
		for _, p := range got {
			rows = append(rows, sampledRow{name, p})
		}
		if err != nil && failed == nil {
			failed = fmt.Errorf("sample: %w", err)
		}
	}
	writeSampled(stdout, rows)
	return failed
}

type sampledRow struct {
	Switch string
	counters.PortSampled
}

// writeSampled prints a sampling as a table, one row per port.
func writeSampled(w io.Writer, rows []sampledRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tPORT\tLINK\tDOWNLOAD\tUPLOAD")
	for _, r := range rows {
		link, down, up := "down", fmt.Sprint(r.Step.Download), fmt.Sprint(r.Step.Upload)
		switch {
		case r.Err != nil:
			link, down, up = "unreadable", "-", "-"
		case r.Stale:
			down, up = "-", "-"
		}
		if r.Err == nil && r.Reading.LinkUp {
			link = "up"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Switch, r.Port, link, down, up)
	}
	tw.Flush()
}
