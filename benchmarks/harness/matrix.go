package harness

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"time"

	"golang.org/x/perf/benchfmt"
)

// A Config is one cell of the matrix: a workload on a target with a worker
// count.
type Config struct {
	Workload *Workload
	Target   Target
	Workers  int
	// Variant distinguishes otherwise identical configurations (the A/A
	// self-test runs the same build twice as variant A and B). "" for none.
	Variant string
	// extra is the planted slowdown (self-tests only): the fraction of
	// extra work per packet.
	extra float64
}

// Name is the configuration's benchmark name, without the "Benchmark"
// prefix: "Fanout/sys=wsched/policy=default/workers=2".
func (c Config) Name() string {
	n := c.Workload.Bench + "/" + c.Target.namePart() + "/workers=" + strconv.Itoa(c.Workers)
	if c.Variant != "" {
		n += "/variant=" + c.Variant
	}
	return n
}

// RunOptions control how a matrix is measured.
type RunOptions struct {
	Count  int // K: invocations per configuration (one sample each)
	Iters  int // I: timed iterations per invocation; their median is the sample
	Warmup int // untimed iterations at the start of each invocation
	// Gap is idle time before every iteration, after its Reset: 0 runs
	// the operations back to back (separated only by Reset, tens of
	// microseconds for the task trees); a gap longer than wsched's
	// Config.ParkSpin (200 µs by default) finds its workers blocked rather
	// than polling, as between the cycles of a garbage collector that
	// runs every few milliseconds. Peers' pools park their goroutines
	// within microseconds of running out of work either way.
	Gap time.Duration
	// SetProcs sets GOMAXPROCS to the configuration's worker count during
	// each invocation, so that "workers" means cores used for every system
	// (goroutine-per-task systems included). Restored after.
	SetProcs bool
	// Fingerprint is written as file configuration before the results.
	Fingerprint *Fingerprint
	// Command, if set, is recorded as the "command" configuration line.
	Command string
	// Out receives the raw results in the Go benchmark format as they are
	// measured (nil: keep them only in memory).
	Out      io.Writer
	Progress *Progress
}

// Measurement units, beside ns/op in every result: garbage is throughput
// (garbage is throughput: OTP 27 cost RabbitMQ ~40% through GC alone), so allocations and GC cycles stand beside every speed.
const (
	UnitNsOp     = "ns/op"
	UnitNsTask   = "ns/task"
	UnitAllocsOp = "allocs/op"
	UnitBytesOp  = "B/op"
	UnitGCsOp    = "GCs/op"
	// UnitCPUOp is the process's CPU time (user + system, every thread)
	// per operation: what a system that spins or polls pays for its speed
	// (wsched's parked workers poll for Config.ParkSpin). Unix only.
	UnitCPUOp = "cpu-ns/op"
)

// RunMatrix measures every configuration Count times, interleaving them:
// round k runs every configuration once, starting at configuration k mod n
// (A B, B A, ... for two), so that drift in the machine (other load,
// frequency, a background GC) falls on all configurations alike and no
// configuration always runs first. It returns the results in the order
// measured.
func RunMatrix(cfgs []Config, o RunOptions) ([]*benchfmt.Result, error) {
	if o.Count < 1 || o.Iters < 1 || o.Warmup < 0 || o.Gap < 0 {
		return nil, fmt.Errorf("harness: count and iters must be >= 1, warmup and gap >= 0")
	}
	var w *benchfmt.Writer
	if o.Out != nil {
		w = benchfmt.NewWriter(o.Out)
	}
	var fileCfg []benchfmt.Config
	if o.Fingerprint != nil {
		fileCfg = o.Fingerprint.Config()
		fileCfg = append(fileCfg,
			benchfmt.Config{Key: "invocations", Value: []byte(strconv.Itoa(o.Count)), File: true},
			benchfmt.Config{Key: "iterations", Value: []byte(strconv.Itoa(o.Iters)), File: true},
			benchfmt.Config{Key: "warmup", Value: []byte(strconv.Itoa(o.Warmup)), File: true},
			benchfmt.Config{Key: KeyGap, Value: []byte(o.Gap.String()), File: true},
			benchfmt.Config{Key: "procs", Value: []byte(procsNote(o.SetProcs)), File: true})
		if o.Command != "" {
			fileCfg = append(fileCfg, benchfmt.Config{Key: "command", Value: []byte(o.Command), File: true})
		}
	}
	var out []*benchfmt.Result
	n := len(cfgs)
	for k := 0; k < o.Count; k++ {
		for j := 0; j < n; j++ {
			c := cfgs[(k+j)%n]
			res, err := Invoke(c, o)
			if err != nil {
				return out, fmt.Errorf("%s: %w", c.Name(), err)
			}
			res.Config = fileCfg
			if w != nil {
				if err := w.Write(res); err != nil {
					return out, err
				}
			}
			out = append(out, res)
			o.Progress.Step(c.Name())
		}
	}
	return out, nil
}

func procsNote(set bool) string {
	if set {
		return "GOMAXPROCS set to the worker count of each configuration"
	}
	return "GOMAXPROCS unchanged"
}

