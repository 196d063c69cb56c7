package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/subprov/subprov/store"
)

// An order reaches its provisioning.completed webhook in three stages, each timed from the
// rows the service wrote, so a run's report says where the order → webhook time went:
//
//   - queued: the order's transaction enqueued the port.provision job until a worker took it
//     (river_job.created_at → attempted_at). River's created_at is the inserting
//     transaction's start on PostgreSQL (now()) and the insert itself on SQLite, so on
//     PostgreSQL this stage also holds the rest of the order's transaction;
//   - provisioned: the job switched the port on and its transaction activated the line
//     (attempted_at → subscriptions.activated_at, the instant inside that transaction);
//   - delivered: that transaction committed, the webhook dispatcher numbered the event and sent
//     it (activated_at → the first answered webhook_attempts.attempted_at, recorded once the
//     receiver answered).
//
// The harness's own order → webhook figure also holds the order request's time before its
// transaction began, and the receiver's side of the last send.

// stageNames are the stages in order, as the report names them.
var stageNames = [3]string{"queued for a worker", "worker to line provisioned", "provisioned to webhook delivered"}

// orderStages is one phase's three stages, each a histogram over the phase's timed orders.
type orderStages [3]*hist

// orderTimes are the instants of one order's stages; zero where the row is not there yet.
type orderTimes struct{ created, attempted, activated, delivered time.Time }

func (t orderTimes) complete() bool {
	return !t.created.IsZero() && !t.attempted.IsZero() && !t.activated.IsZero() && !t.delivered.IsZero()
}

// timeStages reads the stages of every phase's orders into the phases. The dispatcher writes
// a delivery's row just after the receiver answered, so it waits up to a few seconds for the
// rows of the deliveries the receiver counted.
func timeStages(ctx context.Context, dbURL string, phases []orderPhase) error {
	var ids []string
	var want int64
	for _, ph := range phases {
		ids = append(ids, ph.ids...)
		want += ph.toEvent.requests
	}
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		times, err := readOrderTimes(ctx, s)
		if err != nil {
			return err
		}
		var timed int64
		for _, id := range ids {
			if times[id].complete() {
				timed++
			}
		}
		if timed >= want || time.Now().After(deadline) {
			for i := range phases {
				phases[i].stages = stagesOf(times, phases[i].ids)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stagesOf is the stages of the given orders that are complete.
func stagesOf(times map[string]orderTimes, subscriptionIDs []string) orderStages {
	st := orderStages{newHist(), newHist(), newHist()}
	for _, id := range subscriptionIDs {
		t := times[id]
		if !t.complete() {
			continue // not provisioned or not delivered: the order → webhook figure counts it as missing
		}
		st[0].record(t.attempted.Sub(t.created))
		st[1].record(t.activated.Sub(t.attempted))
		st[2].record(t.delivered.Sub(t.activated))
	}
	return st
}

// readOrderTimes returns the stage instants of every provisioned line's order, by subscription
// id. It reads the provisioning jobs and the provisioning.completed events, and the lines
// those name by their primary key: on the harness's database these are the run's orders,
// however many subscribers it holds.
func readOrderTimes(ctx context.Context, s *store.Store) (map[string]orderTimes, error) {
	times := map[string]orderTimes{}
	// The first job of each line (a retried job keeps its row; a second job is a re-run).
	err := scanRows(ctx, s, `SELECT args, created_at, attempted_at FROM river_job
		WHERE kind = 'port.provision' AND attempted_at IS NOT NULL ORDER BY id`, func(scan func(...any) error) error {
		var args string
		var t orderTimes
		if err := scan(&args, &t.created, &t.attempted); err != nil {
			return err
		}
		var a struct {
			SubscriptionID string `json:"subscription_id"`
		}
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return fmt.Errorf("job args %q: %w", args, err)
		}
		if _, seen := times[a.SubscriptionID]; !seen {
			times[a.SubscriptionID] = t
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("provisioning jobs: %w", err)
	}
	// Each answered attempt (the first counts) with its line's activation; read as they are, not
	// through MIN(), which SQLite would return as text.
	err = scanRows(ctx, s, `SELECT e.subscription_id, l.activated_at, w.attempted_at
		FROM events e JOIN subscriptions l ON l.id = e.subscription_id JOIN webhook_attempts w ON w.event_id = e.id
		WHERE e.type = 'provisioning.completed' AND w.status_code BETWEEN 200 AND 299`, func(scan func(...any) error) error {
		var id string
		var activated sql.NullTime
		var delivered time.Time
		if err := scan(&id, &activated, &delivered); err != nil {
			return err
		}
		if t, ok := times[id]; ok {
			t.activated = activated.Time
			if t.delivered.IsZero() || delivered.Before(t.delivered) {
				t.delivered = delivered
			}
			times[id] = t
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delivered events: %w", err)
	}
	return times, nil
}

// scanRows runs query on the read pool and hands each row's Scan to fn.
func scanRows(ctx context.Context, s *store.Store, query string, fn func(scan func(...any) error) error) error {
	rows, err := s.R().Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
