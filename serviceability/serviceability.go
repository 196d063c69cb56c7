// Package serviceability answers "can this provider serve this address": autocomplete over the
// provider's coverage, the serviceability check, a building's suites, and resolving a port's
// location. Answers are advisory; orders re-validate against the store (fail-closed).
package serviceability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/address"
	"github.com/subprov/subprov/store"
)

// Service answers serviceability questions for one store and clock.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
}

// BuildingKey is a building's normalised address as stored for matching, with a leading space
// so that every word can be matched as a prefix with LIKE '% word%'.
func BuildingKey(b *subprov.Building) string {
	return " " + address.Key(b.Street+" "+b.City+" "+b.Province+" "+b.PostalCode) + " "
}

// Display is the one-line address shown for a building; suggestions are deduplicated by it.
func Display(b *subprov.Building) string {
	s := b.Street
	if b.City != "" {
		s += ", " + b.City
	}
	tail := strings.TrimSpace(b.Province + " " + b.PostalCode)
	if tail != "" {
		s += ", " + tail
	}
	return s
}

// Suggestion is one autocomplete answer.
type Suggestion struct {
	BuildingID          string
	Display             string
	Orderable           bool
	EarliestServiceDate string // "" unless still in the future
	Presale             bool
}

// Autocomplete suggests buildings of the provider's coverage matching q: at most limit (and
// never more than 15), deduplicated by display string.
func (s *Service) Autocomplete(ctx context.Context, p *subprov.Provider, q string, limit int) ([]Suggestion, error) {
	if limit <= 0 || limit > subprov.MaxAutocomplete {
		limit = subprov.MaxAutocomplete
	}
	tokens := address.Tokens(q)
	if len(tokens) == 0 {
		return []Suggestion{}, nil
	}
	// Fetch more than needed: duplicates by display string are dropped after the query.
	bs, err := s.Store.SearchBuildings(ctx, p.ID, tokens, limit*4)
	if err != nil {
		return nil, err
	}
	today := s.today(p)
	seen := map[string]bool{}
	out := []Suggestion{}
	for _, b := range bs {
		d := Display(b)
		if seen[d] {
			continue
		}
		seen[d] = true
		sg := Suggestion{BuildingID: b.ID, Display: d, Orderable: b.Orderable, Presale: b.Presale,
			EarliestServiceDate: futureOnly(b.EarliestServiceDate, today)}
		out = append(out, sg)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// today is the provider's calendar day now, YYYY-MM-DD: a day is the provider's local day
// (its calendar day), so a building opening on March 1 in Toronto still shows that date at 02:00
// UTC that morning, which is the evening of February 28 there.
func (s *Service) today(p *subprov.Provider) string {
	return p.Today(s.Clock.Now())
}

// futureOnly returns an earliest service date only while it is still ahead of today, the
// provider's day (present only while in the future).
func futureOnly(date, today string) string {
	if date > today {
		return date
	}
	return ""
}

// CheckInput is a serviceability check: free text or structured fields (structured wins).
type CheckInput struct {
	Address    string
	Street     string
	City       string
	Province   string
	PostalCode string
	Country    string
	Unit       string
}

// Match is the building (and suite) a check matched.
type Match struct {
	Building            *subprov.Building
	Display             string
	EarliestServiceDate string // "" unless still in the future
	Unit                *subprov.UnitAvailability
}

// CheckResult is the answer to a check.
type CheckResult struct {
	Serviceable bool
	Match       *Match
	Plans       []*subprov.PlanVersion
}

// Check matches an address against the provider's coverage. No match is not an error: it
// answers serviceable false with no match and no plans.
func (s *Service) Check(ctx context.Context, p *subprov.Provider, in CheckInput) (*CheckResult, error) {
	want := in.parsed()
	res := &CheckResult{Plans: []*subprov.PlanVersion{}}
	if want.Number == "" && want.Street == "" {
		return res, nil
	}
	// Search on the house number and the street's own name words: the street type and
	// direction differ between languages ("King St W" is "Rue King O") and are compared
	// loosely afterwards.
	tokens := nameWords(want.Number + " " + want.Street)
	if len(tokens) == 0 {
		return res, nil
	}
	cands, err := s.Store.SearchBuildings(ctx, p.ID, tokens, 50)
	if err != nil {
		return nil, err
	}
	b := bestMatch(cands, want)
	if b == nil {
		return res, nil
	}
	res.Match = &Match{Building: b, Display: Display(b), EarliestServiceDate: futureOnly(b.EarliestServiceDate, s.today(p))}
	if want.Unit != "" {
		units, err := s.Store.UnitsOfBuilding(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		for i := range units {
			if strings.EqualFold(units[i].UnitNumber, want.Unit) || strings.EqualFold(units[i].PostalUnit, want.Unit) {
				res.Match.Unit = &units[i]
				break
			}
		}
	}
	res.Serviceable = b.Orderable && b.LineType != ""
	if res.Serviceable {
		plans, err := s.Store.SellablePlanVersions(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		res.Plans = plans
	}
	return res, nil
}

// parsed turns the input into one parsed address; structured fields win over free text.
func (in CheckInput) parsed() address.Parsed {
	if strings.TrimSpace(in.Street) != "" {
		p := address.Parse(in.Street)
		if in.City != "" {
			p.City = address.Key(in.City)
		}
		if code, ok := address.Province(in.Province); ok {
			p.Province = code
		}
		if pc, ok := address.PostalCode(in.PostalCode); ok {
			p.PostalCode = pc
		}
		if in.Unit != "" {
			p.Unit = in.Unit
		}
		return p
	}
	p := address.Parse(in.Address)
	if in.Unit != "" {
		p.Unit = in.Unit
	}
	return p
}

// bestMatch picks the candidate that agrees with every part the caller gave: house number
// exactly, then postal code, city and province when given. Candidates already contain every
// street token; a number that only prefixes another ("12" vs "120") must not match.
func bestMatch(cands []*subprov.Building, want address.Parsed) *subprov.Building {
	type scored struct {
		b     *subprov.Building
		score int
	}
	var ok []scored
	for _, b := range cands {
		got := address.Parse(b.Street)
		if want.Number != "" && got.Number != want.Number {
			continue
		}
		if !subset(nameWords(want.Street), nameWords(got.Street)) {
			continue
		}
		if want.PostalCode != "" && b.PostalCode != "" && want.PostalCode != b.PostalCode {
			continue
		}
		if want.Province != "" && b.Province != "" && want.Province != b.Province {
			continue
		}
		score := 0
		if want.City != "" {
			if address.Key(b.City) != address.Key(want.City) {
				continue
			}
			score++
		}
		if got.Street == want.Street {
			score += 2
		}
		if want.PostalCode != "" {
			score++
		}
		ok = append(ok, scored{b, score})
	}
	if len(ok) == 0 {
		return nil
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].score > ok[j].score })
	return ok[0].b
}

// Units lists the suites of a building the provider covers. A building that is unknown or not
// covered is the same not-found, so coverage of other providers is never confirmed.
func (s *Service) Units(ctx context.Context, providerID, buildingID string) ([]subprov.UnitAvailability, error) {
	if _, err := s.Store.CoveredBuilding(ctx, providerID, buildingID); err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Building")
		}
		return nil, err
	}
	units, err := s.Store.UnitsOfBuilding(ctx, buildingID)
	if err != nil {
		return nil, err
	}
	if units == nil {
		units = []subprov.UnitAvailability{}
	}
	return units, nil
}

