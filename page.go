package subprov

import (
	"encoding/base64"
	"encoding/json"
)

// Page is one page of a list of the operations surface: at most Limit items after the position
// After names (nil for the first page). A list's store query reads Limit+1 rows in its order
// after that position; Cut then keeps Limit of them and names the next page.
type Page struct {
	Limit int
	After []string // the sort key of the last item of the previous page, as the list's Key gives it
}

// Page limits: a list answers DefaultPageLimit items unless asked for between 1 and
// MaxPageLimit.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 200
)

// ParsePage reads a list's limit and cursor as a caller sent them ("" for absent): a limit
// outside 1–MaxPageLimit or a cursor this service did not issue is a validation error on that
// field.
func ParsePage(limit int, limitSent bool, cursor string) (Page, error) {
	p := Page{Limit: DefaultPageLimit}
	fields := map[string]string{}
	if limitSent {
		if limit < 1 || limit > MaxPageLimit {
			fields["limit"] = "must be between 1 and 200"
		}
		p.Limit = limit
	}
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || json.Unmarshal(b, &p.After) != nil || len(p.After) == 0 {
			fields["cursor"] = "is not a cursor this list issued"
		}
	}
	if len(fields) > 0 {
		return Page{}, Invalid(fields)
	}
	return p, nil
}

// Cut keeps the page's items of the Limit+1 a list read and returns the cursor of the next
// page: "" when there is none. key gives an item's sort key, the position the next page
// starts after.
func Cut[T any](p Page, items []T, key func(T) []string) ([]T, string) {
	if len(items) <= p.Limit {
		return items, ""
	}
	items = items[:p.Limit]
	b, _ := json.Marshal(key(items[len(items)-1])) // a []string always encodes
	return items, base64.RawURLEncoding.EncodeToString(b)
}

// First reports whether the page is the list's first.
func (p Page) First() bool { return len(p.After) == 0 }
