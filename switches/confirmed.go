package switches

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
)

// Confirmed wraps any raw driver so every write is followed by a Read and compared with the
// intended state; a mismatch is ErrUnconfirmed. Real drivers implement Raw; Confirmed turns
// them into a Driver, so the rules of each operation (what Suspend keeps, what Restore may
// restore) are written once and every driver obeys them alike.
//
// Each operation reads the port first and skips the write when the port already shows the
// intended state: running an operation twice changes nothing the second time, and a switch
// is not rewritten (and its port not bounced) for nothing.
func Confirmed(r Raw) Driver { return confirmed{r} }

type confirmed struct{ raw Raw }

func (c confirmed) Name() string { return c.raw.Name() }

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

func (c confirmed) Activate(ctx context.Context, p Port, cfg Config) error {
	return c.apply(ctx, "activate", p, func(State) (State, error) {
		cfg, err := validConfig(cfg)
		if err != nil {
			return State{}, err
		}
		return State{Mode: ModeService, Config: cfg}, nil
	})
}

func (c confirmed) Suspend(ctx context.Context, p Port) error {
	return c.apply(ctx, "suspend", p, func(cur State) (State, error) {
		switch cur.Mode {
		case ModeService, ModeSuspended:
			return State{Mode: ModeSuspended, Config: cur.Config}, nil
		default:
			// An off or captive port carries no service, but "suspended" would invent a config
			// that Restore would later switch on; the caller's view of the line is wrong.
			return State{}, fmt.Errorf("%w: port is %s", ErrNotConfigured, cur.Mode)
		}
	})
}

func (c confirmed) Restore(ctx context.Context, p Port) error {
	return c.apply(ctx, "restore", p, func(cur State) (State, error) {
		switch cur.Mode {
		case ModeService, ModeSuspended:
			return State{Mode: ModeService, Config: cur.Config}, nil
		default:
			return State{}, fmt.Errorf("%w: port is %s, nothing to restore", ErrNotConfigured, cur.Mode)
		}
	})
}

func (c confirmed) ResetToCaptive(ctx context.Context, p Port) error {
	return c.apply(ctx, "reset to captive", p, func(State) (State, error) {
		return State{Mode: ModeCaptive, Config: Config{VLAN: CaptiveVLAN}}, nil
	})
}

func (c confirmed) SetBandwidth(ctx context.Context, p Port, down, up int) error {
	return c.apply(ctx, "set bandwidth", p, func(cur State) (State, error) {
		if down <= 0 || up <= 0 {
			return State{}, fmt.Errorf("%w: bandwidth %d/%d Mbps must be positive", ErrInvalid, down, up)
		}
		switch cur.Mode {
		case ModeService, ModeSuspended:
			// A suspended port takes the new bandwidth too, so Restore brings back the current plan.
			cur.DownloadMbps, cur.UploadMbps = down, up
			return cur, nil
		default:
			return State{}, fmt.Errorf("%w: port is %s", ErrNotConfigured, cur.Mode)
		}
	})
}

// apply reads the port, works out the intended state from it, writes it unless the port already
// shows it, and reads back. Errors name the operation and port and keep errors.Is working.
func (c confirmed) apply(ctx context.Context, op string, p Port, intend func(cur State) (State, error)) error {
	if err := validPort(p); err != nil {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	cur, err := c.raw.Read(ctx, p)
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", op, p, err)
	}
	want, err := intend(cur)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	if cur == want {
		return nil
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

func validPort(p Port) error {
	if p.Switch == "" || p.Name == "" {
		return fmt.Errorf("%w: port needs a switch and a name", ErrInvalid)
	}
	return nil
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
