// Package dev serves the dev-mode routes: the adjustable clock, the fault switches and the
// mail outbox. The route table registers them only in dev mode, so in production they are
// 404 like any unknown path.
package dev

import (
	"context"

	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/store"
)

// Handler serves the dev routes.
type Handler struct {
	Store          *store.Store
	Clock          *clock.Adjustable
	Faults         *faults.Switches
	OnClockChange  func(ctx context.Context) // persists the dev clock
	OnFaultsChange func(ctx context.Context) // persists the fault switches
}
