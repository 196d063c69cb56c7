package httpapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/switches"
)

// The port of every line follows the line, however requests on it interleave: the database
// keeps each port's desired state, and every switch write converges a port to it.

// kingPorts are the first-line ports of the demo that no demo line holds.
var kingPorts = []string{hashKing1205, hashKing1206}

// portOfLine is what a line's port must show once the service has settled, from the line as
// the database has it: in service while the line runs, suspended with its config while it is
// suspended, the captive portal once it ended or failed.
func portOfLine(t *testing.T, s *apptest.Service, portID string) (want, got switches.State) {
	t.Helper()
	ctx := context.Background()
	var sw, name string
	if err := s.Store.R().QueryRow(ctx, `SELECT switch_name, port_name FROM ports WHERE id = ?`, portID).Scan(&sw, &name); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Store.R().Query(ctx, `SELECT s.status, s.workflow_state, s.status_before_cancel, s.vlan, s.mac_address, v.download_mbps, v.upload_mbps
		FROM subscriptions s JOIN plan_versions v ON v.id = s.plan_version_id WHERE s.port_id = ? ORDER BY s.created_at`, portID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want = switches.CaptiveState
	for rows.Next() {
		var status, workflow, before, mac string
		var cfg switches.Config
		if err := rows.Scan(&status, &workflow, &before, &cfg.VLAN, &mac, &cfg.DownloadMbps, &cfg.UploadMbps); err != nil {
			t.Fatal(err)
		}
		cfg.MAC = mac
		if status == "CANCELLED" && workflow != "deprovisioned" {
			status = before
		}
		switch {
		case workflow == "provisioning_failed":
		case status == "ACTIVE":
			want = switches.State{Mode: switches.ModeService, Config: cfg}
		case status == "SUSPENDED" && want.Mode != switches.ModeService:
			want = switches.State{Mode: switches.ModeSuspended, Config: cfg}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	row, err := switches.ReadSimPort(ctx, s.Store.R(), sw, name)
	if err != nil {
		t.Fatalf("port %s/%s: %v", sw, name, err)
	}
	got = switches.State{Mode: switches.Mode(row.State), Config: switches.Config{VLAN: row.VLAN, DownloadMbps: row.DownloadMbps,
		UploadMbps: row.UploadMbps, MAC: row.MAC}}
	return want, got
}

func portIDOf(t *testing.T, s *apptest.Service, subscriptionID string) string {
	t.Helper()
	var id string
	if err := s.Store.R().QueryRow(context.Background(), `SELECT port_id FROM subscriptions WHERE id = ?`, subscriptionID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func checkPortsFollowLines(t *testing.T, s *apptest.Service, portIDs []string) {
	t.Helper()
	for _, id := range portIDs {
		want, got := portOfLine(t, s, id)
		if got != want {
			t.Errorf("port %s shows %v; its lines want %v", id, got, want)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND converged_version = version AND NOT unconverged`, id); n != 1 {
			t.Errorf("port %s: desired state not converged", id)
		}
	}
}

// lineAt orders a line through checkout at a port, with an external id, and returns its id.
func lineAt(t *testing.T, s *apptest.Service, locationHash, externalID string) string {
	t.Helper()
	res := complete(s, completeBody(map[string]any{"plan_version_id": planFibre500, "location_hash": locationHash, "external_subscription_id": externalID}))
	if res.Status != 200 {
		t.Fatalf("complete: %d %s", res.Status, res.Raw)
	}
	return res.JSON["subscription_id"].(string)
}

// liveLineAt is lineAt, waiting for the line's port to be live.
func liveLineAt(t *testing.T, s *apptest.Service, locationHash, externalID string) string {
	t.Helper()
	id := lineAt(t, s, locationHash, externalID)
	awaitLine(t, s, "the port to be live", id, `workflow_state = 'provisioned'`)
	return id
}

func changePlan(s *apptest.Service, sub, plan string) *apptest.Response {
	return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriptions/" + sub + "/change-plan", Headers: apptest.Key(storeKey),
		Body: map[string]string{"plan_version_id": plan}})
}

// Two plan changes of one line at the same instant: one stands, the other is refused and never
// touches the switch, so the port carries the plan that stood.
func TestRacingPlanChangesLeaveThePortOnThePlanThatStood(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		var subs, ports []string
		for i, hash := range kingPorts {
			res := (&hook{}).post(s, order(map[string]any{"location_hash": hash, "subscriber": person(fmt.Sprintf("race%d@example.ca", i))}))
			if res.Status != 201 && res.Status != 200 {
				t.Fatalf("order: %d %s", res.Status, res.Raw)
			}
			id := res.JSON["subscription_id"].(string)
			awaitLine(t, s, "the port to be live", id, `workflow_state = 'provisioned'`)
			subs, ports = append(subs, id), append(ports, portIDOf(t, s, id))
		}
		plans := []string{planFibre150, planFibre500, planFibre1000}
		for day := range 4 {
			for _, sub := range subs {
				var pair []string // the two plans the line is not on, in turn first
				for i := range plans {
					p := plans[(i+day)%len(plans)]
					if count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND plan_version_id = ?`, sub, p) == 0 {
						pair = append(pair, p)
					}
				}
				var wg sync.WaitGroup
				start := make(chan struct{})
				statuses := make([]int, 2)
				for i, plan := range pair {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						statuses[i] = changePlan(s, sub, plan).Status
					}()
				}
				close(start)
				wg.Wait()
				if ok := (statuses[0] == 200) != (statuses[1] == 200); !ok || statuses[0]+statuses[1] != 200+409 {
					t.Fatalf("day %d: statuses %v; want one 200 and one 409", day, statuses)
				}
			}
			s.Settle(t)
			checkPortsFollowLines(t, s, ports)
			s.DevClock.Advance(24 * time.Hour)
		}
	})
}

