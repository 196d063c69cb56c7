// Package billing bills platform-billed lines (billing_owner platform) and never touches
// partner-billed ones: calendar-month proration, first and recurring invoices, AutoPay
// charges with idempotency keys, dunning and cut-off, credit notes, and the money side of plan
// changes and cancellations. The provider's billing system (invoice records, credit notes,
// contact sync) sits behind the Ledger seam.
package billing

import (
	"time"

	"github.com/subprov/subprov"
)

// Period is a calendar month in the provider's time zone.
type Period struct {
	Year  int
	Month time.Month
}

// PeriodOf returns the calendar month of day.
func PeriodOf(day time.Time) Period { return Period{day.Year(), day.Month()} }

// String renders YYYY-MM.
func (p Period) String() string {
	return time.Date(p.Year, p.Month, 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
}

// Days is the number of days in the month.
func (p Period) Days() int { return time.Date(p.Year, p.Month+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// First is the month's first day.
func (p Period) First() time.Time { return time.Date(p.Year, p.Month, 1, 0, 0, 0, 0, time.UTC) }

// Next is the following month.
func (p Period) Next() Period { return PeriodOf(p.First().AddDate(0, 1, 0)) }

// Before reports whether p is an earlier month than q.
func (p Period) Before(q Period) bool {
	return p.Year < q.Year || (p.Year == q.Year && p.Month < q.Month)
}

// Day returns the date of day d (1-based) of the month.
func (p Period) Day(d int) time.Time { return time.Date(p.Year, p.Month, d, 0, 0, 0, 0, time.UTC) }

// DaysFrom counts the days from day (inclusive) to the month's end (inclusive), the "days"
// of the proration (docs/billing.md, Amounts).
func DaysFrom(day time.Time) int {
	p := PeriodOf(day)
	return p.Days() - day.Day() + 1
}

// Prorate is price x days / days-in-month, rounded half away from zero once.
func Prorate(price subprov.Money, days, daysInPeriod int) subprov.Money {
	return subprov.Prorate(price, int64(days), int64(daysInPeriod))
}

// Tax returns net x rate (basis points), rounded half away from zero.
func Tax(net subprov.Money, rateBP int) subprov.Money {
	return subprov.Prorate(net, int64(rateBP), 10000)
}

// LocalDay is the calendar day of t in loc, as a UTC-midnight date value.
func LocalDay(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}
