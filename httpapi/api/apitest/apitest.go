// Package apitest fuzzes the request decoding of a surface's handlers: each surface lists the
// request types its handlers decode, and these checks keep that list complete and feed it
// arbitrary bodies.
package apitest

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
)

// Decoders decodes a body as each request type a surface's handlers decode, by the type's name
// as the handlers write it.
type Decoders map[string]func([]byte) error

// DecoderOf decodes a body as T, as the handlers do.
func DecoderOf[T any](body []byte) error {
	_, err := api.DecodeBytes[T](body)
	return err
}

// decoded matches a handler's decoding of a named type: api.Decode[T], api.DecodeBytes[T] and
// the surfaces' own decoders built on them (decodeAgent[T], decodeCheckout[T]).
var decoded = regexp.MustCompile(`(?:Decode|DecodeBytes|decodeAgent|decodeCheckout)\[([A-Za-z.]+)\]\(`)

// EveryRequestTypeIsFuzzed fails when a handler in the current directory decodes a type that
// decoders does not list (the fuzzing would skip it), or when it finds no decoding at all.
func EveryRequestTypeIsFuzzed(t *testing.T, decoders Decoders) {
	t.Helper()
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decoded.FindAllStringSubmatch(string(src), -1) {
			if m[1] != "T" {
				seen[m[1]] = true
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("found no decoded request type")
	}
	for name := range seen {
		if decoders[name] == nil {
			t.Errorf("handlers decode %s but the surface's decoders do not list it (the fuzzing would skip it)", name)
		}
	}
}

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F, requestDecoders Decoders) {
	names := make([]string, 0, len(requestDecoders))
	for k := range requestDecoders {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := range names {
		for _, seed := range []string{`{}`, `null`, `{"a":1}`} {
			f.Add(uint8(i), []byte(seed))
		}
	}
	for i, seed := range []string{``, `[]`, `{"email":"x@example.ca","password":"p"}`,
		`{"subscriber":{"firstname":"A","lastname":"B","email":"a@b.c"},"plan_version_id":"x"}`,
		`{"items":[{"plan_version_id":1},{}]}`, `{"billing_day":99}`, `{"advance_seconds":-9223372036854775808}`,
		`{"mac_address":"zz"}`, `{"x":"\ud800"}`, `{"a":` + "\xff" + `}`, `{"plan_version_id":{"a":[1,2,{"b":null}]}}`} {
		f.Add(uint8(i*7), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		name := names[int(which)%len(names)]
		err := requestDecoders[name](body)
		if err == nil {
			return
		}
		var e *subprov.Error
		if !errors.As(err, &e) || e.Code != subprov.EINVALID {
			t.Fatalf("%s: decoding %q gave %v, want a 422 validation error", name, body, err)
		}
		if len(e.Fields) == 0 {
			t.Fatalf("%s: decoding %q gave a 422 without fields", name, body)
		}
	})
}
