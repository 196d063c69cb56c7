package subprov

import "time"

// InstallWindow is an appointment window on one weekday (0 Sunday … 6 Saturday), with local
// start and end times (HH:MM, the provider's time zone) and the technicians working it.
type InstallWindow struct {
	ID          string
	ProviderID  string
	Weekday     int
	Starts      string
	Ends        string
	Technicians int
}

// InstallSlot names one slot: a window on a date.
type InstallSlot struct {
	WindowID string
	Date     string // YYYY-MM-DD
}

// InstallJobFilter narrows the operator's install queue; empty fields do not filter.
type InstallJobFilter struct {
	ID         string
	ProviderID string
	State      string
	Kind       string
	Booking    string
	Flag       string
	AssignedTo string
	Limit      int
}

// InstallQueueEntry is an install job with what the operator needs to act on it.
type InstallQueueEntry struct {
	InstallJob
	SubscriptionStatus string
	OnHold             bool
	BookingLinkSent    bool
	Street, City       string
	PostalCode         string
	UnitNumber         string
}

// BookingLink is a mailed booking link (only its hash is stored).
type BookingLink struct {
	ProviderID   string
	InstallJobID string
	State        string // live, used, paused, replaced
}

// InstallJob is a technician or operator job on the install route.
type InstallJob struct {
	ID             string
	ProviderID     string
	SubscriptionID string
	Kind           string // install, reinstall
	Booking        string // customer, operator, "" (none)
	State          string // open, booked, held, done, cancelled
	Flags          string
	// Set by the install package (store/install.go reads and saves them).
	AssignedTo      string
	AppointmentAt   *time.Time
	InvitationDueOn string // YYYY-MM-DD the booking invitation is due, "" when none is waiting
	SlotWindowID    string
	SlotDate        string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}
