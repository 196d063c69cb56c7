package switches

import (
	"context"
	"fmt"
	"io"

	"github.com/subprov/subprov"
)

// Confirmed wraps any raw driver so every write is followed by a Read and compared with the
// intended state; a mismatch is ErrUnconfirmed. Real drivers implement Raw; Confirmed turns
// them into a Driver, so the rules of a convergence are written once and every driver obeys
// them alike: the intended state is checked (ErrInvalid), and a port serving one device is not
// put in service for another device or for none (ErrPortInUse), judged on the port as just read.
//
// Each convergence reads the port first and skips the write when the port already shows the
// intended state (unless the driver says its reads may be provisional: Provisional): running it
// twice changes nothing the second time, and a switch is not rewritten (and its port not
// bounced) for nothing. With tracing on, every call to the switch is a span (traced).
func Confirmed(r Raw) Driver { return confirmed{traced{r}} }

type confirmed struct{ raw Raw }

func (c confirmed) Name() string { return c.raw.Name() }

// Close closes the raw driver when it keeps a connection (an io.Closer); the Router closes a
// switch's driver once it is replaced or the Router closes.
func (c confirmed) Close() error {
	if cl, ok := c.raw.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

func (c confirmed) Read(ctx context.Context, p Port) (State, error) {
	if err := validPort(p); err != nil {
		return State{}, fmt.Errorf("read %s: %w", p, err)
	}
	s, err := c.raw.Read(ctx, p)
	if err != nil {
		return State{}, fmt.Errorf("read %s: %w", p, err)
	}
	return s, nil
}

func (c confirmed) Converge(ctx context.Context, p Port, want State) error {
	want, err := validState(want)
	if err != nil {
		return fmt.Errorf("converge %s: %w", p, err)
	}
	return c.apply(ctx, "converge", p, want)
}

// apply reads the port, writes want unless the port already shows it, and reads back. Errors
// name the operation and port and keep errors.Is working.
func (c confirmed) apply(ctx context.Context, op string, p Port, want State) error {
	if err := validPort(p); err != nil {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	cur, err := c.raw.Read(ctx, p)
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", op, p, err)
	}
	if cur == want && !provisional(c.raw, p) {
		return nil
	}
	if err := anotherDevice(cur, want); err != nil {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	if err := c.raw.Write(ctx, p, want); err != nil {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	got, err := c.raw.Read(ctx, p)
	if err != nil {
		// The write may or may not have landed; the caller retries and the next run's first
		// read tells, so this is the read's error (often ErrUnavailable), not ErrUnconfirmed.
		return fmt.Errorf("%s %s: read back: %w", op, p, err)
	}
	if got != want {
		return fmt.Errorf("%s %s: %w: read back %v, want %v", op, p, ErrUnconfirmed, got, want)
	}
	return nil
}

// anotherDevice refuses to put in service a port that serves a device (in service with a MAC
// bound) for another device, or for none: the device on the port would lose its binding to a
// line that is not its own. A port suspended, captive or off may be given to any device.
func anotherDevice(cur, want State) error {
	if want.Mode != ModeService || cur.Mode != ModeService || cur.MAC == "" || cur.MAC == want.MAC {
		return nil
	}
	if _, ok := subprov.NormalizeMAC(cur.MAC); !ok {
		return nil // a binding that names no device (a driver's own marker) is no device
	}
	return fmt.Errorf("%w: %s is bound", ErrPortInUse, cur.MAC)
}

func provisional(r Raw, p Port) bool {
	pr, ok := r.(Provisional)
	return ok && pr.Provisional(p)
}

func validPort(p Port) error {
	if p.Switch == "" || p.Name == "" {
		return fmt.Errorf("%w: port needs a switch and a name", ErrInvalid)
	}
	return nil
}

// validState checks an intended state and returns it in the form the switch reads back.
func validState(s State) (State, error) {
	switch s.Mode {
	case ModeService, ModeSuspended:
		cfg, err := validConfig(s.Config)
		return State{Mode: s.Mode, Config: cfg}, err
	case ModeCaptive:
		if s != CaptiveState {
			return State{}, fmt.Errorf("%w: a captive port carries VLAN %d alone, not %v", ErrInvalid, CaptiveVLAN, s)
		}
		return s, nil
	case ModeOff:
		if s != (State{Mode: ModeOff}) {
			return State{}, fmt.Errorf("%w: an off port carries no config, not %v", ErrInvalid, s)
		}
		return s, nil
	default:
		return State{}, fmt.Errorf("%w: unknown port mode %q", ErrInvalid, s.Mode)
	}
}

// validConfig checks a service config and returns it with the MAC in the form the switch reads
// back, so an upper-case or hyphenated MAC does not make a good write look unconfirmed.
func validConfig(c Config) (Config, error) {
	if c.VLAN < 1 || c.VLAN > 4094 || c.VLAN == CaptiveVLAN {
		return Config{}, fmt.Errorf("%w: service VLAN %d (want 1-4094, not the captive VLAN %d)", ErrInvalid, c.VLAN, CaptiveVLAN)
	}
	if c.DownloadMbps <= 0 || c.UploadMbps <= 0 {
		return Config{}, fmt.Errorf("%w: bandwidth %d/%d Mbps must be positive", ErrInvalid, c.DownloadMbps, c.UploadMbps)
	}
	if c.MAC != "" {
		mac, ok := subprov.NormalizeMAC(c.MAC)
		if !ok {
			return Config{}, fmt.Errorf("%w: MAC address %q", ErrInvalid, c.MAC)
		}
		c.MAC = mac
	}
	return c, nil
}
