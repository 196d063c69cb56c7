package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
)

// PageOf reads a list's limit and cursor from r's query (limit 1–200, default 50): a bad one
// is a 422 naming the field.
func PageOf(r *http.Request) (subprov.Page, error) {
	q := r.URL.Query()
	limit, sent := 0, q.Has("limit")
	if sent {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			return subprov.Page{}, subprov.Invalid(map[string]string{"limit": "must be between 1 and 200"})
		}
		limit = n
	}
	return subprov.ParsePage(limit, sent, q.Get("cursor"))
}

// List writes one page of a list: {name: items, "next_cursor": next or null}.
func List(w http.ResponseWriter, name string, items any, next string) {
	body := map[string]any{name: items, "next_cursor": Optional(next)}
	JSON(w, http.StatusOK, body)
}

// IfMatch is the version an edit's If-Match header names (0 when absent): the console always
// sends the version it read, so an edit of an object someone changed since answers 409. A
// header that is not a version (quotes and a W/ prefix allowed) is a 422.
func IfMatch(r *http.Request) (int64, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" {
		return 0, nil
	}
	h = strings.Trim(strings.TrimPrefix(h, "W/"), `"`)
	v, err := strconv.ParseInt(h, 10, 64)
	if err != nil || v < 1 {
		return 0, subprov.Invalid(map[string]string{"If-Match": "must be the object's version, a positive integer"})
	}
	return v, nil
}
