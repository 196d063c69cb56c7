package netconf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/netconf/netconftest"
)

// A write waits for a candidate another session holds locked, up to the RPC timeout, and then
// gives up with ErrUnavailable (retried by the job), the switch's lock-denied in the message.
func TestWriteWaitsForTheLock(t *testing.T) {
	srv := netconftest.Start(t)
	d, err := New(Config{Address: srv.Addr, Username: netconftest.User, Password: netconftest.Password,
		HostKey: srv.HostKey, Model: ModelOpenConfig, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := switches.Port{Switch: "sw", Name: "ge-0/0/5"}
	want := switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2200, DownloadMbps: 50, UploadMbps: 10}}

	holder, err := d.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.lock(ctx); err != nil {
		t.Fatal(err)
	}
	err = d.Write(ctx, port, want)
	if !errors.Is(err, switches.ErrUnavailable) || !strings.Contains(err.Error(), "lock-denied") {
		t.Fatalf("write while another session holds the lock past the timeout: %v; want ErrUnavailable (lock-denied)", err)
	}

	// Released while the write waits: the write goes through.
	go func() {
		time.Sleep(500 * time.Millisecond)
		holder.close()
	}()
	if err := d.Write(ctx, port, want); err != nil {
		t.Fatalf("write after the lock is released: %v", err)
	}
	if got, err := d.Read(ctx, port); err != nil || got != want {
		t.Fatalf("read %v, %v; want %v", got, err, want)
	}
}
