package counters_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/subprov/subprov/counters"
)

func TestDelta(t *testing.T) {
	const max32 = math.MaxUint32
	for _, tt := range []struct {
		name      string
		prev, cur uint64
		elapsed   time.Duration
		rate      float64
		want      uint64
	}{
		{"counted up", 1000, 5000, 5 * time.Minute, 0, 4000},
		{"unchanged", 1000, 1000, 5 * time.Minute, 0, 0},
		{"32-bit wrap", max32 - 99, 400, 5 * time.Minute, 0, 500},
		{"32-bit wrap to zero", max32, 0, time.Second, 0, 1},
		{"32-bit wrap of almost a whole lap within the rate", 10, 9, 5 * time.Minute, 0, 1<<32 - 1},
		// 2^32 octets in one second is 34 Gbit/s: more than a 10 Gbit/s port carries, a reset.
		{"implausible wrap at the port's rate is a reset", 10, 9, time.Second, 10e9, 9},
		{"wrap needing more than 100 Gbit/s is a reset", 1 << 31, 1 << 30, 100 * time.Millisecond, 0, 1 << 30},
		{"down from beyond 32 bits is a reset", 1 << 40, 7000, 5 * time.Minute, 0, 7000},
		{"down to beyond 32 bits is a reset", 1 << 33, 1 << 32, 5 * time.Minute, 0, 1 << 32},
		{"reset to zero on a 100 Mbit/s port", 123456, 0, 5 * time.Minute, 100e6, 0},
		// At line rate the same drop could be a wrap, and is taken for one.
		{"a drop within 32 bits at 100 Gbit/s is a wrap", 123456, 0, 5 * time.Minute, 0, 1<<32 - 123456},
		{"no time elapsed: a reset", max32 - 10, 5, 0, 0, 5},
		{"64-bit counter near its top counts up", math.MaxUint64 - 10, math.MaxUint64, time.Minute, 0, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := counters.Delta(tt.prev, tt.cur, tt.elapsed, tt.rate); got != tt.want {
				t.Errorf("Delta(%d, %d, %v) = %d, want %d", tt.prev, tt.cur, tt.elapsed, got, tt.want)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 1, h, m, 0, 0, time.UTC) }
	hour := func(h int) time.Time { return at(h, 0) }
	for _, tt := range []struct {
		name     string
		from, to time.Time
		down, up uint64
		want     []counters.Bucket
	}{
		{"within an hour", at(10, 5), at(10, 10), 900, 90, []counters.Bucket{{hour(10), 900, 90}}},
		{"ending on the hour", at(10, 55), at(11, 0), 900, 90, []counters.Bucket{{hour(10), 900, 90}}},
		{"across an hour, by time", at(10, 55), at(11, 5), 1000, 11, []counters.Bucket{{hour(10), 500, 5}, {hour(11), 500, 6}}},
		{"over three hours", at(9, 30), at(11, 30), 4000, 0, []counters.Bucket{{hour(9), 1000, 0}, {hour(10), 2000, 0}, {hour(11), 1000, 0}}},
		{"nothing counted", at(9, 30), at(11, 30), 0, 0, nil},
		{"not after from: the reading's hour", at(10, 5), at(10, 5), 7, 3, []counters.Bucket{{hour(10), 7, 3}}},
		{"huge counts stay exact", at(10, 30), at(11, 30), math.MaxUint64 - 1, 3, []counters.Bucket{{hour(10), math.MaxUint64 / 2, 1}, {hour(11), math.MaxUint64 / 2, 2}}},
		{"a non-UTC reading lands in its UTC hour", at(10, 5).In(time.FixedZone("NST", -(3*3600 + 1800))), at(10, 10), 5, 5,
			[]counters.Bucket{{hour(10), 5, 5}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := counters.Spread(tt.from, tt.to, tt.down, tt.up)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Spread = %v, want %v", got, tt.want)
			}
			var down, up uint64
			for _, b := range got {
				down, up = down+b.Download, up+b.Upload
			}
			if down != tt.down || up != tt.up {
				t.Errorf("buckets add up to %d/%d, want %d/%d", down, up, tt.down, tt.up)
			}
		})
	}
}

