package search_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// benchSubscribers is the scale of the search benchmarks: 5000 subscribers by default,
// SUBPROV_BENCH_SUBSCRIBERS for the performance issue's million (CI runs them tiny).
func benchSubscribers() int { return testdb.Scale("SUBPROV_BENCH_SUBSCRIBERS", 5000) }

// searchQueries are one query of each kind an agent types, taken from generated subscriber
// 0's rows: name, e-mail, phone digits, customer number, address, unit and street.
func searchQueries(b *testing.B, st *store.Store) map[string]string {
	var first, last, email, phone, number, street, unit string
	err := rawdb.Writer(st).QueryRowContext(context.Background(), st.Dialect.Rebind(`SELECT c.firstname, c.lastname, c.email, c.phonenumber,
			s.customer_number, b.street, u.unit_number
		FROM subscribers s JOIN contacts c ON c.subscriber_id = s.id JOIN subscriptions l ON l.subscriber_id = s.id
		JOIN buildings b ON b.id = l.building_id JOIN units u ON u.id = l.unit_id WHERE s.id = ?`), gen.SubscriberID(1, 0)).
		Scan(&first, &last, &email, &phone, &number, &street, &unit)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]string{"name": first + " " + last, "email": email, "phone": search.DigitsOnly(phone), "customer_number": number,
		"address": street, "unit": unit + " " + street}
}

// BenchmarkAgentSearch measures the agent search lookup (index range scans and the candidate
// read of GET /partner/agent/customers/search) per query kind on each engine, with its
// allocations.
func BenchmarkAgentSearch(b *testing.B) {
	testdb.EachBenchStore(b, func(b *testing.B, st *store.Store) {
		ctx := context.Background()
		if _, err := gen.Run(ctx, st, gen.Options{Subscribers: benchSubscribers(), Seed: 1, Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
		for kind, q := range searchQueries(b, st) {
			b.Run(kind, func(b *testing.B) {
				b.ReportAllocs() // a search's garbage is a good part of its CPU under load (BENCHMARKS.md)
				for b.Loop() {
					ids, err := search.Subscribers(ctx, st.SearchR(), []string{gen.ProviderID(1)}, search.QueryTerms(q), agent.MaxMatchCount+1)
					if err != nil || len(ids) == 0 {
						b.Fatalf("%q: %v %v", q, ids, err)
					}
					if _, err := search.Candidates(ctx, st.SearchR(), gen.ProviderID(1), ids[:min(len(ids), 25)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}
