package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a sliding-window limiter whose state lives in Redis, so every
// replica draws from the same allowance. Each key is a sorted set of its
// accepted requests' times; one Lua script, run atomically on the server with
// the server's clock (so replica clock skew does not matter), drops the times
// older than the period, counts the rest and adds the new request when the
// count is under the limit; Return removes one.
type Redis struct {
	c      *redis.Client
	prefix string
}

// NewRedis returns a limiter storing state in c under "rate:{"+prefix+key+"}" (a
// sorted set, and a counter beside it, ":seq", that names its members); both
// expire on their own one period after the key's last accepted request. The
// script needs Redis 5 or later (it writes after reading TIME).
func NewRedis(c *redis.Client, prefix string) *Redis {
	return &Redis{c: c, prefix: prefix}
}

// slidingWindow is the script. KEYS[1]: the key's sorted set, KEYS[2]: the
// counter naming its members (one per request, though two come in the same
// microsecond); ARGV[1]: the limit; ARGV[2]: the period in microseconds. It
// answers {1, 0, member} when the request is accepted and counted, else
// {0, µs until the oldest counted request leaves the window, 0}. A time
// exactly one period old has left the window, as in Memory.
var slidingWindow = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  local member = redis.call('INCR', KEYS[2])
  redis.call('ZADD', KEYS[1], now, tostring(member))
  local ttl = math.ceil(period / 1000)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  return {1, 0, member}
end
local oldest = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
return {0, tonumber(oldest[2]) + period - now, 0}
`)

// errNoClient is returned rather than panicking when NewRedis got a nil
// client, so a wiring mistake surfaces through the caller's fail-open path.
var errNoClient = errors.New("ratelimit: redis limiter has no client")

// Allow reports whether one request for key may proceed under l and counts it
// if so. Redis failures are returned as errors; whether to fail open is the
// caller's decision.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	if !limits(l) {
		return Result{Allowed: true}, nil
	}
	if r == nil || r.c == nil {
		return Result{}, errNoClient
	}
	period := max(l.Period.Microseconds(), 1)
	k := r.key(key)
	v, err := slidingWindow.Run(ctx, r.c, []string{k, k + ":seq"}, l.Rate, period).Int64Slice()
	if err == nil && len(v) != 3 {
		err = fmt.Errorf("unexpected answer %v", v)
	}
	if err != nil {
		// The key is left out on purpose: it may carry client identifiers
		// that do not belong in logs.
		return Result{}, fmt.Errorf("ratelimit: redis limit under prefix %q: %w", r.prefix, err)
	}
	if v[0] == 1 {
		return Result{Allowed: true, Ticket: strconv.FormatInt(v[2], 10)}, nil
	}
	// Callers rely on RetryAfter > 0 meaning "refused".
	return Result{RetryAfter: max(time.Duration(v[1])*time.Microsecond, time.Microsecond)}, nil
}

// Return removes the counted request named by ticket (its member) from key's
// sorted set; Redis drops the set when it empties. Redis failures are returned
// as errors, as by Allow.
func (r *Redis) Return(ctx context.Context, key, ticket string) error {
	if ticket == "" {
		return nil
	}
	if r == nil || r.c == nil {
		return errNoClient
	}
	if err := r.c.ZRem(ctx, r.key(key), ticket).Err(); err != nil {
		return fmt.Errorf("ratelimit: redis return under prefix %q: %w", r.prefix, err)
	}
	return nil
}

// key is key's sorted set; the braces make it and its counter (key + ":seq")
// one hash tag, so a cluster keeps them in one slot.
func (r *Redis) key(key string) string { return "rate:{" + r.prefix + key + "}" }
