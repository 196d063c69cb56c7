package auth

import (
	"testing"
	"time"

	"github.com/subprov/subprov/store"
)

// TestThrottleDelay: the first ten failures in a row cost nothing; from the tenth on, each
// failure doubles the wait before the login's next attempt, up to a minute, never more.
func TestThrottleDelay(t *testing.T) {
	for _, tt := range []struct {
		failures int
		want     time.Duration
	}{
		{0, 0}, {1, 0}, {9, 0},
		{10, time.Second}, {11, 2 * time.Second}, {12, 4 * time.Second}, {15, 32 * time.Second},
		{16, time.Minute}, {40, time.Minute}, {1 << 30, time.Minute},
	} {
		if got := throttleDelay(tt.failures); got != tt.want {
			t.Errorf("throttleDelay(%d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

// TestRunsOfFailuresAreForgotten: a run of failures counts until 15 minutes after its next
// attempt fell due, then starts afresh.
func TestRunsOfFailuresAreForgotten(t *testing.T) {
	due := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	run := store.LoginThrottle{Failures: 14, Until: due}
	for _, tt := range []struct {
		at   time.Time
		want store.LoginThrottle
	}{
		{due.Add(-time.Second), run},
		{due.Add(failureMemory - time.Nanosecond), run},
		{due.Add(failureMemory), store.LoginThrottle{}},
	} {
		if got := remembered(run, tt.at); got != tt.want {
			t.Errorf("at %v: %+v, want %+v", tt.at, got, tt.want)
		}
	}
	if got := remembered(store.LoginThrottle{}, due); got != (store.LoginThrottle{}) {
		t.Errorf("no run: %+v", got)
	}
}
