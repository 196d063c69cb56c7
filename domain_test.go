package subprov

import (
	"math"
	"testing"
	"time"
)

func TestProviderLocation(t *testing.T) {
	tests := []struct {
		zone string
		want string
	}{
		{"America/Toronto", "America/Toronto"},
		{"America/Toronto", "America/Toronto"}, // the second time from the cache
		{"America/Vancouver", "America/Vancouver"},
		{"Mars/Olympus_Mons", "UTC"},
		{"", "UTC"},
	}
	for _, tt := range tests {
		p := &Provider{TimeZone: tt.zone}
		if got := p.Location().String(); got != tt.want {
			t.Errorf("Location(%q) = %q, want %q", tt.zone, got, tt.want)
		}
	}
	// The zone's rules, not only its name: 2026-07-01 noon UTC is 08:00 in Toronto (EDT).
	toronto := (&Provider{TimeZone: "America/Toronto"}).Location()
	if h := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).In(toronto).Hour(); h != 8 {
		t.Errorf("noon UTC in Toronto = %d h, want 8", h)
	}
}

// TestPlanVersionPriceOn: a campaign's price is live until its end date inclusive (or for good
// without one), and it is the price of every day it is live: what the portal shows is what
// invoices bill.
func TestPlanVersionPriceOn(t *testing.T) {
	promo := Money(7500)
	campaign := &PlanVersion{MonthlyPrice: 8500, PromoPrice: &promo, PromoEndsOn: "2027-01-31"}
	tests := []struct {
		name      string
		plan      *PlanVersion
		day       string
		wantPromo bool
		want      Money
	}{
		{"no campaign", &PlanVersion{MonthlyPrice: 8500}, "2027-01-31", false, 8500},
		{"a campaign with no end", &PlanVersion{MonthlyPrice: 8500, PromoPrice: &promo}, "2030-01-01", true, 7500},
		{"a campaign on a day before its end", campaign, "2026-11-21", true, 7500},
		{"a campaign on its last day", campaign, "2027-01-31", true, 7500},
		{"a campaign the day after it ended", campaign, "2027-02-01", false, 8500},
		{"an end date but no price is no campaign", &PlanVersion{MonthlyPrice: 8500, PromoEndsOn: "2027-01-31"}, "2027-01-01", false, 8500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.plan.PromoOn(tt.day); (got != nil) != tt.wantPromo {
				t.Fatalf("PromoOn(%s) = %v, want live %v", tt.day, got, tt.wantPromo)
			}
			if got := tt.plan.PriceOn(tt.day); got != tt.want {
				t.Fatalf("PriceOn(%s) = %s, want %s", tt.day, got, tt.want)
			}
		})
	}
	if (*PlanVersion)(nil).PromoOn("2027-01-01") != nil {
		t.Fatal("a missing plan has a campaign")
	}
}

// TestOutageCreditProblem: a policy's hours are more than 0 and at most a month of 31 days.
func TestOutageCreditProblem(t *testing.T) {
	for _, tt := range []struct {
		hours float64
		ok    bool
	}{
		{0.5, true}, {4, true}, {744, true},
		{0, false}, {-1, false}, {744.5, false}, {math.NaN(), false}, {math.Inf(1), false},
	} {
		if got := (OutageCredit{MinHours: tt.hours}).Problem() == ""; got != tt.ok {
			t.Errorf("min_hours %v: accepted %t, want %t", tt.hours, got, tt.ok)
		}
	}
}
