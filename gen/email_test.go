package gen

import "testing"

// A login's address is unique across the platform, and every provider draws its subscribers'
// names and mail domains from the same short lists: two subscribers of the same name and
// domain must still get two addresses, whichever providers they belong to.
func TestGeneratedEmailIsUniqueAcrossProviders(t *testing.T) {
	t.Parallel()
	seen := map[string][2]int{}
	for p := 1; p <= 120; p++ {
		for n := 0; n < 1200; n++ {
			e := generatedEmail("marie.tremblay", p, n, "gmail.com")
			if was, ok := seen[e]; ok {
				t.Fatalf("provider %d's subscriber %d and provider %d's subscriber %d are both %s", was[0], was[1], p, n, e)
			}
			seen[e] = [2]int{p, n}
		}
	}
	// Provider 1's addresses are those of the generator's earlier versions.
	if got := generatedEmail("marie.tremblay", 1, 12, "gmail.com"); got != "marie.tremblay12@gmail.com" {
		t.Errorf("provider 1's subscriber 12: %s", got)
	}
}
