package subprov

// SubscriberSummary is a subscriber as the operations surface lists it: its record and holder.
type SubscriberSummary struct {
	ID, ProviderID, CustomerNumber string
	Holder                         Contact
}

// LineSummary is a line with what an operator sees of it at a glance: its plan's name, where
// it is, and the switch port it holds (Switch and Port "" when none, or when not read: the
// list of subscribers does not show them).
type LineSummary struct {
	SubscriptionID, SubscriberID string
	Status                       Status
	PlanVersionID, PlanName      string
	BuildingID, UnitID           string
	UnitNumber                   string
	Address                      Address
	Switch, Port                 string
	// PortUnconverged: the line's port did not reach its desired setting after the
	// convergence's retries; an operator ticket is open and the line keeps its status.
	PortUnconverged bool
}
