package provisioning_test

import (
	"errors"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/switches"
)

func TestDesiredPort(t *testing.T) {
	t.Parallel()
	port := switches.Port{Switch: "sw-a", Name: "ge-0/0/1"}
	line := func(status subprov.Status, workflow string, before subprov.Status) subprov.PortHolder {
		return subprov.PortHolder{Line: &subprov.Subscription{Status: status, WorkflowState: workflow, StatusBeforeCancel: before,
			VLAN: 2345, MACAddress: "aa:bb:cc:dd:ee:ff"}, DownloadMbps: 500, UploadMbps: 100}
	}
	cfg := switches.Config{VLAN: 2345, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:ff"}
	service := switches.State{Mode: switches.ModeService, Config: cfg}
	suspended := switches.State{Mode: switches.ModeSuspended, Config: cfg}
	noVLAN := line(subprov.StatusActive, provisioning.WorkflowProvisioning, "")
	noVLAN.Line.VLAN = 0
	sandbox := line(subprov.StatusActive, provisioning.WorkflowProvisioned, "")
	sandbox.Sandbox = true
	tests := []struct {
		name    string
		holders []subprov.PortHolder
		want    switches.State
		wired   bool
		decides int // the holder whose line decides (DecidingLine); -1: none
	}{
		{"no line: captive portal", nil, switches.CaptiveState, true, -1},
		{"active, still provisioning", []subprov.PortHolder{line(subprov.StatusActive, provisioning.WorkflowProvisioning, "")}, service, true, 0},
		{"active, provisioned", []subprov.PortHolder{line(subprov.StatusActive, provisioning.WorkflowProvisioned, "")}, service, true, 0},
		{"active, installed", []subprov.PortHolder{line(subprov.StatusActive, provisioning.WorkflowInstalled, "")}, service, true, 0},
		{"active, provisioning failed", []subprov.PortHolder{line(subprov.StatusActive, provisioning.WorkflowProvisioningFailed, "")}, switches.CaptiveState, true, 0},
		{"suspended keeps its config", []subprov.PortHolder{line(subprov.StatusSuspended, provisioning.WorkflowProvisioned, "")}, suspended, true, 0},
		{"suspended before its port came up", []subprov.PortHolder{line(subprov.StatusSuspended, provisioning.WorkflowProvisioning, "")}, suspended, true, 0},
		{"pending install", []subprov.PortHolder{line(subprov.StatusPendingInstall, provisioning.WorkflowAwaitingInstall, "")}, switches.CaptiveState, true, 0},
		{"cancelled, still serving", []subprov.PortHolder{line(subprov.StatusCancelled, provisioning.WorkflowCancelled, subprov.StatusActive)}, service, true, 0},
		{"cancelled while suspended", []subprov.PortHolder{line(subprov.StatusCancelled, provisioning.WorkflowCancelled, subprov.StatusSuspended)}, suspended, true, 0},
		{"cancelled while pending install", []subprov.PortHolder{line(subprov.StatusCancelled, provisioning.WorkflowCancelled, subprov.StatusPendingInstall)}, switches.CaptiveState, true, 0},
		{"deprovisioned", []subprov.PortHolder{line(subprov.StatusCancelled, provisioning.WorkflowDeprovisioned, subprov.StatusActive)}, switches.CaptiveState, true, 0},
		{"the VLAN derived from the port when the line has none", []subprov.PortHolder{noVLAN},
			switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: switches.ServiceVLAN(port), DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:ff"}}, true, 0},
		{"service wins over an older suspended line", []subprov.PortHolder{line(subprov.StatusSuspended, provisioning.WorkflowProvisioned, ""),
			line(subprov.StatusActive, provisioning.WorkflowProvisioned, "")}, service, true, 1},
		{"service wins over a newer pending line", []subprov.PortHolder{line(subprov.StatusActive, provisioning.WorkflowProvisioned, ""),
			line(subprov.StatusPendingInstall, provisioning.WorkflowAwaitingInstall, "")}, service, true, 0},
		{"of two pending lines the newer decides", []subprov.PortHolder{line(subprov.StatusPendingInstall, provisioning.WorkflowAwaitingInstall, ""),
			line(subprov.StatusPendingInstall, provisioning.WorkflowAwaitingInstall, "")}, switches.CaptiveState, true, 1},
		{"a sandbox line: not wired", []subprov.PortHolder{sandbox}, switches.State{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, wired := provisioning.DesiredPort(port, tt.holders)
			if got != tt.want || wired != tt.wired {
				t.Errorf("DesiredPort = %v, wired %t; want %v, wired %t", got, wired, tt.want, tt.wired)
			}
			var decides *subprov.Subscription
			if tt.decides >= 0 {
				decides = tt.holders[tt.decides].Line
			}
			if line := provisioning.DecidingLine(tt.holders); line != decides {
				t.Errorf("DecidingLine = %+v, want holder %d's", line, tt.decides)
			}
		})
	}
}

// A convergence that failed in another process is known by its reason alone; it answers
// errors.Is like the switch error it stands for.
func TestConvergeErrorIsItsSwitchError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason string
		want   error
	}{
		{"port_in_use", switches.ErrPortInUse},
		{"switch_write_unconfirmed", switches.ErrUnconfirmed},
		{"switch_rejected", switches.ErrInvalid},
		{"switch_unavailable", switches.ErrUnavailable},
	}
	all := []error{switches.ErrPortInUse, switches.ErrUnconfirmed, switches.ErrInvalid, switches.ErrUnavailable}
	for _, tt := range tests {
		err := error(&provisioning.ConvergeError{Reason: tt.reason})
		for _, target := range all {
			if got := errors.Is(err, target); got != (target == tt.want) {
				t.Errorf("%s: errors.Is(%v) = %t", tt.reason, target, got)
			}
		}
	}
	if errors.Is(&provisioning.ConvergeError{Reason: "timeout"}, switches.ErrUnavailable) {
		t.Error("a time-out is no switch error")
	}
}
