package billing

import (
	"testing"
	"time"

	"github.com/subprov/subprov"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestProration: amount = price x days / days_in_period, days from today
// (inclusive) to the month's end (inclusive), rounded half away from zero once.
func TestProration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		from   string
		price  subprov.Money
		days   int
		inMon  int
		amount subprov.Money
	}{
		{"February in a leap year, first day", "2028-02-01", 6000, 29, 29, 6000},
		{"February in a leap year, last day", "2028-02-29", 6000, 1, 29, 207},
		{"February in a common year, mid-month", "2027-02-15", 6000, 14, 28, 3000},
		{"February in a common year, last day", "2027-02-28", 6000, 1, 28, 214},
		{"30-day month, first day", "2026-11-01", 6000, 30, 30, 6000},
		{"30-day month, the 21st", "2026-11-21", 6000, 10, 30, 2000},
		{"30-day month, last day", "2026-11-30", 4500, 1, 30, 150},
		{"31-day month, first day", "2026-12-01", 8500, 31, 31, 8500},
		{"31-day month, last day", "2026-12-31", 8500, 1, 31, 274},
		{"31-day month, half cent rounds up", "2026-01-31", 1550, 1, 31, 50},
		{"billing day 10 starts a month on the 10th", "2026-12-10", 6000, 22, 31, 4258},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := day(tt.from)
			days, in := DaysFrom(d), PeriodOf(d).Days()
			if days != tt.days || in != tt.inMon {
				t.Fatalf("days %d of %d, want %d of %d", days, in, tt.days, tt.inMon)
			}
			if got := Prorate(tt.price, days, in); got != tt.amount {
				t.Fatalf("Prorate = %v, want %v", got, tt.amount)
			}
		})
	}
}

func TestTaxAndPeriods(t *testing.T) {
	t.Parallel()
	if got := Tax(6000, 1300); got != 780 {
		t.Fatalf("13%% of 60.00 = %v", got)
	}
	if got := Tax(2001, 1300); got != 260 { // 260.13 -> 260
		t.Fatalf("13%% of 20.01 = %v", got)
	}
	p := PeriodOf(day("2026-12-15"))
	if p.String() != "2026-12" || p.Next().String() != "2027-01" || p.Day(10).Format(time.DateOnly) != "2026-12-10" {
		t.Fatalf("period %v next %v", p, p.Next())
	}
	toronto, _ := time.LoadLocation("America/Toronto")
	// 03:00 UTC on Dec 1 is still Nov 30 in Toronto.
	if got := LocalDay(time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), toronto); got.Format(time.DateOnly) != "2026-11-30" {
		t.Fatalf("LocalDay = %v", got)
	}
}

// TestSkippedSince: a bill run catches up the months from the first whose billing days (1 to
// 10) no daily sweep saw; a sweep every day, across a month's end included, catches up none.
func TestSkippedSince(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		last, today, from string // from "": nothing to catch up
	}{
		{"", "2027-02-10", ""},                  // no sweep yet
		{"2027-01-31", "2027-02-01", ""},        // the daily sweep over a month's end
		{"2027-02-09", "2027-02-10", ""},        // within a month
		{"2027-01-10", "2027-02-02", ""},        // January's billing days all swept
		{"2027-01-03", "2027-02-02", "2027-01"}, // January's 4th to 10th never swept
		{"2027-02-10", "2027-04-15", "2027-03"}, // March skipped whole
		{"2027-02-09", "2027-04-15", "2027-02"}, // and February's 10th
		{"2027-12-20", "2028-02-01", "2028-01"}, // over a year's end
		{"2027-04-15", "2027-02-10", ""},        // the clock went back
		{"2027-02-10", "2027-02-10", ""},        // the same day
		{"not a day", "2027-02-10", ""},         // a marker of another form
	} {
		from, ok := skippedSince(tc.last, day(tc.today))
		got := ""
		if ok {
			got = from.String()
		}
		if got != tc.from {
			t.Errorf("skippedSince(%q, %s) = %q, want %q", tc.last, tc.today, got, tc.from)
		}
	}
}
