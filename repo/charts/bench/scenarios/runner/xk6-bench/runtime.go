package bench

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The Go runtime's own account of how long ready goroutines waited for a CPU and how much CPU the
// garbage collector took, since the process started. A request's response sits in a goroutine
// that cannot run while the collector or other VUs hold every P: that wait is latency the runner
// adds to what it reports, which a sleeping probe (scenarios/lib/lag.js) sees only in part.
var runtimeSamples = []metrics.Sample{
	{Name: "/sched/latencies:seconds"},
	{Name: "/gc/cycles/total:gc-cycles"},
	{Name: "/cpu/classes/gc/total:cpu-seconds"},
	{Name: "/cpu/classes/total:cpu-seconds"},
	{Name: "/cpu/classes/idle:cpu-seconds"},
}

// baseline: the runtime's figures when the load began (the first useConnections call of any VU), so
// that start-up, when every VU compiles its scripts at once, stays out of the verdict.
var (
	baselineOnce sync.Once
	baseline     atomic.Value // []metrics.Sample
)

func readRuntime() []metrics.Sample {
	samples := make([]metrics.Sample, len(runtimeSamples))
	copy(samples, runtimeSamples)
	metrics.Read(samples)
	return samples
}

// markLoadStart records the baseline once per process.
func markLoadStart() {
	baselineOnce.Do(func() {
		baseline.Store(readRuntime())
		markCgroupLoadStart()
	})
}

// runtimeStats() -> {gogc, gomemlimit, memory_limit_bytes, sched_latency_ms: {p50, p99, p999, max},
// gc_cycles, gc_cpu_fraction}, since the load began (since the process started if it has not):
// gc_cpu_fraction is the collector's share of the CPU the process used (idle time excluded).
func (m *instance) runtimeStats() map[string]interface{} {
	samples := readRuntime()
	base, _ := baseline.Load().([]metrics.Sample)
	out := map[string]interface{}{
		// the collector's settings this process runs with ("" = Go's default, GOGC=100)
		"gogc":       os.Getenv("GOGC"),
		"gomemlimit": os.Getenv("GOMEMLIMIT"),
		// the limit in effect, in bytes (math.MaxInt64 = none)
		"memory_limit_bytes": debug.SetMemoryLimit(-1),
	}
	if samples[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := samples[0].Value.Float64Histogram()
		if base != nil {
			h = histogramSince(h, base[0].Value.Float64Histogram())
		}
		out["sched_latency_ms"] = map[string]interface{}{
			"p50":  quantileMs(h, 0.50),
			"p99":  quantileMs(h, 0.99),
			"p999": quantileMs(h, 0.999),
			"max":  quantileMs(h, 1),
		}
	}
	if samples[1].Value.Kind() == metrics.KindUint64 {
		cycles := samples[1].Value.Uint64()
		if base != nil {
			cycles -= base[1].Value.Uint64()
		}
		out["gc_cycles"] = cycles
	}
	// The runtime updates its CPU classes at each collection: with none yet, the collector took nothing.
	if cycles, ok := out["gc_cycles"].(uint64); ok && cycles == 0 {
		out["gc_cpu_fraction"] = 0.0
	} else if samples[2].Value.Kind() == metrics.KindFloat64 && samples[3].Value.Kind() == metrics.KindFloat64 &&
		samples[4].Value.Kind() == metrics.KindFloat64 {
		gc, busy := samples[2].Value.Float64(), samples[3].Value.Float64()-samples[4].Value.Float64()
		if base != nil {
			gc -= base[2].Value.Float64()
			busy -= base[3].Value.Float64() - base[4].Value.Float64()
		}
		if busy > 0 {
			out["gc_cpu_fraction"] = gc / busy
		}
	}
	return out
}

// histogramSince: the counts added to h since base (same buckets: the runtime's are fixed).
func histogramSince(h, base *metrics.Float64Histogram) *metrics.Float64Histogram {
	if len(h.Counts) != len(base.Counts) {
		return h
	}
	d := &metrics.Float64Histogram{Counts: make([]uint64, len(h.Counts)), Buckets: h.Buckets}
	for i := range h.Counts {
		d.Counts[i] = h.Counts[i] - base.Counts[i]
	}
	return d
}

// quantileMs: the upper edge of the bucket holding quantile q, in ms (an upper bound: the runtime's
// buckets are exponential, about 1/8 of an octave wide). 0 without samples.
func quantileMs(h *metrics.Float64Histogram, q float64) float64 {
	var total uint64
	for _, c := range h.Counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			upper := h.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = h.Buckets[i]
			}
			return upper * 1000
		}
	}
	return h.Buckets[len(h.Buckets)-1] * 1000
}
