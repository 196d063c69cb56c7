package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestWebhookEventsPages: the operators' list of webhook events walks every event once, newest
// first and, within one instant, in reverse recording order, whatever the page size; filters
// narrow it.
func TestWebhookEventsPages(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		addEventProvider(t, s, "pa")
		addEventProvider(t, s, "pb")
		a := insertEvents(t, s, "pa", 4, evT0) // one instant: recording order decides
		b := insertEvents(t, s, "pb", 2, evT0)
		later := insertEventsAt(t, s, "pb", 2, evT0.Add(time.Minute))
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			return tx.MarkEventDelivered(ctx, "pa", a[0])
		}); err != nil {
			t.Fatal(err)
		}
		rev := func(ids ...[]string) []string {
			var out []string
			for _, l := range ids {
				out = append(out, l...)
			}
			slices.Reverse(out)
			return out
		}
		for _, tt := range []struct {
			name string
			f    store.WebhookEventFilter
			want []string
		}{
			{"one provider", store.WebhookEventFilter{ProviderID: "pa"}, rev(a)},
			{"one provider's delivered", store.WebhookEventFilter{ProviderID: "pa", State: subprov.WebhookDelivered}, a[:1]},
			{"another type", store.WebhookEventFilter{ProviderID: "pb", Type: "other"}, nil},
			{"the other provider", store.WebhookEventFilter{ProviderID: "pb"}, rev(b, later)},
		} {
			for _, limit := range []int{1, 3, 50} {
				got := walk(t, s, tt.f, limit)
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s, pages of %d: %v, want %v", tt.name, limit, got, tt.want)
				}
			}
		}
		// Every provider's: the later instant first, then each instant's events newest first.
		all := walk(t, s, store.WebhookEventFilter{}, 2)
		if len(all) < 8 || !slices.Equal(all[:2], rev(later)) {
			t.Errorf("every provider's events: %v", all)
		}
		seen := map[string]bool{}
		for _, id := range all {
			if seen[id] {
				t.Errorf("%s listed twice", id)
			}
			seen[id] = true
		}
	})
}

// walk reads a list to its end, limit events a page.
func walk(t *testing.T, s *store.Store, f store.WebhookEventFilter, limit int) []string {
	t.Helper()
	var out []string
	page := subprov.Page{Limit: limit}
	for range 100 {
		evs, err := s.WebhookEvents(context.Background(), f, page)
		if err != nil {
			t.Fatal(err)
		}
		evs, next := subprov.Cut(page, evs, store.WebhookEventKey)
		for _, e := range evs {
			out = append(out, e.ID)
		}
		if next == "" {
			return out
		}
		if page, err = subprov.ParsePage(limit, true, next); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the list does not end")
	return nil
}

// insertEventsAt records n pending production events created at `at`.
func insertEventsAt(t *testing.T, s *store.Store, providerID string, n int, at time.Time) []string {
	t.Helper()
	var ids []string
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		for range n {
			e := &subprov.WebhookEvent{Event: subprov.Event{ID: store.NewID(), ProviderID: providerID, Type: "t",
				Payload: []byte(`{}`), CreatedAt: at}, DeliveryState: subprov.WebhookPending, NextAttemptAt: &at}
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

// TestWebhookEventsListReadsItsIndex: a page of the list is a range of the index in its
// order, for one provider and for all, so its cost does not grow with the events table.
func TestWebhookEventsListReadsItsIndex(t *testing.T) {
	t.Parallel()
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		deliveredHistory(t, s, "p-list", 1497, 3)
		after := []string{evT0.Format(time.RFC3339Nano), "7", "x"}
		for _, tt := range []struct {
			name string
			f    store.WebhookEventFilter
			page subprov.Page
			want string
		}{
			{"one provider", store.WebhookEventFilter{ProviderID: "p-list"}, subprov.Page{Limit: 51}, "events_provider_listed"},
			{"one provider, a later page", store.WebhookEventFilter{ProviderID: "p-list"}, subprov.Page{Limit: 51, After: after}, "events_provider_listed"},
			{"every provider", store.WebhookEventFilter{}, subprov.Page{Limit: 51}, "events_listed"},
			{"every provider, a later page", store.WebhookEventFilter{}, subprov.Page{Limit: 51, After: after}, "events_listed"},
		} {
			st := store.WebhookEventsQuery(tt.f, tt.page)
			if plan := testdb.QueryPlan(t, s, st.Query, st.Args...); !strings.Contains(plan, tt.want) {
				t.Errorf("%s: plan does not use %s:\n%s", tt.name, tt.want, plan)
			}
		}
	})
}
