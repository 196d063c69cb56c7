package scheduler_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subprov/subprov/scheduler"
)

// fakeLock is one lock shared by the processes of a test: at most one holds it.
type fakeLock struct {
	mu     sync.Mutex
	holder int // 0: free
	lost   bool
}

type held struct {
	l  *fakeLock
	id int
}

func (h held) Held(context.Context) error {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	if h.l.lost {
		h.l.lost, h.l.holder = false, 0
		return errors.New("session gone")
	}
	return nil
}

func (h held) Release() {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	if h.l.holder == h.id {
		h.l.holder = 0
	}
}

func (l *fakeLock) election(id int, leading *atomic.Int32) scheduler.Election {
	return scheduler.Election{
		TryLock: func(context.Context) (scheduler.Lock, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.holder != 0 {
				return nil, nil
			}
			l.holder = id
			return held{l, id}, nil
		},
		Leading: func(on bool) {
			if on {
				leading.Add(1)
			} else {
				leading.Add(-1)
			}
		},
	}
}

// TestOneProcessSweeps: of three processes sweeping on one lock, one sweeps at a time; when it
// stops (a process that ends) or loses its lock, another takes over within a few intervals.
func TestOneProcessSweeps(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Millisecond
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	lock := &fakeLock{}
	var running, overlaps atomic.Int32
	swept := make([]atomic.Int64, 3)
	var leading atomic.Int32
	stops := make([]context.CancelFunc, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		stops[i] = cancel
		sweep := scheduler.Sweep{Name: "count", Run: func(context.Context) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			time.Sleep(time.Millisecond)
			swept[i].Add(1)
			running.Add(-1)
			return nil
		}}
		wg.Go(func() { scheduler.Run(ctx, interval, nil, log, lock.election(i+1, &leading), sweep) })
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
		wg.Wait()
	}()
	leader := func() int {
		lock.mu.Lock()
		defer lock.mu.Unlock()
		return lock.holder - 1
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(interval) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 s", what)
			}
		}
	}
	waitFor("a leader sweeps", func() bool { l := leader(); return l >= 0 && swept[l].Load() >= 3 })
	first := leader()
	for i := range swept {
		if i != first && swept[i].Load() != 0 {
			t.Fatalf("process %d swept while %d led", i, first)
		}
	}
	stops[first]() // the leader ends
	waitFor("another process leads", func() bool { l := leader(); return l >= 0 && l != first && swept[l].Load() >= 3 })
	second := leader()
	before := swept[second].Load()
	lock.mu.Lock()
	lock.lost = true // its session ends on the database's side
	lock.mu.Unlock()
	waitFor("a leader after the lost lock", func() bool { l := leader(); return l >= 0 && swept[l].Load() > before+3 })
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d sweeps ran while another did", n)
	}
	if n := leading.Load(); n != 1 {
		t.Fatalf("%d processes say they lead", n)
	}
}
