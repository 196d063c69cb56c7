package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// Port state: the database is the one source of what each port should be doing. Every
// transaction that changes a line recomputes its port's desired setting from the lines that
// hold the port (DesiredPort) and commits it with the change; every switch write is one
// operation, converging the port to the setting it reads when it runs, by one converger per
// port at a time (a lease in port_states). So however orders, suspends, restores, plan
// changes, holds, cancellations and deprovisioning interleave, the port ends as the lines say.

// Convergence timing.
const (
	// convergeTimeout bounds one attempt's switch read, write and read-back.
	convergeTimeout = 30 * time.Second
	// leaseFor is how long a converger holds a port; a process that dies holding it holds
	// it no longer than this.
	leaseFor = convergeTimeout + 15*time.Second
	// AwaitTimeout is how long a request that reports the switch's answer waits for it.
	AwaitTimeout = 30 * time.Second
	// ReactivationTimeout is AwaitTimeout for a reactivation, which switches a port on from
	// the captive portal.
	ReactivationTimeout = time.Minute
	// maxConvergeAttempts is how often the port.converge job tries before the port is
	// marked unconverged and an operator ticket is opened.
	maxConvergeAttempts = jobs.ConvergeAttempts
)

// errPortBusy means another converger holds the port's lease, or the port's switch runs as
// many operations as its limit allows: either way the port is tried again shortly.
var errPortBusy = errors.New("another converger holds the port")

// ConvergeError is a port that did not reach its desired setting: Reason is the failure's code
// (port_in_use, switch_write_unconfirmed, switch_rejected, switch_unavailable, timeout).
type ConvergeError struct {
	Reason string
	Err    error // the switch's error, when this process made the attempt
}

func (e *ConvergeError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *ConvergeError) Unwrap() error { return e.Err }

// reasonErrors are the switch errors each failure reason stands for, so errors.Is answers
// alike whether this process made the attempt or read another's outcome.
var reasonErrors = map[string]error{
	"port_in_use":              switches.ErrPortInUse,
	"switch_write_unconfirmed": switches.ErrUnconfirmed,
	"switch_rejected":          switches.ErrInvalid,
	"switch_unavailable":       switches.ErrUnavailable,
}

// Is reports whether the failure's reason is the switch error target.
func (e *ConvergeError) Is(target error) bool {
	return target != nil && reasonErrors[e.Reason] == target
}

// lineMode is what a line asks of its port: service while it runs, suspended (its config kept)
// while suspended, the captive portal otherwise. A cancelled line keeps what it had until it
// is deprovisioned; a line whose provisioning failed asks for the captive portal.
func lineMode(l *subprov.Subscription) switches.Mode {
	status := l.Status
	if status == subprov.StatusCancelled {
		if l.WorkflowState == WorkflowDeprovisioned {
			return switches.ModeCaptive
		}
		status = l.StatusBeforeCancel
	}
	if l.WorkflowState == WorkflowProvisioningFailed {
		return switches.ModeCaptive
	}
	switch status {
	case subprov.StatusActive:
		return switches.ModeService
	case subprov.StatusSuspended:
		return switches.ModeSuspended
	default:
		return switches.ModeCaptive
	}
}

var modeRank = map[switches.Mode]int{switches.ModeCaptive: 0, switches.ModeSuspended: 1, switches.ModeService: 2}

// DesiredPort decides what port p should be doing from the lines that hold it (oldest first):
// the setting of the line that asks the most of it (service, then suspended; the newest on a
// tie), with the line's VLAN, its plan's bandwidth and its device's MAC binding; the captive
// portal when no line asks for service. wired is false when a sandbox line holds the port:
// sandbox buildings are not wired to a switch.
func DesiredPort(p switches.Port, holders []subprov.PortHolder) (want switches.State, wired bool) {
	for _, h := range holders {
		if h.Sandbox {
			return switches.State{}, false
		}
	}
	best := decidingHolder(holders)
	if best == nil || lineMode(best.Line) == switches.ModeCaptive {
		return switches.CaptiveState, true
	}
	vlan := best.Line.VLAN
	if vlan == 0 {
		vlan = switches.ServiceVLAN(p)
	}
	return switches.State{Mode: lineMode(best.Line), Config: switches.Config{VLAN: vlan, DownloadMbps: best.DownloadMbps,
		UploadMbps: best.UploadMbps, MAC: best.Line.MACAddress}}, true
}

