package provisioning_test

import (
	"slices"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/switches"
)

func TestDriftAndBillingRisk(t *testing.T) {
	service := switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2100, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:ff"}}
	with := func(f func(*switches.State)) switches.State { s := service; f(&s); return s }
	active := &subprov.Subscription{Status: subprov.StatusActive}
	suspended := &subprov.Subscription{Status: subprov.StatusSuspended}
	for _, c := range []struct {
		name        string
		want, found switches.State
		line        *subprov.Subscription
		fields      []string
		risk        bool
	}{
		{"in line", service, service, active, nil, false},
		{"VLAN changed", service, with(func(s *switches.State) { s.VLAN = 2101 }), active, []string{"vlan"}, false},
		{"bandwidth changed", service, with(func(s *switches.State) { s.DownloadMbps, s.UploadMbps = 1000, 1000 }), active, []string{"download_mbps", "upload_mbps"}, false},
		{"MAC binding removed", service, with(func(s *switches.State) { s.MAC = "" }), active, []string{"mac_address"}, false},
		{"suspended behind the back: billed without service", service, with(func(s *switches.State) { s.Mode = switches.ModeSuspended }), active, []string{"mode"}, true},
		{"put on the captive portal", service, switches.CaptiveState, active, []string{"mode", "vlan", "download_mbps", "upload_mbps", "mac_address"}, true},
		{"switched off", service, switches.State{Mode: switches.ModeOff}, active, []string{"mode", "vlan", "download_mbps", "upload_mbps", "mac_address"}, true},
		{"suspended line on a suspended port", with(func(s *switches.State) { s.Mode = switches.ModeSuspended }), with(func(s *switches.State) { s.Mode = switches.ModeSuspended }), suspended, nil, false},
		{"suspended line switched back on", with(func(s *switches.State) { s.Mode = switches.ModeSuspended }), service, suspended, []string{"mode"}, false},
		{"captive port as it should be, no line", switches.CaptiveState, switches.CaptiveState, nil, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := provisioning.DriftFields(c.want, c.found); !slices.Equal(got, c.fields) {
				t.Errorf("drift fields %v, want %v", got, c.fields)
			}
			if got := provisioning.BillingRisk(c.line, c.found); got != c.risk {
				t.Errorf("billing risk %t, want %t", got, c.risk)
			}
		})
	}
}
