package search_test

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
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

// TestReindexFollowsTheSubscriber: a change to a subscriber's values re-indexes it in the
// change's transaction: the old values no longer find it, the new ones do, once.
func TestReindexFollowsTheSubscriber(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		sub := seedMarieTremblay(t, s)
		err := s.InTx(ctx, func(tx *store.Tx) error {
			return tx.UpdateHolderContact(ctx, sub.ID, subprov.Contact{FirstName: "Marie", LastName: "Gagnon", Email: "mt@example.ca"}, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"marie gagnon", []string{sub.ID}},
			{"gagnon", []string{sub.ID}},
			{"0000-001", []string{sub.ID}},
			{"tremblay", nil},
			{"marie tremblay", nil},
		} {
			if ids := searchP1(t, s, tc.q); !slices.Equal(ids, tc.want) {
				t.Errorf("%q: %v, want %v", tc.q, ids, tc.want)
			}
		}
	})
}

// TestReindexOverARowListingNoTerms: a subscriber whose row lists no terms (as one written
// before the index existed, or whose list was cleared) is indexed at its next re-index, and
// found once.
func TestReindexOverARowListingNoTerms(t *testing.T) {
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
			t.Fatalf("re-index: %v", err)
		}
		if got := searchP1(t, s, "marie tremblay"); !slices.Equal(got, []string{sub.ID}) {
			t.Errorf("after the re-index: %v, want [%s]", got, sub.ID)
		}
	})
}

// TestReindexNewSubscriberTwiceInOneTransaction: a subscriber created in a transaction and
// re-indexed again in it after a change is found once, by old and new values.
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
		for _, q := range []string{"marie tremblay", "jean gagnon", "jg@example.ca", "example"} {
			if got := searchP1(t, s, q); !slices.Equal(got, []string{id}) {
				t.Errorf("%q: %v, want [%s]", q, got, id)
			}
		}
	})
}