// decidingHolder is the holder whose line decides the port's setting: the one that asks the
// most of it (service, then suspended, then captive), the newest on a tie; nil when none.
func decidingHolder(holders []subprov.PortHolder) *subprov.PortHolder {
	var best *subprov.PortHolder
	for i := range holders {
		if h := &holders[i]; best == nil || modeRank[lineMode(h.Line)] >= modeRank[lineMode(best.Line)] {
			best = h
		}
	}
	return best
}

// DecidingLine is the line that decides the port's setting among its holders (DesiredPort),
// nil when none holds it.
func DecidingLine(holders []subprov.PortHolder) *subprov.Subscription {
	if h := decidingHolder(holders); h != nil {
		return h.Line
	}
	return nil
}

// portLine is the line an operator ticket or a drift event about the port speaks of: the one
// that decides the port's setting now (DesiredPort), else, when no line holds the port any
// more, the newest that ever did; nil when no line ever did.
func (s *Service) portLine(ctx context.Context, portID string) (*subprov.Subscription, error) {
	holders, err := s.Store.PortHolders(ctx, portID)
	if err != nil {
		return nil, err
	}
	if line := DecidingLine(holders); line != nil {
		return line, nil
	}
	line, err := s.Store.LatestLineOnPort(ctx, portID)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, nil
	}
	return line, err
}

// wantPort recomputes a port's desired setting inside the transaction that changed one of its
// lines; changed reports whether it moved. A line without a port has nothing to decide.
func (s *Service) wantPort(ctx context.Context, tx *store.Tx, portID string) (changed bool, err error) {
	if portID == "" {
		return false, nil
	}
	holders, err := tx.PortHolders(ctx, portID)
	if err != nil {
		return false, err
	}
	port, err := tx.PortByID(ctx, portID)
	if err != nil {
		return false, err
	}
	want, wired := DesiredPort(switches.Port{Switch: port.Switch, Name: port.Name}, holders)
	if !wired {
		return false, nil
	}
	_, changed, err = tx.SetPortWant(ctx, portID, want.Setting(), s.Clock.Now())
	return changed, err
}

// FollowPort recomputes a port's desired setting inside tx and, when it moved, queues the
// port's convergence, so the switch follows once tx commits even if no request waits for it.
func (s *Service) FollowPort(ctx context.Context, tx *store.Tx, portID string) error {
	changed, err := s.wantPort(ctx, tx, portID)
	if err != nil || !changed {
		return err
	}
	return s.Jobs.Enqueue(ctx, tx, jobs.ConvergePort{PortID: portID})
}

// convergePort is the one switch write: take the port's lease, write the desired setting read
// with it, record the outcome, and go again while the desired setting moved on meanwhile. It
// returns the port's state after, nil when the port has no desired setting (never held, or
// sandbox); errPortBusy when another converger holds the lease or the switch is busy; or the attempt's
// *ConvergeError.
func (s *Service) convergePort(ctx context.Context, portID string) (*subprov.PortConvergence, error) {
	token := store.NewID()
	port, err := s.Store.PortByID(ctx, portID)
	if err != nil {
		return nil, err
	}
	sp := switches.Port{Switch: port.Switch, Name: port.Name}
	for {
		now := s.Clock.Now()
		c, ok, err := s.Store.LeasePort(ctx, portID, token, now.Add(leaseFor), now)
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errPortBusy
		}
		wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
		werr := s.Switch.Converge(wctx, sp, switches.StateOf(c.Want))
		cancel()
		if errors.Is(werr, switches.ErrBusy) || errors.Is(werr, switches.ErrBreakerOpen) {
			// The switch never saw the attempt (it runs as many as its limit allows, or its
			// breaker is open): the lease goes back with nothing recorded. A busy switch is
			// tried again as a busy port; an open breaker answers as unavailable, and a job
			// waits for the breaker's probe (switchWait).
			if err := s.Store.ReleasePort(context.WithoutCancel(ctx), portID, token); err != nil {
				return nil, err
			}
			if errors.Is(werr, switches.ErrBusy) {
				return nil, fmt.Errorf("%w: %w", errPortBusy, werr)
			}
			return nil, &ConvergeError{Reason: "switch_unavailable", Err: werr}
		}
		failure := ""
		if werr != nil {
			failure = failureReason(werr)
		}
		after, err := s.Store.FinishConverge(context.WithoutCancel(ctx), portID, token, c.Version, failure, s.Clock.Now())
		if err != nil {
			return nil, err
		}
		if werr != nil {
			s.Log.Warn("port did not converge", "port", sp.String(), "version", c.Version, "reason", failure, "err", werr)
			s.Metrics.SwitchError(sp.Switch, failure)
			return after, &ConvergeError{Reason: failure, Err: werr}
		}
		if after.Version == c.Version {
			return after, nil
		}
	}
}

