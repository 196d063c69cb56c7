// Package netconf is the switch driver for switches managed over NETCONF (RFC 6241) on SSH
// (RFC 6242, with the 1.1 chunked framing when the switch offers it). It implements
// switches.Raw for one switch: reads come from get-config on the running datastore, writes go
// to the candidate datastore under a lock and are committed, as a confirmed commit when the
// switch offers :confirmed-commit, so a session lost before the confirming commit leaves the
// switch as it was. Payloads come from per-model templates: "openconfig" (the OpenConfig-shaped
// subprov-access YANG module shipped in yang/) and "junos".
//
// Errors keep the switches sentinels: a refusal by the switch's own validation is
// switches.ErrInvalid (final), anything that may pass on a retry (unreachable, timed out,
// session lost, datastore locked) is switches.ErrUnavailable, and a refused login or host key
// is switches.ErrAuth or switches.ErrHostKey (both switches.ErrCredentials), final and neither
// of those.
package netconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/sshclient"
)

// ErrAuth and ErrHostKey are the switches package's final credentials errors, under the names
// this package has always given them.
var (
	ErrAuth    = switches.ErrAuth
	ErrHostKey = switches.ErrHostKey
)

// Models the driver has templates for.
const (
	ModelOpenConfig = "openconfig"
	ModelJunos      = "junos"
)

// Config is one switch as the inventory describes it.
type Config struct {
	// Address is host:port of the switch's NETCONF SSH endpoint (usually port 830).
	Address string
	// Username and Password log in with SSH password (or keyboard-interactive) authentication.
	Username, Password string
	// HostKey is the switch's SSH public key in authorized_keys form ("ssh-ed25519 AAAA...") or
	// as a known_hosts line ("host ssh-ed25519 AAAA..."). Empty refuses to connect: an unknown
	// host key is never accepted.
	HostKey string
	// Model picks the payload templates: "openconfig" or "junos".
	Model string
	// DialTimeout bounds the TCP connection and SSH handshake (default 10 s).
	DialTimeout time.Duration
	// OpTimeout bounds each RPC (default 30 s).
	OpTimeout time.Duration
	// ConfirmTimeout is how long a confirmed commit waits for its confirmation before the
	// switch rolls it back (default 60 s; whole seconds).
	ConfirmTimeout time.Duration
}

// Driver is the NETCONF driver of one switch; it opens one session per operation, so it holds
// no connection between calls and is safe for concurrent use (the candidate lock serialises
// writes on the switch).
type Driver struct {
	cfg     Config
	hostKey ssh.PublicKey
	model   model

	// hook, when set (tests only), runs between the steps of a write; drop cuts the session's
	// TCP connection, as a network failure would.
	hook func(step string, drop func())
}

// New checks cfg and returns the driver; it does not connect.
func New(cfg Config) (*Driver, error) {
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return nil, fmt.Errorf("netconf: %w: address %q: want host:port: %v", switches.ErrInvalid, cfg.Address, err)
	}
	if cfg.Username == "" {
		return nil, fmt.Errorf("netconf %s: %w: no username", cfg.Address, switches.ErrInvalid)
	}
	key, err := sshclient.ParseHostKey(cfg.HostKey)
	if err != nil {
		return nil, fmt.Errorf("netconf %s: %w", cfg.Address, err)
	}
	m, ok := models[cfg.Model]
	if !ok {
		return nil, fmt.Errorf("netconf %s: %w: model %q: want %q or %q", cfg.Address, switches.ErrInvalid, cfg.Model, ModelOpenConfig, ModelJunos)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 30 * time.Second
	}
	if cfg.ConfirmTimeout < time.Second {
		cfg.ConfirmTimeout = 60 * time.Second
	}
	return &Driver{cfg: cfg, hostKey: key, model: m}, nil
}

// Name is the driver's name in logs and metrics.
func (d *Driver) Name() string { return "netconf" }

// Read returns the port's state from the running datastore; a port the switch has no
// configuration for reads as ModeOff.
func (d *Driver) Read(ctx context.Context, p switches.Port) (switches.State, error) {
	s, err := d.open(ctx)
	if err != nil {
		return switches.State{}, err
	}
	defer s.close()
	data, err := s.getConfig(ctx, d.model.configFilter(p.Name))
	if err != nil {
		return switches.State{}, err
	}
	return d.stateOf(data, p.Name)
}

