// Package switches holds the switch drivers that put a subscriber's port into service, with
// every write confirmed by reading the port back.
package switches

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/store"
)

// Port names one access port: the switch and the port on it (e.g. "sw-a", "ge-0/0/12").
type Port struct {
	Switch, Name string
}

func (p Port) String() string { return p.Switch + "/" + p.Name }

// Config is what service on a port consists of. MAC "" means no binding; otherwise the
// lower-case colon form ("aa:bb:cc:dd:ee:ff"), which is what a read-back is compared with.
type Config struct {
	VLAN, DownloadMbps, UploadMbps int
	MAC                            string
}

// Mode is what a port is doing.
type Mode string

const (
	ModeOff       Mode = "off"       // never configured
	ModeService   Mode = "service"   // carrying the subscriber's traffic on its VLAN
	ModeSuspended Mode = "suspended" // no traffic, but the service config is kept for Restore
	ModeCaptive   Mode = "captive"   // on the captive-portal VLAN, no binding, no bandwidth
)

// State is a port as read from the switch. For ModeOff and ModeCaptive the config is the
// fixed one of that mode (zero, and CaptiveVLAN alone), so two reads compare with ==.
type State struct {
	Mode Mode
	Config
}

func (s State) String() string {
	return fmt.Sprintf("%s vlan=%d down=%d up=%d mac=%q", s.Mode, s.VLAN, s.DownloadMbps, s.UploadMbps, s.MAC)
}

// CaptiveVLAN is the VLAN of the captive portal, where unsubscribed ports sit so a newcomer in
// the suite can sign up from the building's own network.
const CaptiveVLAN = 999

// Service VLANs come from a block of their own, clear of CaptiveVLAN and of the low VLANs
// switches reserve for management.
const (
	serviceVLANMin   = 2000
	serviceVLANCount = 2000 // 2000-3999
)

// ServiceVLAN derives a line's VLAN deterministically from the port (range 2000-3999), so a
// re-run provisions the same VLAN and nothing has to be allocated or remembered. Two ports may
// hash to the same VLAN; access ports are isolated from each other, so that is harmless on
// these building switches.
func ServiceVLAN(p Port) int {
	h := fnv.New32a()
	h.Write([]byte(p.Switch))
	h.Write([]byte{0}) // keeps ("a/b", "c") apart from ("a", "b/c")
	h.Write([]byte(p.Name))
	return serviceVLANMin + int(h.Sum32()%serviceVLANCount)
}

var (
	// ErrUnavailable is transient: the switch did not take the write; retry later.
	ErrUnavailable = errors.New("switch unavailable")
	// ErrUnconfirmed means the read-back did not show the write; an operator has to look.
	ErrUnconfirmed = errors.New("switch write not confirmed")
	// ErrPortInUse means a different MAC is learned or bound on the port.
	ErrPortInUse = errors.New("another device is on the port")
	// ErrInvalid means the request itself is wrong (empty port, unknown mode, bad VLAN,
	// bandwidth or MAC);
	// retrying cannot help.
	ErrInvalid = errors.New("invalid switch request")
	// ErrCredentials is final: the switch refused the login, or did not present the host key
	// the inventory pins (or none is pinned). Retrying cannot help until the switch's row is
	// corrected. ErrAuth and ErrHostKey say which.
	ErrCredentials = errors.New("switch credentials refused")
	// ErrAuth wraps ErrCredentials: the switch refused the username and password (or the
	// account's rights), or the password cannot be opened.
	ErrAuth = fmt.Errorf("%w: login refused", ErrCredentials)
	// ErrHostKey wraps ErrCredentials: the switch did not present the pinned host key, or no
	// usable key is pinned; the connection is refused before any credential is sent.
	ErrHostKey = fmt.Errorf("%w: host key does not match", ErrCredentials)
)

// Final reports whether err is an answer no retry can change: the request is wrong
// (ErrInvalid) or the switch's credentials are (ErrCredentials).
func Final(err error) bool {
	return errors.Is(err, ErrInvalid) || errors.Is(err, ErrCredentials)
}

// Driver is what provisioning uses to run a subscriber's port: read it, and converge it to a
// whole intended state. Converge returns only once the port has been read back in that state,
// and is idempotent: a port that already shows it is not written (nor bounced) again, unless
// its driver says the read may be provisional (Provisional), so a job run twice after a crash
// leaves the port as one run would. What a port should be doing is
// decided from the lines that hold it (the provisioning package); drivers only read and write.
type Driver interface {
	Name() string
	// Read returns the port's current state; a port never configured reads as ModeOff.
	Read(ctx context.Context, p Port) (State, error)
	// Converge puts the port in state want: ModeService or ModeSuspended with a service
	// config (VLAN, bandwidth, MAC binding), ModeCaptive (CaptiveState), or ModeOff.
	Converge(ctx context.Context, p Port, want State) error
}

// CaptiveState is the state of a port on the captive portal: CaptiveVLAN, no binding, no
// bandwidth.
var CaptiveState = State{Mode: ModeCaptive, Config: Config{VLAN: CaptiveVLAN}}

// StateOf is the driver state of a port setting as the database keeps it.
func StateOf(s subprov.PortSetting) State {
	return State{Mode: Mode(s.Mode), Config: Config{VLAN: s.VLAN, DownloadMbps: s.DownloadMbps, UploadMbps: s.UploadMbps, MAC: s.MAC}}
}

// Setting is the state as the database keeps it.
func (s State) Setting() subprov.PortSetting {
	return subprov.PortSetting{Mode: string(s.Mode), VLAN: s.VLAN, DownloadMbps: s.DownloadMbps, UploadMbps: s.UploadMbps, MAC: s.MAC}
}

// Raw is the whole of what a real switch driver implements: read a port, and write a port's
// whole intended state. Confirmed adds the rules and the read-back on top, once for all drivers.
type Raw interface {
	Name() string
	Read(ctx context.Context, p Port) (State, error)
	Write(ctx context.Context, p Port, want State) error
}

// Provisional is implemented by a raw driver whose reads can show a write the switch may
// still undo by itself: a NETCONF confirmed commit whose session was lost before its
// confirmation, which the switch rolls back at the confirm timeout once it notices. When
// Provisional reports true for the port, Confirmed writes the intended state even when the
// port already reads so, and the write's own confirmation makes it stand; the driver's write
// of what the switch already has changes nothing on it (the port is not bounced).
type Provisional interface {
	Provisional(p Port) bool
}

// Open returns one built-in driver by name ("" = "sim"), as the Router builds it for a switch
// that names it.
func Open(name string, st *store.Store, f *faults.Switches, clk subprov.Clock) (Driver, error) {
	drivers := BuiltIn(st, f, clk)
	build, ok := drivers[orDefault(name, "sim")]
	if !ok {
		return nil, fmt.Errorf("SUBPROV_SWITCH_DRIVER %q: unknown driver; want one of %v", name, drivers.Names())
	}
	return build(Target{})
}
