package linuxbridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/golden"
	"github.com/subprov/subprov/switches"
)

// transcript is a switch as recorded: each read command's output. Writes are recorded, not
// executed, so the switch keeps answering as it was.
type transcript struct {
	t       *testing.T
	outputs map[string]string
	writes  []Command
}

func loadTranscript(t *testing.T, name string) *transcript {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := &transcript{t: t, outputs: map[string]string{}}
	var cur string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if c, ok := strings.CutPrefix(sc.Text(), "$ "); ok {
			cur = c
			continue
		}
		tr.outputs[cur] += sc.Text() + "\n"
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func isRead(c Command) bool {
	return strings.Contains(c.String(), " -j ")
}

func (tr *transcript) Run(_ context.Context, c Command) ([]byte, error) {
	if !isRead(c) {
		tr.writes = append(tr.writes, c)
		return nil, nil
	}
	out, ok := tr.outputs[c.String()]
	if !ok {
		return nil, &CommandError{Command: c.String(), Status: 1, Stderr: "not in the transcript"}
	}
	return []byte(out), nil
}

func (tr *transcript) golden() string {
	var b strings.Builder
	for _, c := range tr.writes {
		b.WriteString(c.String() + "\n")
		for _, l := range strings.Split(strings.TrimSuffix(c.Stdin, "\n"), "\n") {
			if c.Stdin != "" {
				b.WriteString("\t" + l + "\n")
			}
		}
	}
	return b.String()
}

var (
	port       = switches.Port{Switch: "sw1", Name: "swp1"}
	service100 = switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 100, DownloadMbps: 10, UploadMbps: 5, MAC: "02:00:00:00:01:01"}}
)

func with(s switches.State, f func(*switches.State)) switches.State {
	f(&s)
	return s
}

