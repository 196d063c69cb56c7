package provisioning

import (
	"github.com/subprov/subprov"
)

// Action is something that moves a subscription between statuses.
type Action string

const (
	ActProvision       Action = "provision"        // new line, provision route
	ActAwaitInstall    Action = "await_install"    // new line, install route
	ActCompleteInstall Action = "complete_install" // technician done (confirm-install, CPE pull, dispatch)
	ActSuspend         Action = "suspend"
	ActRestore         Action = "restore"
	ActCancel          Action = "cancel"
	ActChangePlan      Action = "change_plan"
)

// fresh is the "status" of a line that does not exist yet.
const fresh subprov.Status = ""

// transitions is the subscription-status table (docs/provisioning.md), the one place that says which
// moves exist. A move not listed here is refused with 409 before anything is written.
var transitions = map[subprov.Status]map[Action]subprov.Status{
	fresh: {
		ActProvision:    subprov.StatusActive,
		ActAwaitInstall: subprov.StatusPendingInstall,
	},
	subprov.StatusPendingInstall: {
		ActCompleteInstall: subprov.StatusActive,
		ActSuspend:         subprov.StatusPendingInstall, // a hold before install
		ActRestore:         subprov.StatusPendingInstall, // lifts the hold, fresh booking link
		ActCancel:          subprov.StatusCancelled,
	},
	subprov.StatusActive: {
		ActSuspend:    subprov.StatusSuspended,
		ActCancel:     subprov.StatusCancelled,
		ActChangePlan: subprov.StatusActive,
	},
	subprov.StatusSuspended: {
		ActRestore: subprov.StatusActive, // only when the port re-opens
		ActCancel:  subprov.StatusCancelled,
	},
}

// Next returns the status after action from status, or a 409 coded error when the table has
// no such move.
func Next(from subprov.Status, action Action) (subprov.Status, error) {
	if to, ok := transitions[from][action]; ok {
		return to, nil
	}
	name := string(from)
	if from == fresh {
		name = "a new line"
	}
	return "", subprov.Errorf(subprov.ECONFLICT, "invalid_transition", "Cannot %s a subscription in status %s", action, name)
}
