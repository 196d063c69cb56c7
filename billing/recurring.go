package billing

import (
	"time"

	"github.com/subprov/subprov"
)

// billingMonth is the month a bill run bills, in the provider's time zone, and how far into
// it the run is.
type billingMonth struct {
	start, end time.Time // the month's first instant and the next month's
	day        int       // billing days up to this one have come (every day, for a late run)
}

// owesRecurring reports whether a line owes the month's recurring invoice, unless it already
// has one (the store leaves out lines that do, by period). A platform-billed line owes it
// once its billing day has come if it runs through the month: active or suspended, or
// cancelled with an end date after the month, if it was running when cancelled (not waiting
// for its install or a reinstall, whose billing starts at the visit); a cancellation bills
// only the month of its end date (its final invoice, or its credit note). A line activated in
// the month was billed by its first invoice, one reactivated in it by its reactivation
// invoice.
func owesRecurring(sub *subprov.Subscription, m billingMonth) bool {
	if sub.BillingOwner != subprov.BillingPlatform || sub.BillingDay > m.day {
		return false
	}
	if sub.ActivatedAt == nil || !sub.ActivatedAt.Before(m.start) {
		return false
	}
	switch sub.Status {
	case subprov.StatusActive, subprov.StatusSuspended:
		return true
	case subprov.StatusCancelled:
		wasRunning := sub.StatusBeforeCancel == subprov.StatusActive || sub.StatusBeforeCancel == subprov.StatusSuspended
		return wasRunning && sub.EndedAt != nil && !sub.EndedAt.Before(m.end)
	}
	return false
}