// awaitPort converges a port to the desired setting committed now and waits, up to timeout,
// for the switch to confirm it (or a later one): by converging itself, or, while another
// process holds the port, by watching its outcome. A port with nothing desired is done at once.
func (s *Service) awaitPort(ctx context.Context, portID string, timeout time.Duration) error {
	if portID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := s.Store.PortConvergence(ctx, portID)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	version := c.Version
	poll := 10 * time.Millisecond
	for {
		_, err := s.convergePort(ctx, portID)
		switch {
		case err == nil:
			return nil // converged to the latest setting, which is version or later
		case !errors.Is(err, errPortBusy):
			if ctx.Err() != nil {
				return &ConvergeError{Reason: "timeout", Err: err}
			}
			return err
		}
		if c, err = s.Store.PortConvergence(ctx, portID); err != nil {
			if ctx.Err() != nil {
				return &ConvergeError{Reason: "timeout", Err: err}
			}
			return err
		}
		if c.Converged(version) {
			return nil
		}
		if c.Failed(version) {
			return &ConvergeError{Reason: c.Failure}
		}
		select {
		case <-ctx.Done():
			return &ConvergeError{Reason: "timeout", Err: ctx.Err()}
		case <-time.After(poll):
		}
		poll = min(2*poll, 250*time.Millisecond)
	}
}

// ConvergePort is the port.converge job: converge the port to its desired setting. A port
// another converger holds is tried again shortly; a failure is retried with backoff, and when
// the retries run out the port is marked unconverged and one operator ticket is opened for it
// (not one per attempt). The lines keep their status: the port is what is behind.
func (s *Service) ConvergePort(ctx context.Context, a jobs.ConvergePort, attempt int) error {
	_, cerr := s.convergePort(ctx, a.PortID)
	if wait, ok := s.switchWait(cerr); ok {
		return jobs.Snooze(wait)
	}
	switch {
	case cerr == nil:
		return nil
	case attempt < maxConvergeAttempts:
		return fmt.Errorf("converge port %s (attempt %d): %w", a.PortID, attempt, cerr)
	}
	line, lerr := s.portLine(ctx, a.PortID)
	if lerr != nil {
		return lerr
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		flagged, err := tx.MarkUnconverged(ctx, a.PortID, s.Clock.Now())
		if err != nil || !flagged || line == nil {
			return err
		}
		s.Log.Error("port unconverged: retries ran out", "port_id", a.PortID, "err", cerr)
		// One open ticket per port: a port that converged and failed again while its ticket
		// is still being worked adds nothing to it.
		if open, err := tx.PortTicketOpen(ctx, a.PortID); err != nil || open {
			return err
		}
		return s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: line.ProviderID, SubscriberID: line.SubscriberID, PortID: a.PortID, Kind: "operator",
			Priority: "high", Subject: "Switch port does not follow its line",
			InternalNote: fmt.Sprintf("Port %s did not reach its desired setting after %d attempts (%s); subscription %s. "+
				"The line keeps its status; the port is marked unconverged until a convergence succeeds.", a.PortID, attempt, failureReason(cerr), line.ID)})
	})
}

// switchWait says how long a job waits, without counting an attempt, after err: a second
// while another converger holds the port or its switch is busy, and until the breaker's next
// probe while the switch's breaker is open (the probe is an attempt, and counts).
func (s *Service) switchWait(err error) (time.Duration, bool) {
	var open *switches.BreakerOpenError
	switch {
	case errors.Is(err, errPortBusy):
		return time.Second, true
	case errors.As(err, &open):
		return max(time.Until(open.Until), time.Second), true
	}
	return 0, false
}
