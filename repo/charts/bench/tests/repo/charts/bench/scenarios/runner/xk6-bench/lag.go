package bench

import (
	"errors"
	"math/rand"
	"sync/atomic"
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
)

// The runner-lag sampler (scenarios/lib/lag.js says what it measures and how it is judged), in Go:
// a VU of the runner_lag scenario runs the entry script's `load` like a load VU, and request() hands
// it to lagSample() instead of sending a request. Done here, a load VU loads none of the sampler's
// JavaScript (lag.js, metrics.js, k6/execution): every function and metric object a module keeps
// costs each of thousands of VUs memory (scenarios/calibrate/README.md, "Memory per VU").

// LagIntervalMs: a lag VU sleeps this long (+-50%) per sample; lag.js reads it (lagIntervalMs).
const LagIntervalMs = 400

// lagRole: the role tag of the runner_lag scenario (lag.js LAG_ROLE).
const lagRole = "lag"

// runtimeEvery: the runtime's and the cgroup's figures go with every runtimeEvery-th sample of each
// lag VU (a few per second for the process).
const runtimeEvery = 10

// lagMetrics: the runner's witnesses, the same metrics scenarios/lib/metrics.js defines (the
// registry returns the existing one when the name and type match).
type lagMetrics struct {
	lag, schedP99, gcCPU, throttled *metrics.Metric
}

func newLagMetrics(r *metrics.Registry) (*lagMetrics, error) {
	var l lagMetrics
	var err error
	if l.lag, err = r.NewMetric("bench_runner_lag", metrics.Trend, metrics.Time); err != nil {
		return nil, err
	}
	if l.schedP99, err = r.NewMetric("bench_runner_sched_p99_ms", metrics.Gauge); err != nil {
		return nil, err
	}
	if l.gcCPU, err = r.NewMetric("bench_runner_gc_cpu_ratio", metrics.Gauge); err != nil {
		return nil, err
	}
	if l.throttled, err = r.NewMetric("bench_runner_cpu_throttled_ratio", metrics.Gauge); err != nil {
		return nil, err
	}
	return &l, nil
}

// lagPhase: a sample taken from startMs to endMs after its scenario started gets the tag step=name.
type lagPhase struct {
	Name    string  `js:"name"`
	StartMs float64 `js:"startMs"`
	EndMs   float64 `js:"endMs"`
}

// lagPhases: set in the init context by an entry script that runs load scenarios one after the
// other (calibrate.js); the same list in every VU of the process.
var lagPhases atomic.Value // []lagPhase

// setLagPhases([{name, startMs, endMs}]).
func setLagPhases(list []lagPhase) {
	lagPhases.Store(append([]lagPhase(nil), list...))
}

// phaseAt: the phase holding elapsedMs, "" when none does.
func phaseAt(phases []lagPhase, elapsedMs float64) string {
	for _, p := range phases {
		if elapsedMs >= p.StartMs && elapsedMs < p.EndMs {
			return p.Name
		}
	}
	return ""
}

// isLagVU: true while this VU runs the runner_lag scenario (its tag role=lag). k6 hands a VU a new
// ScenarioState each time a scenario takes it, so the answer is kept per state: on the hot path one
// context lookup and one pointer comparison.
func (m *instance) isLagVU(state *lib.State) bool {
	ss := lib.GetScenarioState(m.vu.Context())
	if ss != m.lastScenario {
		m.lastScenario = ss
		role, _ := state.Tags.GetCurrentValues().Tags.Get("role")
		m.lastIsLag = role == lagRole
	}
	return m.lastIsLag
}

// lagSample(): one sample: sleep about LagIntervalMs, record the oversleep in ms. The sleep varies by
// +-50% so that the wake-ups do not fall in step with a CPU quota's period (CFS: 100 ms): 32 VUs
// sleeping exactly 400 ms woke at the same point of every period and missed a runner throttled to
// 25% of a core. A sleep the end of the scenario interrupts records nothing.
func (m *instance) lagSample() error {
	state := m.vu.State()
	if state == nil {
		return errors.New("bench.lagSample must be called from a VU, not the init context")
	}
	ctx := m.vu.Context()
	interval := time.Duration(float64(LagIntervalMs) * (0.5 + rand.Float64()) * float64(time.Millisecond)) //nolint:gosec
	t0 := time.Now()
	timer := time.NewTimer(interval)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
		return nil
	}
	late := time.Since(t0) - interval
	if late < 0 {
		late = 0
	}
	ctm := state.Tags.GetCurrentValues()
	tags := ctm.Tags
	if phases, _ := lagPhases.Load().([]lagPhase); len(phases) > 0 {
		if ss := lib.GetScenarioState(ctx); ss != nil {
			if name := phaseAt(phases, float64(t0.Sub(ss.StartTime))/float64(time.Millisecond)); name != "" {
				tags = tags.With("step", name)
			}
		}
	}
	now := time.Now()
	push := func(metric *metrics.Metric, v float64) {
		metrics.PushIfNotDone(ctx, state.Samples, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags},
			Time:       now,
			Metadata:   ctm.Metadata,
			Value:      v,
		})
	}
	push(m.lag.lag, float64(late)/float64(time.Millisecond))
	if state.GetScenarioVUIter != nil && state.GetScenarioVUIter()%runtimeEvery == 0 {
		rt := m.runtimeStats()
		if s, ok := rt["sched_latency_ms"].(map[string]interface{}); ok {
			if p99, ok := s["p99"].(float64); ok {
				push(m.lag.schedP99, p99)
			}
		}
		if f, ok := rt["gc_cpu_fraction"].(float64); ok {
			push(m.lag.gcCPU, f)
		}
		th := m.cpuThrottling()
		if th["cgroup"] != nil {
			if r, ok := th["throttled_ratio"].(float64); ok {
				push(m.lag.throttled, r)
			}
		}
	}
	return nil
}
