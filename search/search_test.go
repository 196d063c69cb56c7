package search_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	subprov "github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// TestSearchSubscribersPhrasesAndWords pins the search semantics: each query word must start
// one of the customer's terms, and words typed together that stand together in some
// customer's value (a name in either order, an address, an e-mail) are matched as that phrase.
func TestSearchSubscribersPhrasesAndWords(t *testing.T) {
	t.Parallel()
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
			ids := searchP1(t, s, tc.q)
			slices.Sort(ids)
			if !slices.Equal(ids, tc.want) {
				t.Errorf("%q: got %v, want %v", tc.q, ids, tc.want)
			}
		}
	})
}

// TestSearchTermsLeaveOutPrefixesOfOtherTerms: a subscriber's terms never include one that
// starts another of them (a prefix query finds the subscriber through the longer term), and
// every other term stays.
func TestSearchTermsLeaveOutPrefixesOfOtherTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		src  search.Source
		want []string
	}{
		{"a name both ways and an e-mail", search.Source{Contacts: []search.Contact{{FirstName: "Marie", LastName: "Tremblay", Email: "mt@example.ca"}}},
			// marie and tremblay start marietremblay and tremblaymarie
			[]string{"ca", "exampleca", "marietremblay", "mtexampleca", "tremblaymarie"}},
		{"a unit with its street", search.Source{CustomerNumbers: []string{"0042-117"},
			Locations: []search.Location{{Street: "12 Rue Main", City: "Laval", Unit: "12"}}},
			// 12 (the unit) starts 1212ruemain (the unit and street); the street's words start
			// the street and unit's
			[]string{"0042117", "117", "1212ruemain", "12ruemain12", "laval", "main12", "ruemain12"}},
		{"a phone in its forms", search.Source{Contacts: []search.Contact{{Phone: "+1 514-555-0123"}}},
			// its words and digit forms: none starts another
			[]string{"0123", "15145550123", "5145550123", "5550123"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.src.Terms(); !slices.Equal(got, tc.want) {
				t.Errorf("terms %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReindexDropsTermsThatStartOthers: a subscriber indexed by an earlier build, whose list and
// index rows still hold "marie" and "tremblay" beside "marietremblay" and "tremblaymarie",
// loses those two at its next re-index, and every query still finds it.
func TestReindexDropsTermsThatStartOthers(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		sub := seedMarieTremblay(t, s)
		err := s.InTx(ctx, func(tx *store.Tx) error { // as an earlier build indexed it
			for _, term := range []string{"marie", "tremblay"} {
				if _, err := tx.Exec(ctx, `INSERT INTO customer_search_terms (provider_id, term, subscriber_id) VALUES (?, ?, ?)`, "p1", term, sub.ID); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = search_terms || ' marie tremblay' WHERE id = ?`, sub.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.ReindexSubscriber(ctx, sub.ID) }); err != nil {
			t.Fatalf("re-index: %v", err)
		}
		terms, err := store.QueryStrings(ctx, s.R(), "terms", `SELECT term FROM customer_search_terms WHERE subscriber_id = ? ORDER BY term`, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		// 0000-001 is the subscriber's customer number.
		if want := []string{"0000001", "001", "ca", "exampleca", "marietremblay", "mtexampleca", "tremblaymarie"}; !slices.Equal(terms, want) {
			t.Errorf("index rows %v, want %v", terms, want)
		}
		for _, q := range []string{"marie", "tremblay", "Tremblay, Marie", "example marie"} {
			if ids := searchP1(t, s, q); !slices.Equal(ids, []string{sub.ID}) {
				t.Errorf("%q: %v, want [%s]", q, ids, sub.ID)
			}
		}
	})
}

// TestReindexSkipsTermsIndexedBeforeTheList: a re-index skips terms the index already holds
// but the subscriber's list does not (rows indexed before the list existed) instead of failing.
func TestReindexSkipsTermsIndexedBeforeTheList(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		sub := seedMarieTremblay(t, s)
		if got := searchP1(t, s, "marie tremblay"); !slices.Equal(got, []string{sub.ID}) {
			t.Fatalf("after the order: %v, want [%s]", got, sub.ID)
		}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = NULL WHERE id = ?`, sub.ID); err != nil {
				return err
			}
			return tx.ReindexSubscriber(ctx, sub.ID)
		})
		if err != nil {
			t.Fatalf("re-index over terms already indexed: %v", err)
		}
		if got := searchP1(t, s, "marie tremblay"); !slices.Equal(got, []string{sub.ID}) {
			t.Errorf("after the re-index: %v, want [%s]", got, sub.ID)
		}
	})
}

// TestReindexNewSubscriberTwiceInOneTransaction: a subscriber created in a transaction is
// indexed without the conflict check; re-indexed again in the same transaction after a change,
// it gains the new terms without a duplicate row, and is found by old and new values.
func TestReindexNewSubscriberTwiceInOneTransaction(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		var id string
		err := s.InTx(ctx, func(tx *store.Tx) error {
			sub, _, err := tx.EnsureSubscriber(ctx, "p1", subprov.Contact{FirstName: "Marie", LastName: "Tremblay", Email: "mt@example.ca"}, now)
			if err != nil {
				return err
			}
			id = sub.ID
			if err := tx.ReindexSubscriber(ctx, id); err != nil {
				return fmt.Errorf("first re-index: %w", err)
			}
			// The invoice contact is searchable: putting it re-indexes the subscriber again (and
			// the commit looks once more).
			return tx.PutInvoiceContact(ctx, id, subprov.Contact{FirstName: "Jean", LastName: "Gagnon", Email: "jg@example.ca"}, now)
		})
		if err != nil {
			t.Fatalf("order's transaction: %v", err)
		}
		for _, q := range []string{"marie tremblay", "jean gagnon", "jg@example.ca"} {
			if got := searchP1(t, s, q); !slices.Equal(got, []string{id}) {
				t.Errorf("%q: %v, want [%s]", q, got, id)
			}
		}
		rows, err := store.QueryStrings(ctx, s.R(), "terms", `SELECT term FROM customer_search_terms WHERE subscriber_id = ? ORDER BY term`, id)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := store.QueryStrings(ctx, s.R(), "list", `SELECT search_terms FROM subscribers WHERE id = ?`, id)
		if err != nil || len(listed) != 1 {
			t.Fatalf("list: %v, %v", listed, err)
		}
		if list := strings.Fields(listed[0]); !slices.Equal(rows, list) {
			t.Errorf("index rows %v, list %v", rows, list)
		}
	})
}

// seedMarieTremblay seeds provider p1 with one subscriber, Marie Tremblay (mt@example.ca,
// customer number 0000-001), indexed as the store indexes every new subscriber.
func seedMarieTremblay(t *testing.T, s *store.Store) *subprov.Subscriber {
	t.Helper()
	seedProvider(t, s, "p1")
	var sub *subprov.Subscriber
	ctx := context.Background()
	err := s.InTx(ctx, func(tx *store.Tx) error {
		var err error
		sub, _, err = tx.EnsureSubscriber(ctx, "p1", subprov.Contact{FirstName: "Marie", LastName: "Tremblay", Email: "mt@example.ca"}, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// searchP1 returns the ids an agent's query q finds among provider p1's subscribers.
func searchP1(t *testing.T, s *store.Store, q string) []string {
	t.Helper()
	ids, err := search.Subscribers(context.Background(), s.SearchR(), "p1", search.QueryTerms(q), 10)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return ids
}

// TestIDPrefix: a query is read as the start of a customer id only when it is hex with dashes
// where a UUID has them, at least 8 digits; the prefix comes back as ids are written.
func TestIDPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q, want string
		ok      bool
	}{
		{"0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", true},
		{" 0A1B2C3D-4E5F-4A6B-8C7D-8E9F0A1B2C3D ", "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", true},
		{"0a1b2c3d4e5f4a6b8c7d8e9f0a1b2c3d", "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", true},
		{"0a1b2c3d", "0a1b2c3d", true},
		{"0a1b2c3d-", "0a1b2c3d", true},
		{"0a1b2c3d-4e", "0a1b2c3d-4e", true},
		{"0a1b2c3d4e5f", "0a1b2c3d-4e5f", true},
		{"51455501", "51455501", true}, // eight digits: also a phone's, searched both ways
		{"0a1b2c3", "", false},         // seven
		{"514-555-0142", "", false},    // dashes where no UUID has them
		// Not a UUID's start, but an id a fixture could have chosen (letters and digits).
		{"0a1b2c3d--4e5f", "0a1b2c3d--4e5f", true},
		{"-0a1b2c3d", "", false},
		{"0a1b2c3g", "0a1b2c3g", true},
		{"0a1b2c3d 4e5f", "", false},
		{"0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d0", "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d0", true}, // longer than a UUID
		// An id a fixture chose: letters and digits, 8 characters or more.
		{"s1000000-0000-4000-8000-000000000001", "s1000000-0000-4000-8000-000000000001", true},
		{"S1000000", "s1000000", true},
		{"cust-00017", "cust-00017", true},
		{"s100000", "", false},  // seven
		{"tremblay", "", false}, // a name: no digit
	} {
		if got, ok := search.IDPrefix(tc.q); got != tc.want || ok != tc.ok {
			t.Errorf("IDPrefix(%q) = %q, %v; want %q, %v", tc.q, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSubscribersByIDPrefix: the provider's subscribers whose id starts with the prefix, no
// one else's, in id order.
func TestSubscribersByIDPrefix(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		seedProvider(t, s, "p2")
		ids := map[string]string{}
		for _, c := range []struct{ provider, email string }{{"p1", "a@example.ca"}, {"p1", "b@example.ca"}, {"p2", "c@example.ca"}} {
			err := s.InTx(ctx, func(tx *store.Tx) error {
				sub, _, err := tx.EnsureSubscriber(ctx, c.provider, subprov.Contact{FirstName: "A", LastName: "B", Email: c.email}, now)
				ids[c.email] = sub.ID
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, email := range []string{"a@example.ca", "b@example.ca"} {
			id := ids[email]
			for _, n := range []int{8, 13, 36} {
				got, err := search.SubscribersByIDPrefix(ctx, s.SearchR(), "p1", id[:n], 10)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(got, id) || len(got) > 2 {
					t.Errorf("prefix %q: %v, want %s", id[:n], got, id)
				}
			}
		}
		if got, err := search.SubscribersByIDPrefix(ctx, s.SearchR(), "p1", ids["c@example.ca"], 10); err != nil || len(got) != 0 {
			t.Errorf("another provider's subscriber: %v %v", got, err)
		}
	})
}

// now is the tests' clock.
var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func seedProvider(t *testing.T, s *store.Store, id string) { testdb.SeedProvider(t, s, id, now) }
