package netconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/golden"
	"github.com/subprov/subprov/switches"
)

var (
	goldenA = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2100, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:00:11:22"}}
	goldenB = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 3100, DownloadMbps: 1000, UploadMbps: 1000}}
)

func reply(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "replies", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The edit-config payloads of both models, pinned by golden files (go test -update rewrites
// them; review the diff).
func TestEditGolden(t *testing.T) {
	for _, modelName := range []string{ModelOpenConfig, ModelJunos} {
		for _, tc := range []struct {
			name  string
			state switches.State
		}{
			{"service-mac", goldenA},
			{"service", goldenB},
			{"suspended", switches.State{Mode: switches.ModeSuspended, Config: goldenB.Config}},
			{"captive", switches.CaptiveState},
			{"off", switches.State{Mode: switches.ModeOff}},
		} {
			t.Run(modelName+"/"+tc.name, func(t *testing.T) {
				got, err := models[modelName].edit("ge-0/0/12", tc.state)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", "golden", modelName+"-"+tc.name+".xml")
				golden.Check(t, path, "payload", got)
			})
		}
	}
}

// A port name is escaped in the payload, never spliced in as markup.
func TestEditEscapes(t *testing.T) {
	for name, m := range models {
		for _, port := range []string{`ge-0/0/1"><evil/>`, `ge-0/0/1<evil>&`} { // the second keeps its markup in Junos's filter names
			got, err := m.edit(port, goldenB)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "<evil") {
				t.Errorf("%s: port name %q not escaped:\n%s", name, port, got)
			}
		}
	}
}

// Junos read-back: recorded get-config replies parse to the state the payload wrote.
func TestJunosParseConfig(t *testing.T) {
	for _, tc := range []struct {
		file string
		want switches.State
	}{
		{"junos-get-config-service.xml", goldenA},
		{"junos-get-config-suspended.xml", switches.State{Mode: switches.ModeSuspended, Config: goldenB.Config}},
		{"junos-get-config-captive.xml", switches.CaptiveState},
		{"junos-get-config-off.xml", switches.State{Mode: switches.ModeOff}},
	} {
		got, err := junos{}.parseConfig(reply(t, tc.file), "ge-0/0/12")
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.file, got, err, tc.want)
		}
	}
	// Another port in the same reply is not this one.
	if got, err := (junos{}).parseConfig(reply(t, "junos-get-config-service.xml"), "ge-0/0/13"); err != nil || got.Mode != switches.ModeOff {
		t.Errorf("other port: %v, %v; want off", got, err)
	}
}

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		file string
		port string
		want Status
	}{
		{"openconfig-get-state.xml", "ge-0/0/12", Status{OperStatus: "up", InOctets: 918273645501, OutOctets: 18446744073709551000}},
		{"openconfig-get-state-down.xml", "ge-0/0/13", Status{OperStatus: "down"}},
		{"junos-interface-information.xml", "ge-0/0/12", Status{OperStatus: "up", InOctets: 918273645501, OutOctets: 4402918830114}},
	} {
		got, err := parseStatus(reply(t, tc.file), tc.port)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.file, got, err, tc.want)
		}
		if _, err := parseStatus(reply(t, tc.file), "xe-9/9/9"); err == nil {
			t.Errorf("%s: a port not in the reply parsed", tc.file)
		}
	}
	if !(Status{OperStatus: "up"}).Up() || (Status{OperStatus: "down"}).Up() {
		t.Error("Up")
	}
}

// rpc-errors map onto the switches errors by tag and app-tag; warnings are not errors.
func TestReplyError(t *testing.T) {
	for _, tc := range []struct {
		file string
		want error // nil: no error
		text string
	}{
		{"netconfd-not-in-range.xml", switches.ErrInvalid, "invalid-value (not-in-range): value not in range [value 5000]"},
		{"junos-lock-denied.xml", switches.ErrUnavailable, "lock-denied"},
		{"junos-access-denied.xml", ErrAuth, "permission denied"},
		{"junos-warning-statement-not-found.xml", nil, ""},
		{"junos-get-config-service.xml", nil, ""},
	} {
		err := replyError(reply(t, tc.file))
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v; want none", tc.file, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v; want %v with %q", tc.file, err, tc.want, tc.text)
		}
	}
	if err := replyError([]byte("<rpc-reply><unterminated")); !errors.Is(err, switches.ErrUnavailable) {
		t.Errorf("garbage reply: %v; want ErrUnavailable", err)
	}
	// Removing what is not there: a strict server's data-missing, which a write of "off" takes
	// as the port already being off; no other refusal is.
	if err := replyError(reply(t, "strict-data-missing.xml")); !missing(err) || !errors.Is(err, switches.ErrInvalid) {
		t.Errorf("data-missing: %v; want missing and ErrInvalid", err)
	}
	if err := replyError(reply(t, "netconfd-not-in-range.xml")); missing(err) {
		t.Errorf("not-in-range taken for data-missing: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAmxLA1xTkT5VdlRA3s9A7ho5nxcsTJqbfds3r2jm0FF"
	ok := Config{Address: "192.0.2.1:830", Username: "u", Password: "p", HostKey: key, Model: ModelJunos}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod  func(*Config)
		want error
	}{
		"no host key":      {func(c *Config) { c.HostKey = "" }, ErrHostKey},
		"garbage host key": {func(c *Config) { c.HostKey = "not a key" }, ErrHostKey},
		"no port":          {func(c *Config) { c.Address = "192.0.2.1" }, switches.ErrInvalid},
		"no user":          {func(c *Config) { c.Username = "" }, switches.ErrInvalid},
		"unknown model":    {func(c *Config) { c.Model = "ios" }, switches.ErrInvalid},
	} {
		c := ok
		tc.mod(&c)
		_, err := New(c)
		// Final, every one: the switch's row has to be mended.
		if !errors.Is(err, tc.want) || !switches.Final(err) {
			t.Errorf("%s: %v; want %v", name, err, tc.want)
		}
	}
}

// A get-config reply that is well-formed but does not read as the model's configuration reads
// the same on a retry: final (ErrInvalid), not the switch unavailable.
func TestUnreadableConfigIsFinal(t *testing.T) {
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAmxLA1xTkT5VdlRA3s9A7ho5nxcsTJqbfds3r2jm0FF"
	d, err := New(Config{Address: "192.0.2.1:830", Username: "u", Password: "p", HostKey: key, Model: ModelOpenConfig})
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(`<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><data><interfaces xmlns="urn:subprov:yang:access">` +
		`<interface><name>ge-0/0/1</name><ethernet><switched-vlan><config><access-vlan>many</access-vlan></config></switched-vlan></ethernet></interface>` +
		`</interfaces></data></rpc-reply>`)
	if _, err := d.stateOf(bad, "ge-0/0/1"); !errors.Is(err, switches.ErrInvalid) || errors.Is(err, switches.ErrUnavailable) {
		t.Errorf("VLAN \"many\": %v; want ErrInvalid", err)
	}
}
