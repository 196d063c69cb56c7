package store

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/subprov/subprov/search"
)

// poolSizes takes pool_max_conns and read_pool_max_conns out of a PostgreSQL URL and leaves
// everything else as the driver reads it; a bad value, or a URL that does not parse, is refused
// without echoing the password.
func TestPoolSize(t *testing.T) {
	t.Parallel()
	defaults := pools{main: PostgresConns, reads: PostgresReadConns}
	tests := []struct {
		name, in string
		wantURL  string
		want     pools
		wantErr  string
	}{
		{"absent: the URL as it is", "postgres://u:p%40ss@db:5432/x?sslmode=disable&search_path=s1",
			"postgres://u:p%40ss@db:5432/x?sslmode=disable&search_path=s1", defaults, ""},
		{"set: taken out, the rest kept", "postgres://u:p%40ss@db:5432/x?sslmode=disable&pool_max_conns=3&search_path=s1",
			"postgres://u:p%40ss@db:5432/x?search_path=s1&sslmode=disable", pools{main: 3, reads: PostgresReadConns}, ""},
		{"the only parameter", "postgresql://db/x?pool_max_conns=12", "postgresql://db/x", pools{main: 12, reads: PostgresReadConns}, ""},
		{"the reads' pool", "postgres://db/x?read_pool_max_conns=6&sslmode=disable", "postgres://db/x?sslmode=disable", pools{main: PostgresConns, reads: 6}, ""},
		{"both", "postgres://db/x?read_pool_max_conns=2&pool_max_conns=16", "postgres://db/x", pools{main: 16, reads: 2}, ""},
		{"empty", "postgres://db/x?pool_max_conns=", "", pools{}, "pool_max_conns \"\": want a whole number"},
		{"zero", "postgres://db/x?pool_max_conns=0", "", pools{}, "want a whole number"},
		{"negative", "postgres://db/x?pool_max_conns=-2", "", pools{}, "want a whole number"},
		{"a word", "postgres://db/x?pool_max_conns=eight", "", pools{}, "want a whole number"},
		{"a fraction", "postgres://db/x?pool_max_conns=8.5", "", pools{}, "want a whole number"},
		{"the reads' pool empty", "postgres://db/x?pool_max_conns=4&read_pool_max_conns=0", "", pools{}, "read_pool_max_conns \"0\": want a whole number"},
		{"not a URL", "postgres://u:s3cr%zzet@db/x", "", pools{}, "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, n, err := poolSizes(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("poolSizes(%q) error %v, want one saying %q", tc.in, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil || u != tc.wantURL || n != tc.want {
				t.Errorf("poolSizes(%q) = %q, %+v, %v; want %q, %+v", tc.in, u, n, err, tc.wantURL, tc.want)
			}
		})
	}
}

// TestSearchPoolRunsGenericPlans: on PostgreSQL agent search reads through sessions that run
// prepared statements' generic plans and never scan a table, and only search does.
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
		name           string
		q              search.Querier
		mode, seqScans string
	}{{"search pool", s.SearchR(), "force_generic_plan", "off"}, {"read pool", searchQuerier{s.R(), searchIndexOf(s.Dialect)}, "auto", "on"}} {
		var mode, seqScans string
		if err := tc.q.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_setting('enable_seqscan')`).Scan(&mode, &seqScans); err != nil {
			t.Fatal(err)
		}
		if mode != tc.mode || seqScans != tc.seqScans {
			t.Errorf("%s: plan_cache_mode %q, enable_seqscan %q; want %q, %q", tc.name, mode, seqScans, tc.mode, tc.seqScans)
		}
	}
}
