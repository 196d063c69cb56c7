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
