package agent

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/search"
)

// Search limits (docs/agent.md, Search).
const (
	minQueryLen  = 2
	defaultLimit = 25
	maxLimit     = 100
	// MaxMatchCount is how far match_count counts: past a page of the largest limit the agent
	// must narrow the query anyway, and counting further would read every match of a common
	// word (a street's residents) on every search.
	MaxMatchCount = 100
)

// SearchResult is the masked answer of a customer search (docs/agent.md, Search).
type SearchResult struct {
	MatchCount int         `json:"match_count"`
	Capped     bool        `json:"match_count_capped"` // more than MaxMatchCount matched
	Ambiguous  bool        `json:"ambiguous"`
	Results    []Candidate `json:"results"`
}

// Candidate is one masked match: never a full e-mail or phone.
type Candidate struct {
	CustomerID       string            `json:"customer_id"`
	Name             string            `json:"name"`
	Email            string            `json:"email"`
	Phone            string            `json:"phone"`
	CustomerNumber   *string           `json:"customer_number"`
	ServiceLocations []LocationSummary `json:"service_locations"`
}

// LocationSummary is a service location as search and profile show it.
type LocationSummary struct {
	BuildingID string `json:"building_id"`
	Address    string `json:"address"`
	UnitNumber string `json:"unit_number"`
}

// ParseLimit reads the search limit: empty is the default, else an integer 1 to 100.
func ParseLimit(raw string) (int, error) {
	if strings.TrimSpace(raw) == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || n < 1 || n > maxLimit {
		return 0, subprov.Invalid(map[string]string{"query:limit": "must be an integer from 1 to 100"})
	}
	return n, nil
}

// Search finds the caller's provider's customers matching every word of q (name, e-mail,
// phone in any formatting, customer number current or retired, invoice address, building,
// unit, service location) and returns them masked. It never auto-selects: ambiguous is true
// whenever more than one customer matches.
func (s *Service) Search(ctx context.Context, c Caller, q string, limit int) (*SearchResult, error) {
	q = strings.TrimSpace(q)
	if utf8.RuneCountInString(q) < minQueryLen {
		return nil, subprov.Invalid(map[string]string{"query:q": "at least 2 characters"})
	}
	if limit < 1 || limit > maxLimit {
		return nil, subprov.Invalid(map[string]string{"query:limit": "must be an integer from 1 to 100"})
	}
	out := &SearchResult{Results: []Candidate{}}
	ids, err := search.Match(ctx, s.Store.SearchR(), []string{c.Provider.ID}, q, MaxMatchCount+1)
	if err != nil {
		return nil, err
	}
	out.Capped = len(ids) > MaxMatchCount
	out.MatchCount, out.Ambiguous = min(len(ids), MaxMatchCount), len(ids) > 1
	if len(ids) > limit {
		ids = ids[:limit]
	}
	found, err := search.Candidates(ctx, s.Store.SearchR(), c.Provider.ID, ids)
	if err != nil {
		return nil, err
	}
	out.Results = make([]Candidate, 0, len(found))
	for _, f := range found {
		out.Results = append(out.Results, Candidate{CustomerID: f.SubscriberID, Name: maskName(f.Holder),
			Email: MaskEmail(f.Holder.Email), Phone: MaskPhone(f.Holder.PhoneNumber), CustomerNumber: nullable(f.CustomerNumber),
			ServiceLocations: distinctLocations(f.Locations)})
	}
	return out, nil
}

// distinctLocations summarises a subscriber's lines, one entry per (building, unit), newest
// line first.
func distinctLocations(rows []subprov.ServiceLocation) []LocationSummary {
	out := make([]LocationSummary, 0, len(rows))
	if len(rows) == 1 { // the usual subscriber: nothing to compare
		return append(out, summaryOf(rows[0]))
	}
	type place struct{ building, unit string }
	seen := make(map[place]bool, len(rows))
	for _, l := range rows {
		if k := (place{l.BuildingID, l.UnitNumber}); !seen[k] {
			seen[k] = true
			out = append(out, summaryOf(l))
		}
	}
	return out
}

func summaryOf(l subprov.ServiceLocation) LocationSummary {
	return LocationSummary{BuildingID: l.BuildingID, Address: formatAddress(l.Street, l.City, l.Province, l.PostalCode), UnitNumber: l.UnitNumber}
}

// formatAddress is "street, city, province postal", leaving out the empty parts.
func formatAddress(street, city, province, postal string) string {
	var b strings.Builder
	b.Grow(len(street) + len(city) + len(province) + len(postal) + 6)
	part := func(p string) {
		if p = strings.TrimSpace(p); p == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p)
	}
	part(street)
	part(city)
	part(province + " " + postal)
	return b.String()
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// maskName is the first name and the initial of the last name: "Marie T.".
func maskName(c subprov.Contact) string {
	first := strings.TrimSpace(c.FirstName)
	last := strings.TrimSpace(c.LastName)
	if last == "" {
		return first
	}
	r, _ := utf8.DecodeRuneInString(last)
	return strings.TrimSpace(first + " " + string(r) + ".")
}

// MaskEmail keeps the first character of the mailbox and of the domain and the top-level
// domain: "m***@e***.ca".
func MaskEmail(email string) string {
	local, domain, ok := strings.Cut(strings.TrimSpace(email), "@")
	if !ok || local == "" || domain == "" {
		return ""
	}
	tld := ""
	if i := strings.LastIndex(domain, "."); i > 0 {
		tld = domain[i:]
	}
	return firstRune(local) + "***@" + firstRune(domain) + "***" + tld
}

// MaskPhone keeps only the last four digits: "***-***-0142" (subprov.MaskPhone).
func MaskPhone(phone string) string { return subprov.MaskPhone(phone) }

func firstRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return string(r)
}
