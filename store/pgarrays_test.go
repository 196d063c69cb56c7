package store_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/lib/pq"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// The store's PostgreSQL sessions encode a pq array River passes from its slice, except in the
// exec and simple-protocol modes, and in every mode it arrives as the array its text form
// (Value) gives when the server reads that text.
func TestPQArraysReachPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 10, 42, 53, 123456789, time.FixedZone("EST", -5*3600))
	values := []struct {
		name, cast string
		value      driver.Valuer
	}{
		{"text[]", "text[]", pq.Array([]string{"a", `quote " comma , brace { back \ slash`, "", "NULL"})},
		{"jsonb[], as written", "jsonb[]", pq.Array([]string{`{"subscription_id": "s1", "b": 1, "a": 2.0}`, `[12345678901234567891]`, `null`})},
		{"bigint[]", "bigint[]", pq.Array([]int64{1 << 40, -1})},
		{"integer[]", "integer[]", pq.Array([]int32{7, 0})},
		{"boolean[]", "boolean[]", pq.Array([]bool{true, false})},
		{"smallint[]", "smallint[]", pq.Array([]int16{25, -1})},
		{"timestamptz[], rounded to the microsecond", "timestamptz[]",
			pq.Array([]time.Time{at, at.Add(time.Hour), time.Date(2026, 1, 1, 0, 0, 0, 999999600, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 500, time.UTC), {}})},
		{"bytea[]", "bytea[]", pq.Array([][]byte{[]byte("k\x00\xff"), nil, {}})},
		{"empty", "text[]", pq.Array([]string{})},
	}
	for _, mode := range []struct {
		param     string // default_query_exec_mode
		fromSlice bool   // pq arrays encoded from their slices
	}{{"", true}, {"exec", false}, {"simple_protocol", false}} {
		t.Run("mode "+mode.param, func(t *testing.T) {
			u := testdb.URL(t, "postgres")
			if mode.param != "" {
				u += "&default_query_exec_mode=" + mode.param
			}
			s, err := store.Open(ctx, u)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			conn, err := rawdb.Writer(s).Conn(ctx)
			if err != nil {
				t.Fatalf("conn: %v", err)
			}
			err = conn.Raw(func(c any) error {
				plan := c.(*stdlib.Conn).Conn().TypeMap().PlanEncode(pgtype.TimestamptzArrayOID, pgtype.BinaryFormatCode, pq.Array([]time.Time{}))
				if got := fmt.Sprintf("%T", plan) == "*store.pqArrayPlan"; got != mode.fromSlice {
					t.Errorf("a pq array planned with %T; from its slice: %v, want %v", plan, got, mode.fromSlice)
				}
				return nil
			})
			conn.Close()
			if err != nil {
				t.Fatalf("raw conn: %v", err)
			}
			for _, tc := range values {
				t.Run(tc.name, func(t *testing.T) {
					text, err := tc.value.Value()
					if err != nil {
						t.Fatalf("value: %v", err)
					}
					var same bool
					var got string
					err = rawdb.Writer(s).QueryRowContext(ctx, "SELECT $1::"+tc.cast+" IS NOT DISTINCT FROM $2::text::"+tc.cast+", $1::"+tc.cast+"::text",
						tc.value, text).Scan(&same, &got)
					if err != nil {
						t.Fatalf("query: %v", err)
					}
					if !same {
						t.Errorf("arrived as %s, its text form is %v", got, text)
					}
				})
			}
			// River's insert passes both kinds of pq.GenericArray in one statement.
			var n int
			err = rawdb.Writer(s).QueryRowContext(ctx, "SELECT cardinality($1::timestamptz[]) + cardinality($2::smallint[]) + cardinality($3::timestamptz[])",
				pq.Array([]time.Time{at}), pq.Array([]int16{25, 1}), pq.Array([]time.Time{at})).Scan(&n)
			if err != nil || n != 4 {
				t.Errorf("times and small integers in one statement: %d, %v", n, err)
			}
		})
	}
}
