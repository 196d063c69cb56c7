package lab_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/switches/netconf/lab"
)

// The lab switch takes a configuration through the netconf driver and reads it back, refuses
// a wrong password, and leaves nothing behind once closed.
func TestLabSwitch(t *testing.T) {
	if err := lab.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("lab switch: %v (CI=true: CI installs netconfd)", err)
		}
		t.Skipf("lab switch: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sw, err := lab.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			sw.Close()
		}
	}()
	cfg := netconf.Config{Address: sw.Addr, Username: sw.Username, Password: sw.Password, HostKey: sw.HostKey,
		Model: netconf.ModelOpenConfig, DialTimeout: 5 * time.Second, OpTimeout: 10 * time.Second}
	raw, err := netconf.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	port := switches.Port{Switch: "lab", Name: "xe-1/0/1"}
	want := switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 3001, DownloadMbps: 300, UploadMbps: 300, MAC: "aa:bb:cc:00:30:01"}}
	if err := switches.Confirmed(raw).Converge(ctx, port, want); err != nil {
		t.Fatalf("converge: %v", err)
	}
	if got, err := raw.Read(ctx, port); err != nil || got != want {
		t.Fatalf("read %v, %v; want %v", got, err, want)
	}
	// netconfd serves no operational state: the lab switch has no counters, finally.
	if _, err := raw.Counters(ctx, port); !errors.Is(err, switches.ErrNoCounters) {
		t.Errorf("counters: %v; want ErrNoCounters", err)
	}

	cfg.Password = "wrong"
	bad, err := netconf.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Read(ctx, port); !errors.Is(err, netconf.ErrAuth) {
		t.Fatalf("read with a wrong password: %v; want ErrAuth", err)
	}

	dir := sw.Dir()
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Close the lab directory %s is still there (%v)", dir, err)
	}
	if _, err := raw.Read(ctx, port); !errors.Is(err, switches.ErrUnavailable) {
		t.Errorf("read after Close: %v; want ErrUnavailable", err)
	}
}
