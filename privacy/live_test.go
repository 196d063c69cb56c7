package privacy_test

import (
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/privacy"
)

// TestLive: the lines that keep an account's personal data are those that still serve or
// bill; a cancelled line keeps it until its end, and an ended or closed line no more.
func TestLive(t *testing.T) {
	now := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
	ahead, past := now.Add(time.Hour), now.Add(-time.Hour)
	for _, tt := range []struct {
		status subprov.Status
		ended  *time.Time
		live   bool
	}{
		{subprov.StatusActive, nil, true},
		{subprov.StatusSuspended, nil, true},
		{subprov.StatusPendingInstall, nil, true},
		{subprov.StatusCancelled, &ahead, true},
		{subprov.StatusCancelled, &now, false},
		{subprov.StatusCancelled, &past, false},
		{subprov.StatusCancelled, nil, false},
	} {
		l := &subprov.Subscription{Status: tt.status, EndedAt: tt.ended}
		if got := privacy.Live(l, now); got != tt.live {
			t.Errorf("%s ended %v: live %v, want %v", tt.status, tt.ended, got, tt.live)
		}
	}
}
