package subprov

// ServiceLocation is where one of a subscriber's lines is.
type ServiceLocation struct {
	SubscriberID   string
	SubscriptionID string
	BuildingID     string
	Street         string
	City           string
	PostalCode     string
	Province       string
	Country        string
	UnitNumber     string
}

// Address is a postal address.
type Address struct {
	Street, City, PostalCode, Province, Country string
}

// UnitAvailability is a suite with whether it can take an order now.
type UnitAvailability struct {
	Unit
	Available bool
}

// PortLocation is a port joined with its suite and building address.
type PortLocation struct {
	Port     Port
	Unit     *Unit
	Building Building
	// Covered reports whether the provider the port was looked up for covers the
	// building (the store's LocationByPortFor); always false from its LocationByPort.
	Covered bool
}
