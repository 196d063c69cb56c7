package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/switches"
)

// place is a first-line suite with its own port, made for one test case.
type place struct {
	unit, hash string
	port       switches.Port
}

func newPlace(t *testing.T, s *apptest.Service, n int) place {
	t.Helper()
	suite := fmt.Sprint(n)
	hash := "lh_place_" + suite
	return place{unit: addPort(t, s, suite, hash), hash: hash, port: switches.Port{Switch: "mtl-king-sw1", Name: "ge-0/0/" + suite}}
}

// conflictCode is the code of a refused order: the detail's leading code on a single order, the
// item's error code in a bulk answer.
func conflictCode(res *apptest.Response) (int, string) {
	if items, ok := res.JSON["results"].([]any); ok && len(items) == 1 {
		it := items[0].(map[string]any)
		code := ""
		if e, ok := it["error"].(map[string]any); ok {
			code, _ = e["code"].(string)
		}
		return int(it["status_code"].(float64)), code
	}
	d, _ := res.JSON["detail"].(string)
	code, _, _ := strings.Cut(d, ":")
	return res.Status, code
}

func cancelLine(t *testing.T, s *apptest.Service, op map[string]string, id, end string) {
	t.Helper()
	res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscription/" + id + "/cancel", Headers: op, Body: map[string]string{"end_date": end}})
	if res.Status != 200 {
		t.Fatalf("cancel %s: %d %s", id, res.Status, res.Raw)
	}
}

// TestALineHoldsItsPlace: a suite and its port are one place. A line holds it while it is
// pending, active or suspended, and after a cancellation until the deprovisioner has reset the
// port; every path that creates a line answers 409 location_in_use meanwhile and writes nothing,
// whichever delivery mode either order used.
func TestALineHoldsItsPlace(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)) // 10:00 in Toronto
		h := &hook{}
		holders := map[string]func(t *testing.T, p place, email string) string{
			"a direct line": func(t *testing.T, p place, email string) string {
				return h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person(email)})).JSON["subscription_id"].(string)
			},
			"a pending install": func(t *testing.T, p place, email string) string {
				return h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": p.unit, "subscriber": person(email)})).JSON["subscription_id"].(string)
			},
			"an installed suite": func(t *testing.T, p place, email string) string {
				id := h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": p.unit, "subscriber": person(email)})).JSON["subscription_id"].(string)
				if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/confirm-install", Headers: apptest.Key(storeKey),
					Body: map[string]string{"subscription_id": id}}); res.Status != 200 {
					t.Fatalf("confirm install: %d %s", res.Status, res.Raw)
				}
				return id
			},
			"a line cancelled for a later day": func(t *testing.T, p place, email string) string {
				id := h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person(email)})).JSON["subscription_id"].(string)
				cancelLine(t, s, s.Operator(), id, "2026-11-25")
				return id
			},
		}
		orders := map[string]func(t *testing.T, p place, email string, n int) *apptest.Response{
			"provider-initiated direct": func(t *testing.T, p place, email string, _ int) *apptest.Response {
				return h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person(email)}))
			},
			"provider-initiated home_drop": func(t *testing.T, p place, email string, _ int) *apptest.Response {
				return h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": p.unit, "subscriber": person(email)}))
			},
			"bulk home_drop": func(t *testing.T, p place, email string, _ int) *apptest.Response {
				return s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/bulk", Headers: apptest.Key(storeKey), Body: map[string]any{"orders": []any{
					order(map[string]any{"delivery_mode": "home_drop", "unit_id": p.unit, "subscriber": person(email)})}}})
			},
			"complete at the port": func(t *testing.T, p place, email string, _ int) *apptest.Response {
				return complete(s, map[string]any{"plan_version_id": planFibre500, "location_hash": p.hash, "subscriber": person(email)})
			},
			"complete of a session for the suite": func(t *testing.T, p place, email string, _ int) *apptest.Response {
				sess := session(t, s, map[string]any{"unit_id": p.unit, "delivery_mode": "home_drop"})
				return complete(s, map[string]any{"session_id": sess, "subscriber": person(email)})
			},
			"anonymous-complete at the port": func(t *testing.T, p place, email string, n int) *apptest.Response {
				return anonymous(s, map[string]any{"external_subscription_id": fmt.Sprint("anon-place-", n), "service_provider_document_id": "nwf-spd-2026",
					"plan_version_id": planFibre500, "location_hash": p.hash, "delivery_mode": "direct", "contact_email": email})
			},
		}
		tests := []struct {
			holder, order  string
			sameSubscriber bool
		}{
			{"an installed suite", "provider-initiated direct", false},
			{"a direct line", "provider-initiated home_drop", false},
			{"a direct line", "provider-initiated direct", false},
			{"a pending install", "provider-initiated direct", false},
			{"a line cancelled for a later day", "provider-initiated direct", false},
			{"a line cancelled for a later day", "provider-initiated home_drop", false},
			{"a line cancelled for a later day", "provider-initiated direct", true},
			{"a direct line", "bulk home_drop", false},
			{"an installed suite", "complete at the port", false},
			{"a direct line", "complete of a session for the suite", false},
			{"a line cancelled for a later day", "anonymous-complete at the port", false},
			{"an installed suite", "anonymous-complete at the port", false},
		}
		for i, tt := range tests {
			name := fmt.Sprintf("%s, then %s", tt.holder, tt.order)
			if tt.sameSubscriber {
				name += " by the same subscriber"
			}
			t.Run(name, func(t *testing.T) {
				p := newPlace(t, s, 1300+i)
				holder := fmt.Sprintf("holder%d@example.ca", i)
				held := holders[tt.holder](t, p, holder)
				intruder := fmt.Sprintf("other%d@example.ca", i)
				if tt.sameSubscriber {
					intruder = holder
				}
				jobs := count(t, s, `SELECT COUNT(*) FROM install_jobs`)
				res := orders[tt.order](t, p, intruder, i)
				if status, code := conflictCode(res); status != 409 || code != "location_in_use" {
					t.Fatalf("second order: %d %s, want 409 location_in_use", status, res.Raw)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ?`, p.unit); n != 1 {
					t.Fatalf("%d lines on the suite, want only %s", n, held)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM install_jobs`); n != jobs {
					t.Fatal("the refused order opened an install job")
				}
			})
		}
	})
}

