package search

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// readCard decodes a search card. Every result of an agent search reads one, and
// encoding/json's reflection was a large share of the server's CPU under name search
// (docs/performance.md), so cards in the shape Card writes are read by decodeCard and anything else
// by encoding/json: the result is encoding/json's either way.
func readCard(text string) (searchCard, error) {
	if c, ok := decodeCard(text); ok {
		return c, nil
	}
	var c searchCard
	err := json.Unmarshal([]byte(text), &c)
	return c, err
}

// decodeCard reads a card as json.Marshal writes it: an object of string values without
// escapes, and under "s" an array of such objects, with no white space. It reports ok false,
// having decided nothing, for anything else (an escaped or invalid character, null, a key it
// does not know or sees twice, another layout), which readCard then hands to encoding/json.
func decodeCard(text string) (c searchCard, ok bool) {
	d := cardDecoder{s: text}
	fields := []*string{&c.Number, &c.First, &c.Last, &c.Email, &c.Phone, nil} // nil: "s", the locations
	ok = d.object(cardKeys, fields, func() bool { return d.locations(&c.Locations) })
	return c, ok && d.i == len(d.s)
}

// The keys Card writes (searchCard's and cardLocation's json tags), in the order of the
// fields decodeCard and locations read them into.
var (
	cardKeys     = []string{"n", "f", "l", "e", "p", "s"}
	locationKeys = []string{"i", "b", "st", "c", "z", "pr", "co", "u"}
)

// cardDecoder is a position in a card's text.
type cardDecoder struct {
	s string
	i int
}

// eat consumes b if it comes next.
func (d *cardDecoder) eat(b byte) bool {
	if d.i < len(d.s) && d.s[d.i] == b {
		d.i++
		return true
	}
	return false
}

// str reads a string with no escape, control character or invalid UTF-8 into *out; the value
// shares the card's memory.
func (d *cardDecoder) str(out *string) bool {
	if !d.eat('"') {
		return false
	}
	start := d.i
	for ; d.i < len(d.s); d.i++ {
		switch c := d.s[d.i]; {
		case c == '"':
			v := d.s[start:d.i]
			d.i++
			if !utf8.ValidString(v) {
				return false
			}
			*out = v
			return true
		case c == '\\' || c < 0x20:
			return false
		}
	}
	return false
}

// object reads {"key":value,...}: the value of keys[i] is a string read into *to[i], or, where
// to[i] is nil, whatever nested reads. An unknown or repeated key fails the read (encoding/json
// has rules of its own for both).
func (d *cardDecoder) object(keys []string, to []*string, nested func() bool) bool {
	if !d.eat('{') {
		return false
	}
	if d.eat('}') {
		return true
	}
	seen := 0 // bit i: keys[i] was read
	for {
		var key string
		if !d.str(&key) || !d.eat(':') {
			return false
		}
		i := slices.Index(keys, key)
		if i < 0 || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		switch {
		case to[i] != nil:
			if !d.str(to[i]) {
				return false
			}
		case nested == nil || !nested():
			return false
		}
		if d.eat('}') {
			return true
		}
		if !d.eat(',') {
			return false
		}
	}
}

// locations reads the card's array of service locations.
func (d *cardDecoder) locations(out *[]cardLocation) bool {
	if !d.eat('[') {
		return false
	}
	*out = []cardLocation{} // as encoding/json: an empty array is an empty slice, not nil
	if d.eat(']') {
		return true
	}
	for {
		var l cardLocation
		ok := d.object(locationKeys, []*string{&l.Subscription, &l.Building, &l.Street, &l.City, &l.PostalCode, &l.Province,
			&l.Country, &l.Unit}, nil)
		if !ok {
			return false
		}
		*out = append(*out, l)
		if d.eat(']') {
			return true
		}
		if !d.eat(',') {
			return false
		}
	}
}
