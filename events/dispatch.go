package events

import (
	"context"
	"sync"
	"time"
)

// dispatcher runs one goroutine per provider with work, for as long as it has work.
type dispatcher struct {
	ctx       context.Context // cancelled to cut deliveries short
	cancel    context.CancelFunc
	drain     chan struct{} // closed by Stop: deliver what is due, then end
	drainOnce sync.Once
	mu        sync.Mutex
	loops     map[string]chan struct{} // provider id -> its goroutine's wake-up (buffer 1)
	wg        sync.WaitGroup
}

// Start runs this process's webhook dispatcher until Stop (or until ctx is done, which cuts
// deliveries short). Until Start, Wake does nothing (the sweep finds what was recorded
// meanwhile).
func (d *Deliverer) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	d.disp.Store(&dispatcher{ctx: ctx, cancel: cancel, drain: make(chan struct{}), loops: map[string]chan struct{}{}})
}

// Stop lets the dispatcher deliver what is due and end, as a graceful shutdown lets running
// jobs finish; when ctx ends first, deliveries in flight are cut short (such an attempt is not
// counted and its event stays pending for the next process).
func (d *Deliverer) Stop(ctx context.Context) {
	disp := d.disp.Load()
	if disp == nil {
		return
	}
	disp.drainOnce.Do(func() { close(disp.drain) })
	done := make(chan struct{})
	go func() { disp.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		disp.cancel()
		<-done
	}
	disp.cancel()
}

// Wake tells the dispatcher that the provider may have events to deliver: a transaction that
// recorded one has committed, or the sweep found one due. It never blocks.
func (d *Deliverer) Wake(providerID string) {
	disp := d.disp.Load()
	if disp == nil || disp.ctx.Err() != nil {
		return
	}
	disp.mu.Lock()
	defer disp.mu.Unlock()
	if kick, ok := disp.loops[providerID]; ok {
		select {
		case kick <- struct{}{}:
		default: // already signalled
		}
		return
	}
	kick := make(chan struct{}, 1)
	disp.loops[providerID] = kick
	disp.wg.Add(1)
	go d.dispatch(disp, providerID, kick)
}

// dispatch delivers the provider's events whenever it is woken, holding the lease across a
// run of wake-ups, and ends after idle without one.
func (d *Deliverer) dispatch(disp *dispatcher, providerID string, kick chan struct{}) {
	defer disp.wg.Done()
	ctx := disp.ctx
	for {
		got, err := d.session(ctx, providerID, kick, disp.drain, time.Time{})
		if err != nil && ctx.Err() == nil {
			d.log().Warn("webhook dispatch failed", "provider_id", providerID, "err", err)
		}
		wait := idle
		switch {
		case err != nil:
			wait = time.Second // the store failed: try again, not in a tight loop
		case !got:
			// Another process's flusher holds the lease: look again soon, in case it finished
			// before seeing what woke us.
			wait = leaseBusyRetry
		default:
			if due, err := d.pending(ctx, providerID); err == nil && due {
				continue // recorded while we released the lease
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-kick:
			t.Stop()
			continue
		case <-ctx.Done():
			t.Stop()
		case <-disp.drain:
			t.Stop()
		case <-t.C:
			if !got || err != nil {
				if due, err := d.pending(ctx, providerID); err == nil && due {
					continue
				}
			}
		}
		disp.mu.Lock()
		select {
		case <-kick: // woken while deciding to end
			disp.mu.Unlock()
			if ctx.Err() == nil && !closed(disp.drain) {
				continue
			}
			disp.mu.Lock()
		default:
		}
		delete(disp.loops, providerID)
		disp.mu.Unlock()
		return
	}
}

// pending reports whether the provider has an event to deliver now: due, or committed and not
// numbered yet.
func (d *Deliverer) pending(ctx context.Context, providerID string) (bool, error) {
	due, err := d.Store.DueEvents(ctx, providerID, d.Clock.Now(), 1)
	if err != nil || len(due) > 0 {
		return len(due) > 0, err
	}
	return d.Store.HasEventsToSequence(ctx, providerID)
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
