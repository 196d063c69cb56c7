package subprov

import "testing"

func TestNormalizeEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"an address as stored stays as it is", "marie@example.ca", "marie@example.ca"},
		{"capitals are lowered", "Marie.Tremblay@Example.CA", "marie.tremblay@example.ca"},
		{"spaces around it are dropped", "  marie@example.ca\t", "marie@example.ca"},
		{"an empty address stays empty", "  ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormalizeEmail(tt.in); got != tt.want {
				t.Fatalf("NormalizeEmail(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
