package clock

import (
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
