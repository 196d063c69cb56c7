package main

import (
	"math"
	"sort"
	"time"
)

// hist is an HDR-style latency histogram: logarithmic buckets 1% wide from 1µs, so any
// percentile is exact to 1% in constant memory whatever the number of samples.
type hist struct {
	counts map[int]int64
	n      int64
}

const bucketBase = 1.01

func newHist() *hist { return &hist{counts: map[int]int64{}} }

func (h *hist) record(d time.Duration) {
	us := max(float64(d)/float64(time.Microsecond), 1)
	h.counts[int(math.Log(us)/math.Log(bucketBase))]++
	h.n++
}

func (h *hist) merge(o *hist) {
	for k, v := range o.counts {
		h.counts[k] += v
	}
	h.n += o.n
}

// quantile returns the latency at q (0..1): the upper edge of the bucket holding it.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	keys := make([]int, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	want := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for _, k := range keys {
		seen += h.counts[k]
		if seen >= want {
			return time.Duration(math.Pow(bucketBase, float64(k+1)) * float64(time.Microsecond))
		}
	}
	return 0
}
