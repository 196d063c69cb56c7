package subprov

import "testing"

func TestLocationKey(t *testing.T) {
	tests := []struct {
		name, unit, port, want string
	}{
		{"a suite line is keyed by its suite", "u1", "", "u1"},
		{"a direct line at a suite's port is keyed by the suite", "u1", "p1", "u1"},
		{"a port that belongs to no suite is its own place", "", "p1", "p1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LocationKey(tt.unit, tt.port); got != tt.want {
				t.Fatalf("LocationKey(%q, %q) = %q, want %q", tt.unit, tt.port, got, tt.want)
			}
		})
	}
}

func TestHoldsPlace(t *testing.T) {
	tests := []struct {
		name          string
		status        Status
		deprovisioned bool
		want          bool
	}{
		{"a pending line holds its place", StatusPendingInstall, false, true},
		{"an active line holds its place", StatusActive, false, true},
		{"a suspended line holds its place", StatusSuspended, false, true},
		{"a cancelled line still in service holds its place", StatusCancelled, false, true},
		{"a cancelled line whose port was reset holds nothing", StatusCancelled, true, false},
		{"an unknown status holds nothing", Status("ARCHIVED"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HoldsPlace(tt.status, tt.deprovisioned); got != tt.want {
				t.Fatalf("HoldsPlace(%s, deprovisioned %v) = %v, want %v", tt.status, tt.deprovisioned, got, tt.want)
			}
		})
	}
}
