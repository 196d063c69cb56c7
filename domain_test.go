package subprov

import (
	"testing"
	"time"
)

func TestProviderLocation(t *testing.T) {
	tests := []struct {
		zone string
		want string
	}{
		{"America/Toronto", "America/Toronto"},
		{"America/Toronto", "America/Toronto"}, // the second time from the cache
		{"America/Vancouver", "America/Vancouver"},
		{"Mars/Olympus_Mons", "UTC"},
		{"", "UTC"},
	}
	for _, tt := range tests {
		p := &Provider{TimeZone: tt.zone}
		if got := p.Location().String(); got != tt.want {
			t.Errorf("Location(%q) = %q, want %q", tt.zone, got, tt.want)
		}
	}
	// The zone's rules, not only its name: 2026-07-01 noon UTC is 08:00 in Toronto (EDT).
	toronto := (&Provider{TimeZone: "America/Toronto"}).Location()
	if h := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).In(toronto).Hour(); h != 8 {
		t.Errorf("noon UTC in Toronto = %d h, want 8", h)
	}
}
