package counters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// DefaultEvery is how often each switch's counters are sampled when the configuration names
// no interval (SUBPROV_COUNTERS_INTERVAL).
const DefaultEvery = 5 * time.Minute

// readTimeout bounds one port's counter read.
const readTimeout = 30 * time.Second

// Service samples the switches' counters into the traffic series and outages.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
	// Switches reads a port's counters through its switch's own driver (the switches.Router).
	Switches switches.CounterReader
	Jobs     jobs.Enqueuer
	// Every is how often a switch is sampled (0: DefaultEvery); Default is the driver of a
	// switch that names none (SUBPROV_SWITCH_DRIVER): switches on the sim are not sampled.
	Every   time.Duration
	Default string
	Metrics *metrics.Recorder // nil: nothing is recorded
	Log     *slog.Logger      // nil: nothing is logged
}

// PortSampled is what a sampling read and recorded on one port.
type PortSampled struct {
	Port    string
	Reading Reading
	Step    Step
	// Stale: another sampling recorded a reading of the port first; this one adds nothing.
	Stale bool
	Err   error // the read's failure
}

// SampleSwitchJob is the switch.sample job.
func (s *Service) SampleSwitchJob(ctx context.Context, a jobs.SampleSwitch) error {
	_, err := s.Sample(ctx, a.Switch)
	if errors.Is(err, switches.ErrNoCounters) {
		// Final: trying again reads nothing more. Its ports' usage reads as no data.
		if s.Log != nil {
			s.Log.Info("switch reports no counters: nothing to sample", "switch", a.Switch, "err", err)
		}
		return nil
	}
	return err
}

// Sample reads the counters of every port that lines hold on the switch and records, in one
// transaction, each port's new reading, the traffic since its last one (hourly buckets) and
// the outages its link state opens or ends. A port that does not answer is left for the next
// sampling, which counts its traffic since the last reading it has; the sampling is then
// logged, counted as failed and returns the error. A driver without counters (the sim) has
// nothing to sample: ErrNoCounters.
func (s *Service) Sample(ctx context.Context, switchName string) ([]PortSampled, error) {
	ports, err := s.Store.PortsToSample(ctx, switchName)
	if err != nil {
		return nil, err
	}
	return s.SamplePorts(ctx, switchName, ports)
}

// SamplePorts samples the given ports of the switch as Sample does.
func (s *Service) SamplePorts(ctx context.Context, switchName string, ports []store.SampledPort) ([]PortSampled, error) {
	out := make([]PortSampled, 0, len(ports))
	var failed error
	for _, p := range ports {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		c, err := s.Switches.Counters(rctx, switches.Port{Switch: switchName, Name: p.Name})
		cancel()
		if errors.Is(err, switches.ErrNoCounters) {
			return nil, fmt.Errorf("sample switch %s: %w", switchName, err)
		}
		r := PortSampled{Port: p.Name, Err: err,
			// Microseconds: what the database keeps, so the reading compares equal when read back.
			Reading: Reading{At: s.Clock.Now().UTC().Truncate(time.Microsecond), InOctets: c.InOctets, OutOctets: c.OutOctets, LinkUp: c.LinkUp}}
		if err != nil && failed == nil {
			failed = fmt.Errorf("sample %s/%s: %w", switchName, p.Name, err)
		}
		out = append(out, r)
	}
	err := s.Store.InTx(ctx, func(tx *store.Tx) (err error) {
		for i, p := range ports {
			if out[i].Err != nil {
				continue
			}
			if out[i].Step, out[i].Stale, err = record(ctx, tx, p, out[i].Reading); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record samples of switch %s: %w", switchName, err)
	}
	s.Metrics.Sampling(switchName, failed != nil)
	if failed != nil && s.Log != nil {
		s.Log.Warn("counter sampling incomplete", "switch", switchName, "err", failed)
	}
	return out, failed
}

// record keeps one port's reading and what it adds since the port's last one; stale when a
// newer reading was recorded in the meantime.
func record(ctx context.Context, tx *store.Tx, p store.SampledPort, cur Reading) (Step, bool, error) {
	portID := p.PortID
	var prev *Reading
	var prevAt *time.Time
	last, err := tx.PortReading(ctx, portID)
	switch {
	case errors.Is(err, subprov.ErrNotFound):
	case err != nil:
		return Step{}, false, err
	default:
		prev = &Reading{At: last.SampledAt, InOctets: last.InOctets, OutOctets: last.OutOctets, LinkUp: last.LinkUp}
		prevAt = &last.SampledAt
		if !cur.At.After(prev.At) {
			return Step{}, true, nil
		}
	}
	ok, err := tx.PutPortReading(ctx, store.PortReading{PortID: portID, SampledAt: cur.At, InOctets: cur.InOctets,
		OutOctets: cur.OutOctets, LinkUp: cur.LinkUp}, prevAt)
	if err != nil || !ok {
		return Step{}, !ok, err
	}
	step := Next(prev, cur, PlanRates(p.DownloadMbps, p.UploadMbps))
	step.Outage = step.OutageOf(p.InService)
	for _, b := range step.Buckets {
		if err := tx.AddPortTraffic(ctx, portID, b.Hour, b.Download, b.Upload); err != nil {
			return step, false, err
		}
	}
	switch step.Outage {
	case OutageOpen:
		err = tx.OpenPortOutage(ctx, portID, cur.At)
	case OutageResolve:
		err = tx.ResolvePortOutage(ctx, portID, cur.At)
	}
	return step, false, err
}

// Sweep queues one switch.sample job per switch whose sampling is due (every Every) and
// whose driver reads counters (not the sim); the reads happen in the jobs.
func (s *Service) Sweep(ctx context.Context) error {
	every := s.Every
	if every <= 0 {
		every = DefaultEvery
	}
	now := s.Clock.Now()
	return jobs.ClaimDueAndEnqueue(ctx, s.Store, s.Jobs,
		func(ctx context.Context, tx *store.Tx) ([]string, error) {
			return tx.ClaimDueSamplings(ctx, now.Add(-every), now, s.Default)
		},
		func(name string) jobs.Args { return jobs.SampleSwitch{Switch: name} })
}
