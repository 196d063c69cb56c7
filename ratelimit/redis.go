package ratelimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a GCRA limiter whose state lives in Redis, so every replica
// draws from the same allowance. The Lua script runs atomically on the server
// and uses the server's clock, so replica clock skew does not matter.
type Redis struct {
	lim    *redis_rate.Limiter
	prefix string
}

// NewRedis returns a limiter storing state in c under prefix+key. redis_rate
// adds its own "rate:" namespace in front, so the stored key is
// "rate:"+prefix+key; entries expire on their own once their bucket is full
// again.
func NewRedis(c *redis.Client, prefix string) *Redis {
	r := &Redis{prefix: prefix}
	if c != nil {
		r.lim = redis_rate.NewLimiter(c)
	}
	return r
}

// errNoClient is returned rather than panicking when NewRedis got a nil
// client, so a wiring mistake surfaces through the caller's fail-open path.
var errNoClient = errors.New("ratelimit: redis limiter has no client")

// Allow reports whether one request for key may proceed under l. Redis
// failures are returned as errors; whether to fail open is the caller's
// decision.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	l, ok := normalize(l)
	if !ok {
		return Result{Allowed: true}, nil
	}
	if r == nil || r.lim == nil {
		return Result{}, errNoClient
	}
	res, err := r.lim.Allow(ctx, r.prefix+key, redis_rate.Limit{
		Rate:   l.Rate,
		Burst:  l.Burst,
		Period: l.Period,
	})
	if err != nil {
		// The key is left out on purpose: it may carry client identifiers
		// that do not belong in logs.
		return Result{}, fmt.Errorf("ratelimit: redis allow under prefix %q: %w", r.prefix, err)
	}
	if res.Allowed > 0 {
		return Result{Allowed: true}, nil
	}
	// The script reports seconds as a float; a refusal right at the edge can
	// round to zero, and callers rely on RetryAfter > 0 meaning "refused".
	return Result{RetryAfter: max(res.RetryAfter, 1)}, nil
}
