package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

var evT0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func addEventProvider(t testing.TB, s *store.Store, id string) {
	t.Helper()
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.UpsertProvider(context.Background(), &subprov.Provider{ID: id, Name: id, TimeZone: "UTC", Currency: "CAD",
			WebhookSecret: "secret-" + id, WebhookURL: "https://hooks.example.com/" + id}, "evhash-"+id, "", evT0)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// insertEvents records n pending production events for the provider, due at `due`, and
// returns their ids in seq order.
func insertEvents(t testing.TB, s *store.Store, providerID string, n int, due time.Time) []string {
	t.Helper()
	var ids []string
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		ids = nil
		for range n {
			seq, err := tx.NextEventSeq(context.Background(), providerID)
			if err != nil {
				return err
			}
			e := &subprov.WebhookEvent{Event: subprov.Event{ID: store.NewID(), ProviderID: providerID, Type: "t",
				Payload: []byte(`{"n":1}`), CreatedAt: evT0}, SubscriptionID: "sub-1", Seq: seq,
				DeliveryState: subprov.WebhookPending, NextAttemptAt: &due}
			if err := tx.InsertEvent(context.Background(), e); err != nil {
				return err
			}
			ids = append(ids, e.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func eventIDs(evs []*subprov.WebhookEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func sameIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEventSeqIsPerProvider(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		a := insertEvents(t, s, "pa", 3, evT0)
		b := insertEvents(t, s, "pb", 1, evT0)
		for i, id := range a {
			if e, err := s.Event(context.Background(), "pa", id); err != nil || e.Seq != int64(i+1) {
				t.Fatalf("pa event %d: seq %v (%v)", i, e, err)
			}
		}
		e, err := s.Event(context.Background(), "pb", b[0])
		if err != nil || e.Seq != 1 || string(e.Payload) != `{"n":1}` || e.SubscriptionID != "sub-1" || !e.CreatedAt.Equal(evT0) {
			t.Fatalf("pb event = %+v (%v)", e, err)
		}
		if err := s.InTx(context.Background(), func(tx *store.Tx) error {
			_, err := tx.NextEventSeq(context.Background(), "nobody")
			return err
		}); !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("seq of an unknown provider: %v, want no rows", err)
		}
	})
}

func TestDueEventsStopAtFirstNotDue(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		ids := insertEvents(t, s, "pa", 3, evT0)
		later := insertEvents(t, s, "pa", 1, evT0.Add(time.Hour))
		tail := insertEvents(t, s, "pa", 1, evT0) // due, but behind one that is not

		tests := []struct {
			name  string
			now   time.Time
			limit int
			want  []string
		}{
			{"before anything is due", evT0.Add(-time.Second), 10, nil},
			{"the due run stops at the event not due yet", evT0, 10, ids},
			{"limit", evT0, 2, ids[:2]},
			{"once it is due, the rest follows", evT0.Add(time.Hour), 10, append(append(append([]string{}, ids...), later...), tail...)},
		}
		for _, tt := range tests {
			got, err := s.DueEvents(ctx, "pa", tt.now, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !sameIDs(eventIDs(got), tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, eventIDs(got), tt.want)
			}
		}
		if got, _ := s.DueEvents(ctx, "other", evT0.Add(time.Hour), 10); len(got) != 0 {
			t.Fatalf("another provider's due events: %v", eventIDs(got))
		}
	})
}