// A line suspended before its first port job ran, then restored: the restore switches the
// port on (it used to answer 409 switch_rejected forever). The job queue is not worked here, so
// the port job never runs.
func TestRestoreOfALineSuspendedBeforeItsPortCameUp(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		id := lineAt(t, s, hashKing1206, "early")
		if r := status(s, northwindSecret, "suspend", "early"); r.Status != 200 || r.JSON["subscription_status"] != "SUSPENDED" {
			t.Fatalf("suspend: %d %s", r.Status, r.Raw)
		}
		r := status(s, northwindSecret, "restore", "early")
		if r.Status != 200 || r.JSON["subscription_status"] != "ACTIVE" || r.JSON["port_changed"] != true {
			t.Fatalf("restore: %d %s", r.Status, r.Raw)
		}
		want, got := portOfLine(t, s, portIDOf(t, s, id))
		if got != want || got.Mode != switches.ModeService {
			t.Fatalf("port shows %v, want %v", got, want)
		}
	}, func(c *config.Config) { c.Workers = false })
}

// A restore the switch does not confirm is put back: 409, the line SUSPENDED, the port
// suspended, and the audit trail says both.
func TestRestoreThatTheSwitchRefusesIsPutBack(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		id := liveLineAt(t, s, hashKing1206, "shut")
		if r := status(s, northwindSecret, "suspend", "shut"); r.Status != 200 || r.JSON["port_changed"] != true {
			t.Fatalf("suspend: %d %s", r.Status, r.Raw)
		}
		setFault(s, op, "switch", "port_in_use")
		r := status(s, northwindSecret, "restore", "shut")
		setFault(s, op, "switch", "ok")
		if detail, _ := r.JSON["detail"].(string); r.Status != 409 || !strings.Contains(detail, "could not be re-opened (port_in_use)") {
			t.Fatalf("restore: %d %s", r.Status, r.Raw)
		}
		s.Settle(t)
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'SUSPENDED'`, id); n != 1 {
			t.Error("the line is not SUSPENDED")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action IN ('subscription.restored', 'subscription.restore_reverted')`, id); n != 2 {
			t.Errorf("%d audit entries for the restore and its reversal, want 2", n)
		}
		checkPortsFollowLines(t, s, []string{portIDOf(t, s, id)})
		if r := status(s, northwindSecret, "restore", "shut"); r.Status != 200 || r.JSON["port_changed"] != true {
			t.Fatalf("restore once the switch takes it: %d %s", r.Status, r.Raw)
		}
		checkPortsFollowLines(t, s, []string{portIDOf(t, s, id)})
	})
}

