package switches

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/store"
)

// Target is one switch as a driver constructor is given it: the inventory row with its
// password opened. It never leaves the driver: no route or log shows it.
type Target struct {
	Name, Address, Username, Password string
	HostKey                           string // the switch's SSH known-hosts line ("" = none kept)
	Model                             string // what a netconf switch speaks: "openconfig" or "junos"
}

// Constructor builds the driver of one switch.
type Constructor func(Target) (Driver, error)

// Drivers is the registry of the drivers a switch row may name, by name. A real driver
// implements Raw and is registered with one line, Confirmed adding the rules and read-back:
//
//	drivers.AddRaw("netconf", netconf.New) // netconf.New: func(switches.Target) (switches.Raw, error)
type Drivers map[string]Constructor

// BuiltIn returns the registry of the drivers built into this package: "sim", one durable
// simulated switch shared by every switch row that names it.
func BuiltIn(st *store.Store, f *faults.Switches, clk subprov.Clock) Drivers {
	sim := NewSim(st, f, clk)
	return Drivers{"sim": func(Target) (Driver, error) { return sim, nil }}
}

// AddRaw registers a driver written as a Raw: each switch gets Confirmed(raw).
func (d Drivers) AddRaw(name string, build func(Target) (Raw, error)) {
	d[name] = func(t Target) (Driver, error) {
		raw, err := build(t)
		if err != nil {
			return nil, err
		}
		return Confirmed(raw), nil
	}
}

// Register adds (or replaces) a driver of the running router: a switch whose row names it is
// built with it from its next operation on (a row's driver is built again when the row
// changes). The registry is replaced, never changed in place, so operations under way keep
// reading the one they started with.
func (r *Router) Register(name string, build Constructor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := make(Drivers, len(r.Drivers)+1)
	maps.Copy(d, r.Drivers)
	d[name] = build
	r.Drivers = d
}

func (r *Router) drivers() Drivers {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Drivers
}

