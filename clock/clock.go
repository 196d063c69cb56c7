// Package clock provides the service's clocks: the wall clock for production and an
// adjustable one for dev mode, which tests and demos set and advance (docs/design.md, Time), and a
// manual one that stands still for unit tests.
package clock

import (
	"errors"
	"sync"
	"time"
)

// Real is the wall clock in UTC.
type Real struct{}

// Now returns the current UTC time.
func (Real) Now() time.Time { return time.Now().UTC() }

// Adjustable runs at wall-clock speed from an offset that can be set or advanced. Each change
// is announced on Changed so time-driven work that falls due runs at once instead of waiting
// for its next poll.
type Adjustable struct {
	mu       sync.RWMutex
	offset   time.Duration
	watchers []chan struct{}
}

// NewAdjustable returns a clock that starts at wall-clock time plus offset.
func NewAdjustable(offset time.Duration) *Adjustable { return &Adjustable{offset: offset} }

// Now returns the adjusted UTC time.
func (c *Adjustable) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return time.Now().UTC().Add(c.offset)
}

// Offset returns how far the clock is from the wall clock, for persisting it.
func (c *Adjustable) Offset() time.Duration {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.offset
}

// Advance moves the clock forward by d (never backward: time-driven work must stay monotonic).
func (c *Adjustable) Advance(d time.Duration) time.Time {
	if d < 0 {
		d = 0
	}
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	c.notify()
	return c.Now()
}

// MaxOffset is the farthest the adjustable clock moves from the wall clock, either way: 100
// years, beyond any billing, expiry or booking horizon and well inside what a time.Duration
// holds (292 years), so the offset never overflows and the clock never jumps back.
const MaxOffset = 100 * 365 * 24 * time.Hour

// ErrOutOfRange refuses a move that would put the clock more than MaxOffset from the wall clock.
var ErrOutOfRange = errors.New("the dev clock stays within 100 years of the real time")

// TryAdvance is Advance for a move that must stay within MaxOffset: a larger one changes
// nothing and gives ErrOutOfRange.
func (c *Adjustable) TryAdvance(d time.Duration) (time.Time, error) {
	c.mu.Lock()
	if d < 0 || d > MaxOffset || c.offset > MaxOffset-d {
		c.mu.Unlock()
		return time.Time{}, ErrOutOfRange
	}
	c.offset += d
	c.mu.Unlock()
	c.notify()
	return c.Now(), nil
}

// TrySet is Set for an instant within MaxOffset of the wall clock: another changes nothing
// and gives ErrOutOfRange.
func (c *Adjustable) TrySet(t time.Time) (time.Time, error) {
	c.mu.Lock()
	off := time.Until(t)
	if off > MaxOffset || off < -MaxOffset {
		c.mu.Unlock()
		return time.Time{}, ErrOutOfRange
	}
	c.offset = off
	c.mu.Unlock()
	c.notify()
	return c.Now(), nil
}

// Set moves the clock to t.
func (c *Adjustable) Set(t time.Time) time.Time {
	c.mu.Lock()
	c.offset = time.Until(t)
	c.mu.Unlock()
	c.notify()
	return c.Now()
}

// Changed returns a channel that receives (without blocking the clock) after every change.
func (c *Adjustable) Changed() <-chan struct{} {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	c.watchers = append(c.watchers, ch)
	c.mu.Unlock()
	return ch
}

func (c *Adjustable) notify() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, w := range c.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Manual stands still at the instant it was given and moves only when set or advanced: the
// clock for tests that put the service at a given moment. It is safe for concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a clock stopped at t.
func NewManual(t time.Time) *Manual { return &Manual{now: t} }

// Now returns the clock's instant.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, backward as well as forward.
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock by d and returns the new instant.
func (c *Manual) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}
