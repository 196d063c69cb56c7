package switches

import (
	"context"
	"errors"
	"fmt"
)

// Counters are a port's interface counters and link state as the switch reports them. In is
// what the port received from the subscriber's side (RX, in-octets: the subscriber's upload),
// Out what the switch sent out of the port to the subscriber (TX, out-octets: the download).
// The octets count since the switch last cleared them (a reboot, a counter reset) and may wrap.
type Counters struct {
	LinkUp              bool
	InOctets, OutOctets uint64
}

// CounterReader is a driver that reads a port's counters: linuxbridge (ip -s link) and netconf
// (the interface's state). The simulated switch has none; its usage is simulated.
type CounterReader interface {
	Counters(ctx context.Context, p Port) (Counters, error)
}

// ErrNoCounters means the switch's driver reports no interface counters (the sim): final for
// that switch, nothing to retry.
var ErrNoCounters = errors.New("switch driver reports no counters")

// Counters reads a port's counters through the raw driver, when it reads any.
func (c confirmed) Counters(ctx context.Context, p Port) (Counters, error) {
	if err := validPort(p); err != nil {
		return Counters{}, fmt.Errorf("counters %s: %w", p, err)
	}
	cr, ok := c.raw.(CounterReader)
	if !ok {
		return Counters{}, fmt.Errorf("counters %s: driver %s: %w", p, c.raw.Name(), ErrNoCounters)
	}
	got, err := cr.Counters(ctx, p)
	if err != nil {
		return Counters{}, fmt.Errorf("counters %s: %w", p, err)
	}
	return got, nil
}

// Counters reads a port's counters through its switch's own driver, within the switch's
// concurrency limit and breaker; a driver without counters answers ErrNoCounters.
func (r *Router) Counters(ctx context.Context, p Port) (Counters, error) {
	var got Counters
	err := r.do(ctx, p, func(d Driver) (err error) {
		cr, ok := d.(CounterReader)
		if !ok {
			return fmt.Errorf("counters %s: driver %s: %w", p, d.Name(), ErrNoCounters)
		}
		got, err = cr.Counters(ctx, p)
		return err
	})
	return got, err
}
