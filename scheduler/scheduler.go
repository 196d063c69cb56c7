// Package scheduler runs the clock-driven sweeps (webhooks due, lines to deprovision, and the
// later bill runs and reminders) every second and at once whenever the dev clock moves, so
// time-driven work that falls due never waits for a poll. A sweep only finds due rows and
// enqueues durable jobs; the jobs do the work, so sweeping twice is harmless. The one
// exception is housekeeping that is a single idempotent statement (removing the console
// sessions that ended), done by the sweep itself.
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

// Run sweeps every interval and whenever kick receives, until ctx is done.
func Run(ctx context.Context, interval time.Duration, kick <-chan struct{}, log *slog.Logger, sweeps ...Sweep) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		RunOnce(ctx, log, sweeps...)
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