// Names lists the registered drivers in order.
func (d Drivers) Names() []string {
	out := make([]string, 0, len(d))
	for name := range d {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

var (
	// ErrBusy wraps ErrUnavailable: the switch already runs as many operations as its limit
	// allows and none ended within the queue wait. The job that met it tries again shortly.
	ErrBusy = fmt.Errorf("%w: switch at its concurrency limit", ErrUnavailable)
	// ErrBreakerOpen wraps ErrUnavailable: the switch failed too many times in a row and is
	// not tried again until its cool-down ends (a *BreakerOpenError says when).
	ErrBreakerOpen = fmt.Errorf("%w: circuit breaker open", ErrUnavailable)
)

// BreakerOpenError is an operation refused by a switch's open breaker: errors.Is finds
// ErrBreakerOpen (and ErrUnavailable) in it. Until is when the next probe may go.
type BreakerOpenError struct {
	Switch   string
	Until    time.Time
	Failures int
}

func (e *BreakerOpenError) Error() string {
	return fmt.Sprintf("switch %s: %v until %s after %d failures", e.Switch, ErrBreakerOpen, e.Until.UTC().Format(time.RFC3339), e.Failures)
}

func (e *BreakerOpenError) Unwrap() error { return ErrBreakerOpen }

// Router defaults.
const (
	DefaultLimit     = 4
	DefaultQueueWait = time.Second
	DefaultFailures  = 5
	DefaultCoolDown  = 30 * time.Second
)

// Router is the Driver provisioning uses: it sends each port's read and convergence to the
// driver of the port's own switch, as the switches table names it (a switch that names none,
// or has no row, gets the default driver). It keeps one driver per switch, built again when
// the row changes, and shields every switch from the others: each switch runs at most Limit
// operations at once (a further one waits up to QueueWait, then fails with ErrBusy), and after
// Failures consecutive unavailable answers (ErrUnavailable or a timeout) its circuit breaker
// opens: every operation on it fails at once with ErrBreakerOpen for CoolDown, then one probe
// is let through (half-open), whose success closes the breaker and whose failure opens it for
// another cool-down. So a slow or dead switch holds no worker longer than its own operations
// and never delays another switch. The breakers and limits are this process's own.
type Router struct {
	Store   *store.Store
	Sealer  *identity.Sealer // opens the switches' passwords
	Drivers Drivers
	Default string            // the driver of a switch that names none (SUBPROV_SWITCH_DRIVER)
	Clock   subprov.Clock     // the breakers' time; nil: the wall clock (a switch's cool-down is real time)
	Log     *slog.Logger      // nil: nothing is logged
	Metrics *metrics.Recorder // the breakers' openings and closings (nil: none recorded)

	Limit     int           // 0: DefaultLimit
	QueueWait time.Duration // 0: DefaultQueueWait
	Failures  int           // 0: DefaultFailures
	CoolDown  time.Duration // 0: DefaultCoolDown

	mu     sync.Mutex
	lines  map[string]*line // by switch name
	closed bool
}

// line is one switch as the router runs it: its driver, built for the row version it was
// built from, its concurrency slots and its breaker.
type line struct {
	slots chan struct{}

	mu       sync.Mutex
	built    string // the row's id and version the driver was built for ("" = none yet)
	driver   *inUse
	failures int       // consecutive unavailable answers
	openTill time.Time // the breaker is open until then (zero: closed)
	probing  bool      // a half-open probe is under way
}

// inUse is one built driver and the operations using it. A driver replaced (its row changed)
// or retired (the router closes) is closed once the last of them ends, when it is an io.Closer
// (a driver that keeps a connection to its switch).
type inUse struct {
	d       Driver
	users   int
	retired bool
}

// errRouterClosed is an operation on a router already closed.
var errRouterClosed = errors.New("switch router closed")

// Name names the router by its default driver.
func (r *Router) Name() string { return r.Default }

// Read reads a port through its switch's driver.
func (r *Router) Read(ctx context.Context, p Port) (State, error) {
	var s State
	err := r.do(ctx, p, func(d Driver) (err error) {
		s, err = d.Read(ctx, p)
		return err
	})
	return s, err
}

// Converge converges a port through its switch's driver.
func (r *Router) Converge(ctx context.Context, p Port, want State) error {
	return r.do(ctx, p, func(d Driver) error { return d.Converge(ctx, p, want) })
}

// BreakerState is a switch's circuit breaker as this process sees it.
type BreakerState struct {
	Open     bool // operations fail at once until OpenTill
	OpenTill time.Time
	Failures int // consecutive unavailable answers
	InFlight int // operations under way
}

// Breaker returns the state of a switch's breaker ("closed", zero, for a switch not used yet).
func (r *Router) Breaker(name string) BreakerState {
	r.mu.Lock()
	l := r.lines[name]
	r.mu.Unlock()
	if l == nil {
		return BreakerState{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return BreakerState{Open: r.now().Before(l.openTill), OpenTill: l.openTill, Failures: l.failures, InFlight: len(l.slots)}
}

func (r *Router) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

func (r *Router) line(name string) *line {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lines == nil {
		r.lines = map[string]*line{}
	}
	l := r.lines[name]
	if l == nil {
		l = &line{slots: make(chan struct{}, orDefault(r.Limit, DefaultLimit))}
		r.lines[name] = l
	}
	return l
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// do runs op on the driver of p's switch, within the switch's slots and breaker.
func (r *Router) do(ctx context.Context, p Port, op func(Driver) error) error {
	if err := validPort(p); err != nil {
		return fmt.Errorf("switch %q: %w", p.Switch, err)
	}
	l := r.line(p.Switch)
	if err := l.closed(p.Switch, r.now()); err != nil { // an open breaker fails at once, without queueing
		return err
	}
	wait := time.NewTimer(orDefault(r.QueueWait, DefaultQueueWait))
	defer wait.Stop()
	select {
	case l.slots <- struct{}{}:
	case <-wait.C:
		return fmt.Errorf("switch %s: %w (%d operations under way)", p.Switch, ErrBusy, cap(l.slots))
	case <-ctx.Done():
		return fmt.Errorf("switch %s: waiting for a slot: %w", p.Switch, ctx.Err())
	}
	defer func() { <-l.slots }()
	// Asked again with the slot: the breaker may have opened while this operation queued.
	if err := l.allow(p.Switch, r.now()); err != nil {
		return err
	}
	u, err := r.driver(ctx, l, p.Switch)
	if err != nil {
		// Nothing reached the switch (its row did not read, or the driver could not be built
		// from it): the breaker does not count it, and a probe let through ends.
		l.unprobe()
		return err
	}
	err = op(u.d)
	l.release(u)
	r.record(l, p.Switch, err)
	return err
}

// closed reports a *BreakerOpenError while the breaker is open and its cool-down runs, or its
// probe is under way.
func (l *line) closed(name string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refusal(name, now)
}

func (l *line) refusal(name string, now time.Time) error {
	if l.openTill.IsZero() || (!now.Before(l.openTill) && !l.probing) {
		return nil
	}
	return &BreakerOpenError{Switch: name, Until: l.openTill, Failures: l.failures}
}

// allow lets an operation through a closed breaker, or as the one probe of a half-open one.
func (l *line) allow(name string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refusal(name, now); err != nil {
		return err
	}
	l.probing = !l.openTill.IsZero()
	return nil
}

func (l *line) unprobe() {
	l.mu.Lock()
	l.probing = false
	l.mu.Unlock()
}

// unavailable reports whether err says the switch cannot be used: it did not answer, or it
// refused the credentials (each further try is one more refused login). What opens the
// breaker. Every other answer (done, refused request, unconfirmed) shows the switch is there.
func unavailable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCredentials) || errors.Is(err, context.DeadlineExceeded)
}

func (r *Router) record(l *line, name string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
	if !unavailable(err) {
		if !l.openTill.IsZero() {
			if r.Log != nil {
				r.Log.Info("switch breaker closed", "switch", name)
			}
			r.Metrics.Breaker(name, false)
		}
		l.failures, l.openTill = 0, time.Time{}
		return
	}
	l.failures++
	if l.failures >= orDefault(r.Failures, DefaultFailures) {
		l.openTill = r.now().Add(orDefault(r.CoolDown, DefaultCoolDown))
		if r.Log != nil {
			r.Log.Warn("switch breaker open", "switch", name, "failures", l.failures, "until", l.openTill)
		}
		r.Metrics.Breaker(name, true)
	}
}

// driver returns the switch's driver, in use until release, built again when its row changed
// since. It is built once per row version, under the line's lock, and the driver it replaces
// is closed once the operations using it end. A switch without a row (a port written before
// the inventory had it) gets the default driver. A row that does not read is the database's
// error as it is.
func (r *Router) driver(ctx context.Context, l *line, name string) (*inUse, error) {
	row, err := store.SwitchByName(ctx, r.Store.R(), name)
	switch {
	case errors.Is(err, subprov.ErrNotFound):
		row = &subprov.Switch{Name: name}
	case err != nil:
		return nil, fmt.Errorf("switch %s: read its row: %w", name, err)
	}
	built := row.ID + "\x00" + fmt.Sprint(row.Version)
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("switch %s: %w: %w", name, ErrUnavailable, errRouterClosed)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.built != built || l.driver == nil {
		d, err := r.build(row)
		if err != nil {
			return nil, err
		}
		old := l.driver
		l.built, l.driver = built, &inUse{d: d}
		if old != nil {
			old.retired = true
			if old.users == 0 {
				go closeDriver(old.d)
			}
		}
	}
	l.driver.users++
	return l.driver, nil
}

// release ends an operation's use of u, closing u if it was the last use of a replaced driver.
func (l *line) release(u *inUse) {
	l.mu.Lock()
	u.users--
	last := u.retired && u.users == 0
	l.mu.Unlock()
	if last {
		closeDriver(u.d)
	}
}

func closeDriver(d Driver) {
	if c, ok := d.(io.Closer); ok {
		_ = c.Close()
	}
}

// Close closes every driver the router built, each once the operations using it end; an
// operation that starts after fails with ErrUnavailable.
func (r *Router) Close() error {
	r.mu.Lock()
	r.closed = true
	lines := make([]*line, 0, len(r.lines))
	for _, l := range r.lines {
		lines = append(lines, l)
	}
	r.mu.Unlock()
	for _, l := range lines {
		l.mu.Lock()
		u := l.driver
		l.built, l.driver = "", nil
		idle := u != nil && u.users == 0
		if u != nil {
			u.retired = true
		}
		l.mu.Unlock()
		if idle {
			closeDriver(u.d)
		}
	}
	return nil
}

// build makes a switch's driver from its row. A driver this binary does not have is
// ErrUnavailable (another version of the service may have it). A password that does not open
// (sealed under a secret the service no longer has) is ErrAuth, and the constructor's own
// refusal (a bad address, host key or model) keeps its class, ErrInvalid when it has none:
// final, the operator mends the row and the next try builds the driver again.
func (r *Router) build(row *subprov.Switch) (Driver, error) {
	name := DriverName(row, r.Default)
	drivers := r.drivers()
	construct, ok := drivers[name]
	if !ok {
		return nil, fmt.Errorf("switch %s: %w: driver %q is not built in (have %v)", row.Name, ErrUnavailable, name, drivers.Names())
	}
	t := Target{Name: row.Name, Address: row.Address, Username: row.Username, HostKey: row.HostKey, Model: row.Model}
	if row.Secret != "" {
		if r.Sealer == nil {
			return nil, fmt.Errorf("switch %s: %w: no key to open its password", row.Name, ErrAuth)
		}
		pw, err := r.Sealer.Open(PasswordPurpose(row.ID), row.Secret)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w: password: %w", row.Name, ErrAuth, err)
		}
		t.Password = string(pw)
	}
	d, err := construct(t)
	switch {
	case err == nil:
		return d, nil
	case Final(err) || errors.Is(err, ErrUnavailable):
		return nil, fmt.Errorf("switch %s: driver %s: %w", row.Name, name, err)
	default:
		return nil, fmt.Errorf("switch %s: driver %s: %w: %w", row.Name, name, ErrInvalid, err)
	}
}

// DriverName is the driver a switch runs on: the one its row names, else def (the service's
// default driver, SUBPROV_SWITCH_DRIVER).
func DriverName(row *subprov.Switch, def string) string { return orDefault(row.Driver, def) }

// PasswordPurpose is what a switch's password is sealed for: it opens for that switch only.
func PasswordPurpose(switchID string) string { return "switch password:" + switchID }
