package ratelimit

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// call is one step of a behavioural scenario. sleep runs before the call and
// uses the real clock, because Redis reads time from the server.
type call struct {
	sleep time.Duration
	key   string
	times int  // how many identical calls; 0 means 1
	give  bool // Return each request Allow counted, as if it had not been made
	allow bool // expected outcome of every call in the step
	// retry, when set on a refused step, is the RetryAfter expected on a
	// clock that stood still; real time elapsed since the scenario started is
	// subtracted from it to get the lower bound.
	retry time.Duration
}

type scenario struct {
	name  string
	limit Limit
	calls []call
}

// scenarios is written once and run against every Limiter implementation so
// Memory and Redis are held to the same behaviour: at most Rate requests in
// any Period.
var scenarios = []scenario{
	{
		name:  "the limit, then refusal until the first leaves the window",
		limit: Limit{Rate: 5, Period: time.Minute},
		calls: []call{
			{key: "a", times: 5, allow: true},
			{key: "a", times: 3, allow: false, retry: time.Minute},
		},
	},
	{
		// A token bucket would have let a few more through by now, refilled
		// while the 300 were served.
		name:  "300 per minute refuses the 301st and the ones after it",
		limit: PerMinute(300),
		calls: []call{
			{key: "a", times: 300, allow: true},
			{sleep: 100 * time.Millisecond, key: "a", times: 5, allow: false, retry: time.Minute},
		},
	},
	{
		name:  "PerMinute is Rate per minute",
		limit: PerMinute(3),
		calls: []call{
			{key: "a", times: 3, allow: true},
			{key: "a", allow: false, retry: time.Minute},
		},
	},
	{
		name:  "independent keys",
		limit: Limit{Rate: 2, Period: time.Hour},
		calls: []call{
			{key: "a", times: 2, allow: true},
			{key: "a", allow: false, retry: time.Hour},
			{key: "b", times: 2, allow: true},
			{key: "b", allow: false, retry: time.Hour},
			{key: "a", allow: false, retry: time.Hour},
		},
	},
	{
		// The window slides: the first request leaves it first, and the
		// second one still counts after that.
		name:  "each request counts for one period after it",
		limit: Limit{Rate: 2, Period: 600 * time.Millisecond},
		calls: []call{
			{key: "a", allow: true},
			{sleep: 300 * time.Millisecond, key: "a", allow: true},
			{key: "a", allow: false, retry: 600 * time.Millisecond},
			{sleep: 400 * time.Millisecond, key: "a", allow: true},
			{key: "a", allow: false},
		},
	},
	{
		// What the login routes do: take a place before the attempt, give it back
		// unless the attempt failed.
		name:  "a request given back counts nothing; the ones kept count",
		limit: PerMinute(3),
		calls: []call{
			{key: "a", give: true, times: 10, allow: true},
			{key: "a", times: 3, allow: true},
			{key: "a", give: true, times: 3, allow: false, retry: time.Minute},
			{key: "a", allow: false, retry: time.Minute},
			{key: "b", give: true, allow: true},
		},
	},
	{
		name:  "a place given back is free at once, as the window slides",
		limit: Limit{Rate: 2, Period: 600 * time.Millisecond},
		calls: []call{
			{key: "a", allow: true},
			{sleep: 300 * time.Millisecond, key: "a", give: true, times: 3, allow: true},
			{key: "a", allow: true},
			{key: "a", allow: false, retry: 600 * time.Millisecond},
			{sleep: 400 * time.Millisecond, key: "a", allow: true},
			{key: "a", give: true, allow: false},
		},
	},
	{
		name:  "zero rate is unlimited",
		limit: Limit{},
		calls: []call{{key: "a", times: 1000, allow: true}, {key: "a", give: true, allow: true}},
	},
	{
		name:  "negative rate is unlimited",
		limit: Limit{Rate: -1, Period: time.Minute},
		calls: []call{{key: "a", times: 100, allow: true}},
	},
	{
		name:  "zero period is unlimited",
		limit: Limit{Rate: 1},
		calls: []call{{key: "a", times: 100, allow: true}},
	},
	{
		name:  "empty key is a key like any other",
		limit: PerMinute(1),
		calls: []call{
			{key: "", allow: true},
			{key: "", allow: false, retry: time.Minute},
		},
	},
}

// retrySlack absorbs the rounding of Redis's microsecond times.
const retrySlack = time.Millisecond

func runScenario(t *testing.T, lim Limiter, sc scenario) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	for i, c := range sc.calls {
		time.Sleep(c.sleep)
		name := "Allow"
		for n := range max(c.times, 1) {
			res, err := lim.Allow(ctx, c.key, sc.limit)
			if err != nil {
				t.Fatalf("step %d call %d: %s(%q): %v", i, n, name, c.key, err)
			}
			if res.Allowed != c.allow {
				t.Fatalf("step %d call %d: %s(%q).Allowed = %v, want %v", i, n, name, c.key, res.Allowed, c.allow)
			}
			if c.give {
				if err := lim.Return(ctx, c.key, res.Ticket); err != nil {
					t.Fatalf("step %d call %d: Return(%q, %q): %v", i, n, c.key, res.Ticket, err)
				}
			}
			if res.Allowed {
				if res.RetryAfter != 0 {
					t.Errorf("step %d call %d: allowed with RetryAfter %v, want 0", i, n, res.RetryAfter)
				}
				continue
			}
			if res.RetryAfter <= 0 {
				t.Errorf("step %d call %d: refused with RetryAfter %v, want > 0", i, n, res.RetryAfter)
			}
			if c.retry == 0 {
				continue
			}
			lo := c.retry - time.Since(start) - retrySlack
			if hi := c.retry + retrySlack; res.RetryAfter < lo || res.RetryAfter > hi {
				t.Errorf("step %d call %d: RetryAfter = %v, want in [%v, %v]", i, n, res.RetryAfter, lo, hi)
			}
		}
	}
}