// LocationDetails is the operator's full location record: the port, its suite and building,
// and the providers covering the building.
type LocationDetails struct {
	*subprov.PortLocation
	ProviderIDs []string
}

// LocateDetails resolves a port for the dashboard, with the building's coverage.
func (s *Service) LocateDetails(ctx context.Context, scope subprov.Scope, hash, identifier string) (*LocationDetails, error) {
	loc, err := s.Locate(ctx, hash, identifier)
	if err != nil {
		return nil, err
	}
	providers, err := s.Store.CoveringProviders(ctx, loc.Building.ID)
	if err != nil {
		return nil, err
	}
	if scope.ProviderID == "" {
		return &LocationDetails{PortLocation: loc, ProviderIDs: providers}, nil
	}
	// A provider-scoped operator sees the buildings its provider covers, whoever's line the
	// port serves now, and of the covering providers its own only: a building it does not
	// cover is not found, as an unknown location.
	if !slices.Contains(providers, scope.ProviderID) {
		return nil, subprov.NotFound("Location")
	}
	return &LocationDetails{PortLocation: loc, ProviderIDs: []string{scope.ProviderID}}, nil
}

// Locate resolves a port by location_hash (which wins) or location_identifier.
func (s *Service) Locate(ctx context.Context, hash, identifier string) (*subprov.PortLocation, error) {
	hash, identifier = strings.TrimSpace(hash), strings.TrimSpace(identifier)
	if hash == "" && identifier == "" {
		return nil, &subprov.Error{Code: subprov.EINVALID, Reason: "validation_error", Message: "Provide location_hash or location_identifier"}
	}
	loc, err := s.Store.LocationByPort(ctx, hash, identifier)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Location")
		}
		return nil, fmt.Errorf("locate: %w", err)
	}
	return loc, nil
}

// genericWords are street types and directions in both languages, as address.Key spells
// them: they qualify a street but do not name it.
var genericWords = map[string]bool{
	"street": true, "rue": true, "avenue": true, "boulevard": true, "road": true, "chemin": true, "drive": true,
	"crescent": true, "place": true, "court": true, "terrace": true, "parkway": true, "highway": true, "square": true,
	"circle": true, "lane": true, "montee": true, "cote": true, "route": true, "way": true, "de": true, "du": true,
	"des": true, "la": true, "le": true, "of": true, "the": true,
	"north": true, "south": true, "east": true, "west": true,
}

// nameWords returns the words of s that name the street (and its house number).
func nameWords(s string) []string {
	var out []string
	for _, w := range address.Tokens(s) {
		if !genericWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func subset(a, b []string) bool {
	in := map[string]bool{}
	for _, w := range b {
		in[w] = true
	}
	for _, w := range a {
		if !in[w] {
			return false
		}
	}
	return true
}