func TestMarkEventRetryHoldsLaterEvents(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		ids := insertEvents(t, s, "pa", 3, evT0)
		other := insertEvents(t, s, "pb", 1, evT0)
		next := evT0.Add(30 * time.Second)
		err := s.InTx(ctx, func(tx *store.Tx) error { return tx.MarkEventRetry(ctx, "pa", ids[0], next) })
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			e, err := s.Event(ctx, "pa", id)
			if err != nil {
				t.Fatal(err)
			}
			if e.NextAttemptAt == nil || !e.NextAttemptAt.Equal(next) || e.DeliveryState != subprov.WebhookPending {
				t.Errorf("event %d: next %v, state %s; want held until %v", i, e.NextAttemptAt, e.DeliveryState, next)
			}
			if want := map[bool]int{true: 1, false: 0}[i == 0]; e.Attempts != want {
				t.Errorf("event %d: attempts %d, want %d", i, e.Attempts, want)
			}
		}
		if e, _ := s.Event(ctx, "pb", other[0]); e.NextAttemptAt == nil || !e.NextAttemptAt.Equal(evT0) {
			t.Fatalf("another provider's event was held: %v", e.NextAttemptAt)
		}
		due, err := s.ProvidersWithDueEvents(ctx, evT0.Add(time.Second), time.Now(), 10)
		if err != nil || !sameIDs(due, []string{"pb"}) {
			t.Fatalf("due providers = %v (%v), want only pb", due, err)
		}

		// A later event recorded while the first waits is parked by HoldQueuedEvents.
		fresh := insertEvents(t, s, "pa", 1, evT0.Add(5*time.Second))
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.HoldQueuedEvents(ctx, "pa") }); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.Event(ctx, "pa", fresh[0]); !e.NextAttemptAt.Equal(next) {
			t.Fatalf("fresh event next = %v, want %v", e.NextAttemptAt, next)
		}
	})
}

func TestMarkEventStatesAndProviderScoping(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		ids := insertEvents(t, s, "pa", 2, evT0)

		// Another provider can neither read, mark nor file attempts under pa's event.
		if _, err := s.Event(ctx, "pb", ids[0]); !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("pb reads pa's event: %v", err)
		}
		err := s.InTx(ctx, func(tx *store.Tx) error { return tx.MarkEventDelivered(ctx, "pb", ids[0]) })
		if !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("pb marks pa's event: %v", err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertWebhookAttempt(ctx, "pb", &subprov.WebhookAttempt{ID: store.NewID(), EventID: ids[0], URL: "u", AttemptedAt: evT0})
		})
		if !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("pb files an attempt under pa's event: %v", err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			return tx.MarkEventsDelivered(ctx, "pb", []*subprov.WebhookAttempt{{ID: store.NewID(), EventID: ids[0], URL: "u", AttemptedAt: evT0}})
		})
		if !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("pb records a delivery of pa's event: %v", err)
		}
		if ev, err := s.Event(ctx, "pa", ids[0]); err != nil || ev.DeliveryState != subprov.WebhookPending || ev.Attempts != 0 {
			t.Fatalf("pa's event after pb's attempts: %+v, %v; want pending, no attempt", ev, err)
		}

		attempts := []*subprov.WebhookAttempt{
			{ID: store.NewID(), EventID: ids[0], URL: "https://x", StatusCode: 0, LatencyMS: 10000, Error: "timeout", AttemptedAt: evT0},
			{ID: store.NewID(), EventID: ids[0], URL: "https://x", StatusCode: 204, LatencyMS: 12, AttemptedAt: evT0.Add(time.Minute)},
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			for _, a := range attempts {
				if err := tx.InsertWebhookAttempt(ctx, "pa", a); err != nil {
					return err
				}
			}
			if err := tx.MarkEventDelivered(ctx, "pa", ids[0]); err != nil {
				return err
			}
			return tx.MarkEventFailed(ctx, "pa", ids[1])
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.WebhookAttempts(ctx, "pa", ids[0])
		if err != nil || len(got) != 2 {
			t.Fatalf("attempts = %v (%v)", got, err)
		}
		if got[0].StatusCode != 0 || got[0].Error != "timeout" || got[0].LatencyMS != 10000 || got[1].StatusCode != 204 ||
			!got[1].AttemptedAt.Equal(evT0.Add(time.Minute)) {
			t.Fatalf("attempts = %+v, %+v", got[0], got[1])
		}
		if other, _ := s.WebhookAttempts(ctx, "pb", ids[0]); len(other) != 0 {
			t.Fatalf("pb sees %d attempts of pa's event", len(other))
		}
		for id, want := range map[string]string{ids[0]: subprov.WebhookDelivered, ids[1]: subprov.WebhookFailed} {
			e, _ := s.Event(ctx, "pa", id)
			if e.DeliveryState != want || e.NextAttemptAt != nil || e.Attempts != 1 {
				t.Errorf("event %s: %s, next %v, attempts %d; want %s, none, 1", id, e.DeliveryState, e.NextAttemptAt, e.Attempts, want)
			}
		}
		if due, _ := s.DueEvents(ctx, "pa", evT0.Add(time.Hour), 10); len(due) != 0 {
			t.Fatalf("settled events still due: %v", eventIDs(due))
		}
	})
}

