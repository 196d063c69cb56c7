package address

import "testing"

func TestPostalCode(t *testing.T) {
	tests := []struct {
		rule string
		in   string
		want string // "" means not a postal code
	}{
		{"canonical form accepted", "H3C 2B5", "H3C 2B5"},
		{"lower case upper-cased", "h3c 2b5", "H3C 2B5"},
		{"mixed case", "h3C 2b5", "H3C 2B5"},
		{"no space", "h3c2b5", "H3C 2B5"},
		{"hyphen separator", "h3c-2b5", "H3C 2B5"},
		{"surrounding white space ignored", "  M5H 2N2\t", "M5H 2N2"},
		{"double space tolerated", "M5H  2N2", "M5H 2N2"},
		{"non-breaking space from copy-paste", "K1A\u00a00B1", "K1A 0B1"},
		{"W allowed after first position", "T2W 1A1", "T2W 1A1"},
		{"Z allowed in LDU", "V6E 3Z3", "V6E 3Z3"},
		{"X first (Nunavut/NWT)", "X0A 0H0", "X0A 0H0"},
		{"empty", "", ""},
		{"too short", "H3C 2B", ""},
		{"too long", "H3C 2B55", ""},
		{"separator in wrong place", "H3-C2B5", ""},
		{"digit where letter expected", "13C 2B5", ""},
		{"letter where digit expected", "HHC 2B5", ""},
		{"forbidden D", "D3C 2B5", ""},
		{"forbidden F", "H3F 2B5", ""},
		{"forbidden I", "H3C 2I5", ""},
		{"forbidden O", "O3C 2B5", ""},
		{"forbidden Q", "H3Q 2B5", ""},
		{"forbidden U", "H3C 2U5", ""},
		{"W never first", "W3C 2B5", ""},
		{"Z never first", "Z3C 2B5", ""},
		{"US ZIP code", "90210", ""},
		{"other punctuation", "H3C.2B5", ""},
		{"fullwidth not accepted", "Ｈ3C 2B5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, ok := PostalCode(tt.in)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("PostalCode(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.want != "")
			}
		})
	}
}
