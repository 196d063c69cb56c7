package subprov_test

import (
	"regexp"
	"testing"

	"github.com/subprov/subprov"
)

var canonicalMAC = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

// FuzzNormalizeMAC: any input is refused or becomes the canonical form, which normalizes to
// itself.
func FuzzNormalizeMAC(f *testing.F) {
	for _, s := range []string{"", "3c:84:6a:12:04:01", "3C-84-6A-12-04-01", "3c84.6a12.0401", "3c846a120401",
		"3c:84:6a:12:04", "3c:84:6a:12:04:01:02", "::::::3c846a120401", "gg:84:6a:12:04:01", "3c 84 6a 12 04 01", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := subprov.NormalizeMAC(s)
		if !ok {
			if got != "" {
				t.Fatalf("refused %q but returned %q", s, got)
			}
			return
		}
		if !canonicalMAC.MatchString(got) {
			t.Fatalf("%q normalized to non-canonical %q", s, got)
		}
		if again, ok := subprov.NormalizeMAC(got); !ok || again != got {
			t.Fatalf("%q: canonical %q normalizes to %q, %v", s, got, again, ok)
		}
	})
}

// FuzzCustomerNumber: every formatted sequence is a valid current customer number, never a
// legacy one; validation never panics on arbitrary input.
func FuzzCustomerNumber(f *testing.F) {
	for _, n := range []int64{0, 1, 42117, 9_999_999, 10_000_000, -1, -9_223_372_036_854_775_808} {
		f.Add(n, "0042-117")
	}
	f.Add(int64(7), "ABCD-1234")
	f.Add(int64(7), "0042-1170")
	f.Add(int64(7), "٠٠٤٢-١١٧")
	f.Fuzz(func(t *testing.T, n int64, s string) {
		if n >= 0 {
			c := subprov.FormatCustomerNumber(n)
			if !subprov.ValidCustomerNumber(c) || subprov.ValidLegacyCustomerNumber(c) {
				t.Fatalf("FormatCustomerNumber(%d) = %q is not a valid current number", n, c)
			}
		}
		if subprov.ValidCustomerNumber(s) && subprov.ValidLegacyCustomerNumber(s) {
			t.Fatalf("%q is both a current and a legacy customer number", s)
		}
	})
}
