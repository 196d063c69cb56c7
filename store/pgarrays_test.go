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

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// The store's PostgreSQL sessions encode a pq array River passes from its slice, and it
// arrives as the same array its text form (Value) gives.
func TestPQArraysReachPostgres(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, testdb.URL(t, "postgres"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		t.Fatalf("conn: %v", err)
	}
	err = conn.Raw(func(c any) error {
		plan := c.(*stdlib.Conn).Conn().TypeMap().PlanEncode(pgtype.TimestamptzArrayOID, pgtype.BinaryFormatCode, pq.Array([]time.Time{}))
		if got := fmt.Sprintf("%T", plan); got != "*store.pqArrayPlan" {
			t.Errorf("the pool's sessions plan a pq array with %s, not from its slice", got)
		}
		return nil
	})
	conn.Close()
	if err != nil {
		t.Fatalf("raw conn: %v", err)
	}
	at := time.Date(2026, 11, 27, 10, 42, 53, 123456000, time.FixedZone("EST", -5*3600))
	tests := []struct {
		name, cast string
		value      driver.Valuer
	}{
		{"text[]", "text[]", pq.Array([]string{"a", `quote " comma , brace { back \ slash`, "", "NULL"})},
		{"jsonb[]", "jsonb[]", pq.Array([]string{`{"subscription_id": "s1"}`, `[]`})},
		{"bigint[]", "bigint[]", pq.Array([]int64{1 << 40, -1})},
		{"integer[]", "integer[]", pq.Array([]int32{7, 0})},
		{"boolean[]", "boolean[]", pq.Array([]bool{true, false})},
		{"smallint[]", "smallint[]", pq.Array([]int16{25, -1})},
		{"timestamptz[]", "timestamptz[]", pq.Array([]time.Time{at, at.Add(time.Hour)})},
		{"bytea[]", "bytea[]", pq.Array([][]byte{[]byte("k\x00\xff"), nil, {}})},
		{"empty", "text[]", pq.Array([]string{})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := tc.value.Value()
			if err != nil {
				t.Fatalf("value: %v", err)
			}
			var same bool
			var got string
			err = s.DB.QueryRowContext(ctx, "SELECT $1::"+tc.cast+" IS NOT DISTINCT FROM $2::text::"+tc.cast+", $1::"+tc.cast+"::text",
				tc.value, text).Scan(&same, &got)
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if !same {
				t.Errorf("arrived as %s, its text form is %v", got, text)
			}
		})
	}
}
