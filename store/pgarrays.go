package store

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/lib/pq"
)

// River's database/sql driver passes its array parameters (a batch of jobs inserted, fetched
// or completed) as lib/pq arrays (pq.Array). pgx encodes a driver.Valuer by calling Value,
// which builds the array's text form (by reflection for pq.GenericArray), and then parses
// that text back to send the array in binary: most of River's insert in a CPU profile of
// orders on PostgreSQL (docs/performance.md). encodePQArrays lets pgx encode the slice inside
// such an array directly instead, to the values the text gave: strings, byte strings (a nil
// one empty, as pq sends it), integers, booleans, and timestamps rounded to the microsecond
// as PostgreSQL and pgx round their text. Strings go as they are, where the text path put
// them through Go first: a jsonb element's text reaches the server unchanged (not re-encoded
// from a Go value, which loses digits of long numbers), and invalid UTF-8 is refused by the
// server instead of being replaced. Any other array keeps the Valuer path, as does a value
// the array's plan was not made for: pgx then tries again in text, through Value.
//
// That second try needs the parameters' types, which pgx asks the server for unless the URL
// sets default_query_exec_mode to exec or simple_protocol (as behind PgBouncer's transaction
// pooling): then every parameter is of unknown type and text, plans are shared by all
// parameters of one Go type, and pq.GenericArray's plan, made for one slice type, would refuse
// the other. Sessions in those modes keep pgx's default.
//
// Which arrays River passes is River's internal: the jobs package names the River release it
// was read in (riverinternals.go), and its test fails when River is upgraded.
func encodePQArrays(_ context.Context, c *pgx.Conn) error {
	switch c.Config().DefaultQueryExecMode {
	case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
		return nil
	}
	encodePQArraysIn(c.TypeMap())
	return nil
}

// encodePQArraysIn makes m encode the covered pq arrays as the slices they hold.
func encodePQArraysIn(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapPQArray}, m.TryWrapEncodePlanFuncs...)
}

// tryWrapPQArray is a pgtype.TryWrapEncodePlanFunc: it unwraps the pq arrays that carry a
// slice pgx encodes itself.
func tryWrapPQArray(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	inner, ok := pqArraySlice(value)
	if !ok {
		return nil, nil, false
	}
	return &pqArrayPlan{slice: reflect.TypeOf(inner)}, inner, true
}

// pqArraySlice is the slice a pq array holds, when it is one encodePQArrays covers.
func pqArraySlice(value any) (any, bool) {
	switch v := value.(type) {
	case *pq.StringArray:
		return held(v)
	case *pq.Int64Array:
		return held(v)
	case *pq.Int32Array:
		return held(v)
	case *pq.BoolArray:
		return held(v)
	case *pq.ByteaArray:
		if v != nil {
			return emptyForNil(*v), true
		}
	case pq.GenericArray:
		switch a := v.A.(type) {
		case []time.Time:
			return toMicroseconds(a), true
		case []int16:
			return a, true
		}
	}
	return nil, false
}

// held is the slice behind a pq array pointer, as its plain slice type.
func held[A ~[]E, E any](a *A) (any, bool) {
	if a == nil {
		return nil, false
	}
	return []E(*a), true
}

// emptyForNil is a as pq sends it: a nil element is an empty bytea, not NULL (River's insert
// passes a job without a unique key so, and turns it to NULL itself).
func emptyForNil(a [][]byte) [][]byte {
	return replaced(a, func(b []byte) bool { return b == nil }, func([]byte) []byte { return []byte{} })
}

// toMicroseconds is ts rounded to the microsecond as the text path rounds them: pq writes the
// fraction of a second in full, and PostgreSQL, like pgx's parser of that text, reads it as a
// double and rounds it half to even (pgx's binary encoding alone would cut it).
func toMicroseconds(ts []time.Time) []time.Time {
	return replaced(ts, func(t time.Time) bool { return t.Nanosecond()%1000 != 0 }, func(t time.Time) time.Time {
		ns := t.Nanosecond()
		us := int(math.RoundToEven(float64(ns) / 1e9 * 1e6))
		return t.Add(time.Duration(us*1000 - ns))
	})
}

// replaced is s with fix applied to each element that needs it, in a copy made only when
// one does (River's arrays are passed as they are).
func replaced[T any](s []T, needs func(T) bool, fix func(T) T) []T {
	if !slices.ContainsFunc(s, needs) {
		return s
	}
	out := make([]T, len(s))
	for i, v := range s {
		if out[i] = v; needs(v) {
			out[i] = fix(v)
		}
	}
	return out
}

// pqArrayPlan encodes a pq array as the slice it holds. Plans are kept per Go type and
// parameter type, and a pq.GenericArray may hold a slice of another type than the one its plan
// was made for: such a value is refused (an error, never a wrong encoding).
type pqArrayPlan struct {
	slice reflect.Type
	next  pgtype.EncodePlan
}

func (p *pqArrayPlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *pqArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	inner, ok := pqArraySlice(value)
	if !ok || reflect.TypeOf(inner) != p.slice {
		return nil, fmt.Errorf("encode %T: its plan is for %s", value, p.slice)
	}
	return p.next.Encode(inner, buf)
}
