package store

import (
	"bytes"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/lib/pq"
)

// The pq arrays River passes are encoded from the slice they hold, to the same bytes pgx sends
// when it goes through their Value (the array's text form, parsed back); other pq arrays keep
// that path. (The jsonb elements are JSON as Go writes it, which the Value path gives back
// unchanged; TestPQArraysReachPostgres checks JSON as written.)
func TestEncodePQArrays(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 10, 42, 53, 123456000, time.FixedZone("EST", -5*3600))
	tests := []struct {
		name  string
		oid   uint32
		value any
		fast  bool // encoded from its slice, not through Value
	}{
		{"strings as text[]", pgtype.TextArrayOID, pq.Array([]string{"port.provision", `quote " comma , brace { back \ slash`, "", "NULL", "é"}), true},
		{"strings as jsonb[]", pgtype.JSONBArrayOID, pq.Array([]string{`{"subscription_id":"s1"}`, `{}`}), true},
		{"empty strings", pgtype.TextArrayOID, pq.Array([]string{}), true},
		{"int64s as bigint[]", pgtype.Int8ArrayOID, pq.Array([]int64{0, -1, 1 << 40}), true},
		{"int32s as integer[]", pgtype.Int4ArrayOID, pq.Array([]int32{0, 7, -3}), true},
		{"bools as boolean[]", pgtype.BoolArrayOID, pq.Array([]bool{true, false}), true},
		{"times as timestamptz[]", pgtype.TimestamptzArrayOID, pq.Array([]time.Time{at, at.UTC().Add(time.Hour), {}}), true},
		{"times rounded to the microsecond, half to even", pgtype.TimestamptzArrayOID, pq.Array([]time.Time{at.Add(789), at.Add(500), at.Add(1500),
			time.Date(2026, 12, 31, 23, 59, 59, 999999600, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 500, time.UTC)}), true},
		{"int16s as smallint[]", pgtype.Int2ArrayOID, pq.Array([]int16{25, -1, 0}), true},
		{"byte strings as bytea[], a nil one empty as pq sends it (not NULL)", pgtype.ByteaArrayOID, pq.Array([][]byte{[]byte("k"), nil, {}}), true},
		{"byte strings, none nil", pgtype.ByteaArrayOID, pq.Array([][]byte{[]byte("k\x00\xff")}), true},
		{"other generic arrays keep Value", pgtype.Float8ArrayOID, pq.Array([]float64{1.5}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ours := pgtype.NewMap()
			encodePQArraysIn(ours)
			plan := ours.PlanEncode(tc.oid, pgtype.BinaryFormatCode, tc.value)
			if _, fast := plan.(*pqArrayPlan); fast != tc.fast {
				t.Errorf("plan %T; encoded from its slice: %v, want %v", plan, fast, tc.fast)
			}
			got, err := ours.Encode(tc.oid, pgtype.BinaryFormatCode, tc.value, nil)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			want, err := pgtype.NewMap().Encode(tc.oid, pgtype.BinaryFormatCode, tc.value, nil)
			if err != nil {
				t.Fatalf("encode through Value: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoded %x, through Value %x", got, want)
			}
		})
	}
}

// A plan is kept per Go type and parameter type, so a pq.GenericArray holding a slice of
// another type than the one its plan was made for must not be encoded by that plan: it is
// refused in binary, and pgx then sends it through Value in text.
func TestEncodePQArraysRefusesAnotherSlice(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	encodePQArraysIn(m)
	if _, err := m.Encode(pgtype.Int2ArrayOID, pgtype.BinaryFormatCode, pq.Array([]int16{1}), nil); err != nil {
		t.Fatalf("int16s: %v", err)
	}
	other := pq.Array([]int8{1, 2}) // a pq.GenericArray too
	if _, err := m.Encode(pgtype.Int2ArrayOID, pgtype.BinaryFormatCode, other, nil); err == nil {
		t.Errorf("int8s encoded in binary by the int16s' plan")
	}
	text, err := m.Encode(pgtype.Int2ArrayOID, pgtype.TextFormatCode, other, nil)
	if err != nil || string(text) != "{1,2}" {
		t.Errorf("int8s in text: %q, %v; want {1,2}", text, err)
	}
}

// BenchmarkRiverInsertParams encodes the parameters of River's insert of one job (its
// JobInsertFastMany) through the pq arrays' Value, as pgx does by default, and from their
// slices.
func BenchmarkRiverInsertParams(b *testing.B) {
	now := time.Now()
	params := []struct {
		oid   uint32
		value any
	}{
		{pgtype.Int8ArrayOID, pq.Array([]int64{0})},
		{pgtype.JSONBArrayOID, pq.Array([]string{`{"subscription_id":"9e000000-0000-4000-8000-000000000001"}`})},
		{pgtype.TimestamptzArrayOID, pq.Array([]time.Time{now})},
		{pgtype.TextArrayOID, pq.Array([]string{"port.provision"})},
		{pgtype.Int2ArrayOID, pq.Array([]int16{25})},
		{pgtype.JSONBArrayOID, pq.Array([]string{"{}"})},
		{pgtype.Int2ArrayOID, pq.Array([]int16{1})},
		{pgtype.TextArrayOID, pq.Array([]string{"default"})},
		{pgtype.TimestamptzArrayOID, pq.Array([]time.Time{now})},
		{pgtype.TextArrayOID, pq.Array([]string{"available"})},
		{pgtype.TextArrayOID, pq.Array([]string{""})},
		{pgtype.ByteaArrayOID, pq.Array([][]byte{nil})},
		{pgtype.Int4ArrayOID, pq.Array([]int32{0})},
	}
	fromSlices := pgtype.NewMap()
	encodePQArraysIn(fromSlices)
	for _, bc := range []struct {
		name string
		m    *pgtype.Map
	}{{"through Value", pgtype.NewMap()}, {"from slices", fromSlices}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				buf = buf[:0]
				for _, p := range params {
					var err error
					if buf, err = bc.m.Encode(p.oid, pgtype.BinaryFormatCode, p.value, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
