// Package monitoring is the seam to the provider's network monitoring: traffic counters per
// month, connection events (outages) and the link state per port. Recorded reads what the
// counters package sampled from the switches; the simulated source reads the sim switch's
// made-up counters and derives plausible, deterministic outages, so the demo shows
// real-looking data. ByDriver picks one per port by its switch's driver.
package monitoring

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/subprov/subprov/switches"
)

// Event is a period without connectivity on a port.
type Event struct {
	ID         string
	StartedAt  time.Time
	ResolvedAt *time.Time // nil while ongoing
}

// Source reads usage and connection events.
type Source interface {
	// MonthlyUsage is the traffic of the calendar month that starts at month, in month's time
	// zone (the provider's), up to now for the current month.
	MonthlyUsage(ctx context.Context, p switches.Port, month time.Time) (downloadGB, uploadGB float64, err error)
	Events(ctx context.Context, p switches.Port, since, now time.Time) ([]Event, error)
	// Link is the port's link state as last known at now, never read live from the switch.
	Link(ctx context.Context, p switches.Port, now time.Time) (Link, error)
}

// Link states.
const (
	LinkUp      = "up"
	LinkDown    = "down"
	LinkUnknown = "unknown" // never sampled
)

// Link is a port's link state and when it was read (nil when never).
type Link struct {
	State     string
	SampledAt *time.Time
}

// Sim is the simulated source over the sim switch.
type Sim struct {
	Switch *switches.Sim
}

// MonthlyUsage reads the sim switch's counters for the month.
func (s Sim) MonthlyUsage(ctx context.Context, p switches.Port, month time.Time) (float64, float64, error) {
	d, u := s.Switch.MonthlyUsage(ctx, p, month)
	return d, u, nil
}

// Link is down during a simulated outage and up otherwise, as of now.
func (s Sim) Link(ctx context.Context, p switches.Port, now time.Time) (Link, error) {
	evs, err := s.Events(ctx, p, now.AddDate(0, 0, -1), now)
	if err != nil {
		return Link{}, err
	}
	l := Link{State: LinkUp, SampledAt: &now}
	for _, e := range evs {
		if e.ResolvedAt == nil {
			l.State = LinkDown
		}
	}
	return l, nil
}

// Events derives up to three short outages per 30 days from a hash of the port and the
// period, the same on every call.
func (s Sim) Events(ctx context.Context, p switches.Port, since, now time.Time) ([]Event, error) {
	var out []Event
	day := time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC)
	for ; day.Before(now); day = day.AddDate(0, 0, 1) {
		h := fnv.New32a()
		h.Write([]byte(p.Switch + "/" + p.Name + "@" + day.Format(time.DateOnly)))
		v := h.Sum32()
		if v%23 != 0 { // about one day in 23 has an outage
			continue
		}
		start := day.Add(time.Duration(v%86400) * time.Second)
		if start.After(now) {
			continue
		}
		ev := Event{ID: p.Switch + "/" + p.Name + "/" + start.Format("20060102T150405"), StartedAt: start}
		end := start.Add(time.Duration(5+v%115) * time.Minute)
		if end.Before(now) {
			ev.ResolvedAt = &end
		}
		out = append(out, ev)
	}
	return out, nil
}
