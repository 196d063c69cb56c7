package billing

import (
	"fmt"
	"testing"
	"time"

	"github.com/subprov/subprov"
)

// TestPlanLinesBillEachDayAtItsPrice: a plan version's live promotion is billed for the days
// it is live (PlanVersion.PriceOn), as the portal shows it: the rest of a month, a whole
// month, and a month the promotion ends in (each part prorated at its price). A plan with no
// promotion bills as it always did, rounded once.
func TestPlanLinesBillEachDayAtItsPrice(t *testing.T) {
	promo := subprov.Money(7500)
	plain := &subprov.PlanVersion{PlanName: "Fibre 1000", MonthlyPrice: 8500}
	campaign := &subprov.PlanVersion{PlanName: "Fibre 1000", MonthlyPrice: 8500, PromoPrice: &promo, PromoEndsOn: "2027-01-15"}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	lines := func(ls []subprov.InvoiceLine) string {
		var out []string
		for _, l := range ls {
			out = append(out, fmt.Sprintf("%s %s x %d/%d = %s", l.Description, l.UnitPrice, l.Days, l.DaysInPeriod, l.Amount))
		}
		return fmt.Sprint(out)
	}
	tests := []struct {
		name string
		got  []subprov.InvoiceLine
		want string
	}{
		{"rest of a month, no promotion", planLines(plain, day("2026-11-21"), day("2026-11-30"), ""),
			"[Fibre 1000, 21 Nov to 30 Nov 2026 85.00 x 10/30 = 28.33]"},
		{"rest of a month, the promotion live", planLines(campaign, day("2026-11-21"), day("2026-11-30"), ""),
			"[Fibre 1000, 21 Nov to 30 Nov 2026 (promotional price) 75.00 x 10/30 = 25.00]"},
		{"rest of a month the promotion ends in", planLines(campaign, day("2027-01-10"), day("2027-01-31"), ""),
			"[Fibre 1000, 10 Jan to 15 Jan 2027 (promotional price) 75.00 x 6/31 = 14.52 Fibre 1000, 16 Jan to 31 Jan 2027 85.00 x 16/31 = 43.87]"},
		{"rest of a month after the promotion", planLines(campaign, day("2027-01-16"), day("2027-01-31"), " (cancellation withdrawn)"),
			"[Fibre 1000, 16 Jan to 31 Jan 2027 (cancellation withdrawn) 85.00 x 16/31 = 43.87]"},
		{"a whole month, no promotion", monthLines(plain, Period{2026, time.December}),
			"[Fibre 1000, December 2026 85.00 x 0/0 = 85.00]"},
		{"a whole month, the promotion live", monthLines(campaign, Period{2026, time.December}),
			"[Fibre 1000, December 2026 (promotional price) 75.00 x 0/0 = 75.00]"},
		{"the month the promotion ends in", monthLines(campaign, Period{2027, time.January}),
			"[Fibre 1000, 1 Jan to 15 Jan 2027 (promotional price) 75.00 x 15/31 = 36.29 Fibre 1000, 16 Jan to 31 Jan 2027 85.00 x 16/31 = 43.87]"},
		{"the month after", monthLines(campaign, Period{2027, time.February}),
			"[Fibre 1000, February 2027 85.00 x 0/0 = 85.00]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lines(tt.got); got != tt.want {
				t.Fatalf("lines\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestPlanChangeRunsPriceEachDay: a plan change's correction is the price difference of each
// day left, each plan at its price that day; with no promotion it is one difference, rounded
// once.
func TestPlanChangeRunsPriceEachDay(t *testing.T) {
	promo := subprov.Money(7500)
	fibre150 := &subprov.PlanVersion{MonthlyPrice: 4500}
	fibre1000 := &subprov.PlanVersion{MonthlyPrice: 8500, PromoPrice: &promo, PromoEndsOn: "2027-01-15"}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	tests := []struct {
		name        string
		from, to    *subprov.PlanVersion
		first, last string
		want        subprov.Money
	}{
		{"no promotion: 15.00 x 6/30", &subprov.PlanVersion{MonthlyPrice: 4500}, &subprov.PlanVersion{MonthlyPrice: 6000}, "2027-04-25", "2027-04-30", 300},
		{"to a promotion live all the days: 30.00 x 10/30", fibre150, fibre1000, "2026-11-21", "2026-11-30", 1000},
		{"from it: -30.00 x 10/30", fibre1000, fibre150, "2026-11-21", "2026-11-30", -1000},
		{"into the month it ends: 30.00 x 6/31 + 40.00 x 16/31", fibre150, fibre1000, "2027-01-10", "2027-01-31", 581 + 2065},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff := func(d string) subprov.Money { return tt.to.PriceOn(d) - tt.from.PriceOn(d) }
			if got := amountOf(runsOf(day(tt.first), day(tt.last), diff)); got != tt.want {
				t.Fatalf("correction %s, want %s", got, tt.want)
			}
		})
	}
}

// TestInvoiceChargedFromItsDate: AutoPay charges an invoice from its date, never before: one
// dated today or earlier is due now, one dated later (a cancellation's final invoice dated on
// an end date weeks ahead) at the start of its date in the provider's time zone; one covered
// by credit is paid at once.
func TestInvoiceChargedFromItsDate(t *testing.T) {
	toronto, err := time.LoadLocation("America/Toronto")
	if err != nil {
		t.Fatal(err)
	}
	p := &subprov.Provider{TimeZone: "America/Toronto", TaxRateBP: 1300, Currency: "CAD"}
	now := time.Date(2027, 4, 21, 15, 0, 0, 0, time.UTC)
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	tests := []struct {
		name   string
		date   string
		credit subprov.Money
		want   *time.Time
	}{
		{"dated today", "2027-04-21", 0, &now},
		{"dated on an earlier billing day", "2027-04-05", 0, &now},
		{"dated on a later end date", "2027-06-03", 0, ptr(time.Date(2027, 6, 3, 0, 0, 0, 0, toronto))},
		{"dated later and covered by credit", "2027-06-03", 100000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var credits []*subprov.CreditNote
			if tt.credit > 0 {
				credits = []*subprov.CreditNote{{ID: "cn", Number: "CN-1", Remaining: tt.credit}}
			}
			d := newDraft(p, &subprov.Subscription{}, "final", PeriodOf(day(tt.date)), day(tt.date),
				[]subprov.InvoiceLine{{Kind: "final", Amount: 1000}}, nil, credits, "", now)
			switch {
			case tt.want == nil && d.chargeAt != nil, tt.want != nil && (d.chargeAt == nil || !d.chargeAt.Equal(*tt.want)):
				t.Fatalf("charged from %v, want %v", d.chargeAt, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
