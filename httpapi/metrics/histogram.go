package metrics

import (
	"math"
	"sync/atomic"
)

// DurationBuckets are the upper bounds, in seconds, of the OpenTelemetry
// semantic conventions' buckets for http.server.request.duration.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Histogram counts observations in fixed buckets. Observe is lock-free
// (atomic adds), for the request path; its zero value is not usable: see
// NewHistogram.
type Histogram struct {
	bounds []float64       // upper bounds, ascending; +Inf is implicit
	counts []atomic.Uint64 // per bucket (not cumulative), the last one +Inf
	sum    atomic.Uint64   // float64 bits
	count  atomic.Uint64
}

// HistogramSnapshot is what a Histogram counted: Counts[i] observations
// in (Bounds[i-1], Bounds[i]] (not cumulative), Count in all, Sum their
// total. Count may exceed the buckets' sum by observations under way.
type HistogramSnapshot struct {
	Bounds []float64
	Counts []uint64
	Count  uint64
	Sum    float64
}

// NewHistogram returns a histogram with the upper bounds given, which
// must ascend (DurationBuckets, say).
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts v in its bucket: the first whose bound is at least v, as
// a bucket's le (less or equal) says.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	h.count.Add(1)
}

// Snapshot returns the counts so far.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Bounds: h.bounds, Counts: make([]uint64, len(h.bounds))}
	for i := range h.bounds {
		s.Counts[i] = h.counts[i].Load()
	}
	// Count is read after the buckets, so it is never below their sum
	// (+Inf's included) by an observation under way.
	inf := h.counts[len(h.bounds)].Load()
	s.Sum = math.Float64frombits(h.sum.Load())
	s.Count = max(h.count.Load(), inf+sum(s.Counts))
	return s
}

func sum(v []uint64) uint64 {
	t := uint64(0)
	for _, x := range v {
		t += x
	}
	return t
}
