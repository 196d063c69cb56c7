package subprov

import "time"

// Switch is one access switch of the inventory: the driver that reaches it ("" = the service's
// default driver), its management address and credentials. Secret is the password as the
// database keeps it, sealed (identity.Sealer); it is opened only to build the switch's driver
// and never leaves the service. HostKey is the switch's SSH known-hosts line, Model what a
// netconf driver speaks ("openconfig" or "junos").
type Switch struct {
	ID, Name, Driver, Address, Username string
	Secret                              string
	HostKey, Model                      string
	Version                             int64
	CreatedAt, UpdatedAt                time.Time
}

// HasPassword reports whether a password is kept for the switch.
func (s *Switch) HasPassword() bool { return s.Secret != "" }

// SwitchDrivers are the driver names a switch row may name ("" = the default driver).
var SwitchDrivers = []string{"sim", "netconf", "linuxbridge"}

// SwitchModels are what a netconf switch may speak ("" = the driver's default).
var SwitchModels = []string{"openconfig", "junos"}
