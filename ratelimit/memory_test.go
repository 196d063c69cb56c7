package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subprov/subprov/clock"
)

// newFakeClock is safe for concurrent use so the race test can share it.
func newFakeClock() *clock.Manual {
	return clock.NewManual(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
}

func TestMemoryClock(t *testing.T) {
	type step struct {
		advance time.Duration
		key     string
		times   int // 0 means 1
		allow   bool
		retry   time.Duration // exact, since the clock is fake
	}
	tests := []struct {
		name  string
		limit Limit
		steps []step
	}{
		{
			name:  "300 per minute: the 301st waits for the first to leave the window",
			limit: PerMinute(300),
			steps: []step{
				{key: "a", times: 300, allow: true},
				{key: "a", allow: false, retry: time.Minute},
				{advance: 59 * time.Second, key: "a", allow: false, retry: time.Second},
				{advance: time.Second, key: "a", times: 300, allow: true},
				{key: "a", allow: false, retry: time.Minute},
			},
		},
		{
			name:  "the window slides: requests leave it one by one",
			limit: PerMinute(3),
			steps: []step{
				{key: "a", allow: true},
				{advance: 20 * time.Second, key: "a", times: 2, allow: true},
				{advance: 10 * time.Second, key: "a", allow: false, retry: 30 * time.Second},
				{advance: 30 * time.Second, key: "a", allow: true}, // the first left exactly one period after it
				{key: "a", allow: false, retry: 20 * time.Second},
				{advance: 20 * time.Second, key: "a", times: 2, allow: true},
				{key: "a", allow: false, retry: 40 * time.Second},
			},
		},
		{
			name:  "a long quiet spell allows the limit again, no more",
			limit: Limit{Rate: 3, Period: time.Second},
			steps: []step{
				{key: "a", times: 3, allow: true},
				{key: "a", allow: false, retry: time.Second},
				{advance: time.Hour, key: "a", times: 3, allow: true},
				{key: "a", allow: false, retry: time.Second},
			},
		},
		{
			name:  "refused calls do not count",
			limit: Limit{Rate: 1, Period: time.Second},
			steps: []step{
				{key: "a", allow: true},
				{key: "a", times: 50, allow: false, retry: time.Second},
				{advance: time.Second, key: "a", allow: true},
			},
		},
		{
			name:  "independent keys",
			limit: PerMinute(1),
			steps: []step{
				{key: "a", allow: true},
				{key: "b", allow: true},
				{key: "a", allow: false, retry: time.Minute},
				{advance: 30 * time.Second, key: "b", allow: false, retry: 30 * time.Second},
				{key: "c", allow: true},
			},
		},
		{
			name:  "clock going backwards extends the wait instead of emptying the window",
			limit: PerMinute(1),
			steps: []step{
				{key: "a", allow: true},
				{advance: -time.Minute, key: "a", allow: false, retry: 2 * time.Minute},
			},
		},
		{
			name:  "a clock far behind with the maximal period waits, never overflows",
			limit: Limit{Rate: 1, Period: math.MaxInt64},
			steps: []step{
				{key: "a", allow: true},
				{advance: -time.Hour, key: "a", allow: false, retry: math.MaxInt64},
			},
		},
		{
			name:  "century-long period",
			limit: Limit{Rate: 2, Period: 100 * 365 * 24 * time.Hour},
			steps: []step{
				{key: "a", times: 2, allow: true},
				{advance: time.Hour, key: "a", allow: false, retry: 100*365*24*time.Hour - time.Hour},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			m := NewMemoryWithClock(clk.Now)
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				for n := range max(s.times, 1) {
					res, err := m.Allow(context.Background(), s.key, tt.limit)
					if err != nil {
						t.Fatalf("step %d call %d: %v", i, n, err)
					}
					if res.Allowed != s.allow {
						t.Fatalf("step %d call %d: Allowed = %v, want %v", i, n, res.Allowed, s.allow)
					}
					if !s.allow && s.retry != 0 && res.RetryAfter != s.retry {
						t.Errorf("step %d call %d: RetryAfter = %v, want %v", i, n, res.RetryAfter, s.retry)
					}
					if !s.allow && res.RetryAfter <= 0 {
						t.Errorf("step %d call %d: refused with RetryAfter %v", i, n, res.RetryAfter)
					}
				}
			}
		})
	}
}

func TestMemoryEviction(t *testing.T) {
	clk := newFakeClock()
	m := NewMemoryWithClock(clk.Now)
	ctx := context.Background()

	// A key whose window still holds a request must survive sweeps,
	// otherwise eviction would hand out a fresh allowance.
	hot := Limit{Rate: 1, Period: time.Hour}
	if res, _ := m.Allow(ctx, "hot", hot); !res.Allowed {
		t.Fatal("first hot call refused")
	}

	// Each churn key expires 1ms after use, and the clock moves 1ms per key.
	churn := Limit{Rate: 1, Period: time.Millisecond}
	const keys = 20000
	bound := numShards*minSweep + 1
	peak := 0
	for i := range keys {
		clk.Advance(time.Millisecond)
		if res, _ := m.Allow(ctx, fmt.Sprintf("k%d", i), churn); !res.Allowed {
			t.Fatalf("fresh key k%d refused", i)
		}
		peak = max(peak, m.size())
	}
	if peak > bound {
		t.Errorf("map peaked at %d entries for %d dead keys, want <= %d", peak, keys, bound)
	}
	if res, _ := m.Allow(ctx, "hot", hot); res.Allowed {
		t.Error("hot key was evicted while its window held a request")
	}
}

func TestMemoryConcurrent(t *testing.T) {
	clk := newFakeClock()
	m := NewMemoryWithClock(clk.Now)
	l := PerMinute(100)
	const (
		workers = 16
		perKey  = 50 // calls per worker per key
		keys    = 8
	)
	var allowed [keys]atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range perKey {
				for k := range keys {
					res, err := m.Allow(context.Background(), fmt.Sprintf("key-%d", k), l)
					if err != nil {
						t.Error(err)
						return
					}
					if res.Allowed {
						allowed[k].Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	// With the clock frozen, exactly Rate calls per key may pass no matter
	// how they interleave; more would mean a lost update.
	for k := range keys {
		if got := allowed[k].Load(); got != int64(l.Rate) {
			t.Errorf("key-%d: %d allowed out of %d, want %d", k, got, workers*perKey, l.Rate)
		}
	}
}

func TestNewMemoryWithNilClock(t *testing.T) {
	m := NewMemoryWithClock(nil)
	if res, err := m.Allow(context.Background(), "k", PerMinute(1)); err != nil || !res.Allowed {
		t.Fatalf("Allow = %+v, %v; want allowed", res, err)
	}
}
