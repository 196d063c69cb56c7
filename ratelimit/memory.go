package ratelimit

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

const (
	// numShards spreads keys over several mutexes so that unrelated clients
	// hitting the same replica do not serialize on one lock.
	numShards = 32
	// minSweep is the floor on how many new keys a shard admits between
	// sweeps; it keeps sweeping cheap for small maps.
	minSweep = 64
)

// Memory is an in-process GCRA limiter. It is safe for concurrent use and
// starts no goroutines: expired entries are swept lazily as new keys arrive,
// so memory stays proportional to the keys that are actually being limited.
//
// The arithmetic mirrors redis_rate's Lua script, in integer nanoseconds
// rather than floating-point seconds.
type Memory struct {
	now    func() time.Time
	base   time.Time
	seed   maphash.Seed
	shards [numShards]shard
}

type shard struct {
	mu sync.Mutex
	// tat maps key to its theoretical arrival time, in nanoseconds since
	// Memory.base. An entry whose TAT is not in the future is equivalent to a
	// missing one, which is what makes eviction safe.
	tat map[string]int64
	// inserts counts new keys since the last sweep; a sweep runs once it
	// reaches sweepAt.
	inserts int
	sweepAt int
}

// NewMemory returns an in-process limiter using the wall clock.
func NewMemory() *Memory {
	return NewMemoryWithClock(time.Now)
}

// NewMemoryWithClock returns an in-process limiter that reads time from now,
// so tests can drive refill deterministically. A nil now means time.Now.
func NewMemoryWithClock(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	// Offsets from base use the monotonic reading that time.Now carries, so
	// wall-clock steps (NTP, DST) neither refill nor freeze buckets.
	m := &Memory{now: now, base: now(), seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].tat = make(map[string]int64)
		m.shards[i].sweepAt = minSweep
	}
	return m
}

// Allow reports whether one request for key may proceed under l. It never
// returns an error; the signature matches Limiter.
func (m *Memory) Allow(_ context.Context, key string, l Limit) (Result, error) {
	l, ok := normalize(l)
	if !ok {
		return Result{Allowed: true}, nil
	}
	interval := int64(l.Period) / int64(l.Rate)
	if interval <= 0 {
		// More requests per period than nanoseconds in it: nothing to limit.
		return Result{Allowed: true}, nil
	}
	burstOffset := int64(math.MaxInt64)
	if int64(l.Burst) <= math.MaxInt64/interval {
		burstOffset = interval * int64(l.Burst)
	}

	s := &m.shards[maphash.String(m.seed, key)%numShards]
	s.mu.Lock()
	defer s.mu.Unlock()

	now := int64(m.now().Sub(m.base))
	tat, exists := s.tat[key]
	// debt is how far the key's TAT runs ahead of now; working with it
	// instead of absolute times keeps every comparison overflow-free.
	var debt int64
	if exists && tat > now {
		debt = satSub(tat, now)
	}
	newDebt := satAdd(debt, interval)
	if newDebt > burstOffset {
		return Result{RetryAfter: time.Duration(newDebt - burstOffset)}, nil
	}

	if !exists {
		s.inserts++
		if s.inserts >= s.sweepAt {
			s.sweep(now)
		}
	}
	s.tat[key] = satAdd(now, newDebt)
	return Result{Allowed: true}, nil
}

// sweep drops entries whose TAT has passed. Scheduling it after as many
// inserts as there were live entries keeps its cost amortized O(1) per call
// while bounding the map to about twice the live keys (or minSweep).
func (s *shard) sweep(now int64) {
	for k, tat := range s.tat {
		if tat <= now {
			delete(s.tat, k)
		}
	}
	s.inserts = 0
	s.sweepAt = max(minSweep, len(s.tat))
}

// size reports the number of tracked keys; tests use it to check eviction.
func (m *Memory) size() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.tat)
		s.mu.Unlock()
	}
	return n
}
