package gen_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/testdb"
)

// BenchmarkGen generates genSize() subscribers for one provider per iteration on each engine
// (SUBPROV_GEN_SUBSCRIBERS sets the scale): profile it with -cpuprofile.
func BenchmarkGen(b *testing.B) {
	n := genSize()
	for _, engine := range testdb.Engines() {
		b.Run(engine, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				st := testdb.Open(b, testdb.URL(b, engine))
				b.StartTimer()
				if _, err := gen.Run(context.Background(), st, gen.Options{Subscribers: n, Seed: 1, Now: time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/(float64(b.Elapsed().Seconds())/float64(b.N)), "subscribers/s")
		})
	}
}
