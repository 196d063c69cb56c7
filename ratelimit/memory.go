package ratelimit

import (
	"context"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strconv"
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

// Memory is an in-process sliding-window limiter. It is safe for concurrent
// use and starts no goroutines: keys whose window has emptied are swept
// lazily as new keys arrive, so memory stays proportional to the keys that
// are actually being limited (each holds at most Rate times).
type Memory struct {
	now    func() time.Time
	base   time.Time
	seed   maphash.Seed
	shards [numShards]shard
}

type shard struct {
	mu   sync.Mutex
	keys map[string]*window
	// inserts counts new keys since the last sweep; a sweep runs once it
	// reaches sweepAt.
	inserts int
	sweepAt int
}

// window is one key's accepted requests of the last period: their times in
// nanoseconds since Memory.base, oldest first.
type window struct {
	times  []int64
	period int64
}

// NewMemory returns an in-process limiter using the wall clock.
func NewMemory() *Memory {
	return NewMemoryWithClock(time.Now)
}

// NewMemoryWithClock returns an in-process limiter that reads time from now,
// so tests can drive the window deterministically. A nil now means time.Now.
func NewMemoryWithClock(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	// Offsets from base use the monotonic reading that time.Now carries, so
	// wall-clock steps (NTP, DST) neither empty nor freeze windows.
	m := &Memory{now: now, base: now(), seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].keys = make(map[string]*window)
		m.shards[i].sweepAt = minSweep
	}
	return m
}

// Allow reports whether one request for key may proceed under l and counts it
// if so. It never returns an error; the signature matches Limiter.
func (m *Memory) Allow(_ context.Context, key string, l Limit) (Result, error) {
	if !limits(l) {
		return Result{Allowed: true}, nil
	}
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()

	now := int64(m.now().Sub(m.base))
	period := int64(l.Period)
	w, exists := s.keys[key]
	if !exists {
		s.inserts++
		if s.inserts >= s.sweepAt {
			s.sweep(now) // before the new key joins: its window is empty yet
		}
		w = &window{}
		s.keys[key] = w
	}
	w.period = period
	w.expire(now)
	if len(w.times) >= l.Rate {
		// The request is allowed once the oldest time it would have to outlive leaves.
		age := now - w.times[len(w.times)-l.Rate] // < 0 only if the clock went back
		wait := period - age
		if age < 0 && wait < period {
			wait = math.MaxInt64 // overflowed: a very long wait, never a negative one
		}
		return Result{RetryAfter: time.Duration(wait)}, nil
	}
	w.times = append(w.times, now)
	return Result{Allowed: true, Ticket: strconv.FormatInt(now, 10)}, nil
}

// Return removes the counted request named by ticket (its time) from key's window; a window
// left empty is dropped with its key. It never returns an error; the signature matches
// Limiter.
func (m *Memory) Return(_ context.Context, key, ticket string) error {
	t, err := strconv.ParseInt(ticket, 10, 64)
	if err != nil {
		return nil // "" or not one of ours: nothing was counted
	}
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.keys[key]
	if !ok {
		return nil
	}
	if i := slices.Index(w.times, t); i >= 0 {
		w.times = slices.Delete(w.times, i, i+1)
	}
	if len(w.times) == 0 {
		delete(s.keys, key)
	}
	return nil
}

func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)%numShards]
}

// expire drops the times that have left the window ending at now. A time
// exactly one period old has left it.
func (w *window) expire(now int64) {
	cut := w.start(now)
	i := sort.Search(len(w.times), func(i int) bool { return w.times[i] > cut })
	w.times = slices.Delete(w.times, 0, i)
}

// start is the time a request must be after to be in the window ending at now.
func (w *window) start(now int64) int64 {
	cut := now - w.period
	if cut > now { // overflowed (a clock far behind its base, a period near the maximum)
		return math.MinInt64
	}
	return cut
}

// sweep drops keys whose window has emptied. Scheduling it after as many
// inserts as there were live keys keeps its cost amortized O(1) per call
// while bounding the map to about twice the live keys (or minSweep).
func (s *shard) sweep(now int64) {
	for k, w := range s.keys {
		if n := len(w.times); n == 0 || w.times[n-1] <= w.start(now) {
			delete(s.keys, k)
		}
	}
	s.inserts = 0
	s.sweepAt = max(minSweep, len(s.keys))
}

// size reports the number of tracked keys; tests use it to check eviction.
func (m *Memory) size() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.keys)
		s.mu.Unlock()
	}
	return n
}
