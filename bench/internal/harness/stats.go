package harness

import (
	"math"
	"slices"
	"time"
)

// Median returns the median of xs (the mean of the two middle values for an
// even count), or NaN for an empty slice. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MinMax returns the smallest and largest of xs (NaN, NaN when empty).
func MinMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of the
// sorted durations: the smallest value such that at least p % of the values
// are less than or equal to it. It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// Latencies holds the percentiles of one latency run.
type Latencies struct {
	P50, P90, P99, Max time.Duration
}

// LatencyPercentiles sorts lat in place and returns its percentiles.
func LatencyPercentiles(lat []time.Duration) Latencies {
	slices.Sort(lat)
	var l Latencies
	if len(lat) == 0 {
		return l
	}
	l.P50 = Percentile(lat, 50)
	l.P90 = Percentile(lat, 90)
	l.P99 = Percentile(lat, 99)
	l.Max = lat[len(lat)-1]
	return l
}
