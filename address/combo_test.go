package address

import "testing"

// TestKeyIdempotentCombinations checks Key(Key(s)) == Key(s) on every short
// sequence of the words the context rules look at. Random fuzzing rarely
// assembles these words in the right order; enumerating them does.
func TestKeyIdempotentCombinations(t *testing.T) {
	words := []string{"st", "ste", "dr", "r", "o", "e", "ne", "rue", "ave", "king", "88", "5e", "1st", "h3c", "2b5", "2", "a", "de", "saint", "suite", "west"}
	seps := []string{" ", "-", ", "}
	check := func(s string) {
		if k := Key(s); Key(k) != k {
			t.Errorf("Key(%q) = %q, Key of that = %q", s, k, Key(k))
		}
	}
	n := 4
	if testing.Short() {
		n = 3
	}
	var rec func(prefix string, depth int)
	rec = func(prefix string, depth int) {
		check(prefix)
		if depth == n {
			return
		}
		for _, w := range words {
			if prefix == "" {
				rec(w, depth+1)
				continue
			}
			for i, sep := range seps {
				if depth >= 3 && i > 0 {
					break // keep the 4-word level to plain spaces
				}
				rec(prefix+sep+w, depth+1)
			}
		}
	}
	rec("", 0)
}