// implementations returns fresh limiters per scenario so state never leaks
// between rows. Redis is included only when SUBPROV_TEST_REDIS_URL is set.
func implementations() map[string]func(t *testing.T) Limiter {
	impls := map[string]func(t *testing.T) Limiter{
		"memory": func(*testing.T) Limiter { return NewMemory() },
	}
	if os.Getenv("SUBPROV_TEST_REDIS_URL") != "" {
		impls["redis"] = func(t *testing.T) Limiter {
			r, _ := newTestRedis(t)
			return r
		}
	}
	return impls
}

func TestLimiterBehaviour(t *testing.T) {
	for name, mk := range implementations() {
		t.Run(name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					runScenario(t, mk(t), sc)
				})
			}
		})
	}
}

// newTestClient connects to the Redis named by SUBPROV_TEST_REDIS_URL and
// skips only when the variable is unset: a configured but broken Redis must
// fail the run rather than pass it silently.
func newTestClient(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("SUBPROV_TEST_REDIS_URL")
	if url == "" {
		t.Skip("SUBPROV_TEST_REDIS_URL not set")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse SUBPROV_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping redis at %s: %v", opts.Addr, err) // Addr, not the URL: it may hold a password
	}
	return c
}

// newTestRedis returns a Redis limiter under a random prefix and deletes that
// prefix's keys when the test ends.
func newTestRedis(t *testing.T) (*Redis, *redis.Client) {
	t.Helper()
	c := newTestClient(t)
	prefix := "subprov-test:" + rand.Text() + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		// Every key is under "rate:", with its member counter beside it.
		iter := c.Scan(ctx, 0, "rate:{"+prefix+"*", 100).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scan test keys: %v", err)
			return
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Errorf("delete test keys: %v", err)
			}
		}
	})
	return NewRedis(c, prefix), c
}

func TestRedisKeysUsePrefix(t *testing.T) {
	r, c := newTestRedis(t)
	ctx := context.Background()
	if _, err := r.Allow(ctx, "k", PerMinute(1)); err != nil {
		t.Fatalf("Allow: %v", err)
	}
	ttl, err := c.TTL(ctx, "rate:{"+r.prefix+"k}").Result()
	if err != nil {
		t.Fatalf("TTL: %v", err)
	}
	// A live key with a TTL proves both the naming and that Redis will expire
	// the state without our help.
	if ttl <= 0 || ttl > time.Minute {
		t.Errorf("TTL of rate:{%sk} = %v, want in (0, 1m]", r.prefix, ttl)
	}
}

// TestReturnKeepsNothing: a key whose every counted request was given back leaves no state
// behind, so the login routes (which give back every attempt that did not fail) cost no memory
// and no sorted sets for the addresses that sign in.
func TestReturnKeepsNothing(t *testing.T) {
	ctx := context.Background()
	t.Run("memory", func(t *testing.T) {
		m := NewMemory()
		for i := range 1000 {
			res, _ := m.Allow(ctx, fmt.Sprint(i), PerMinute(1))
			if !res.Allowed || res.Ticket == "" {
				t.Fatalf("Allow(%d) = %+v, want allowed with a ticket", i, res)
			}
			if err := m.Return(ctx, fmt.Sprint(i), res.Ticket); err != nil {
				t.Fatal(err)
			}
		}
		if n := m.size(); n != 0 {
			t.Errorf("%d keys kept after every request was given back, want 0", n)
		}
	})
	t.Run("redis", func(t *testing.T) {
		r, c := newTestRedis(t)
		res, err := r.Allow(ctx, "k", PerMinute(1))
		if err != nil || !res.Allowed || res.Ticket == "" {
			t.Fatalf("Allow = %+v, %v; want allowed with a ticket", res, err)
		}
		if err := r.Return(ctx, "k", res.Ticket); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Exists(ctx, "rate:{"+r.prefix+"k}").Result(); err != nil || n != 0 {
			t.Errorf("Exists after the request was given back = %d, %v; want 0", n, err)
		}
	})
}

func TestRedisErrors(t *testing.T) {
	tests := []struct {
		name      string
		mk        func(t *testing.T) *Redis
		cancelled bool
	}{
		{name: "nil client", mk: func(*testing.T) *Redis { return NewRedis(nil, "p:") }},
		{name: "nil limiter", mk: func(*testing.T) *Redis { return nil }},
		// Port 1 is reserved and refuses connections, so this fails fast
		// without depending on the real server.
		{name: "unreachable server", mk: func(t *testing.T) *Redis {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
			t.Cleanup(func() { c.Close() })
			return NewRedis(c, "p:")
		}},
		{name: "cancelled context", cancelled: true, mk: func(t *testing.T) *Redis {
			r, _ := newTestRedis(t)
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.mk(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			res, err := lim.Allow(ctx, "k", PerMinute(1))
			if err == nil {
				t.Fatalf("Allow = %+v, nil error; want error", res)
			}
			if res.Allowed {
				t.Errorf("Allow: Allowed = true alongside error %v", err)
			}
			if err := lim.Return(ctx, "k", "1"); err == nil {
				t.Error("Return: nil error; want error")
			}
			// No limit needs no Redis, so even a broken limiter lets it through.
			res, err = lim.Allow(ctx, "k", Limit{})
			if err != nil || !res.Allowed {
				t.Errorf("Allow(no limit) = %+v, %v; want allowed, nil", res, err)
			}
		})
	}
}
