// Package ratelimit provides rate limiting for the HTTP surfaces, in-process
// by default and shared through Redis (GCRA) across replicas.
//
// Both implementations use the generic cell rate algorithm with the same
// parameters, so an endpoint behaves the same whether it runs on one replica
// with [Memory] or on many sharing a [Redis] limiter.
package ratelimit

import (
	"context"
	"math"
	"time"
)

// Limit is a fixed per-endpoint allowance: Rate requests per Period, with
// bursts up to Burst (Burst 0 means Burst = Rate).
//
// A Limit with Rate <= 0 or Period <= 0 means "no limit": every request is
// allowed. That keeps a zero or misconfigured Limit from locking an endpoint
// out entirely.
type Limit struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// PerMinute returns a Limit of n requests per minute with a burst of n, the
// same shape as redis_rate.PerMinute.
func PerMinute(n int) Limit {
	return Limit{Rate: n, Period: time.Minute, Burst: n}
}

// Result is the outcome of one Allow call.
type Result struct {
	Allowed bool
	// RetryAfter is > 0 when the request was refused and says how long until
	// one request would be allowed. Rounding up to whole seconds for a
	// Retry-After header is the caller's job.
	RetryAfter time.Duration
}

// Limiter decides whether one request for key may proceed under l.
type Limiter interface {
	Allow(ctx context.Context, key string, l Limit) (Result, error)
}

var (
	_ Limiter = (*Memory)(nil)
	_ Limiter = (*Redis)(nil)
)

// normalize applies the documented defaults. ok is false when the limit does
// not restrict anything.
func normalize(l Limit) (n Limit, ok bool) {
	if l.Rate <= 0 || l.Period <= 0 {
		return l, false
	}
	if l.Burst <= 0 {
		// Negative bursts are treated like 0: GCRA with burst < 1 would refuse
		// every request, which is never what a config typo means.
		l.Burst = l.Rate
	}
	return l, true
}

// satAdd adds without wrapping so that extreme Period/Burst values or a clock
// jumping far backwards degrade into "very long wait" or "allowed" instead of
// flipping sign.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

func satSub(a, b int64) int64 {
	s := a - b
	switch {
	case a >= 0 && b < 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b > 0 && s >= 0:
		return math.MinInt64
	}
	return s
}
