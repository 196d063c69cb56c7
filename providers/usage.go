package providers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/subprov/subprov/store"
)

// UsageFlushEvery is how often Usage writes the API keys' last uses: an API key's
// last_used_at is behind its real last use by at most this much (and by the process's lifetime
// never more: it flushes on shutdown too).
const UsageFlushEvery = 30 * time.Second

// Usage keeps, in memory, when each API key was last used on this process, and writes the
// batch every UsageFlushEvery: a request authenticated by a key costs no database write.
type Usage struct {
	Store *store.Store
	Log   *slog.Logger

	mu   sync.Mutex
	seen map[string]time.Time
}

// Touch records that key id was used at at.
func (u *Usage) Touch(id string, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.seen == nil {
		u.seen = map[string]time.Time{}
	}
	if at.After(u.seen[id]) {
		u.seen[id] = at
	}
}

// Flush writes the uses seen since the last flush. On failure they are kept for the next.
func (u *Usage) Flush(ctx context.Context) error {
	u.mu.Lock()
	batch := u.seen
	u.seen = nil
	u.mu.Unlock()
	if err := u.Store.TouchAPIKeys(ctx, batch); err != nil {
		for id, at := range batch {
			u.Touch(id, at)
		}
		return err
	}
	return nil
}

// Run flushes every interval until ctx is done, then once more.
func (u *Usage) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			u.flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			u.flush(ctx)
		}
	}
}

func (u *Usage) flush(ctx context.Context) {
	if err := u.Flush(ctx); err != nil && u.Log != nil {
		u.Log.Warn("api key usage: flush failed", "err", err)
	}
}
