package search_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// TestSearchCards pins the search card against the rows it summarises: the cards subprov gen
// writes and those ReindexSubscriber writes are the same text, Candidates reads from a card
// exactly what it reads through the join for a subscriber without one, and a contact change
// rewrites the card.
func TestSearchCards(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := gen.Run(ctx, s, gen.Options{Subscribers: 30, Seed: 3, Now: now}); err != nil {
			t.Fatal(err)
		}
		provider := gen.ProviderID(1)
		var ids []string
		for n := 0; n < 12; n++ {
			ids = append(ids, gen.SubscriberID(1, n))
		}
		// Subscriber 4 gets a second, newer line, in subscriber 7's suite, so that cards and
		// rows must agree on several locations and their order.
		var firstLine string
		err := s.InTx(ctx, func(tx *store.Tx) error {
			mine, err := s.SubscriptionsOfSubscriber(ctx, provider, ids[4])
			if err != nil {
				return err
			}
			firstLine = mine[0].ID
			theirs, err := s.SubscriptionsOfSubscriber(ctx, provider, ids[7])
			if err != nil {
				return err
			}
			line := *mine[0]
			line.ID, line.Status, line.PortID = store.NewID(), subprov.StatusCancelled, ""
			line.BuildingID, line.UnitID = theirs[0].BuildingID, theirs[0].UnitID
			// An ended line: the suite is subscriber 7's now (a fixture's CANCELLED line holds no place).
			return tx.UpsertSubscription(ctx, &line, now.Add(time.Hour))
		})
		if err != nil {
			t.Fatal(err)
		}
		cards := func() map[string]*string {
			out := map[string]*string{}
			for _, id := range ids {
				var card *string
				if err := rawdb.Writer(s).QueryRowContext(ctx, s.Dialect.Rebind(`SELECT search_card FROM subscribers WHERE id = ?`), id).Scan(&card); err != nil {
					t.Fatal(err)
				}
				out[id] = card
			}
			return out
		}
		generated := cards()
		fromCards, err := search.Candidates(ctx, s.SearchR(), provider, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(fromCards) != len(ids) || len(fromCards[0].Locations) != 1 || fromCards[0].Holder.Email == "" || fromCards[0].CustomerNumber == "" {
			t.Fatalf("candidates from cards: %+v", fromCards)
		}
		if l := fromCards[4].Locations; len(l) != 2 || l[0].UnitNumber != fromCards[7].Locations[0].UnitNumber || l[1].SubscriptionID != firstLine {
			t.Fatalf("subscriber 4's lines, newest first: %+v", l)
		}

		// A page keeps the order of its ids whatever the rows' order, mixing subscribers with
		// and without a card, leaves out an id the provider does not have and answers a
		// repeated id once, at its first place.
		if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`UPDATE subscribers SET search_card = NULL WHERE id IN (?, ?)`), ids[1], ids[4]); err != nil {
			t.Fatal(err)
		}
		page := []string{ids[5], ids[4], "9e000000-0000-4000-8000-000000000999", ids[0], ids[5], ids[1]}
		mixed, err := search.Candidates(ctx, s.SearchR(), provider, page)
		if err != nil {
			t.Fatal(err)
		}
		if want := []subprov.SubscriberMatch{fromCards[5], fromCards[4], fromCards[0], fromCards[1]}; !reflect.DeepEqual(mixed, want) {
			t.Fatalf("page %v:\ngot  %+v\nwant %+v", page, mixed, want)
		}

		// Without cards, the same candidates come from the join.
		if _, err := rawdb.Writer(s).ExecContext(ctx, `UPDATE subscribers SET search_card = NULL`); err != nil {
			t.Fatal(err)
		}
		fromRows, err := search.Candidates(ctx, s.SearchR(), provider, ids)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromCards, fromRows) {
			t.Fatalf("cards and rows disagree:\ncards %+v\nrows  %+v", fromCards, fromRows)
		}

		// Re-indexing writes gen's card again; a holder change rewrites it.
		changed := subprov.Contact{FirstName: "Zoé", LastName: "Nouveau", Email: fromCards[3].Holder.Email, PhoneNumber: "+1 514-555-0199"}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			for i, id := range ids {
				if i == 3 {
					if err := tx.UpdateHolderContact(ctx, id, changed, now); err != nil {
						return err
					}
					continue
				}
				if err := tx.ReindexSubscriber(ctx, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		reindexed := cards()
		for i, id := range ids {
			switch {
			case reindexed[id] == nil:
				t.Errorf("subscriber %d: no card after re-indexing", i)
			case i != 3 && *reindexed[id] != *generated[id]:
				t.Errorf("subscriber %d: re-indexed card %s, gen wrote %s", i, *reindexed[id], *generated[id])
			case i == 3 && *reindexed[id] == *generated[id]:
				t.Errorf("subscriber 3: card unchanged after a holder change")
			}
		}
		after, err := search.Candidates(ctx, s.SearchR(), provider, ids[3:4])
		if err != nil {
			t.Fatal(err)
		}
		want := fromCards[3]
		want.Holder = subprov.Contact{FirstName: changed.FirstName, LastName: changed.LastName, Email: changed.Email, PhoneNumber: changed.PhoneNumber}
		if len(after) != 1 || !reflect.DeepEqual(after[0], want) {
			t.Errorf("after the holder change: %+v, want %+v", after, want)
		}
		// A building's new address and a suite's new number reach the cards (and the search
		// terms) of the subscribers with a line there; an unchanged upsert re-indexes nothing.
		loc := fromCards[0].Locations[0]
		b, err := s.Building(ctx, loc.BuildingID)
		if err != nil {
			t.Fatal(err)
		}
		var unitID string
		if err := rawdb.Writer(s).QueryRowContext(ctx, s.Dialect.Rebind(`SELECT unit_id FROM subscriptions WHERE id = ?`), loc.SubscriptionID).Scan(&unitID); err != nil {
			t.Fatal(err)
		}
		b.Street = "77 Rue Renommée"
		err = s.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.UpsertBuilding(ctx, b, "renamed", now); err != nil {
				return err
			}
			return tx.UpsertUnit(ctx, &subprov.Unit{ID: unitID, BuildingID: b.ID, UnitNumber: "9901"}, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		moved, err := search.Candidates(ctx, s.SearchR(), provider, ids[:1])
		if err != nil || len(moved) != 1 || len(moved[0].Locations) != 1 {
			t.Fatalf("after the move: %+v, %v", moved, err)
		}
		if got := moved[0].Locations[0]; got.Street != "77 Rue Renommée" || got.UnitNumber != "9901" {
			t.Errorf("after the move the card shows %q unit %q", got.Street, got.UnitNumber)
		}
		found, err := search.Subscribers(ctx, s.SearchR(), []string{provider}, search.QueryTerms("9901 Rue Renommee"), 10)
		if err != nil || !slices.Contains(found, ids[0]) {
			t.Errorf("search by the new address: %v, %v", found, err)
		}

		// Another provider's subscribers are never candidates.
		if other, err := search.Candidates(ctx, s.SearchR(), "9e000000-0000-4000-8000-000000000999", ids); err != nil || len(other) != 0 {
			t.Errorf("another provider: %+v, %v", other, err)
		}
	})
}