// TestAnEndedLineFreesItsPlace: a cancelled line keeps its suite and port until ended_at,
// when the deprovisioner resets the port; only then can someone else order there, and the new
// line's service is not cut by the old line's end.
func TestAnEndedLineFreesItsPlace(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC))
		h := &hook{}
		p := newPlace(t, s, 1350)
		first := h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person("leaving@example.ca")}))
		id := first.JSON["subscription_id"].(string)
		awaitLine(t, s, "the first line live", id, `workflow_state = 'provisioned'`)
		cancelLine(t, s, s.Operator(), id, "2026-11-25")
		if res := h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person("arriving@example.ca")})); res.Status != 409 {
			t.Fatalf("order while the first line still has service: %d %s", res.Status, res.Raw)
		}
		s.DevClock.Set(time.Date(2026, 11, 25, 5, 0, 1, 0, time.UTC))
		awaitLine(t, s, "the first line deprovisioned", id, `deprovisioned_at IS NOT NULL`)
		next := h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person("arriving@example.ca")}))
		if next.Status != 200 || next.JSON["status"] != "ACTIVE" {
			t.Fatalf("order after the end: %d %s", next.Status, next.Raw)
		}
		nid := next.JSON["subscription_id"].(string)
		awaitLine(t, s, "the new line live", nid, `workflow_state = 'provisioned'`)
		sim, _ := switches.AsSim(s.Provisioning.Switch)
		s.DevClock.Advance(time.Hour)
		s.Settle(t) // the deprovision sweep has run at the new time
		if st, err := sim.Read(context.Background(), p.port); err != nil || st.Mode != switches.ModeService {
			t.Fatalf("the new line's port %+v %v", st, err)
		}
	})
}

// TestOrdersRaceForOnePlace: concurrent orders by different people for one suite, half at its
// port (direct) and half for the suite (home_drop), create exactly one line; every other order
// is 409 location_in_use. The unique index decides, not a read before the write.
func TestOrdersRaceForOnePlace(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := &hook{}
		p := newPlace(t, s, 1360)
		res := concurrently(16, func(i int) *apptest.Response {
			who := person(fmt.Sprintf("racer%d@example.ca", i))
			if i%2 == 1 {
				return h.post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": p.unit, "subscriber": who}))
			}
			return h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": who}))
		})
		won := 0
		for i, r := range res {
			switch status, code := conflictCode(r); {
			case status == 200:
				won++
			case status != 409 || code != "location_in_use":
				t.Errorf("order %d: %d %s", i, r.Status, r.Raw)
			}
		}
		if won != 1 {
			t.Errorf("%d orders won the suite, want 1", won)
		}
		if got := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE unit_id = ?`, p.unit); got != 1 {
			t.Errorf("%d lines on the suite, want 1", got)
		}
	})
}

// TestAnEndingLineLeavesAnotherLinesPortAlone: a database from before the one-holder rule may
// hold a place twice (migration 0022 keeps such lines under a key of their own). When the
// cancelled one of them ends, the deprovisioner does not reset the port the other line's
// service runs on; it asks an operator to look instead.
func TestAnEndingLineLeavesAnotherLinesPortAlone(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.DevClock.Set(time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC))
		h := &hook{}
		p := newPlace(t, s, 1370)
		old := h.post(s, order(map[string]any{"location_hash": p.hash, "subscriber": person("old.tenant@example.ca")})).JSON["subscription_id"].(string)
		awaitLine(t, s, "the old line live", old, `workflow_state = 'provisioned'`)
		cancelLine(t, s, s.Operator(), old, "2026-11-25")
		// The second line an older version let in, at the same suite and port, live on the port.
		_, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id, building_id,
				unit_id, port_id, location_key, status, workflow_state, delivery_mode, source, created_at, updated_at)
			SELECT 'double-line', provider_id, subscriber_id, plan_version_id, building_id, unit_id, port_id, 'double-booked:double-line',
				'ACTIVE', 'provisioned', 'direct', 'test', created_at, updated_at FROM subscriptions WHERE id = ?`), old)
		if err != nil {
			t.Fatal(err)
		}
		s.DevClock.Set(time.Date(2026, 11, 25, 5, 0, 1, 0, time.UTC))
		awaitLine(t, s, "the old line deprovisioned", old, `deprovisioned_at IS NOT NULL`)
		sim, _ := switches.AsSim(s.Provisioning.Switch)
		if st, err := sim.Read(context.Background(), p.port); err != nil || st.Mode != switches.ModeService {
			t.Fatalf("the other line's port was reset: %+v %v", st, err)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM tickets WHERE kind = 'operator' AND internal_note LIKE ?`, "%double-line%"); n != 1 {
			t.Fatalf("%d operator tickets naming the other line, want 1", n)
		}
	})
}
