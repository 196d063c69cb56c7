package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

const benchProvider = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001" // Northwind in the demo fixture

// benchCustomers is how many customers the search benchmark loads: 5000 by default,
// SUBPROV_BENCH_CUSTOMERS for the performance issue's million.
func benchCustomers() int {
	if n, err := strconv.Atoi(os.Getenv("SUBPROV_BENCH_CUSTOMERS")); err == nil && n > 0 {
		return n
	}
	return 5000
}

// seedCustomers writes n subscribers through the store's own writes, so the search index is
// maintained as in production.
func seedCustomers(b *testing.B, st *store.Store, n int) {
	ctx := context.Background()
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fixture.Load(ctx, st, f, time.Now()); err != nil {
		b.Fatal(err)
	}
	first := []string{"Marie", "Jean", "Priya", "Liam", "Sofia", "Noah", "Emma", "Louis", "Chloé", "Omar"}
	last := []string{"Tremblay", "Gagnon", "Roy", "Côté", "Bouchard", "Gauthier", "Morin", "Lavoie", "Fortin", "Patel"}
	const batch = 500
	for start := 0; start < n; start += batch {
		err := st.InTx(ctx, func(tx *store.Tx) error {
			for i := start; i < start+batch && i < n; i++ {
				fn, ln := first[i%len(first)], last[(i/len(first))%len(last)]
				sub := &subprov.Subscriber{ID: fmt.Sprintf("bench-%08d", i), ProviderID: benchProvider,
					CustomerNumber: subprov.FormatCustomerNumber(int64(100000 + i)),
					Holder: subprov.Contact{FirstName: fn, LastName: ln, Email: fmt.Sprintf("%s.%s.%d@example.net", fn, ln, i),
						PhoneNumber: fmt.Sprintf("+1 514-%03d-%04d", 200+i/10000%800, i%10000)}}
				if err := tx.UpsertSubscriber(ctx, sub, time.Now()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchSubscribers measures agent search lookups (the index part of
// GET /partner/agent/customers/search) on each engine.
func BenchmarkSearchSubscribers(b *testing.B) {
	for _, engine := range testdb.Engines() {
		b.Run(engine, func(b *testing.B) {
			st := testdb.Open(b, testdb.URL(b, engine))
			n := benchCustomers()
			seedCustomers(b, st, n)
			queries := []string{"tremblay", "marie tremblay", "514-201-2345", "0110-000", "jean.gagnon.10", "lavoie 12"}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := queries[i%len(queries)]
				ids, err := st.SearchSubscribers(ctx, benchProvider, store.QueryTerms(q), 1000)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := st.Candidates(ctx, benchProvider, ids[:min(len(ids), 25)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
