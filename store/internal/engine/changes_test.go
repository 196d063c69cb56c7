package engine

import (
	"context"
	"testing"
	"time"
)

// TestChangeFeedCountsFromThePollsStart: a read is served from memory only within staleAfter
// of the start of the last successful poll, so a database that answers the poll slowly
// (slower than staleAfter) never has its changes missed for longer than staleAfter: with such a
// poll nothing is served from memory at all, and with a quick one it is.
func TestChangeFeedCountsFromThePollsStart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		pollTime time.Duration
		live     bool
	}{
		{"a quick poll", 0, true},
		{"a poll slower than the staleness bound", staleAfter + 50*time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newChangeFeed(func(ctx context.Context) (string, error) {
				select {
				case <-time.After(tt.pollTime):
				case <-ctx.Done():
				}
				return "1", ctx.Err()
			}, func() error { return nil })
			defer f.Close()
			f.Current()
			sawLive := false
			for end := time.Now().Add(3*staleAfter + 2*tt.pollTime); time.Now().Before(end); time.Sleep(time.Millisecond) {
				if _, live := f.Current(); live {
					sawLive = true
				}
			}
			if sawLive != tt.live {
				t.Fatalf("served from memory: %v, want %v", sawLive, tt.live)
			}
		})
	}
}
