package address

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are realistic lines plus the edge cases the rules care about,
// so the fuzzer starts from inputs that exercise every branch.
var fuzzSeeds = []string{
	"",
	" ",
	"88A Queen St W, Unit 1204, Toronto ON M5H 2N2",
	"1204-88 Queen St W",
	"120 rue King Ouest, Montréal QC h3c2b5",
	"4500 Boulevard De Maisonneuve Ouest",
	"150 O'Connor St, Ottawa",
	"Rue O'Connor",
	"St. John's, NL",
	"2150 W 4th Ave",
	"Route 132 O, Lévis",
	"h3c-2b5",
	"H3C 2B",
	"88 - a",
	"Ste 300, 1 Place Ville-Marie",
	"e\u0301cole",
	"\xff\xfe",
	"ＡＢＣ　１２３",
	"88 r king",
	"st st st o o o",
}

func FuzzKey(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := Key(s)
		if kk := Key(k); kk != k {
			t.Fatalf("Key not idempotent:\n in  %q\n key %q\n key(key) %q", s, k, kk)
		}
		if !utf8.ValidString(k) {
			t.Fatalf("Key(%q) = %q is not valid UTF-8", s, k)
		}
		if k != strings.Join(strings.Fields(k), " ") {
			t.Fatalf("Key(%q) = %q has uncollapsed white space", s, k)
		}
		if k != strings.ToLower(k) {
			t.Fatalf("Key(%q) = %q is not lower case", s, k)
		}
		if got := Tokens(s); !slices.Equal(got, strings.Fields(k)) {
			t.Fatalf("Tokens(%q) = %q, want Fields(Key) = %q", s, got, strings.Fields(k))
		}
	})
}

func FuzzPostalCode(f *testing.F) {
	for _, s := range []string{"H3C 2B5", "h3c2b5", "h3c-2b5", "D3C 2B5", "W3C 2B5", "H3C 2B", "H3C  2B5", "h3c\u00a02b5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := PostalCode(s)
		if !ok {
			if c != "" {
				t.Fatalf("PostalCode(%q) = %q, false; want empty on failure", s, c)
			}
			return
		}
		if len(c) != 7 || c[3] != ' ' || c != strings.ToUpper(c) {
			t.Fatalf("PostalCode(%q) = %q is not in A1A 1A1 form", s, c)
		}
		if again, ok := PostalCode(c); !ok || again != c {
			t.Fatalf("PostalCode(%q) = %q, %v; want canonical form to re-parse to itself", c, again, ok)
		}
		// Key must produce the compact form so both spellings meet.
		if k, want := Key(c), strings.ToLower(strings.ReplaceAll(c, " ", "")); k != want {
			t.Fatalf("Key(%q) = %q, want %q", c, k, want)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Parse(s)
		if p.PostalCode != "" {
			if c, ok := PostalCode(p.PostalCode); !ok || c != p.PostalCode {
				t.Fatalf("Parse(%q).PostalCode = %q is not canonical", s, p.PostalCode)
			}
		}
		if p.Province != "" {
			if c, ok := Province(p.Province); !ok || c != p.Province {
				t.Fatalf("Parse(%q).Province = %q is not a province code", s, p.Province)
			}
		}
		// Street and City are in Key form.
		for name, v := range map[string]string{"Street": p.Street, "City": p.City} {
			if Key(v) != v {
				t.Fatalf("Parse(%q).%s = %q is not in Key form (%q)", s, name, v, Key(v))
			}
		}
		if p.Number != "" && !startsWithDigit(p.Number) {
			t.Fatalf("Parse(%q).Number = %q does not start with a digit", s, p.Number)
		}
	})
}
