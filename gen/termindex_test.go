package gen

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestTermIndexSortsRowsByTermThenSubscriber: sorted gives the distinct terms in byte order
// and every row in (term, subscriber) order, whatever order they were added in and
// however they share their first bytes (terms that start others, an empty term, the same first
// eight bytes, bytes above 0x7f, many first bytes with very different counts).
func TestTermIndexSortsRowsByTermThenSubscriber(t *testing.T) {
	many, surnames := make([]string, 5000), make([]string, 5000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range many {
		// Mostly a few first letters, some digits: runs of very different sizes.
		first := "aabbbbbmst0123456789"[r.IntN(20)]
		many[i] = fmt.Sprintf("%c%x", first, r.Uint32()%2000)
		// Long runs of one first eight bytes, as a common surname's terms are.
		surname := []string{"tremblay", "tremblayson", "gagnon", "gagnonville"}[r.IntN(4)]
		surnames[i] = fmt.Sprintf("%s%x", surname, r.Uint32()%3000)
	}
	for _, tc := range []struct {
		name  string
		terms []string
	}{
		{"one first byte", []string{"tremblay", "tremblaymarie", "trem", "tr", "t"}},
		{"an empty term", []string{"b", "", "a"}},
		{"the same first eight bytes, zero bytes", []string{"abcdefghij", "a\x00", "abcdefgh", "a", "abcdefghi", "abcdefgha"}},
		{"bytes above 0x7f", []string{"\xff", "z", "\x80a", "\x80", "0"}},
		{"many first bytes", many},
		// The rows' sort (no ids) in three radix passes: subscriber numbers of two bytes, ranks of one.
		{"a hundred terms on three hundred subscribers", many[:100]},
		{"many terms with the same first eight bytes", surnames},
		{"no terms", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x termIndex
			type row struct {
				term string
				sub  int
			}
			var want []row
			for i, term := range tc.terms { // each term on two subscribers
				for _, s := range []int{3*i + 1, 3 * i} {
					x.add(term, s)
					want = append(want, row{term, s})
				}
			}
			slices.SortFunc(want, func(a, b row) int {
				return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.sub, b.sub))
			})
			rows, terms := x.sorted()
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			if !slices.IsSorted(terms) {
				t.Fatalf("terms not in byte order: %q", terms[:min(len(terms), 10)])
			}
			got := make([]row, len(rows))
			for i, v := range rows {
				got[i] = row{terms[v>>32], int(v & 0xffffffff)}
			}
			if !slices.Equal(got, want) {
				t.Errorf("rows %v…, want %v…", got[:min(len(got), 6)], want[:min(len(want), 6)])
			}
		})
	}
}