func TestWebhookLease(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		now := evT0
		steps := []struct {
			name   string
			holder string
			at     time.Time
			want   bool
		}{
			{"free lease is taken", "h1", now, true},
			{"live lease is refused", "h2", now.Add(59 * time.Second), false},
			{"holder itself cannot re-take a live lease", "h1", now.Add(time.Second), false},
			{"expired lease is taken over", "h2", now.Add(61 * time.Second), true},
		}
		for _, st := range steps {
			got, err := s.AcquireWebhookLease(ctx, "pa", st.holder, st.at, st.at.Add(60*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got != st.want {
				t.Fatalf("%s: got %v", st.name, got)
			}
		}
		// h1 lost its lease; its release must not free h2's.
		if err := s.ReleaseWebhookLease(ctx, "pa", "h1"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.AcquireWebhookLease(ctx, "pa", "h3", now.Add(62*time.Second), now.Add(120*time.Second)); got {
			t.Fatal("a stale holder's release freed the live lease")
		}
		if err := s.ReleaseWebhookLease(ctx, "pa", "h2"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.AcquireWebhookLease(ctx, "pa", "h3", now.Add(62*time.Second), now.Add(120*time.Second)); !got {
			t.Fatal("a released lease could not be taken")
		}
	})
}

func TestProvidersWithDueEventsSkipsLeased(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		addEventProvider(t, s, "pc")
		insertEvents(t, s, "pa", 2, evT0)
		insertEvents(t, s, "pb", 1, evT0)
		insertEvents(t, s, "pc", 1, evT0.Add(time.Hour))
		leaseNow := time.Now().UTC()
		if ok, err := s.AcquireWebhookLease(ctx, "pb", "h", leaseNow, leaseNow.Add(time.Minute)); err != nil || !ok {
			t.Fatal(ok, err)
		}
		got, err := s.ProvidersWithDueEvents(ctx, evT0, leaseNow, 10)
		if err != nil || !sameIDs(got, []string{"pa"}) {
			t.Fatalf("due providers = %v (%v), want pa (pb is being flushed, pc is not due)", got, err)
		}
		got, _ = s.ProvidersWithDueEvents(ctx, evT0.Add(time.Hour), leaseNow.Add(2*time.Minute), 10)
		if len(got) != 3 {
			t.Fatalf("later: due providers = %v, want all three", got)
		}
	})
}

func TestEventsOfProviderNewestFirst(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		ids := insertEvents(t, s, "pa", 3, evT0)
		insertEvents(t, s, "pb", 2, evT0)
		got, err := s.EventsOfProvider(context.Background(), "pa", 2)
		if err != nil || !sameIDs(eventIDs(got), []string{ids[2], ids[1]}) {
			t.Fatalf("EventsOfProvider = %v (%v)", eventIDs(got), err)
		}
	})
}

