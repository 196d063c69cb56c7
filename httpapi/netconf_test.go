package httpapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/switches/netconf/netconftest"
)

// The provisioning job over the NETCONF driver, against netconfd behind sshd on loopback:
// netconfd killed as the job's commit reaches it leaves the port as it was and the job
// retrying (the line still provisioning); once the server is back, the retry provisions the
// line and the port carries its service. The queue is not worked: the test runs each attempt.
func TestProvisioningOverNETCONFRetriesWhenTheServerDiesMidCommit(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		srv := netconftest.Start(t)
		raw, err := netconf.New(netconf.Config{Address: srv.Addr, Username: netconftest.User, Password: netconftest.Password,
			HostKey: srv.HostKey, Model: netconf.ModelOpenConfig, DialTimeout: 5 * time.Second, OpTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		id := lineAt(t, s, hashKing1206, "netconf-mid-commit")
		var port switches.Port
		var want switches.State
		if err := s.Store.R().QueryRow(ctx, `SELECT p.switch_name, p.port_name, s.vlan, s.mac_address, v.download_mbps, v.upload_mbps
			FROM subscriptions s JOIN ports p ON p.id = s.port_id JOIN plan_versions v ON v.id = s.plan_version_id WHERE s.id = ?`, id).
			Scan(&port.Switch, &port.Name, &want.VLAN, &want.MAC, &want.DownloadMbps, &want.UploadMbps); err != nil {
			t.Fatal(err)
		}
		want.Mode = switches.ModeService
		before, err := raw.Read(ctx, port)
		if err != nil {
			t.Fatal(err)
		}
		s.Provisioning.Switch = switches.Confirmed(raw)

		// On a loaded machine an attempt may fail before its commit (a timeout): that is a
		// retry too, and the next attempt reaches the commit netconfd dies on.
		srv.KillOnCommit(1)
		attempt := 1
		for ; srv.Armed() && attempt <= 3; attempt++ {
			err = s.Provisioning.ProvisionPort(ctx, jobs.ProvisionPort{SubscriptionID: id}, attempt)
			if !errors.Is(err, switches.ErrUnavailable) {
				t.Fatalf("attempt %d with netconfd killed mid-commit: %v; want the job to retry (ErrUnavailable)", attempt, err)
			}
		}
		if srv.Armed() {
			t.Fatalf("%d attempts never reached the commit (last: %v)", attempt-1, err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioning'`, id); n != 1 {
			t.Fatal("after the failed attempt the line is no longer provisioning")
		}
		srv.StartNetconfd()
		if got, err := raw.Read(ctx, port); err != nil || got != before {
			t.Fatalf("after the failed attempt the port reads %v, %v; want it unchanged, %v", got, err, before)
		}

		if err := s.Provisioning.ProvisionPort(ctx, jobs.ProvisionPort{SubscriptionID: id}, attempt); err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioned'`, id); n != 1 {
			t.Fatal("the retry did not provision the line")
		}
		if got, err := raw.Read(ctx, port); err != nil || got != want {
			t.Fatalf("after the retry the port reads %v, %v; want %v", got, err, want)
		}
	}, func(c *config.Config) { c.Workers = false })
}

// A switch that refuses the login is a final failure, not an outage: against netconfd behind
// sshd with a wrong password, the provisioning job fails the line at its first attempt (reason
// switch_credentials, not retried), and the port's convergence job, at its first attempt too,
// marks the port unconverged with one operator ticket instead of retrying.
func TestWrongSwitchPasswordIsFinal(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		srv := netconftest.Start(t)
		raw, err := netconf.New(netconf.Config{Address: srv.Addr, Username: netconftest.User, Password: "not-the-password",
			HostKey: srv.HostKey, Model: netconf.ModelOpenConfig, DialTimeout: 5 * time.Second, OpTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s.Provisioning.Switch = switches.Confirmed(raw)
		id := lineAt(t, s, hashKing1206, "netconf-wrong-password")
		if err := s.Provisioning.ProvisionPort(ctx, jobs.ProvisionPort{SubscriptionID: id}, 1); err != nil {
			t.Fatalf("attempt 1 with a wrong password: %v; want the job decided, not retried", err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioning_failed'`, id); n != 1 {
			t.Fatal("a refused login left the line provisioning (retried) instead of failing it")
		}
		portID := portIDOf(t, s, id)
		if err := s.Provisioning.ConvergePort(ctx, jobs.ConvergePort{PortID: portID}, 1); err != nil {
			t.Fatalf("convergence attempt 1 with a wrong password: %v; want no retry", err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND unconverged`, portID); n != 1 {
			t.Error("the port is not marked unconverged after a refused login")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'operator' AND port_id = ?`, portID); n != 1 {
			t.Errorf("%d operator tickets for the port, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND failure = 'switch_credentials'`, portID); n != 1 {
			t.Error("the port's failure is not switch_credentials")
		}
	}, func(c *config.Config) { c.Workers = false })
}
