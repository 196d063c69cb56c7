package store_test

import (
	"context"
	"slices"
	"testing"

	subprov "github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestSearchSubscribersPhrasesAndWords pins the search semantics: each query word must start
// one of the customer's terms, and words typed together that stand together in some
// customer's value (a name in either order, an address, an e-mail) are matched as that phrase.
func TestSearchSubscribersPhrasesAndWords(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		seedProvider(t, s, "p2")
		people := []struct{ id, provider, first, last, email, company string }{
			{"a", "p1", "Marie", "Tremblay", "mt@example.ca", ""},
			{"b", "p1", "Marie-Claire", "Tremblay", "mct@example.ca", ""},
			{"c", "p1", "Marie", "Gagnon", "mg@example.ca", "Tremblay Design"},
			{"d", "p1", "Jean", "Tremblay", "jt@example.ca", ""},
			{"e", "p2", "Marie", "Tremblay", "other@example.ca", ""},
		}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			for _, p := range people {
				err := tx.UpsertSubscriber(ctx, &subprov.Subscriber{ID: p.id, ProviderID: p.provider,
					Holder: subprov.Contact{FirstName: p.first, LastName: p.last, Email: p.email, Company: p.company}}, now)
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"marie", []string{"a", "b", "c"}},
			{"tremblay", []string{"a", "b", "c", "d"}},
			{"Marie Tremblay", []string{"a", "b"}},   // a phrase: the name, and the compound first name's first word
			{"Tremblay, Marie", []string{"a", "b"}},  // surname first
			{"marie tremb", []string{"a", "b"}},      // the last word is a prefix
			{"tremblay marie-claire", []string{"b"}}, // the whole compound name
			{"claire", []string{"b"}},                // any word of it
			{"gagnon tremblay", []string{"c"}},       // no such phrase: each word anywhere (name, company)
			{"design marie", []string{"c"}},          // words from two values
			{"jean tremblay", []string{"d"}},         // other provider's customers never match
			{"jean gagnon", nil},                     // every word must match
			{"mt@example.ca", []string{"a"}},         // an e-mail is a phrase of its words
			{"marie tremblay example", []string{"a", "b"}},
		} {
			ids, err := s.SearchSubscribers(ctx, "p1", store.QueryTerms(tc.q), 10)
			if err != nil {
				t.Fatalf("%q: %v", tc.q, err)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tc.want) {
				t.Errorf("%q: got %v, want %v", tc.q, ids, tc.want)
			}
		}
	})
}

// TestReindexSkipsTermsIndexedBeforeTheList: a re-index skips terms the index already holds
// but the subscriber's list does not (rows indexed before the list existed) instead of failing.
func TestReindexSkipsTermsIndexedBeforeTheList(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		var sub *subprov.Subscriber
		err := s.InTx(ctx, func(tx *store.Tx) error {
			var err error
			sub, _, err = tx.EnsureSubscriber(ctx, "p1", subprov.Contact{FirstName: "Marie", LastName: "Tremblay", Email: "mt@example.ca"}, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		search := func() []string {
			t.Helper()
			ids, err := s.SearchSubscribers(ctx, "p1", store.QueryTerms("marie tremblay"), 10)
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		if got := search(); !slices.Equal(got, []string{sub.ID}) {
			t.Fatalf("after the order: %v, want [%s]", got, sub.ID)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = NULL WHERE id = ?`, sub.ID); err != nil {
				return err
			}
			return tx.ReindexSubscriber(ctx, sub.ID)
		})
		if err != nil {
			t.Fatalf("re-index over terms already indexed: %v", err)
		}
		if got := search(); !slices.Equal(got, []string{sub.ID}) {
			t.Errorf("after the re-index: %v, want [%s]", got, sub.ID)
		}
	})
}
