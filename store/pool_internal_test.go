package store

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/subprov/subprov/search"
)

// poolSize takes pool_max_conns out of a PostgreSQL URL and leaves everything else as the
// driver reads it; a bad value, or a URL that does not parse, is refused without echoing the
// password.
func TestPoolSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		wantURL  string
		wantN    int
		wantErr  string
	}{
		{"absent: the URL as it is", "postgres://u:p%40ss@db:5432/x?sslmode=disable&search_path=s1",
			"postgres://u:p%40ss@db:5432/x?sslmode=disable&search_path=s1", PostgresConns, ""},
		{"set: taken out, the rest kept", "postgres://u:p%40ss@db:5432/x?sslmode=disable&pool_max_conns=3&search_path=s1",
			"postgres://u:p%40ss@db:5432/x?search_path=s1&sslmode=disable", 3, ""},
		{"the only parameter", "postgresql://db/x?pool_max_conns=12", "postgresql://db/x", 12, ""},
		{"empty", "postgres://db/x?pool_max_conns=", "", 0, "want a whole number"},
		{"zero", "postgres://db/x?pool_max_conns=0", "", 0, "want a whole number"},
		{"negative", "postgres://db/x?pool_max_conns=-2", "", 0, "want a whole number"},
		{"a word", "postgres://db/x?pool_max_conns=eight", "", 0, "want a whole number"},
		{"a fraction", "postgres://db/x?pool_max_conns=8.5", "", 0, "want a whole number"},
		{"not a URL", "postgres://u:s3cr%zzet@db/x", "", 0, "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, n, err := poolSize(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("poolSize(%q) error %v, want one saying %q", tc.in, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil || u != tc.wantURL || n != tc.wantN {
				t.Errorf("poolSize(%q) = %q, %d, %v; want %q, %d", tc.in, u, n, err, tc.wantURL, tc.wantN)
			}
		})
	}
}

// TestSearchPoolRunsGenericPlans: on PostgreSQL agent search reads through sessions that run
// prepared statements' generic plans, and only search does.
func TestSearchPoolRunsGenericPlans(t *testing.T) {
	t.Parallel()
	url := os.Getenv("SUBPROV_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("SUBPROV_TEST_POSTGRES_URL not set")
	}
	ctx := context.Background()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name string
		q    search.Querier
		want string
	}{{"search pool", s.SearchR(), "force_generic_plan"}, {"read pool", searchQuerier{s.R(), searchIndexOf(s.Dialect)}, "auto"}} {
		var mode string
		if err := tc.q.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != tc.want {
			t.Errorf("%s: plan_cache_mode %q, want %q", tc.name, mode, tc.want)
		}
	}
}
