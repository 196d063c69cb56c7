package billing

import (
	"testing"
	"time"

	"github.com/subprov/subprov"
)

func TestOwesRecurring(t *testing.T) {
	toronto, err := time.LoadLocation("America/Toronto")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, toronto)
	december := billingMonth{start: start, end: start.AddDate(0, 1, 0), day: 5}
	at := func(t time.Time) *time.Time { return &t }
	before, inMonth, after := at(start.Add(-time.Hour)), at(start.Add(time.Hour)), at(start.AddDate(0, 1, 0))
	line := func(change func(*subprov.Subscription)) *subprov.Subscription {
		s := &subprov.Subscription{BillingOwner: subprov.BillingPlatform, Status: subprov.StatusActive, BillingDay: 5, ActivatedAt: before}
		change(s)
		return s
	}
	tests := []struct {
		name string
		sub  *subprov.Subscription
		want bool
	}{
		{"an active platform-billed line owes the month on its billing day", line(func(*subprov.Subscription) {}), true},
		{"a suspended line owes it too", line(func(s *subprov.Subscription) { s.Status = subprov.StatusSuspended }), true},
		{"a billing day already past is due", line(func(s *subprov.Subscription) { s.BillingDay = 1 }), true},
		{"a billing day still ahead is not due yet", line(func(s *subprov.Subscription) { s.BillingDay = 6 }), false},
		{"a partner-billed line is never invoiced", line(func(s *subprov.Subscription) { s.BillingOwner = subprov.BillingPartner }), false},
		{"a line activated in the month was billed by its first invoice", line(func(s *subprov.Subscription) { s.ActivatedAt = inMonth }), false},
		{"a line activated at the month's first instant was too", line(func(s *subprov.Subscription) { s.ActivatedAt = at(start) }), false},
		{"a line never activated owes nothing", line(func(s *subprov.Subscription) { s.ActivatedAt = nil }), false},
		{"a pending line owes nothing", line(func(s *subprov.Subscription) { s.Status = subprov.StatusPendingInstall }), false},
		{"a line cancelled while running and ending after the month owes it", line(func(s *subprov.Subscription) {
			s.Status, s.StatusBeforeCancel, s.EndedAt = subprov.StatusCancelled, subprov.StatusActive, after
		}), true},
		{"so does one cancelled while suspended", line(func(s *subprov.Subscription) {
			s.Status, s.StatusBeforeCancel, s.EndedAt = subprov.StatusCancelled, subprov.StatusSuspended, after
		}), true},
		{"a line ending in the month was billed by its final invoice", line(func(s *subprov.Subscription) {
			s.Status, s.StatusBeforeCancel, s.EndedAt = subprov.StatusCancelled, subprov.StatusActive, inMonth
		}), false},
		{"a line cancelled while waiting for its install owes nothing", line(func(s *subprov.Subscription) {
			s.Status, s.StatusBeforeCancel, s.EndedAt = subprov.StatusCancelled, subprov.StatusPendingInstall, after
		}), false},
		{"a cancelled line without an end date owes nothing", line(func(s *subprov.Subscription) {
			s.Status, s.StatusBeforeCancel = subprov.StatusCancelled, subprov.StatusActive
		}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := owesRecurring(tt.sub, december); got != tt.want {
				t.Fatalf("owesRecurring = %v, want %v", got, tt.want)
			}
		})
	}
}
