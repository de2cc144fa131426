package harness

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/wsched/wsched/benchmarks/workload"
)

// UnitProbeNs is the host-speed probe recorded beside every sample: the
// median time of probeRuns runs of a fixed computation (probeUnits rounds
// of workload.Spin, a dependent chain of shifts and xors with no memory
// traffic: 37.1–37.8 µs on the 2-vCPU AMD EPYC KVM guest in
// benchmarks/results/epyc2/matrix-w12-c20/final-summary.txt), taken just
// before the sample's timed iterations, on the goroutine that times them. It
// measures the machine, not the target: it moves when the clock changes,
// a neighbour computes on the same core, or the runtime works in the
// background (it read 59.1 µs in one configuration of matrix-w12-c20/fb7b491-summary.txt,
// the scavenger returning a previous configuration's memory). Summaries
// flag a comparison whose two sides ran with probes proven different, and
// `compare` warns when two files' probes differ: the difference may be the
// machine's.
const UnitProbeNs = "probe-ns"

// probeUnits is the probe's work: fixed, not calibrated to the machine,
// so that the probe itself tells a slower machine from a faster one.
const (
	probeUnits = 20_000
	probeRuns  = 5
)

// probeFlag is the smallest difference between two sets of probes that a
// summary or compare reports (besides being proven at 95%): below it the
// host's speed is the same for any purpose here.
const probeFlag = 0.05

// HostProbe times the probe probeRuns times and returns the median in
// nanoseconds.
func HostProbe() float64 {
	var ds [probeRuns]time.Duration
	for i := range ds {
		t0 := time.Now()
		workload.Spin(probeUnits)
		ds[i] = time.Since(t0)
	}
	s := ds[:]
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return float64(s[probeRuns/2])
}

// probeShift reports whether two sets of probes differ by more than
// probeFlag, proven at 95% confidence, and by how much (other over base,
// minus one).
func probeShift(base, other []float64) (float64, bool) {
	if len(base) < 2 || len(other) < 2 {
		return 0, false
	}
	v := Judge(base, other)
	if math.IsNaN(v.Ratio) || !v.Significant() || math.Abs(v.Ratio-1) < probeFlag {
		return v.Ratio - 1, false
	}
	return v.Ratio - 1, true
}

// writeProbeWarning writes compare's warning when the two files' probes
// (every sample of each) differ, and reports whether it wrote one.
func writeProbeWarning(w io.Writer, oldSet, newSet *Set) bool {
	pool := func(s *Set) []float64 {
		var out []float64
		for _, n := range s.Names {
			out = append(out, s.Values(n, UnitProbeNs)...)
		}
		return out
	}
	o, n := pool(oldSet), pool(newSet)
	if len(o) == 0 || len(n) == 0 {
		if len(o)+len(n) > 0 {
			fmt.Fprintln(w, "note: only one file has host-speed probes (probe-ns); the machines' speeds cannot be compared")
		}
		return false
	}
	d, shifted := probeShift(o, n)
	if !shifted {
		return false
	}
	fmt.Fprintf(w, "WARNING: the host-speed probe differs between the files (median %s old, %s new, %+.1f%%): the machine ran at a different speed, and differences below may be its.\n",
		FormatNs(Summarize(o).Center), FormatNs(Summarize(n).Center), 100*d)
	return true
}
