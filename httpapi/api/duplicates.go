package api

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// duplicateKeys records, under its dotted path, each key that appears more than once in one
// object anywhere in body ("duplicate field"). encoding/json keeps the last of them, so a body
// that names a field twice could mean either value: it is refused as ambiguous, as an unknown
// field is. body must be valid JSON (DecodeBytes has parsed it). The scan walks the bytes once
// and compares keys in place, so a body without duplicates allocates nothing; an object with
// many keys is checked through a set, so a large body costs linear time.
func duplicateKeys(body []byte, problems map[string]string) {
	s := dupScanner{b: body, problems: problems}
	s.value(nil)
}

type dupScanner struct {
	b        []byte
	i        int
	problems map[string]string
}

// span is a key's contents in the body (without the quotes), or, with raw -1, an array index.
type span struct{ raw, end int }

// step is one step of the path from the body to the value being scanned; the steps live on
// the scan's stack.
type step struct {
	up  *step
	key span
}

// manyKeys is the size from which an object's keys are compared through a set rather than
// each against each.
const manyKeys = 32

func (s *dupScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value at s.i, at the path at.
func (s *dupScanner) value(at *step) {
	s.ws()
	if s.i >= len(s.b) {
		return
	}
	switch s.b[s.i] {
	case '{':
		s.object(at)
	case '[':
		s.array(at)
	case '"':
		s.str()
	default: // number, true, false, null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			s.i++
		}
	}
}

// str skips a string at s.i and returns the span of its contents.
func (s *dupScanner) str() span {
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return span{start, s.i - 1}
		}
		s.i++
	}
	return span{start, len(s.b)}
}

// next steps over the separator after a member or an item, and reports whether the object or
// array goes on.
func (s *dupScanner) next(closer byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ',' {
		s.i++
		s.ws()
	}
	if s.i >= len(s.b) || s.b[s.i] == closer {
		s.i++
		return false
	}
	return true
}

func (s *dupScanner) array(at *step) {
	s.i++ // [
	item := step{up: at, key: span{raw: -1}}
	for n := 0; s.next(']'); n++ {
		item.key.end = n
		s.value(&item)
	}
}

func (s *dupScanner) object(at *step) {
	s.i++ // {
	var first [manyKeys]span
	keys := first[:0]
	var set map[string]bool // from manyKeys keys on, or once a key has escapes
	member := step{up: at}
	for s.next('}') {
		key := s.str()
		member.key = key
		dup := false
		if set == nil && bytes.IndexByte(s.b[key.raw:key.end], '\\') < 0 && len(keys) < manyKeys {
			for _, k := range keys {
				if bytes.Equal(s.b[k.raw:k.end], s.b[key.raw:key.end]) {
					dup = true
					break
				}
			}
			keys = append(keys, key)
		} else {
			if set == nil {
				set = make(map[string]bool, 2*len(keys)+1)
				for _, k := range keys {
					set[s.unescape(k)] = true
				}
			}
			name := s.unescape(key)
			dup = set[name]
			set[name] = true
		}
		if dup {
			s.problems[s.where(&member)] = "duplicate field"
		}
		s.ws()
		s.i++ // :
		s.value(&member)
	}
}

// unescape is what a key means: escapes spell one key several ways ("a" and "\u0061").
func (s *dupScanner) unescape(k span) string {
	raw := s.b[k.raw:k.end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var out string
	if err := json.Unmarshal(s.b[k.raw-1:k.end+1], &out); err != nil {
		return string(raw)
	}
	return out
}

// where is the dotted path of at ("subscriber.email", "items.2.mac_address").
func (s *dupScanner) where(at *step) string {
	if at == nil {
		return ""
	}
	name := strconv.Itoa(at.key.end)
	if at.key.raw >= 0 {
		name = s.unescape(at.key)
	}
	return pathJoin(s.where(at.up), name)
}