func TestRead(t *testing.T) {
	tests := []struct {
		transcript string
		want       switches.State
		err        error
	}{
		{"pervlan-off", switches.State{Mode: switches.ModeOff}, nil},
		{"pervlan-service", service100, nil},
		{"pervlan-suspended", with(service100, func(s *switches.State) { s.Mode = switches.ModeSuspended }), nil},
		{"pervlan-captive", switches.CaptiveState, nil},
		// Leftovers of a half-done write are reported, so the port is written again.
		{"pervlan-leftover", switches.State{Mode: switches.ModeOff, Config: switches.Config{DownloadMbps: 10, UploadMbps: 5, MAC: "02:00:00:00:01:01"}}, nil},
		{"pervlan-foreign", switches.State{}, switches.ErrInvalid},
		{"aware-off", switches.State{Mode: switches.ModeOff}, nil},
		{"aware-service", service100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.transcript, func(t *testing.T) {
			sw := NewWithRunner(Config{}, loadTranscript(t, tt.transcript))
			got, err := sw.Read(context.Background(), port)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Read error %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("Read = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadRefusesWhatIsNotAnAccessPort(t *testing.T) {
	for _, name := range []string{"br100", "ifbswp1", "uplink", "nosuch", "a b", ""} {
		t.Run(name, func(t *testing.T) {
			sw := NewWithRunner(Config{Uplink: "uplink"}, loadTranscript(t, "pervlan-service"))
			_, err := sw.Read(context.Background(), switches.Port{Switch: "sw1", Name: name})
			if !errors.Is(err, switches.ErrInvalid) {
				t.Fatalf("Read(%q) error %v, want ErrInvalid", name, err)
			}
		})
	}
	sw := NewWithRunner(Config{Name: "sw2"}, loadTranscript(t, "pervlan-service"))
	if _, err := sw.Read(context.Background(), port); !errors.Is(err, switches.ErrInvalid) {
		t.Fatalf("Read of another switch's port: error %v, want ErrInvalid", err)
	}
}

// TestWriteGolden pins the commands each change of state issues, for both bridge layouts. Run
// with -update to rewrite testdata/golden after a deliberate change, then read the diff.
func TestWriteGolden(t *testing.T) {
	suspended := with(service100, func(s *switches.State) { s.Mode = switches.ModeSuspended })
	tests := []struct {
		name, transcript string
		cfg              Config
		want             switches.State
		err              error
	}{
		{"pervlan off to service", "pervlan-off", Config{}, service100, nil},
		{"pervlan off to service with uplink", "pervlan-off", Config{Uplink: "uplink"}, service100, nil},
		{"pervlan off to service without binding", "pervlan-off", Config{}, with(service100, func(s *switches.State) { s.MAC = "" }), nil},
		{"pervlan off to captive", "pervlan-off", Config{}, switches.CaptiveState, nil},
		{"pervlan off stays off", "pervlan-off", Config{}, switches.State{Mode: switches.ModeOff}, nil},
		{"pervlan service unchanged", "pervlan-service", Config{}, service100, nil},
		{"pervlan service to suspended", "pervlan-service", Config{}, suspended, nil},
		{"pervlan service to new bandwidth", "pervlan-service", Config{}, with(service100, func(s *switches.State) { s.DownloadMbps, s.UploadMbps = 20, 10 }), nil},
		{"pervlan service to another VLAN", "pervlan-service", Config{}, with(service100, func(s *switches.State) { s.VLAN = 200 }), nil},
		{"pervlan service unbound", "pervlan-service", Config{}, with(service100, func(s *switches.State) { s.MAC = "" }), nil},
		{"pervlan service to another MAC", "pervlan-service", Config{}, with(service100, func(s *switches.State) { s.MAC = "02:00:00:00:09:09" }), nil},
		{"pervlan service to captive", "pervlan-service", Config{}, switches.CaptiveState, nil},
		{"pervlan service to off", "pervlan-service", Config{}, switches.State{Mode: switches.ModeOff}, nil},
		{"pervlan suspended to service", "pervlan-suspended", Config{}, service100, nil},
		{"pervlan suspended to another MAC", "pervlan-suspended", Config{}, with(service100, func(s *switches.State) { s.MAC = "02:00:00:00:09:09" }), nil},
		{"pervlan captive to service", "pervlan-captive", Config{}, service100, nil},
		{"pervlan leftover to off", "pervlan-leftover", Config{}, switches.State{Mode: switches.ModeOff}, nil},
		{"pervlan foreign bridge", "pervlan-foreign", Config{}, service100, switches.ErrInvalid},
		{"aware off to service with uplink", "aware-off", Config{Uplink: "uplink"}, service100, nil},
		{"aware off to captive with uplink", "aware-off", Config{Uplink: "uplink"}, switches.CaptiveState, nil},
		{"aware service unchanged", "aware-service", Config{}, service100, nil},
		{"aware service to another VLAN", "aware-service", Config{}, with(service100, func(s *switches.State) { s.VLAN = 200 }), nil},
		{"aware service to captive", "aware-service", Config{}, switches.CaptiveState, nil},
		{"aware service to off", "aware-service", Config{}, switches.State{Mode: switches.ModeOff}, nil},
		{"aware service to suspended", "aware-service", Config{}, suspended, nil},
		{"aware configured bridge missing", "aware-service", Config{Bridge: "br9"}, service100, switches.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := loadTranscript(t, tt.transcript)
			err := NewWithRunner(tt.cfg, tr).Write(context.Background(), port, tt.want)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Write error %v, want %v", err, tt.err)
			}
			got := tr.golden()
			if tt.err != nil && got != "" {
				t.Fatalf("a refused write ran commands:\n%s", got)
			}
			path := filepath.Join("testdata", "golden", strings.ReplaceAll(tt.name, " ", "-")+".txt")
			if tt.err != nil {
				return
			}
			golden.Check(t, path, "commands", got)
		})
	}
}

func TestCounters(t *testing.T) {
	sw := NewWithRunner(Config{}, loadTranscript(t, "pervlan-service"))
	c, err := sw.Stats(context.Background(), port)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AdminUp || !c.LinkUp || c.OperState != "UP" {
		t.Errorf("link state %+v, want up", c)
	}
	if c.TXOctets == 0 || c.TXPackets == 0 {
		t.Errorf("counters %+v, want the recorded traffic", c)
	}
	// As a switches.CounterReader: TX, sent to the subscriber, is out (the download).
	sw = NewWithRunner(Config{}, loadTranscript(t, "pervlan-service"))
	if got, err := sw.Counters(context.Background(), port); err != nil || got != (switches.Counters{LinkUp: true, InOctets: c.RXOctets, OutOctets: c.TXOctets}) {
		t.Errorf("Counters %+v, %v; want link up, in %d, out %d", got, err, c.RXOctets, c.TXOctets)
	}
	sw = NewWithRunner(Config{}, loadTranscript(t, "pervlan-suspended"))
	if c, err = sw.Stats(context.Background(), port); err != nil || c.AdminUp || c.LinkUp {
		t.Errorf("suspended port counters %+v, %v; want admin and link down", c, err)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for name, parse := range map[string]func([]byte) error{
		"links":   func(b []byte) error { _, err := parseLinks(b); return err },
		"vlans":   func(b []byte) error { _, err := parseBridgeVLANs(b); return err },
		"qdiscs":  func(b []byte) error { _, err := parseQdiscs(b); return err },
		"filters": func(b []byte) error { _, err := parseRedirect(b); return err },
		"nft":     func(b []byte) error { _, err := parseBinding(b); return err },
	} {
		// Final: the switch answers the same way on a retry.
		if err := parse([]byte("1: swp1: <BROADCAST> mtu 1500")); !errors.Is(err, switches.ErrInvalid) || errors.Is(err, switches.ErrUnavailable) {
			t.Errorf("%s: text output: %v, want ErrInvalid", name, err)
		}
	}
}

func TestParseBridgeVLANRanges(t *testing.T) {
	m, err := parseBridgeVLANs([]byte(`[{"ifname":"uplink","vlans":[{"vlan":1,"flags":["PVID","Egress Untagged"]},{"vlan":100,"vlanEnd":102}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(m["uplink"]); got != "{1 [1 100 101 102]}" {
		t.Errorf("uplink VLANs %s, want PVID 1 and members 1, 100-102", got)
	}
}

func TestCommandQuoting(t *testing.T) {
	c := Command{Args: []string{"nft", "add", "element", "bridge", "subprov", "bound_ports", `{ "swp1" }`, "it's"}}
	if got, want := c.String(), `nft add element bridge subprov bound_ports '{ "swp1" }' 'it'\''s'`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

func TestHostKeyIsRequired(t *testing.T) {
	cfg := Config{Address: "192.0.2.1:22", Username: "root", Password: "x"}
	if _, err := New(cfg); !errors.Is(err, switches.ErrHostKey) || !switches.Final(err) {
		t.Errorf("New without a host key: error %v, want ErrHostKey", err)
	}
	cfg.HostKey = "not a key"
	if _, err := New(cfg); !errors.Is(err, switches.ErrHostKey) || !switches.Final(err) {
		t.Errorf("New with a bad host key: error %v, want ErrHostKey", err)
	}
}

// A command's failure is final when a retry will meet it again (a missing program or
// interface, an account not allowed to run it) and retried otherwise.
func TestCommandErrorClass(t *testing.T) {
	for _, tc := range []struct {
		status int
		stderr string
		want   error
	}{
		{127, "sh: 1: ip: not found", switches.ErrInvalid},
		{1, "sudo: a password is required\n", switches.ErrAuth},
		{1, "admin is not in the sudoers file.", switches.ErrAuth},
		{2, "RTNETLINK answers: Operation not permitted", switches.ErrAuth},
		{1, `Cannot find device "swp9"`, switches.ErrInvalid},
		{2, "RTNETLINK answers: Device or resource busy", switches.ErrUnavailable},
		{1, "", switches.ErrUnavailable},
	} {
		err := error(&CommandError{Command: "ip link set swp9 up", Status: tc.status, Stderr: tc.stderr})
		if !errors.Is(err, tc.want) || (tc.want != switches.ErrUnavailable) != switches.Final(err) {
			t.Errorf("status %d %q: %v is not %v", tc.status, tc.stderr, err, tc.want)
		}
	}
}