// TestSearchKeepsProvidersApartWhenTheirMarksCollide: two providers whose ids share the mark
// their index entries carry (the first six hex digits of the id's MD5) still see only their
// own customers.
func TestSearchKeepsProvidersApartWhenTheirMarksCollide(t *testing.T) {
	t.Parallel()
	const p1, p2 = "provider-406", "provider-2396"
	mark := func(id string) string { sum := md5.Sum([]byte(id)); return hex.EncodeToString(sum[:])[:6] }
	if mark(p1) != mark(p2) {
		t.Fatalf("marks %s and %s differ: pick two ids whose marks are the same", mark(p1), mark(p2))
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, p1)
		seedProvider(t, s, p2)
		err := s.InTx(ctx, func(tx *store.Tx) error {
			for i, p := range []string{p1, p2} {
				err := tx.UpsertSubscriber(ctx, &subprov.Subscriber{ID: fmt.Sprintf("sub-%d", i), ProviderID: p,
					Holder: subprov.Contact{FirstName: "Marie", LastName: "Tremblay", Email: fmt.Sprintf("mt%d@example.ca", i)}}, now)
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range []string{p1, p2} {
			for _, q := range []string{"marie tremblay", "tremblay", "example"} {
				ids, err := search.Subscribers(ctx, s.SearchR(), []string{p}, search.QueryTerms(q), 10)
				if want := []string{fmt.Sprintf("sub-%d", i)}; err != nil || !slices.Equal(ids, want) {
					t.Errorf("%s, %q: %v, %v; want %v", p, q, ids, err, want)
				}
			}
		}
	})
}

// TestSearchOverSeveralProviders: a search over several providers at once (the operations
// surface's over every provider) finds the customers of each provider named and no one else's,
// a provider sharing a named one's mark included, by every kind of query, with one statement
// for each of the search's steps however many providers are named; none named, nobody.
func TestSearchOverSeveralProviders(t *testing.T) {
	t.Parallel()
	// p1 and p2 share a mark (the first six hex digits of the id's MD5); p3 has its own.
	const p1, p2, p3 = "provider-406", "provider-2396", "provider-3"
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ids := ensureHolders(t, s, []holder{
			{p1, "Marie", "Tremblay", "marie@p1.example"},
			{p2, "Marie", "Tremblay", "marie@p2.example"},
			{p3, "Marie", "Tremblay", "marie@p3.example"},
			{p3, "Marie", "Roy", "roy@p3.example"},
			{p3, "Jean", "Tremblay", "jean@p3.example"},
		})
		for _, tc := range []struct {
			name       string
			providers  []string
			q          string
			want       []string // e-mails
			statements int
		}{
			{"a name over two providers", []string{p1, p3}, "marie tremblay", []string{"marie@p1.example", "marie@p3.example"}, 1},
			{"a name over every provider", []string{p1, p2, p3}, "marie tremblay", []string{"marie@p1.example", "marie@p2.example", "marie@p3.example"}, 1},
			{"one word", []string{p1, p3}, "tremblay", []string{"jean@p3.example", "marie@p1.example", "marie@p3.example"}, 1},
			{"an e-mail", []string{p1, p3}, "roy@p3.example", []string{"roy@p3.example"}, 1},
			{"surname first", []string{p1, p3}, "roy marie", []string{"roy@p3.example"}, 1},
			// No value holds "jeanexample": each word then starts a term of its own.
			{"words of two values", []string{p1, p2, p3}, "jean example", []string{"jean@p3.example"}, 2},
			{"a provider sharing a mark, not named", []string{p1}, "marie", []string{"marie@p1.example"}, 1},
			{"the other of the pair, two words", []string{p2, p3}, "example p2", []string{"marie@p2.example"}, 2},
			{"nobody", []string{p1, p2, p3}, "gagnon", nil, 1},
			{"no provider", []string{}, "marie", nil, 0},
		} {
			q := &countingQuerier{Querier: s.SearchR()}
			got, err := search.Match(ctx, q, tc.providers, tc.q, 10)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if q.statements != tc.statements {
				t.Errorf("%s: %d statements, want %d", tc.name, q.statements, tc.statements)
			}
			var want []string
			for _, e := range tc.want {
				want = append(want, ids[e])
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %q over %v = %v, want %v", tc.name, tc.q, tc.providers, got, want)
			}
		}
		// A customer id's start, over several providers: only the named providers' customers,
		// with one statement more (the primary key's range).
		for _, tc := range []struct {
			providers []string
			email     string
			found     bool
		}{{[]string{p1, p3}, "roy@p3.example", true}, {[]string{p1, p3}, "marie@p2.example", false}, {[]string{}, "roy@p3.example", false}} {
			id := ids[tc.email]
			q := &countingQuerier{Querier: s.SearchR()}
			got, err := search.Match(ctx, q, tc.providers, id[:13], 10)
			if err != nil || slices.Contains(got, id) != tc.found {
				t.Errorf("id of %s over %v: %v, %v; want found %v", tc.email, tc.providers, got, err, tc.found)
			}
			if want := 2 * min(len(tc.providers), 1); q.statements != want {
				t.Errorf("id of %s over %v: %d statements, want %d", tc.email, tc.providers, q.statements, want)
			}
		}
	})
}

// countingQuerier is a search.Querier that counts the statements run through it.
type countingQuerier struct {
	search.Querier
	statements int
}

func (c *countingQuerier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.statements++
	return c.Querier.Query(ctx, query, args...)
}

func (c *countingQuerier) QueryRow(ctx context.Context, query string, args ...any) search.Row {
	c.statements++
	return c.Querier.QueryRow(ctx, query, args...)
}

