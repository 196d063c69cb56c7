package api

import (
	"fmt"
	"testing"

	"github.com/subprov/subprov"
)

// TestDecodeNamesNestedProblemsByPath: shapeProblems walks arrays of objects as it walks
// objects, so a problem in an item is named with the item's index.
func TestDecodeNamesNestedProblemsByPath(t *testing.T) {
	t.Parallel()
	type line struct {
		Name     string         `json:"name"`
		Quantity int            `json:"quantity"`
		Price    *subprov.Money `json:"price"`
	}
	type request struct {
		Lines []line `json:"lines"`
		Note  string `json:"note"`
	}
	tests := []struct {
		body string
		want map[string]string
	}{
		{`{"lines": [{"name": "a", "quantity": 1}, {"name": 2, "colour": "red"}, {"price": "1.234"}]}`,
			map[string]string{"lines.1.name": "want a string", "lines.1.colour": "unknown field", "lines.2.price": "want an amount"}},
		{`{"lines": [[1]], "note": null}`, map[string]string{"lines.0": "want an object"}},
		{`{"lines": {"name": "a"}}`, map[string]string{"lines": "want an array"}},
		{`{"lines": [null, {"price": null}], "NOTE": "x"}`, map[string]string{"NOTE": "unknown field"}},
		{`{"lines": [{"name": "a"}]}`, nil},
	}
	for _, tt := range tests {
		wantProblems[request](t, tt.body, tt.want)
	}
}

// wantProblems decodes body as T and checks the problems the 422 names (nil: none).
func wantProblems[T any](t *testing.T, body string, want map[string]string) {
	t.Helper()
	_, err := DecodeBytes[T]([]byte(body))
	var got map[string]string
	if e, ok := subprov.AsError(err); ok {
		got = e.Fields
	} else if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: problems %v, want %v", body, got, want)
	}
}
