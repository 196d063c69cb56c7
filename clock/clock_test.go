package clock

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestAdjustable(t *testing.T) {
	c := NewAdjustable(0)
	changed := c.Changed()
	start := c.Now()
	c.Advance(2 * time.Hour)
	if d := c.Now().Sub(start); d < 2*time.Hour || d > 2*time.Hour+time.Second {
		t.Fatalf("advanced by %v, want 2h", d)
	}
	select {
	case <-changed:
	default:
		t.Fatal("Advance did not announce the change")
	}
	c.Advance(-time.Hour)
	if c.Now().Before(start.Add(2 * time.Hour)) {
		t.Fatal("a negative advance moved the clock backward")
	}
	target := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := c.Set(target); got.Sub(target).Abs() > time.Second {
		t.Fatalf("Set = %v, want %v", got, target)
	}
}

func TestManual(t *testing.T) {
	start := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	c := NewManual(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	time.Sleep(time.Millisecond) // wall-clock time passing must not move it
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("the clock moved on its own to %v", got)
	}
	if got := c.Advance(time.Hour); !got.Equal(start.Add(time.Hour)) || !c.Now().Equal(got) {
		t.Fatalf("Advance = %v, Now = %v, want %v", got, c.Now(), start.Add(time.Hour))
	}
	c.Set(start.Add(-time.Hour))
	if got := c.Now(); !got.Equal(start.Add(-time.Hour)) {
		t.Fatalf("Set backward: Now = %v", got)
	}
}

// TestAdjustableStaysInRange: a move beyond MaxOffset (alone or added to earlier ones) changes
// nothing; without the bound a huge advance overflowed the offset and moved the clock back.
func TestAdjustableStaysInRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		move func(c *Adjustable) (time.Time, error)
		ok   bool
	}{
		{"advance to the bound", func(c *Adjustable) (time.Time, error) { return c.TryAdvance(MaxOffset - time.Hour) }, true},
		{"advance past the bound", func(c *Adjustable) (time.Time, error) { return c.TryAdvance(MaxOffset + time.Hour) }, false},
		{"advance that would overflow", func(c *Adjustable) (time.Time, error) { return c.TryAdvance(time.Duration(math.MaxInt64)) }, false},
		{"advances that add up past the bound", func(c *Adjustable) (time.Time, error) {
			if _, err := c.TryAdvance(MaxOffset / 2); err != nil {
				return time.Time{}, err
			}
			return c.TryAdvance(MaxOffset/2 + time.Hour)
		}, false},
		{"set within the bound", func(c *Adjustable) (time.Time, error) { return c.TrySet(time.Now().AddDate(50, 0, 0)) }, true},
		{"set far ahead", func(c *Adjustable) (time.Time, error) { return c.TrySet(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) }, false},
		{"set far back", func(c *Adjustable) (time.Time, error) { return c.TrySet(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewAdjustable(time.Hour)
			before := c.Now()
			now, err := tt.move(c)
			if tt.ok != (err == nil) {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if !tt.ok && (!errors.Is(err, ErrOutOfRange) || c.Now().Before(before)) {
				t.Fatalf("err %v; clock %v, was %v", err, c.Now(), before)
			}
			if tt.ok && (now.Sub(before) < 40*365*24*time.Hour) {
				t.Fatalf("clock %v, was %v", now, before)
			}
			if off := c.Offset(); off > MaxOffset || off < -MaxOffset {
				t.Fatalf("offset %v", off)
			}
		})
	}
}
