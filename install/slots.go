package install

import (
	"context"
	"strings"
	"time"

	"github.com/subprov/subprov"
)

// minHorizonDays is the fewest days of appointments a booking page offers, whatever the
// provider's booking window.
const minHorizonDays = 14

// Slot is one appointment window on one date.
type Slot struct {
	ID         string // SlotID(window, date)
	WindowID   string
	Date       string // YYYY-MM-DD, the provider's calendar
	Start, End time.Time
	Capacity   int
	Booked     int
}

// PlacesLeft is how many more visits fit in the slot.
func (s Slot) PlacesLeft() int {
	if n := s.Capacity - s.Booked; n > 0 {
		return n
	}
	return 0
}

// Full reports whether the slot has no place left.
func (s Slot) Full() bool { return s.PlacesLeft() == 0 }

// Day is a date with its slots.
type Day struct {
	Date  string
	Slots []Slot
}

// SlotID names a slot in forms and API bodies: the date, an underscore, the window id.
func SlotID(windowID, date string) string { return date + "_" + windowID }

// ParseSlotID splits a slot id; false when it is not one.
func ParseSlotID(id string) (subprov.InstallSlot, bool) {
	date, window, ok := strings.Cut(strings.TrimSpace(id), "_")
	if !ok || window == "" {
		return subprov.InstallSlot{}, false
	}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return subprov.InstallSlot{}, false
	}
	return subprov.InstallSlot{WindowID: window, Date: date}, true
}

// Calendar lays the provider's weekly windows over days dates from `from`: each window on a
// matching weekday is a slot whose capacity is the window's technicians. A slot that has
// started by now is left out, and so are days without slots.
func Calendar(windows []subprov.InstallWindow, booked map[subprov.InstallSlot]int, loc *time.Location, now time.Time, from string, days int) []Day {
	first, err := time.ParseInLocation(time.DateOnly, from, loc)
	if err != nil {
		return nil
	}
	var out []Day
	for i := 0; i < days; i++ {
		d := first.AddDate(0, 0, i)
		date := d.Format(time.DateOnly)
		day := Day{Date: date}
		for _, w := range windows {
			if w.Weekday != int(d.Weekday()) {
				continue
			}
			start, okS := clockOn(d, w.Starts, loc)
			end, okE := clockOn(d, w.Ends, loc)
			if !okS || !okE || !start.After(now) {
				continue
			}
			k := subprov.InstallSlot{WindowID: w.ID, Date: date}
			day.Slots = append(day.Slots, Slot{ID: SlotID(w.ID, date), WindowID: w.ID, Date: date, Start: start.UTC(), End: end.UTC(),
				Capacity: w.Technicians, Booked: booked[k]})
		}
		if len(day.Slots) > 0 {
			out = append(out, day)
		}
	}
	return out
}

// clockOn is the instant of a local HH:MM on day d.
func clockOn(d time.Time, hhmm string, loc *time.Location) (time.Time, bool) {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return time.Time{}, false
	}
	return time.Date(d.Year(), d.Month(), d.Day(), t.Hour(), t.Minute(), 0, 0, loc), true
}

// ValidClock reports whether s is a local time HH:MM.
func ValidClock(s string) bool {
	_, err := time.Parse("15:04", s)
	return err == nil && len(s) == 5
}

// firstBookableDay is the first day a visit may be booked: today, or the building's earliest
// service date when that is later.
func firstBookableDay(p *subprov.Provider, b *subprov.Building, now time.Time) string {
	day := p.Today(now)
	if b.EarliestServiceDate > day {
		return b.EarliestServiceDate
	}
	return day
}

func horizon(p *subprov.Provider) int {
	if p.BookingWindowDays > minHorizonDays {
		return p.BookingWindowDays
	}
	return minHorizonDays
}

// slotReader is the store or a transaction.
type slotReader interface {
	InstallWindows(ctx context.Context, providerID string) ([]subprov.InstallWindow, error)
	SlotsBooked(ctx context.Context, providerID, from, to string) (map[subprov.InstallSlot]int, error)
}

// calendarFor lists the slots a line at building b can book now.
func calendarFor(ctx context.Context, r slotReader, p *subprov.Provider, b *subprov.Building, now time.Time) ([]Day, error) {
	windows, err := r.InstallWindows(ctx, p.ID)
	if err != nil || len(windows) == 0 {
		return nil, err
	}
	from, days := firstBookableDay(p, b, now), horizon(p)
	first, _ := time.Parse(time.DateOnly, from)
	booked, err := r.SlotsBooked(ctx, p.ID, from, first.AddDate(0, 0, days).Format(time.DateOnly))
	if err != nil {
		return nil, err
	}
	return Calendar(windows, booked, p.Location(), now, from, days), nil
}

// findSlot picks a slot out of a calendar.
func findSlot(days []Day, id string) (Slot, bool) {
	for _, d := range days {
		for _, s := range d.Slots {
			if s.ID == id {
				return s, true
			}
		}
	}
	return Slot{}, false
}
