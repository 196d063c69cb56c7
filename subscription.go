package subprov

import "time"

// Reinstatement is a cancelled line put back: its new status and workflow state, and the port
// and dates it starts again with (nil: unchanged).
type Reinstatement struct {
	Status             Status
	WorkflowState      string
	PortID             *string
	VLAN               *int
	ActivatedAt        *time.Time
	StartedAt          *string
	RequestedStartDate *string
}

// SubscriptionChange is a partial update of a subscription; nil fields are left alone.
type SubscriptionChange struct {
	Status             *Status
	WorkflowState      *string
	PlanVersionID      *string
	MACAddress         *string
	StartedAt          *string
	ActivatedAt        *time.Time
	CanceledAt         *time.Time
	EndedAt            *time.Time
	CancelReason       *string
	StatusBeforeCancel *Status
	OnHold             *bool
	BookingLinkSent    *bool
	VLAN               *int
	BillingDay         *int
	// StatusReason is why Status changed ("" for no reason given), kept in the line's status
	// history.
	StatusReason string
}

// StatusChange is one entry of a line's status history: the status it took, when, and the
// reason it was given ("" for none).
type StatusChange struct {
	Status Status
	At     time.Time
	Reason string
}

// PlanChange is one recorded plan change: the day it counts for, in the calendar (time zone)
// of the surface that made it.
type PlanChange struct {
	SubscriptionID, From, To string
	Day, TimeZone            string // YYYY-MM-DD in TimeZone ("UTC" or the provider's)
	Actor                    string
}

// LineToProvision is a line with what a job that switches its port needs: its provider, its
// port (nil when it has none) and its plan version.
type LineToProvision struct {
	Line     *Subscription
	Provider *Provider
	Port     *Port
	Plan     *PlanVersion
}