// Invoke runs one invocation of c: a fresh target, Warmup untimed
// iterations with a full GC before the last of them, then Iters timed
// iterations, each timed alone (Reset and the Gap before each are not
// timed). The result's ns/op is the median of the timed iterations;
// allocations and GC cycles are means per operation, from runtime.MemStats
// deltas around them.
//
// The GC comes before the last warm-up iteration, not after it, so that
// the timed iterations start from a warm target (the earlier warm-up's and
// the set-up's garbage collected, the last warm-up's left): a GC right
// before the first timed iteration idles every worker for its length, long
// enough for wsched's parked workers to stop polling (Config.ParkSpin) and
// block, and the first timed fork-join of every invocation then waited
// for its second worker as long as after an idle gap (BenchmarkSecondWorkerStart
// in the benchmarks module, 2 workers: 156–158 µs right after a GC against
// 2.2–3.3 µs back to back). With no warm-up the GC precedes the timed
// iterations.
//
// That GC is debug.FreeOSMemory, a GC that also returns the freed memory
// to the OS before it returns: with runtime.GC alone, the runtime's
// background scavenger went on returning what the previous configuration
// had freed (errgroup's and go+WaitGroup's goroutine stacks, pond's
// buffers) through the last warm-up and the host-speed probe: the probe of
// the channel pool's irregular tree on 2 workers read 37 µs run alone and
// 41–86 µs right after an errgroup or ants invocation, against 37–40 µs
// (one 91) with FreeOSMemory, in harness binaries alternating three times.
// The timed iterations that followed showed no consistent difference
// (8.5–10.8 ms against 8.2–12.4 ms, the machine drifting), but a probe
// that reads the runtime's own clean-up instead of the machine would flag
// comparisons for the wrong reason.
func Invoke(c Config, o RunOptions) (*benchfmt.Result, error) {
	if o.SetProcs {
		prev := runtime.GOMAXPROCS(c.Workers)
		defer runtime.GOMAXPROCS(prev)
	}
	r, err := c.Workload.New(c.Target, c.Workers, c.extra)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()
	for i := range o.Warmup {
		if i == o.Warmup-1 {
			debug.FreeOSMemory()
		}
		r.Reset()
		idle(o.Gap)
		if err := r.Op(); err != nil {
			return nil, err
		}
	}
	if o.Warmup == 0 {
		debug.FreeOSMemory()
	}
	// The harness's own allocations come before m0: only the target's
	// count. (times, allocated after m0, was 0.2 allocs/op at 5 iterations
	// for every system: Go stack-allocates a make of at most 32 bytes, so
	// 3 iterations showed none.)
	times := make([]time.Duration, 0, o.Iters)
	probe := HostProbe() // the machine's speed now, untimed, before the counts
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, cpuOK := ProcessCPU()
	for range o.Iters {
		r.Reset()
		idle(o.Gap)
		t0 := time.Now()
		err := r.Op()
		times = append(times, time.Since(t0))
		if err != nil {
			return nil, err
		}
	}
	cpu1, _ := ProcessCPU()
	runtime.ReadMemStats(&m1)
	closed = true
	if err := r.Close(); err != nil {
		return nil, err
	}
	iters := float64(o.Iters)
	nsOp := medianDuration(times)
	res := &benchfmt.Result{Name: benchfmt.Name(c.Name()), Iters: o.Iters}
	res.Values = append(res.Values, benchfmt.Value{Value: nsOp, Unit: UnitNsOp})
	if c.Workload.Tasks != nil {
		if t := c.Workload.Tasks(); t > 0 {
			res.Values = append(res.Values, benchfmt.Value{Value: round3(nsOp / float64(t)), Unit: UnitNsTask})
		}
	}
	res.Values = append(res.Values,
		benchfmt.Value{Value: round3(float64(m1.Mallocs-m0.Mallocs) / iters), Unit: UnitAllocsOp},
		benchfmt.Value{Value: round3(float64(m1.TotalAlloc-m0.TotalAlloc) / iters), Unit: UnitBytesOp},
		benchfmt.Value{Value: round3(float64(m1.NumGC-m0.NumGC) / iters), Unit: UnitGCsOp})
	if cpuOK {
		res.Values = append(res.Values, benchfmt.Value{Value: round3(float64(cpu1-cpu0) / iters), Unit: UnitCPUOp})
	}
	res.Values = append(res.Values, benchfmt.Value{Value: round3(probe), Unit: UnitProbeNs})
	return res, nil
}

// KeyGap is the file configuration key of RunOptions.Gap.
const KeyGap = "gap"

// idle blocks the calling goroutine for d (nothing for 0), without
// spinning: the gap is meant to leave the machine idle.
func idle(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

// medianDuration is the median of ds in nanoseconds (the mean of the two
// middle values for an even count). The sample of an invocation is the
// median of its iterations, not their mean: one iteration preempted by
// another process (this machine is shared) then moves the sample little.
func medianDuration(ds []time.Duration) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return (float64(s[n/2-1]) + float64(s[n/2])) / 2
}

// round3 keeps three decimals: the fourth is noise and makes files wide.
func round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return v
}