// deliveredHistory records a new provider's production events, the first delivered of them
// delivered and the pending others not, and returns the pending ones' ids in seq order.
func deliveredHistory(t testing.TB, s *store.Store, providerID string, delivered, pending int) []string {
	t.Helper()
	addEventProvider(t, s, providerID)
	ids := insertEvents(t, s, providerID, delivered+pending, evT0)
	ctx := context.Background()
	err := s.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE events SET delivery_state = 'delivered' WHERE provider_id = ? AND seq <= ?`, providerID, delivered)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids[delivered:]
}

// TestEventsNumberedWhenRecordedOnSQLiteOnly: on SQLite, whose recording transactions commit
// one at a time, a pending production event without a seq is numbered as it is recorded,
// after the provider's highest seq; on PostgreSQL it waits for the webhook flusher
// (SequenceEvents). An event never flushed (no endpoint) and one given its seq keep theirs.
// The rows run in order: each is numbered after the ones before it.
func TestEventsNumberedWhenRecordedOnSQLiteOnly(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		insertEvents(t, s, "pa", 2, evT0) // seq 1 and 2
		tests := []struct {
			name, provider, state string
			seq                   int64 // given
			wantSQLite, wantPG    int64
		}{
			{"pending", "pa", subprov.WebhookPending, 0, 3, 0},
			{"the next pending", "pa", subprov.WebhookPending, 0, 4, 0},
			{"another provider's first", "pb", subprov.WebhookPending, 0, 1, 0},
			{"no endpoint", "pa", subprov.WebhookNoEndpoint, 0, 0, 0},
			{"given a seq", "pa", subprov.WebhookPending, 9, 9, 9},
			{"pending after it", "pa", subprov.WebhookPending, 0, 10, 0},
		}
		for _, tt := range tests {
			e := &subprov.WebhookEvent{Event: subprov.Event{ID: store.NewID(), ProviderID: tt.provider, Type: "t",
				Payload: []byte(`{}`), CreatedAt: evT0}, Seq: tt.seq, DeliveryState: tt.state}
			if tt.state == subprov.WebhookPending {
				e.NextAttemptAt = &evT0
			}
			if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InsertEvent(ctx, e) }); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got, err := s.Event(ctx, tt.provider, e.ID)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			want := tt.wantSQLite
			if s.Dialect == store.Postgres {
				want = tt.wantPG
			}
			if got.Seq != want {
				t.Errorf("%s: seq %d, want %d", tt.name, got.Seq, want)
			}
		}
	})
}

// TestMigrationNumbersEventsLeftUnnumbered: on SQLite, migration 0018 numbers the pending
// production events an earlier version left for its flusher to number (seq 0), per provider,
// in recording order after the provider's highest seq, as the flusher would have; the next
// event recorded follows them. Other events keep seq 0.
func TestMigrationNumbersEventsLeftUnnumbered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testdb.Open(t, testdb.MigratedURL(t, "sqlite", testdb.StoreSchema))
	addEventProvider(t, s, "pa")
	addEventProvider(t, s, "pb")
	insertEvents(t, s, "pa", 3, evT0) // seq 1 to 3
	left := []struct {
		id, provider, state string
		rec                 int
		want                int64
	}{
		{"left-c", "pa", subprov.WebhookPending, 10, 4},
		{"left-a", "pa", subprov.WebhookPending, 11, 5},
		{"left-none", "pa", subprov.WebhookNoEndpoint, 12, 0},
		{"left-b", "pa", subprov.WebhookPending, 13, 6},
		{"left-pb", "pb", subprov.WebhookPending, 1, 1},
	}
	for _, e := range left {
		_, err := rawdb.Writer(s).ExecContext(ctx, `INSERT INTO events (id, provider_id, type, payload, sandbox, delivery_state, attempts,
			next_attempt_at, created_at, seq, rec) VALUES (?, ?, 't', '{}', FALSE, ?, 0, ?, ?, 0, ?)`,
			e.id, e.provider, e.state, evT0, evT0, e.rec)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rawdb.Writer(s).ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = 18`); err != nil {
		t.Fatal(err)
	}
	if applied, err := s.Migrate(ctx); err != nil || len(applied) != 1 {
		t.Fatalf("migrate applied %v (%v), want 0018 alone", applied, err)
	}
	for _, e := range left {
		if got, err := s.Event(ctx, e.provider, e.id); err != nil || got.Seq != e.want {
			t.Errorf("%s: seq %v (%v), want %d", e.id, got, err, e.want)
		}
	}
	next := &subprov.WebhookEvent{Event: subprov.Event{ID: store.NewID(), ProviderID: "pa", Type: "t", Payload: []byte(`{}`),
		CreatedAt: evT0}, DeliveryState: subprov.WebhookPending, NextAttemptAt: &evT0}
	if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.InsertEvent(ctx, next) }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Event(ctx, "pa", next.ID); err != nil || got.Seq != 7 {
		t.Errorf("the next event: %v (%v), want seq 7", got, err)
	}
}
