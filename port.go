package subprov

import "time"

// PortSetting is what a switch port is set to do: its mode ("off", "service", "suspended",
// "captive") and, in service or suspended, the line's VLAN, bandwidth and device MAC binding.
// The switches package reads and writes it as a driver's State.
type PortSetting struct {
	Mode                           string
	VLAN, DownloadMbps, UploadMbps int
	MAC                            string
}

// PortConvergence is a port's desired setting, decided from the lines that hold the port, and
// how far the switch has caught up with it. Version counts changes of the desired setting;
// ConvergedVersion is the last one the switch confirmed and FailedVersion the last one an
// attempt failed at, for Failure (a reason code such as "port_in_use"). Unconverged: the
// convergence job ran out of retries and an operator ticket is open.
type PortConvergence struct {
	PortID                                   string
	Want                                     PortSetting
	Version, ConvergedVersion, FailedVersion int64
	Failure                                  string
	Unconverged                              bool
	UpdatedAt                                time.Time
}

// Converged reports whether the switch confirmed version v of the desired setting, or a later
// one (which supersedes it).
func (c *PortConvergence) Converged(v int64) bool { return c.ConvergedVersion >= v }

// Failed reports whether an attempt at version v, or a later one, failed since the switch last
// confirmed a setting.
func (c *PortConvergence) Failed(v int64) bool {
	return c.FailedVersion >= v && c.FailedVersion > c.ConvergedVersion
}

// PortHolder is a line that holds a port, with what deciding the port's setting needs: its
// status and workflow, the VLAN and MAC it carries, and its plan's bandwidth.
type PortHolder struct {
	Line                     *Subscription
	DownloadMbps, UploadMbps int
	Sandbox                  bool // the line's provider is a sandbox: its ports are not wired to a switch
}

// Cancellation is what a cancelled line's cancellation consists of, so a reinstatement that
// does not stand can put it back exactly.
type Cancellation struct {
	Status, StatusBeforeCancel         Status
	WorkflowState, CancelReason        string
	PortID                             string
	VLAN                               int
	CanceledAt, EndedAt                *time.Time
	DeprovisionQueuedAt, Deprovisioned *time.Time
}
