package billing

import (
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// run is a stretch of consecutive days of one month billed at one monthly price, prorated over
// the month: price x days / in, rounded once (docs/billing.md, Amounts).
type run struct {
	price       subprov.Money
	first, last time.Time // inclusive, UTC-midnight date values
	days, in    int
	amount      subprov.Money
}

// runsOf splits the days first to last (inclusive, one month) into runs of one price, as
// price names each day's (PlanVersion.PriceOn, or a difference of two): a promotion that
// ends within the days splits them in two. Days at one price all along are one run, so an
// amount is rounded once, as before any promotion.
func runsOf(first, last time.Time, price func(day string) subprov.Money) []run {
	in := PeriodOf(first).Days()
	var runs []run
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		p := price(d.Format(time.DateOnly))
		if n := len(runs); n > 0 && runs[n-1].price == p {
			runs[n-1].last, runs[n-1].days = d, runs[n-1].days+1
			continue
		}
		runs = append(runs, run{price: p, first: d, last: d, days: 1, in: in})
	}
	for i := range runs {
		runs[i].amount = Prorate(runs[i].price, runs[i].days, in)
	}
	return runs
}

// planRuns is what plan bills for the days first to last of their month, day by day at the
// price it has that day (PlanVersion.PriceOn).
func planRuns(plan *subprov.PlanVersion, first, last time.Time) []run {
	return runsOf(first, last, plan.PriceOn)
}

// amountOf adds the runs' amounts.
func amountOf(runs []run) subprov.Money {
	var sum subprov.Money
	for _, r := range runs {
		sum += r.amount
	}
	return sum
}

// priceNote names a promotional price in a line's description ("" for the list price).
func priceNote(plan *subprov.PlanVersion, price subprov.Money) string {
	if price != plan.MonthlyPrice {
		return " (promotional price)"
	}
	return ""
}

// planLines are the invoice lines of plan for the days first to last of their month, one per
// price: "Fibre 150, 21 Nov to 30 Nov 2026", then suffix.
func planLines(plan *subprov.PlanVersion, first, last time.Time, suffix string) []subprov.InvoiceLine {
	var lines []subprov.InvoiceLine
	for _, r := range planRuns(plan, first, last) {
		lines = append(lines, subprov.InvoiceLine{Kind: "plan", UnitPrice: r.price, Days: r.days, DaysInPeriod: r.in,
			Description: fmt.Sprintf("%s, %s to %s%s%s", plan.PlanName, r.first.Format("2 Jan"), r.last.Format("2 Jan 2006"), priceNote(plan, r.price), suffix),
			Amount:      r.amount})
	}
	return lines
}

// monthLines are the recurring invoice's lines of plan for the whole of period: the month's
// price in one line ("Fibre 150, December 2026"), or, when a promotion ends within the month,
// each part of it prorated at its price.
func monthLines(plan *subprov.PlanVersion, period Period) []subprov.InvoiceLine {
	first, last := period.First(), period.Day(period.Days())
	if runs := planRuns(plan, first, last); len(runs) == 1 {
		return []subprov.InvoiceLine{{Kind: "plan", UnitPrice: runs[0].price, Amount: runs[0].price,
			Description: fmt.Sprintf("%s, %s%s", plan.PlanName, first.Format("January 2006"), priceNote(plan, runs[0].price))}}
	}
	return planLines(plan, first, last, "")
}
