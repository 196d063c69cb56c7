package billing_test

import (
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/monitoring"
)

var toronto = func() *time.Location {
	loc, err := time.LoadLocation("America/Toronto")
	if err != nil {
		panic(err)
	}
	return loc
}()

func at(s string, loc *time.Location) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

// TestOutageNet: price x outage duration / length of the month, in the provider's zone, per
// month part, each part rounded once.
func TestOutageNet(t *testing.T) {
	t.Parallel()
	flat := func(string) subprov.Money { return 6000 }
	promotionFromDecember := func(day string) subprov.Money {
		if day >= "2026-12-01" {
			return 3000
		}
		return 6000
	}
	for _, tt := range []struct {
		name       string
		start, end time.Time
		loc        *time.Location
		price      func(string) subprov.Money
		want       subprov.Money
	}{
		// June 2026 in UTC: 30 days = 2,592,000 s; 6000 x 21,600 / 2,592,000 = 50.
		{"six hours of a 30-day month", at("2026-06-10 08:00", time.UTC), at("2026-06-10 14:00", time.UTC), time.UTC, flat, 50},
		// February 2027: 28 days; 2800 x 86,400 / 2,419,200 = 100.
		{"a day of February", at("2027-02-03 00:00", time.UTC), at("2027-02-04 00:00", time.UTC), time.UTC,
			func(string) subprov.Money { return 2800 }, 100},
		// November 2026 in Toronto has 30 days and one hour (DST ends on the 1st): 2,595,600 s;
		// 6000 x 18,000 / 2,595,600 = 41.61 -> 42. A minute less shows the zone's length counts:
		// 6000 x 17,940 / 2,595,600 = 41.47 -> 41, where 30 days of UTC would give 41.53 -> 42.
		{"five hours of November in Toronto", at("2026-11-20 10:00", toronto), at("2026-11-20 15:00", toronto), toronto, flat, 42},
		{"the month's length is the zone's", at("2026-11-20 10:00", toronto), at("2026-11-20 14:59", toronto), toronto, flat, 41},
		// 30 Nov 22:00 to 1 Dec 04:00 Toronto: 2 h of November (6000 x 7,200 / 2,595,600 = 16.64
		// -> 17) and 4 h of December (6000 x 14,400 / 2,678,400 = 32.26 -> 32).
		{"an outage over a month's end, per part", at("2026-11-30 22:00", toronto), at("2026-12-01 04:00", toronto), toronto, flat, 49},
		// The December part at December's price: 3000 x 14,400 / 2,678,400 = 16.13 -> 16.
		{"each part at its month's price", at("2026-11-30 22:00", toronto), at("2026-12-01 04:00", toronto), toronto, promotionFromDecember, 33},
		{"nothing for no time", at("2026-11-20 10:00", toronto), at("2026-11-20 10:00", toronto), toronto, flat, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := billing.OutageNet(tt.start, tt.end, tt.loc, tt.price); got != tt.want {
				t.Errorf("OutageNet = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOutageCreditable: an outage is credited when it is over, lasted longer than the policy's
// hours, and the line was platform-billed and ACTIVE all through it.
func TestOutageCreditable(t *testing.T) {
	t.Parallel()
	activated := at("2026-01-05 00:00", time.UTC)
	start := at("2026-11-20 10:00", time.UTC)
	hours := func(h float64) *time.Time {
		end := start.Add(time.Duration(h * float64(time.Hour)))
		return &end
	}
	line := func(change func(*subprov.Subscription)) *subprov.Subscription {
		sub := &subprov.Subscription{Status: subprov.StatusActive, BillingOwner: subprov.BillingPlatform, ActivatedAt: &activated}
		if change != nil {
			change(sub)
		}
		return sub
	}
	status := func(s subprov.Status, when string) subprov.StatusChange {
		return subprov.StatusChange{Status: s, At: at(when, time.UTC)}
	}
	three := subprov.OutageCredit{MinHours: 3}
	for _, tt := range []struct {
		name    string
		policy  subprov.OutageCredit
		sub     *subprov.Subscription
		history []subprov.StatusChange
		end     *time.Time
		want    bool
	}{
		{"longer than the hours", three, line(nil), nil, hours(4), true},
		{"exactly the hours is not longer", three, line(nil), nil, hours(3), false},
		{"shorter", three, line(nil), nil, hours(2), false},
		{"an ongoing outage waits for its end", three, line(nil), nil, nil, false},
		{"fractional hours", subprov.OutageCredit{MinHours: 1.5}, line(nil), nil, hours(1.75), true},
		{"a partner-billed line is not invoiced here", three, line(func(s *subprov.Subscription) { s.BillingOwner = subprov.BillingPartner }), nil, hours(4), false},
		{"a line never activated", three, line(func(s *subprov.Subscription) { s.ActivatedAt = nil }), nil, hours(4), false},
		{"before the line was activated", three, line(func(s *subprov.Subscription) { a := start.Add(time.Hour); s.ActivatedAt = &a }), nil, hours(4), false},
		{"past the line's end", three, line(func(s *subprov.Subscription) { e := start.Add(2 * time.Hour); s.EndedAt = &e }), nil, hours(4), false},
		{"an end date after the outage", three, line(func(s *subprov.Subscription) { e := start.Add(48 * time.Hour); s.EndedAt = &e }), nil, hours(4), true},
		{"a suspended line (no history) is not credited", three, line(func(s *subprov.Subscription) { s.Status = subprov.StatusSuspended }), nil, hours(4), false},
		{"suspended during the outage", three, line(nil), []subprov.StatusChange{status(subprov.StatusActive, "2026-01-05 00:00"),
			status(subprov.StatusSuspended, "2026-11-20 11:00"), status(subprov.StatusActive, "2026-11-21 00:00")}, hours(4), false},
		{"suspended when it started", three, line(nil), []subprov.StatusChange{status(subprov.StatusSuspended, "2026-11-01 00:00"),
			status(subprov.StatusActive, "2026-11-20 12:00")}, hours(4), false},
		{"suspended before and restored before it", three, line(nil), []subprov.StatusChange{status(subprov.StatusActive, "2026-01-05 00:00"),
			status(subprov.StatusSuspended, "2026-11-01 00:00"), status(subprov.StatusActive, "2026-11-03 00:00")}, hours(4), true},
		{"suspended as the outage ends", three, line(nil), []subprov.StatusChange{status(subprov.StatusActive, "2026-01-05 00:00"),
			status(subprov.StatusSuspended, "2026-11-20 14:00")}, hours(4), true},
		{"cancelled since the outage", three, line(func(s *subprov.Subscription) { s.Status = subprov.StatusCancelled }), []subprov.StatusChange{
			status(subprov.StatusActive, "2026-01-05 00:00"), status(subprov.StatusCancelled, "2026-11-25 00:00")}, hours(4), false},
		{"cancelled, running to its end date", three, line(func(s *subprov.Subscription) { s.Status = subprov.StatusCancelled }), []subprov.StatusChange{
			status(subprov.StatusActive, "2026-01-05 00:00"), status(subprov.StatusCancelled, "2026-11-10 00:00")}, hours(4), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := monitoring.Event{ID: "sw/p/1", StartedAt: start, ResolvedAt: tt.end}
			if got := billing.OutageCreditable(tt.policy, tt.sub, tt.history, ev); got != tt.want {
				t.Errorf("OutageCreditable = %t, want %t", got, tt.want)
			}
		})
	}
}