// stateOf reads the port's state from a get-config reply. A reply that is well-formed (the
// session checked it) but does not read as the model's configuration is the same on every
// retry: switches.ErrInvalid.
func (d *Driver) stateOf(reply []byte, port string) (switches.State, error) {
	st, err := d.model.parseConfig(reply, port)
	if err != nil {
		return switches.State{}, fmt.Errorf("netconf %s: %w: get-config reply for %s: %w", d.cfg.Address, switches.ErrInvalid, port, err)
	}
	return st, nil
}

// Write puts the port in state want: lock the candidate, discard whatever another session left
// in it, edit, commit (confirmed, then confirmed again, where the switch offers it), unlock. The
// request is sent as it is: checking it is Confirmed's job and the switch's own validation's.
func (d *Driver) Write(ctx context.Context, p switches.Port, want switches.State) error {
	payload, err := d.model.edit(p.Name, want)
	if err != nil {
		return fmt.Errorf("netconf %s: %w", d.cfg.Address, err)
	}
	s, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.lock(ctx); err != nil {
		return err
	}
	if err := s.discard(ctx); err != nil {
		return err
	}
	if err := s.editConfig(ctx, payload); err != nil {
		if want.Mode == switches.ModeOff && missing(err) {
			// Removing a port's configuration that is not there: the port already is as
			// wanted (Confirmed reads it back). A strict server says data-missing.
			return nil
		}
		return err
	}
	d.step("edited", s)
	if !s.confirmedCommit {
		if err := s.commit(ctx, false); err != nil {
			return err
		}
		d.step("committed", s)
		s.unlock(ctx)
		return nil
	}
	if err := s.commit(ctx, true); err != nil {
		return err
	}
	d.step("confirmed", s)
	// The switch still answers on this session after the change: confirm it. A session lost
	// before this point makes the switch roll the confirmed commit back by itself.
	if _, err := s.getConfig(ctx, d.model.configFilter(p.Name)); err != nil {
		return err
	}
	if err := s.commit(ctx, false); err != nil {
		return err
	}
	d.step("committed", s)
	s.unlock(ctx)
	return nil
}

// missing reports whether err is the switch's data-missing refusal of an edit.
func missing(err error) bool {
	var e *RPCError
	return errors.As(err, &e) && e.Tag == "data-missing"
}

// Provisional is always true: what running shows may be a confirmed commit whose session was
// lost before its confirmation and whose end the switch has not noticed yet (it still holds
// the candidate lock, and rolls the change back at the confirm timeout). So Confirmed never
// takes a read for converged: every convergence writes, with a confirmed commit and a
// confirmation of its own, which cannot go through while the lost session holds the lock.
// Committing what running already has changes nothing on the switch. Nothing has to be
// remembered between attempts, so a retry in another process is as safe.
func (d *Driver) Provisional(switches.Port) bool { return true }

func (d *Driver) step(name string, s *session) {
	if d.hook != nil {
		d.hook(name, s.t.cut)
	}
}

// Status is a port's link state and traffic counters as the switch reports them.
type Status struct {
	// OperStatus is the operational state in the model's words, lower-cased ("up", "down").
	OperStatus string
	// InOctets and OutOctets count bytes received and sent on the port since the counters were
	// last cleared.
	InOctets, OutOctets uint64
}

// Up reports whether the link is up.
func (s Status) Up() bool { return s.OperStatus == "up" }

// Status reads the port's link state and counters: `get` of the interface's state on
// OpenConfig switches, get-interface-information on Junos.
func (d *Driver) Status(ctx context.Context, p switches.Port) (Status, error) {
	s, err := d.open(ctx)
	if err != nil {
		return Status{}, err
	}
	defer s.close()
	reply, err := d.model.status(ctx, s, p.Name)
	if err != nil {
		return Status{}, err
	}
	st, err := parseStatus(reply, p.Name)
	if err != nil {
		return Status{}, fmt.Errorf("netconf %s: %w: status reply for %s: %w", d.cfg.Address, switches.ErrInvalid, p.Name, err)
	}
	return st, nil
}

var _ switches.CounterReader = (*Driver)(nil)

// Counters is the switches.CounterReader of the port: Status as link state and octets.
func (d *Driver) Counters(ctx context.Context, p switches.Port) (switches.Counters, error) {
	st, err := d.Status(ctx, p)
	if errors.Is(err, errNoStatus) {
		return switches.Counters{}, fmt.Errorf("%w: %w", switches.ErrNoCounters, err)
	}
	if err != nil {
		return switches.Counters{}, err
	}
	return switches.Counters{LinkUp: st.Up(), InOctets: st.InOctets, OutOctets: st.OutOctets}, nil
}
