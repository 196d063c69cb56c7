// Package ratelimit provides rate limiting for the HTTP surfaces, in-process
// by default and shared through Redis across replicas.
//
// A limit of N per period means what it says: at most N requests of a key in
// any stretch of that period (a sliding window; each accepted request counts
// against the key for one period after it). The (N+1)-th call within a minute
// of the first is refused ("N per minute, exceeding one gives 429"), however
// fast or slow the first N came. A token bucket (GCRA) of the same rate would
// let a burst of N through and then refill it as the burst goes on, so a quick
// client could place N plus a few within the minute, and up to 2N in a window
// straddling a refill.
//
// Both implementations keep the times of a key's accepted requests of the last
// period, at most N of them, so an endpoint behaves the same whether it runs
// on one replica with [Memory] or on many sharing a [Redis] limiter.
//
// Allow asks and counts in one step, which limits requests. To limit events
// that are known only once the request has been served, such as failed
// logins, take a place with Allow before serving it and Return it (by the
// Result's Ticket) when the event did not happen: the key is then refused
// after N events in a period, however many requests without the event came
// between them, and requests sent at once cannot all pass while none has
// been served yet (asking first and counting afterwards would let them).
package ratelimit

import (
	"context"
	"time"
)

// Limit is a fixed per-endpoint allowance: at most Rate requests in any
// Period.
//
// A Limit with Rate <= 0 or Period <= 0 means "no limit": every request is
// allowed. That keeps a zero or misconfigured Limit from locking an endpoint
// out entirely.
type Limit struct {
	Rate   int
	Period time.Duration
}

// PerMinute returns a Limit of n requests in any minute.
func PerMinute(n int) Limit {
	return Limit{Rate: n, Period: time.Minute}
}

// Result is the outcome of one Allow call.
type Result struct {
	Allowed bool
	// RetryAfter is > 0 when the request was refused and says how long until
	// one request would be allowed (the oldest counted request leaves the
	// window). Rounding up to whole seconds for a Retry-After header is the
	// caller's job.
	RetryAfter time.Duration
	// Ticket names the request Allow counted, for Return; "" when nothing was counted (a
	// refusal, or no limit).
	Ticket string
}

// Limiter decides whether one request for key may proceed under l.
type Limiter interface {
	// Allow reports whether one request for key may proceed under l and, if so,
	// counts it.
	Allow(ctx context.Context, key string, l Limit) (Result, error)
	// Return gives back a request Allow counted (its Result.Ticket), as if it had not been
	// made: a caller that counts only some requests (the failed logins) takes a place before
	// the request, so that requests sent at once cannot all pass, and returns it when the
	// request turns out not to count. An empty ticket returns nothing.
	Return(ctx context.Context, key, ticket string) error
}

var (
	_ Limiter = (*Memory)(nil)
	_ Limiter = (*Redis)(nil)
)

// limits reports whether l restricts anything.
func limits(l Limit) bool {
	return l.Rate > 0 && l.Period > 0
}
