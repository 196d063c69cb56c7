package switches

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/store"
)

// Sim is the built-in simulated switch for dev, demo, sandbox and tests. Its ports live in the
// sim_ports table, so every replica and worker sees the same port and a restart forgets
// nothing, and it obeys the dev "switch" fault so each documented failure can be shown.
type Sim struct {
	faults *faults.Switches
	hw     simHardware
	d      Driver // Confirmed(hw): the rules and the read-back every driver gets
}

// NewSim returns the durable simulated switch (state in the sim_ports table) obeying the dev
// "switch" fault, or the switch's own "switch@NAME" fault when it is set:
//
//	fail        -> every write returns ErrUnavailable (nothing changes)
//	unconfirmed -> the write is silently dropped, so Confirmed's read-back reports ErrUnconfirmed
//	port_in_use -> a write that puts the port in service returns ErrPortInUse (nothing
//	               changes); other writes work
//
// Without faults, putting in service a port in service with a different non-empty MAC bound
// returns ErrPortInUse (another device is on the port); the same MAC is idempotent. A
// convergence whose port already shows the intended state writes nothing, so under
// "unconfirmed" it succeeds: there is no write left to confirm.
func NewSim(st *store.Store, f *faults.Switches, clk subprov.Clock) Driver {
	hw := simHardware{st: st, faults: f, clk: clk}
	return &Sim{faults: f, hw: hw, d: Confirmed(hw)}
}

// AsSim returns the simulated switch behind d (a Router's registered "sim"), for tests and the
// demo that need the sim-only MonthlyUsage; ok is false for any other driver.
func AsSim(d Driver) (s *Sim, ok bool) {
	if r, isRouter := d.(*Router); isRouter {
		build, found := r.drivers()["sim"]
		if !found {
			return nil, false
		}
		if d, _ = build(Target{}); d == nil {
			return nil, false
		}
	}
	s, ok = d.(*Sim)
	return s, ok
}

func (s *Sim) Name() string { return s.hw.Name() }

func (s *Sim) Read(ctx context.Context, p Port) (State, error) { return s.d.Read(ctx, p) }

func (s *Sim) Converge(ctx context.Context, p Port, want State) error {
	// A request that is wrong is refused as such under any fault: a retry cannot help it.
	if _, err := validState(want); err == nil && validPort(p) == nil {
		if err := s.refuse("converge", p, want.Mode == ModeService); err != nil {
			return err
		}
	}
	return s.d.Converge(ctx, p, want)
}

// refuse applies the faults that answer before the switch is even read: "fail" refuses every
// write, including one that would change nothing, so a demo of an unreachable switch fails
// every time; "port_in_use" refuses only the writes that put a device's traffic on the port.
func (s *Sim) refuse(op string, p Port, entersService bool) error {
	switch s.faults.Switch(p.Switch) {
	case "fail":
		return fmt.Errorf("%s %s: %w (dev fault)", op, p, ErrUnavailable)
	case "port_in_use":
		if entersService {
			return fmt.Errorf("%s %s: %w (dev fault)", op, p, ErrPortInUse)
		}
	}
	return nil
}

// MonthlyUsage returns a plausible, deterministic month of traffic for a port that serves a
// subscriber (in service or suspended): 50-600 GB down and 10-120 GB up, seeded by the port and
// the month so the portal shows the same figures on every visit and every replica. The month
// runs from midnight on its first day in month's time zone (the provider's) to the next
// month's; the month under way counts only its elapsed part by the sim's clock; months still to come, and ports
// that are off or on the captive portal, read zero. A store error also reads zero: usage is
// informational and the sim has nothing better to show.
func (s *Sim) MonthlyUsage(ctx context.Context, p Port, month time.Time) (downloadGB, uploadGB float64) {
	st, err := s.d.Read(ctx, p)
	if err != nil || (st.Mode != ModeService && st.Mode != ModeSuspended) {
		return 0, 0
	}
	start := time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, month.Location())
	end := start.AddDate(0, 1, 0)
	now := s.hw.clk.Now()
	if !now.After(start) {
		return 0, 0
	}
	share := 1.0
	if now.Before(end) {
		share = float64(now.Sub(start)) / float64(end.Sub(start))
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", p.Switch, p.Name, start.Format("2006-01"))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	down := (50 + r.Float64()*550) * share
	up := (10 + r.Float64()*110) * share
	return round2(down), round2(up)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// simHardware is the simulated switch itself, the Raw under Confirmed: it stores what it is
// told unless a fault says otherwise.
type simHardware struct {
	st     *store.Store
	faults *faults.Switches
	clk    subprov.Clock
}

func (h simHardware) Name() string { return "sim" }

func (h simHardware) Read(ctx context.Context, p Port) (State, error) {
	row, err := ReadSimPort(ctx, h.st.R(), p.Switch, p.Name)
	if errors.Is(err, subprov.ErrNotFound) {
		return State{Mode: ModeOff}, nil
	}
	if err != nil {
		return State{}, err
	}
	return stateOf(row), nil
}

func (h simHardware) Write(ctx context.Context, p Port, want State) error {
	switch h.faults.Switch(p.Switch) {
	case "fail":
		return fmt.Errorf("%w (dev fault)", ErrUnavailable)
	case "unconfirmed":
		// The switch acknowledges and does nothing, the failure Confirmed exists to catch.
		return nil
	}
	// Only another device's binding refuses a write that puts the port in service: checked in
	// the write's own statement, so two activations racing on one port cannot both bind.
	written, bound, err := PutSimPortUnlessBound(ctx, h.st, SimPortState{
		Switch: p.Switch, Port: p.Name, State: string(want.Mode),
		VLAN: want.VLAN, DownloadMbps: want.DownloadMbps, UploadMbps: want.UploadMbps, MAC: want.MAC,
	}, string(ModeService), h.clk.Now())
	if err != nil {
		return err
	}
	if !written {
		if bound == "" {
			return fmt.Errorf("%w: another device is bound", ErrPortInUse)
		}
		return fmt.Errorf("%w: %s is bound", ErrPortInUse, bound)
	}
	return nil
}

func stateOf(row *SimPortState) State {
	return State{Mode: Mode(row.State), Config: Config{VLAN: row.VLAN, DownloadMbps: row.DownloadMbps,
		UploadMbps: row.UploadMbps, MAC: row.MAC}}
}