// TestReindexAfterOlderRelease: the subscribers a release before the engines' index created or
// changed while it ran on the database (a rollback), which it indexed in its own terms table
// only, are found by their values once this release has started again, and the table is empty.
func TestReindexAfterOlderRelease(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		marie := seedMarieTremblay(t, s)
		// As the older release writes: the rows, their list of terms and a row per new term.
		olderRelease := func(tx *store.Tx, id string, src search.Source, newTerms []string) error {
			if _, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = ? WHERE id = ?`, strings.Join(src.Terms(), " "), id); err != nil {
				return err
			}
			for _, term := range newTerms {
				if _, err := tx.Exec(ctx, `INSERT INTO customer_search_terms (provider_id, term, subscriber_id) VALUES (?, ?, ?)`, "p1", term, id); err != nil {
					return err
				}
			}
			return nil
		}
		jean := search.Source{Contacts: []search.Contact{{FirstName: "Jean", LastName: "Gagnon", Email: "jg@example.ca"}}}
		marieNow := search.Source{CustomerNumbers: []string{"0000-001"}, Contacts: []search.Contact{{FirstName: "Marie", LastName: "Lavoie", Email: "mt@example.ca"}}}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO subscribers (id, provider_id, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				"old-jean", "p1", "jg@example.ca", now, now); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO contacts (id, subscriber_id, role, firstname, lastname, email, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				"old-jean-holder", "old-jean", "holder", "Jean", "Gagnon", "jg@example.ca", now); err != nil {
				return err
			}
			if err := olderRelease(tx, "old-jean", jean, jean.Terms()); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE contacts SET lastname = 'Lavoie' WHERE subscriber_id = ?`, marie.ID); err != nil {
				return err
			}
			if err := olderRelease(tx, marie.ID, marieNow, []string{"lavoiemarie", "marielavoie"}); err != nil {
				return err
			}
			// A subscriber the table still names but no longer there: its terms only go.
			_, err := tx.Exec(ctx, `INSERT INTO customer_search_terms (provider_id, term, subscriber_id) VALUES ('p1', 'gone', 'gone-sub')`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if s.Dialect == store.SQLite { // PostgreSQL's index follows the rows whoever writes them
			if got := searchP1(t, s, "jean gagnon"); len(got) != 0 {
				t.Fatalf("before: the older release's subscriber found: %v", got)
			}
		}
		n, err := s.ReindexAfterOlderRelease(ctx)
		if err != nil || n != 3 {
			t.Fatalf("ReindexAfterOlderRelease = %d, %v; want 3", n, err)
		}
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"jean gagnon", []string{"old-jean"}},
			{"marie lavoie", []string{marie.ID}},
			{"marie tremblay", nil},
		} {
			if got := searchP1(t, s, tc.q); !slices.Equal(got, tc.want) {
				t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
			}
		}
		if left, err := store.QueryStrings(ctx, s.R(), "terms", `SELECT term FROM customer_search_terms`); err != nil || len(left) != 0 {
			t.Errorf("terms table after: %v, %v", left, err)
		}
		if n, err := s.ReindexAfterOlderRelease(ctx); err != nil || n != 0 {
			t.Errorf("again: %d, %v; want 0", n, err)
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
	ids, err := search.Subscribers(context.Background(), s.SearchR(), []string{"p1"}, search.QueryTerms(q), 10)
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
		ids := ensureHolders(t, s, []holder{{"p1", "A", "B", "a@example.ca"}, {"p1", "A", "B", "b@example.ca"}, {"p2", "A", "B", "c@example.ca"}})
		for _, email := range []string{"a@example.ca", "b@example.ca"} {
			id := ids[email]
			for _, n := range []int{8, 13, 36} {
				got, err := search.SubscribersByIDPrefix(ctx, s.SearchR(), []string{"p1"}, id[:n], 10)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(got, id) || len(got) > 2 {
					t.Errorf("prefix %q: %v, want %s", id[:n], got, id)
				}
			}
		}
		if got, err := search.SubscribersByIDPrefix(ctx, s.SearchR(), []string{"p1"}, ids["c@example.ca"], 10); err != nil || len(got) != 0 {
			t.Errorf("another provider's subscriber: %v %v", got, err)
		}
	})
}

// holder is a subscriber's holder as ensureHolders orders it: its provider, name and e-mail.
type holder struct{ provider, first, last, email string }

// ensureHolders seeds each holder's provider and orders a subscriber for each holder, as the
// store does for every new customer (indexed for search), and returns the subscribers' ids by
// e-mail.
func ensureHolders(t *testing.T, s *store.Store, holders []holder) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	for _, h := range holders {
		seedProvider(t, s, h.provider)
		err := s.InTx(ctx, func(tx *store.Tx) error {
			sub, _, err := tx.EnsureSubscriber(ctx, h.provider, subprov.Contact{FirstName: h.first, LastName: h.last, Email: h.email}, now)
			if err == nil {
				ids[h.email] = sub.ID
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// now is the tests' clock.
var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func seedProvider(t *testing.T, s *store.Store, id string) { testdb.SeedProvider(t, s, id, now) }
