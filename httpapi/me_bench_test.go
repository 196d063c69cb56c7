package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// BenchmarkMe measures GET /partner/subscriber/me through the service's whole HTTP handler
// (middleware, JWT check, account lookup, reads, JSON) in process, without the network, on
// each engine over generated data (2,000 subscribers; SUBPROV_BENCH_SUBSCRIBERS for more).
// Profile it with -cpuprofile; the load harness (go run ./bench --scenarios me) measures the
// same route over loopback against the bare net/http ceiling.
func BenchmarkMe(b *testing.B) {
	n := testdb.Scale("SUBPROV_BENCH_SUBSCRIBERS", 2000)
	const secret = "bench-secret"
	testdb.EachBenchStore(b, func(b *testing.B, st *store.Store) {
		ctx := context.Background()
		if _, err := gen.Run(ctx, st, gen.Options{Subscribers: n, Seed: 1, Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
		cfg := config.Config{Addr: "127.0.0.1:0", DatabaseURL: st.URL, MailFrom: "no-reply@localhost", SwitchDriver: "sim",
			LogFormat: "json", Secret: secret, PublicURL: "http://subprov.test", NoRateLimits: true}
		a, err := app.New(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { a.Close() })
		tok, err := identity.NewSigner(secret).Issue(identity.AudienceSubscriber, gen.AccountID(1, 0), gen.ProviderID(1), gen.AccountID(1, 0),
			time.Now(), time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/partner/subscriber/me", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			a.Handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
}
