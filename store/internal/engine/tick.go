package engine

import (
	"context"
	"time"
)

// ticking is a store's background loop on a connection of its own (the change feed's poll,
// the checkpointer): fn runs at once, then every interval, until close.
type ticking struct {
	stop     context.CancelFunc
	finished chan struct{}
}

func tick(interval time.Duration, fn func(ctx context.Context)) *ticking {
	ctx, cancel := context.WithCancel(context.Background())
	t := &ticking{stop: cancel, finished: make(chan struct{})}
	go func() {
		defer close(t.finished)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			fn(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
		}
	}()
	return t
}

// close stops the loop and waits for it to end (a nil loop: nothing to stop).
func (t *ticking) close() {
	if t != nil {
		t.stop()
		<-t.finished
	}
}
