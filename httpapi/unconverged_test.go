package httpapi_test

import (
	"context"
	"testing"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// A port whose convergence runs out of retries is marked unconverged on the operations
// surface while its line keeps the status it was given, and has one open operator ticket,
// however many times its retries run out, until that ticket is solved. The queue is not
// worked here: the test runs the port's convergence job itself, at its last attempt.
func TestAPortThatDoesNotConvergeHasOneOpenTicket(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		op := s.Operator()
		id := lineAt(t, s, hashKing1205, "stuck")
		if err := s.Provisioning.ProvisionPort(ctx, jobs.ProvisionPort{SubscriptionID: id}, 1); err != nil {
			t.Fatal(err)
		}
		portID := portIDOf(t, s, id)
		var sw, subscriber string
		if err := s.Store.R().QueryRow(ctx, `SELECT p.switch_name, s.subscriber_id FROM subscriptions s JOIN ports p ON p.id = s.port_id
			WHERE s.id = ?`, id).Scan(&sw, &subscriber); err != nil {
			t.Fatal(err)
		}
		runsOut := func() {
			t.Helper()
			if err := s.Provisioning.ConvergePort(ctx, jobs.ConvergePort{PortID: portID}, jobs.ConvergeAttempts); err != nil {
				t.Fatalf("the last attempt: %v", err)
			}
		}
		tickets := func() int {
			return count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'operator' AND port_id = ?`, portID)
		}
		shown := func() (port, line bool) {
			t.Helper()
			b := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/buildings/" + kingBuilding, Headers: op})
			for _, p := range b.JSON["ports"].([]any) {
				if p := p.(map[string]any); p["id"] == portID {
					port = p["unconverged"].(bool)
				}
			}
			a := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/subscribers/" + subscriber, Headers: op})
			for _, l := range a.JSON["lines"].([]any) {
				if l := l.(map[string]any); l["subscription_id"] == id {
					line = l["port"].(map[string]any)["unconverged"].(bool)
				}
			}
			return port, line
		}
		for i, step := range []struct {
			fault, action string
			runs          int  // times the convergence's retries run out
			solve         bool // the open ticket is solved first
			unconverged   bool
			tickets       int
		}{
			{fault: "fail", action: "suspend", runs: 3, unconverged: true, tickets: 1},
			{fault: "ok", action: "restore", runs: 1, unconverged: false, tickets: 1},
			{fault: "fail", action: "suspend", runs: 2, unconverged: true, tickets: 1}, // the first ticket is still open
			{fault: "ok", action: "restore", runs: 1, unconverged: false, tickets: 1},
			{fault: "fail", action: "suspend", runs: 1, solve: true, unconverged: true, tickets: 2},
		} {
			setFault(s, op, faults.ForSwitch(sw), step.fault)
			if step.solve {
				if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, `UPDATE tickets SET status = 'solved' WHERE port_id = ?`, portID)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string]string{"": "", "suspend": "SUSPENDED", "restore": "ACTIVE"}[step.action]
			if step.action != "" {
				status(s, northwindSecret, step.action, "stuck")
				awaitLine(t, s, "the line to be "+want, id, `status = '`+want+`'`)
			}
			for range step.runs {
				runsOut()
			}
			if want != "" {
				awaitLine(t, s, "the line to keep its status", id, `status = '`+want+`'`)
			}
			if port, line := shown(); port != step.unconverged || line != step.unconverged {
				t.Errorf("step %d: the building shows the port unconverged %t, the account %t; want %t", i, port, line, step.unconverged)
			}
			if n := tickets(); n != step.tickets {
				t.Errorf("step %d: %d operator tickets about the port, want %d", i, n, step.tickets)
			}
		}
	}, func(c *config.Config) { c.Workers = false })
}
