package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is safe for concurrent use so the race test can share it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
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
			name:  "300 per minute: 301st waits exactly 200ms",
			limit: Limit{Rate: 300, Period: time.Minute, Burst: 300},
			steps: []step{
				{key: "a", times: 300, allow: true},
				{key: "a", allow: false, retry: 200 * time.Millisecond},
				{advance: 150 * time.Millisecond, key: "a", allow: false, retry: 50 * time.Millisecond},
				{advance: 50 * time.Millisecond, key: "a", allow: true},
				{key: "a", allow: false, retry: 200 * time.Millisecond},
			},
		},
		{
			name:  "refill is proportional to elapsed time",
			limit: PerMinute(60),
			steps: []step{
				{key: "a", times: 60, allow: true},
				{key: "a", allow: false, retry: time.Second},
				{advance: 5 * time.Second, key: "a", times: 5, allow: true},
				{key: "a", allow: false, retry: time.Second},
			},
		},
		{
			name:  "full refill restores the whole burst but no more",
			limit: Limit{Rate: 10, Period: time.Second, Burst: 3},
			steps: []step{
				{key: "a", times: 3, allow: true},
				{key: "a", allow: false, retry: 100 * time.Millisecond},
				{advance: time.Hour, key: "a", times: 3, allow: true},
				{key: "a", allow: false, retry: 100 * time.Millisecond},
			},
		},
		{
			name:  "refused calls do not consume allowance",
			limit: Limit{Rate: 1, Period: time.Second, Burst: 1},
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
			name:  "clock going backwards extends the wait instead of refilling",
			limit: PerMinute(1),
			steps: []step{
				{key: "a", allow: true},
				{advance: -time.Minute, key: "a", allow: false, retry: 2 * time.Minute},
			},
		},
		{
			name:  "more requests than nanoseconds per period is unlimited",
			limit: Limit{Rate: 10, Period: time.Nanosecond},
			steps: []step{{key: "a", times: 100, allow: true}},
		},
		{
			name:  "huge burst saturates instead of overflowing",
			limit: Limit{Rate: 1, Period: time.Hour, Burst: math.MaxInt},
			steps: []step{{key: "a", times: 100, allow: true}},
		},
		{
			// The third call's TAT would pass the int64 range; saturating
			// keeps it refused instead of wrapping into the past.
			name:  "century-long period saturates instead of overflowing",
			limit: Limit{Rate: 1, Period: 100 * 365 * 24 * time.Hour, Burst: 2},
			steps: []step{
				{key: "a", times: 2, allow: true},
				{key: "a", allow: false},
			},
		},
		{
			name:  "maximal period does not panic",
			limit: Limit{Rate: 1, Period: math.MaxInt64, Burst: math.MaxInt},
			steps: []step{{key: "a", allow: true}},
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

	// A key whose TAT stays in the future throughout must survive sweeps,
	// otherwise eviction would hand out a fresh burst.
	hot := Limit{Rate: 1, Period: time.Hour, Burst: 1}
	if res, _ := m.Allow(ctx, "hot", hot); !res.Allowed {
		t.Fatal("first hot call refused")
	}

	// Each churn key expires 1ms after use, and the clock moves 1ms per key.
	churn := Limit{Rate: 1000, Period: time.Second, Burst: 1}
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
		t.Error("hot key was evicted while its TAT was in the future")
	}
}

func TestMemoryConcurrent(t *testing.T) {
	clk := newFakeClock()
	m := NewMemoryWithClock(clk.Now)
	l := Limit{Rate: 100, Period: time.Minute, Burst: 100}
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
	// With the clock frozen, exactly Burst calls per key may pass no matter
	// how they interleave; more would mean a lost update.
	for k := range keys {
		if got := allowed[k].Load(); got != int64(l.Burst) {
			t.Errorf("key-%d: %d allowed out of %d, want %d", k, got, workers*perKey, l.Burst)
		}
	}
}

func TestNewMemoryWithNilClock(t *testing.T) {
	m := NewMemoryWithClock(nil)
	if res, err := m.Allow(context.Background(), "k", PerMinute(1)); err != nil || !res.Allowed {
		t.Fatalf("Allow = %+v, %v; want allowed", res, err)
	}
}
