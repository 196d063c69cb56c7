// Package scheduler runs the clock-driven sweeps (webhooks due, lines to deprovision, bill
// runs, charges, reminders) every second and at once whenever the dev clock moves, so
// time-driven work that falls due never waits for a poll. A sweep only finds due rows and
// enqueues durable jobs; the jobs do the work. The one exception is housekeeping that is a
// single idempotent statement (removing the console sessions that ended), done by the sweep
// itself.
//
// However many processes run workers, the sweeps run on one of them at a time: the one that
// holds the sweeps' lock (Elect). The others try to take it every interval, so when the
// leader dies another leads within about a second (within ten when its host vanished; see
// store.Lock).
package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Sweep is one named piece of due-work discovery.
type Sweep struct {
	Name string
	Run  func(ctx context.Context) error
}

// Lock is a held lock that only one process holds at a time.
type Lock interface {
	// Held checks the lock is still held; after an error it is not, and it is released.
	Held(ctx context.Context) error
	// Release gives the lock up.
	Release()
}

// Election decides which process sweeps.
type Election struct {
	// TryLock takes the sweeps' lock, or answers nil (and no error) when another process holds it.
	TryLock func(ctx context.Context) (Lock, error)
	// Leading, if set, is told each time this process starts (true) or stops (false) leading.
	Leading func(bool)
}

// Run sweeps every interval and whenever kick receives, until ctx is done, while this process
// leads: each round it first checks it still holds the lock (or tries to take it), and sweeps
// only if it does. Sweeping stops before the lock is released, so two processes never sweep
// at once, save for a sweep under way when a lock is lost to the database's side (its session
// killed), which finishes: sweeps only enqueue jobs that are unique, so that is harmless.
func Run(ctx context.Context, interval time.Duration, kick <-chan struct{}, log *slog.Logger, e Election, sweeps ...Sweep) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var held Lock
	failing := false // the last try of the lock failed: said once, not every interval
	lead := func(on bool) {
		if on {
			log.Info("leading the clock-driven sweeps: this process runs them now")
		} else {
			log.Info("stopped leading the clock-driven sweeps")
		}
		if e.Leading != nil {
			e.Leading(on)
		}
	}
	defer func() {
		if held != nil {
			held.Release()
			lead(false)
		}
	}()
	for {
		if held != nil {
			if err := held.Held(ctx); err != nil && ctx.Err() == nil {
				log.Warn("lost the lock of the clock-driven sweeps", "err", err)
				held = nil
				lead(false)
			}
		}
		if held == nil && ctx.Err() == nil {
			l, err := e.TryLock(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				if !failing {
					log.Warn("could not try the lock of the clock-driven sweeps; trying again every interval", "err", err)
				}
				failing = true
			case l != nil:
				held = l
				lead(true)
			}
			if err == nil {
				failing = false
			}
		}
		if held != nil {
			RunOnce(ctx, log, sweeps...)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
	}
}

// RunOnce runs every sweep once; a failing sweep is logged and the others still run.
func RunOnce(ctx context.Context, log *slog.Logger, sweeps ...Sweep) {
	for _, s := range sweeps {
		if ctx.Err() != nil {
			return
		}
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			log.Warn("sweep failed", "sweep", s.Name, "err", err)
		}
	}
}
