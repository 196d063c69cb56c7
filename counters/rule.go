// Package counters turns a port's interface counters, sampled from its switch, into traffic
// and outages: the difference between two readings, with the counter's wraps and resets told
// apart, spread over hourly UTC buckets, and the link's going down and coming back as outages.
// Usage is then summed from the buckets (monitoring.Recorded). The octets are what the switch
// counts on the port: download is what it sent out of the port to the subscriber (TX,
// out-octets), upload what it received from the subscriber (RX, in-octets).
package counters

import (
	"math"
	"math/bits"
	"time"
)

// MaxLineRate bounds, in bits per second, what a port can have carried between two readings:
// a counter that went down is a wrap only if the traffic the wrap implies fits within it.
const MaxLineRate = 100e9

// Rates bound, in bits per second, what each direction of a port can carry (0: MaxLineRate).
type Rates struct {
	Download, Upload float64
}

// PlanRates are the bounds of a port shaped to a plan's bandwidth: half again its Mbps, for
// the shapers' bursts and a plan changed between two readings; 0 (MaxLineRate) when unshaped.
// Over a few minutes this tells a reset from a wrap only on slow plans: 100 Mbit/s carries the
// 4.29 GB of a whole 32-bit lap in under six minutes.
func PlanRates(downloadMbps, uploadMbps int) Rates {
	bound := func(mbps int) float64 {
		if mbps <= 0 {
			return 0
		}
		return min(1.5*float64(mbps)*1e6, MaxLineRate)
	}
	return Rates{Download: bound(downloadMbps), Upload: bound(uploadMbps)}
}

// Reading is one sample of a port's counters.
type Reading struct {
	At                  time.Time
	InOctets, OutOctets uint64
	LinkUp              bool
}

// Delta is what a counter counted from prev to cur, elapsed apart. A counter that went up
// counted the difference. One that went down either wrapped or was reset (the switch rebooted,
// someone cleared it): it is a 32-bit wrap when prev and cur both fit in 32 bits and the
// traffic the wrap implies ((2^32 - prev) + cur octets) fits in elapsed at rate bits per
// second (0: MaxLineRate); otherwise a reset, and the counter counted cur since it.
func Delta(prev, cur uint64, elapsed time.Duration, rate float64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	if rate <= 0 {
		rate = MaxLineRate
	}
	if prev <= math.MaxUint32 && cur <= math.MaxUint32 {
		wrapped := (math.MaxUint32 - prev) + 1 + cur
		if elapsed > 0 && float64(wrapped)*8 <= rate*elapsed.Seconds() {
			return wrapped
		}
	}
	return cur
}

// Bucket is traffic in one UTC hour (Hour is its start).
type Bucket struct {
	Hour             time.Time
	Download, Upload uint64
}

// Outage says what a reading does to the port's outages.
type Outage int

const (
	OutageNone    Outage = iota
	OutageOpen           // the link went down: an outage starts at the reading
	OutageResolve        // the link came back: the open outage ends at the reading
)

// Step is what a reading adds after the port's previous one.
type Step struct {
	Download, Upload uint64   // octets since the previous reading
	Buckets          []Bucket // the same, spread over the hours between the two readings
	Outage           Outage
}

// OutageOf is the step's outage on a port that is, or is not, in service: a link going down
// on a port out of service (suspended: the switch takes its link down; captive; off) is no
// outage of the subscriber's service and opens none. A link coming back ends an open outage
// whatever the port does now.
func (s Step) OutageOf(inService bool) Outage {
	if s.Outage == OutageOpen && !inService {
		return OutageNone
	}
	return s.Outage
}

// Next is what reading cur adds after prev (nil: the port's first reading, which only sets
// the baseline: no traffic, no outage), on a port whose directions carry at most rates. A
// reading not after prev adds nothing.
func Next(prev *Reading, cur Reading, rates Rates) Step {
	if prev == nil || !cur.At.After(prev.At) {
		return Step{}
	}
	elapsed := cur.At.Sub(prev.At)
	s := Step{
		Download: Delta(prev.OutOctets, cur.OutOctets, elapsed, rates.Download),
		Upload:   Delta(prev.InOctets, cur.InOctets, elapsed, rates.Upload),
	}
	s.Buckets = Spread(prev.At, cur.At, s.Download, s.Upload)
	switch {
	case prev.LinkUp && !cur.LinkUp:
		s.Outage = OutageOpen
	case !prev.LinkUp && cur.LinkUp:
		s.Outage = OutageResolve
	}
	return s
}

// Spread divides download and upload octets counted from from to to over the UTC hours the
// period covers, in proportion to the time in each, so each bucket holds whole octets and the
// buckets add up to exactly what was counted. Hours with nothing are left out; a period that
// is not after from lands in to's hour.
func Spread(from, to time.Time, download, upload uint64) []Bucket {
	if download == 0 && upload == 0 {
		return nil
	}
	if !to.After(from) {
		return []Bucket{{Hour: to.UTC().Truncate(time.Hour), Download: download, Upload: upload}}
	}
	span := uint64(to.Sub(from))
	var out []Bucket
	var doneDown, doneUp uint64
	var covered uint64 // the period's time up to the end of the current hour
	for h := from.UTC().Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		end := h.Add(time.Hour)
		if end.After(to) {
			end = to
		}
		covered = uint64(end.Sub(from))
		// The cumulative share, rounded down, so the shares always add up to the whole.
		down, up := share(download, covered, span)-doneDown, share(upload, covered, span)-doneUp
		doneDown, doneUp = doneDown+down, doneUp+up
		if down > 0 || up > 0 {
			out = append(out, Bucket{Hour: h, Download: down, Upload: up})
		}
	}
	return out
}

// share is total*part/whole rounded down, exact in 128 bits (part <= whole).
func share(total, part, whole uint64) uint64 {
	hi, lo := bits.Mul64(total, part)
	q, _ := bits.Div64(hi, lo, whole)
	return q
}
