package monitoring

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// BytesPerGB: usage is shown in decimal gigabytes, 10^9 bytes.
const BytesPerGB = 1e9

// Recorded is the source over what the counters package sampled from the switches: the hourly
// traffic series, the outages and each port's last reading.
type Recorded struct {
	Store *store.Store
}

// MonthlyUsage sums the port's hourly buckets from the month's first midnight in month's time
// zone to the next month's, in gigabytes rounded to two decimals. Hours are UTC hours, so in a
// zone whose offset is not whole hours a month's edge falls within its first or last hour.
func (r Recorded) MonthlyUsage(ctx context.Context, p switches.Port, month time.Time) (float64, float64, error) {
	start := time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, month.Location())
	down, up, err := r.Store.PortTraffic(ctx, p.Switch, p.Name, start, start.AddDate(0, 1, 0))
	if err != nil {
		return 0, 0, err
	}
	return GB(down), GB(up), nil
}

// GB is bytes in decimal gigabytes rounded to two decimals, as usage is shown.
func GB(bytes int64) float64 { return math.Round(float64(bytes)/BytesPerGB*100) / 100 }

// Events lists the port's recorded outages overlapping since..now, oldest first; one still
// open is ongoing (no ResolvedAt).
func (r Recorded) Events(ctx context.Context, p switches.Port, since, now time.Time) ([]Event, error) {
	outs, err := r.Store.PortOutages(ctx, p.Switch, p.Name, since, now)
	if err != nil {
		return nil, err
	}
	evs := make([]Event, 0, len(outs))
	for _, o := range outs {
		evs = append(evs, Event{ID: o.ID, StartedAt: o.StartedAt, ResolvedAt: o.ResolvedAt})
	}
	return evs, nil
}

// Link is the link state of the port's last reading; unknown when it was never sampled.
func (r Recorded) Link(ctx context.Context, p switches.Port, _ time.Time) (Link, error) {
	last, err := r.Store.LastPortReading(ctx, p.Switch, p.Name)
	if errors.Is(err, subprov.ErrNotFound) {
		return Link{State: LinkUnknown}, nil
	}
	if err != nil {
		return Link{}, err
	}
	l := Link{State: LinkDown, SampledAt: &last.SampledAt}
	if last.LinkUp {
		l.State = LinkUp
	}
	return l, nil
}

// ByDriver reads each port from the source of its switch's driver: Sim for a switch on the
// sim (none: an error), Recorded for every other. The driver is the switch row's, or Default
// (SUBPROV_SWITCH_DRIVER) for a switch that names none or has no row.
type ByDriver struct {
	Store    *store.Store
	Default  string
	Sim      Source
	Recorded Source
}

func (b ByDriver) source(ctx context.Context, p switches.Port) (Source, error) {
	row, err := store.SwitchByName(ctx, b.Store.R(), p.Switch)
	switch {
	case errors.Is(err, subprov.ErrNotFound):
		row = &subprov.Switch{Name: p.Switch}
	case err != nil:
		return nil, fmt.Errorf("monitoring %s: %w", p, err)
	}
	if driver := switches.DriverName(row, b.Default); driver == "" || driver == "sim" {
		if b.Sim == nil {
			return nil, fmt.Errorf("monitoring %s: no simulated source", p)
		}
		return b.Sim, nil
	}
	return b.Recorded, nil
}

// MonthlyUsage reads the month from the port's source.
func (b ByDriver) MonthlyUsage(ctx context.Context, p switches.Port, month time.Time) (float64, float64, error) {
	s, err := b.source(ctx, p)
	if err != nil {
		return 0, 0, err
	}
	return s.MonthlyUsage(ctx, p, month)
}

// Events reads the outages from the port's source.
func (b ByDriver) Events(ctx context.Context, p switches.Port, since, now time.Time) ([]Event, error) {
	s, err := b.source(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.Events(ctx, p, since, now)
}

// Link reads the link state from the port's source.
func (b ByDriver) Link(ctx context.Context, p switches.Port, now time.Time) (Link, error) {
	s, err := b.source(ctx, p)
	if err != nil {
		return Link{}, err
	}
	return s.Link(ctx, p, now)
}