func TestNext(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(5 * time.Minute)
	r := func(at time.Time, in, out uint64, up bool) counters.Reading {
		return counters.Reading{At: at, InOctets: in, OutOctets: out, LinkUp: up}
	}
	for _, tt := range []struct {
		name       string
		prev       *counters.Reading
		cur        counters.Reading
		rates      counters.Rates
		down, upl  uint64
		outage     counters.Outage
		wantBucket bool
	}{
		{"the first reading is the baseline", nil, r(t1, 5000, 9000, true), counters.Rates{}, 0, 0, counters.OutageNone, false},
		{"the first reading down opens nothing", nil, r(t1, 5000, 9000, false), counters.Rates{}, 0, 0, counters.OutageNone, false},
		{"download is out, upload is in", ptr(r(t0, 1000, 2000, true)), r(t1, 1500, 9000, true), counters.Rates{}, 7000, 500, counters.OutageNone, true},
		{"link went down: an outage opens", ptr(r(t0, 1000, 2000, true)), r(t1, 1000, 2000, false), counters.Rates{}, 0, 0, counters.OutageOpen, false},
		{"link came back: the outage ends", ptr(r(t0, 1000, 2000, false)), r(t1, 1100, 2100, true), counters.Rates{}, 100, 100, counters.OutageResolve, true},
		{"still down", ptr(r(t0, 1000, 2000, false)), r(t1, 1000, 2000, false), counters.Rates{}, 0, 0, counters.OutageNone, false},
		{"a reset after a reboot counts from zero", ptr(r(t0, 1<<40, 1<<41, true)), r(t1, 300, 700, true), counters.Rates{}, 700, 300, counters.OutageNone, true},
		{"a 32-bit wrap", ptr(r(t0, math.MaxUint32-9, 10, true)), r(t1, 10, 20, true), counters.Rates{}, 10, 20, counters.OutageNone, true},
		{"a 32-bit wrap within the plan's rate", ptr(r(t0, 10, math.MaxUint32-9, true)), r(t1, 20, 10, true), counters.PlanRates(1000, 100), 20, 10, counters.OutageNone, true},
		// A switch rebooted: its counters start again low, a drop a 20/5 plan cannot have
		// wrapped in five minutes (30 Mbit/s carries 1.1 GB of the 3.2 a wrap implies).
		{"a reboot on a shaped port is a reset", ptr(r(t0, 1<<30, 1<<30, true)), r(t1, 300, 700, true), counters.PlanRates(20, 5), 700, 300, counters.OutageNone, true},
		{"the same drop unshaped is taken for a wrap", ptr(r(t0, 1<<30, 1<<30, true)), r(t1, 300, 700, true), counters.Rates{}, 3<<30 + 700, 3<<30 + 300, counters.OutageNone, true},
		{"a reading not after the last adds nothing", ptr(r(t1, 1000, 2000, true)), r(t0, 5000, 9000, false), counters.Rates{}, 0, 0, counters.OutageNone, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := counters.Next(tt.prev, tt.cur, tt.rates)
			if got.Download != tt.down || got.Upload != tt.upl || got.Outage != tt.outage || (len(got.Buckets) > 0) != tt.wantBucket {
				t.Errorf("Next = %+v, want download %d upload %d outage %v buckets %v", got, tt.down, tt.upl, tt.outage, tt.wantBucket)
			}
		})
	}
}

func TestOutageOf(t *testing.T) {
	for _, tt := range []struct {
		outage    counters.Outage
		inService bool
		want      counters.Outage
	}{
		{counters.OutageOpen, true, counters.OutageOpen},
		{counters.OutageOpen, false, counters.OutageNone}, // a suspended port's link is down by design
		{counters.OutageResolve, true, counters.OutageResolve},
		{counters.OutageResolve, false, counters.OutageResolve},
		{counters.OutageNone, true, counters.OutageNone},
	} {
		if got := (counters.Step{Outage: tt.outage}).OutageOf(tt.inService); got != tt.want {
			t.Errorf("OutageOf(%v) of %v = %v, want %v", tt.inService, tt.outage, got, tt.want)
		}
	}
}

func TestPlanRates(t *testing.T) {
	for _, tt := range []struct {
		down, up int
		want     counters.Rates
	}{
		{100, 20, counters.Rates{Download: 150e6, Upload: 30e6}},
		{0, 0, counters.Rates{}}, // unshaped: line rate
		{100000, -1, counters.Rates{Download: counters.MaxLineRate}},
	} {
		if got := counters.PlanRates(tt.down, tt.up); got != tt.want {
			t.Errorf("PlanRates(%d, %d) = %+v, want %+v", tt.down, tt.up, got, tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