// Many operations at once on a few lines — orders, suspends, restores, plan changes,
// cancellations, new orders on the freed ports and days passing (deprovisioning) — end with
// every port as its lines say. SUBPROV_TEST_SEED replays a run.
func TestPortsFollowTheirLinesUnderAnyInterleaving(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SUBPROV_TEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SUBPROV_TEST_SEED: %v", err)
		}
	}
	t.Logf("seed %d (SUBPROV_TEST_SEED=%d replays it)", seed, seed)
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		var mu sync.Mutex
		n := 0
		type line struct{ ext, sub string }
		lines := make([]line, len(kingPorts)) // the newest line ordered on each port
		portIDs := map[string]bool{}
		orderOn := func(i int) int {
			mu.Lock()
			n++
			ext := fmt.Sprintf("mix-%d", n)
			mu.Unlock()
			res := complete(s, completeBody(map[string]any{"plan_version_id": planFibre500, "location_hash": kingPorts[i], "external_subscription_id": ext,
				"subscriber": person(ext + "@example.ca")}))
			if res.Status == 200 {
				if id, ok := res.JSON["subscription_id"].(string); ok {
					mu.Lock()
					lines[i] = line{ext, id}
					portIDs[portIDOf(t, s, id)] = true
					mu.Unlock()
				}
			}
			return res.Status
		}
		for i := range kingPorts {
			if st := orderOn(i); st != 200 {
				t.Fatalf("first order on port %d: %d", i, st)
			}
		}
		plans := []string{planFibre150, planFibre500, planFibre1000}
		ops := []func(r *rand.Rand, l line, i int) int{
			func(_ *rand.Rand, l line, _ int) int { return status(s, northwindSecret, "suspend", l.ext).Status },
			func(_ *rand.Rand, l line, _ int) int { return status(s, northwindSecret, "restore", l.ext).Status },
			func(r *rand.Rand, l line, _ int) int { return changePlan(s, l.sub, plans[r.IntN(len(plans))]).Status },
			func(_ *rand.Rand, l line, _ int) int {
				end := s.Clock.Now().In(time.UTC).Add(24 * time.Hour).Format(time.DateOnly)
				return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscription/" + l.sub + "/cancel", Headers: op,
					Body: map[string]string{"end_date": end}}).Status
			},
			func(_ *rand.Rand, _ line, i int) int { return orderOn(i) },
			func(_ *rand.Rand, _ line, _ int) int { s.DevClock.Advance(25 * time.Hour); return 200 },
		}
		const workers, perWorker = 4, 15
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				for range perWorker {
					i := r.IntN(len(kingPorts))
					k := r.IntN(len(ops))
					mu.Lock()
					l := lines[i]
					mu.Unlock()
					if st := ops[k](r, l, i); st >= 500 {
						t.Errorf("operation %d on port %d answered %d", k, i, st)
					}
				}
			}()
		}
		wg.Wait()
		s.DevClock.Advance(49 * time.Hour) // every cancellation reaches its end date
		s.Settle(t)
		var ids []string
		for id := range portIDs {
			ids = append(ids, id)
		}
		checkPortsFollowLines(t, s, ids)
	})
}

// A request that reports the switch's answer waits for a convergence another process makes:
// while another converger holds the port, the restore answers only once that converger
// records the switch's confirmation.
func TestARestoreWaitsForAnotherProcessConvergingThePort(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		id := liveLineAt(t, s, hashKing1206, "elsewhere")
		if r := status(s, northwindSecret, "suspend", "elsewhere"); r.Status != 200 {
			t.Fatalf("suspend: %d %s", r.Status, r.Raw)
		}
		s.Settle(t)
		portID := portIDOf(t, s, id)
		now := s.Clock.Now()
		if _, ok, err := s.Store.LeasePort(ctx, portID, "another-process", now.Add(time.Hour), now); err != nil || !ok {
			t.Fatalf("lease: %t %v", ok, err)
		}
		done := make(chan *apptest.Response, 1)
		go func() { done <- status(s, northwindSecret, "restore", "elsewhere") }()
		apptest.Eventually(t, 30*time.Second, "the restore's desired setting", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM port_states WHERE port_id = ? AND mode = 'service'`, portID) == 1
		})
		select {
		case r := <-done:
			t.Fatalf("answered while another process held the port: %d %s", r.Status, r.Raw)
		default:
		}
		c, err := s.Store.PortConvergence(ctx, portID)
		if err != nil {
			t.Fatal(err)
		}
		var sw, name string
		if err := s.Store.R().QueryRow(ctx, `SELECT switch_name, port_name FROM ports WHERE id = ?`, portID).Scan(&sw, &name); err != nil {
			t.Fatal(err)
		}
		if err := s.Provisioning.Switch.Converge(ctx, switches.Port{Switch: sw, Name: name}, switches.StateOf(c.Want)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store.FinishConverge(ctx, portID, "another-process", c.Version, "", s.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.Status != 200 || r.JSON["port_changed"] != true || r.JSON["subscription_status"] != "ACTIVE" {
				t.Fatalf("restore: %d %s", r.Status, r.Raw)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the restore did not answer once the other process converged the port")
		}
		checkPortsFollowLines(t, s, []string{portID})
	})
}

// A port job queued by an earlier version, before desired settings were kept, finds none: it
// computes the setting from the port's lines and converges it. The queue is not worked here, so
// the job runs only when the test calls it.
func TestAPortJobFromBeforePortStatesComputesTheSetting(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		id := lineAt(t, s, hashKing1206, "queued-earlier")
		if _, err := rawdb.Writer(s.Store).Exec(`DELETE FROM port_states`); err != nil {
			t.Fatal(err)
		}
		if err := s.Provisioning.ProvisionPort(context.Background(), jobs.ProvisionPort{SubscriptionID: id}, 1); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND workflow_state = 'provisioned'`, id); n != 1 {
			t.Fatal("the line is not provisioned")
		}
		checkPortsFollowLines(t, s, []string{portIDOf(t, s, id)})
	}, func(c *config.Config) { c.Workers = false })
}
