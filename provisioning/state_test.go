package provisioning

import (
	"testing"

	"github.com/subprov/subprov"
)

// TestTransitions has one row per move of the subscription-status table, and rows
// for moves the table does not allow.
func TestTransitions(t *testing.T) {
	tests := []struct {
		name   string
		from   subprov.Status
		action Action
		to     subprov.Status
		ok     bool
	}{
		{"first-line direct order with a port provisions", fresh, ActProvision, subprov.StatusActive, true},
		{"install route order waits for install", fresh, ActAwaitInstall, subprov.StatusPendingInstall, true},
		{"technician completes install", subprov.StatusPendingInstall, ActCompleteInstall, subprov.StatusActive, true},
		{"suspend an active line", subprov.StatusActive, ActSuspend, subprov.StatusSuspended, true},
		{"restore a suspended line", subprov.StatusSuspended, ActRestore, subprov.StatusActive, true},
		{"suspend before install is a hold", subprov.StatusPendingInstall, ActSuspend, subprov.StatusPendingInstall, true},
		{"restore before install lifts the hold", subprov.StatusPendingInstall, ActRestore, subprov.StatusPendingInstall, true},
		{"cancel an active line", subprov.StatusActive, ActCancel, subprov.StatusCancelled, true},
		{"cancel a pending line", subprov.StatusPendingInstall, ActCancel, subprov.StatusCancelled, true},
		{"cancel a suspended line", subprov.StatusSuspended, ActCancel, subprov.StatusCancelled, true},
		{"plan change on an active line", subprov.StatusActive, ActChangePlan, subprov.StatusActive, true},
		{"suspend a suspended line is refused", subprov.StatusSuspended, ActSuspend, "", false},
		{"suspend a cancelled line is refused", subprov.StatusCancelled, ActSuspend, "", false},
		{"restore an active line is refused", subprov.StatusActive, ActRestore, "", false},
		{"restore a cancelled line is refused", subprov.StatusCancelled, ActRestore, "", false},
		{"plan change while pending is refused", subprov.StatusPendingInstall, ActChangePlan, "", false},
		{"plan change while suspended is refused", subprov.StatusSuspended, ActChangePlan, "", false},
		{"completing an install twice is refused", subprov.StatusActive, ActCompleteInstall, "", false},
		{"cancelling twice is refused", subprov.StatusCancelled, ActCancel, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to, err := Next(tt.from, tt.action)
			if tt.ok != (err == nil) || to != tt.to {
				t.Fatalf("Next(%q, %s) = %q, %v", tt.from, tt.action, to, err)
			}
			if err != nil && subprov.ErrorCode(err) != subprov.ECONFLICT {
				t.Fatalf("a refused move must be 409, got %v", subprov.ErrorCode(err))
			}
		})
	}
}
