// Command gcmark builds a synthetic heap, marks it in parallel on a wsched
// scheduler, checks the result against a sequential breadth-first search
// and prints each stage's makespan beside its lower bound.
//
//	go run ./examples/gcmark/main -scale 1 -workers 2
//	go run ./examples/gcmark/main -wake wake-all -steal steal-one -trace gcmark.pftrace
//	go run ./examples/gcmark/main -shape powerlaw -closure edges
//
// With -compare it times markers against each other instead, one cycle of
// each in turn per round (interleaved, so that a change in the machine's
// load hits them all alike), and prints per marker the median cycle, its
// range and 95% confidence interval, and its speed relative to the
// sequential depth-first marker (seq-dfs):
//
//	go run ./examples/gcmark/main -compare seq-dfs,seq-dfs-atomic,seq-bfs,goroutines,parts,dfs,edges -workers 1,2 -rounds 15
//
// With seq-dfs and seq-dfs-atomic both compared it ends with the CAS
// ceiling for each count of workers over one: the speed that workers
// sharing seq-dfs-atomic's cycle with no loss would reach, the most that
// markers setting one bitmap's bits by CAS can (parts sets them plainly).
//
// On a machine shared with other jobs, -quiet 0.1 runs a cycle again when
// other processes used more than a tenth of a CPU while it ran.
//
// A marker is a baseline's name (seq-dfs, seq-dfs-atomic, seq-bfs,
// goroutines) or a Closure design (parts, dfs, edges, worklist) on the scheduler,
// each at every count of -workers (the sequential ones at one). -sweep
// batch compares the batch sizes of seq-dfs and dfs at every count of
// -workers; -sweep parts the parts marker's partitions per worker (1 to
// 64), -sweep split the dfs marker's split settings (every × share × keep
// × local order) and -sweep policy the scheduler's policies (wake × steal
// × local order) for the -closure design, at the last count of -workers;
// each beside seq-dfs:
//
//	go run ./examples/gcmark/main -sweep parts -workers 2 -rounds 20
//
// Open a trace file in https://ui.perfetto.dev.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/examples/gcmark/heapdump"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
)

func main() {
	scale := flag.Float64("scale", 1, "heap size: 1 is 2 Mi objects")
	seed := flag.Uint64("seed", 1, "heap seed")
	var shape gcmark.HeapShape = gcmark.ShapeBuilt
	flag.TextVar(&shape, "shape", gcmark.ShapeBuilt, "heap shape: built (allocated depth-first) or powerlaw")
	longRange := flag.Float64("longrange", -1, "built heap: share of long-range references (negative: the default, 0.05)")
	workers := flag.String("workers", strconv.Itoa(runtime.GOMAXPROCS(0)), "workers (a comma-separated list with -compare and -sweep)")
	var opts gcmark.Options
	cfg := &opts.Scheduler
	flag.TextVar(&cfg.Wake, "wake", scheduler.WakePolicy(0), "wake policy: wake-one, wake-all, wake-n, wake-searcher, default")
	flag.TextVar(&cfg.Steal, "steal", scheduler.StealPolicy(0), "steal policy: steal-one, steal-half, default")
	flag.IntVar(&cfg.StealLimit, "steal-limit", 0, "most packets a steal-half steal takes, 1…128 (0: the default, 128)")
	flag.TextVar(&cfg.Local, "local", scheduler.LocalPolicy(0), "local order: local-private, local-lifo, local-fifo, default")
	flag.TextVar(&opts.Trace, "closure", gcmark.TraceAuto, "Closure design: auto (dfs on one worker; on more, parts or worklist, chosen from the heap), parts (a range of objects per packet, plain mark bits), dfs (mark stacks, split for idle workers), edges (MMTk's 4096-slot edge buffers) or worklist (a scheduler.Worklist of objects)")
	flag.IntVar(&opts.Partitions, "partitions", 0, "parts: ranges of objects (0: one with one worker, else the default per worker)")
	flag.IntVar(&opts.SplitEvery, "split-every", 0, "dfs: objects scanned between two ShouldSplit calls (0: the default)")
	flag.Float64Var(&opts.SplitShare, "split-share", 0, "dfs: share of the mark stack given away on a split (0: the default)")
	flag.BoolVar(&opts.KeepRest, "keep-rest", false, "dfs: on a split, go on with the rest of the stack (default: spawn it too, and return)")
	flag.IntVar(&opts.Batch, "batch", 0, "dfs and the depth-first baselines: objects popped at once (0: the default)")
	flag.TextVar(&opts.CodeCache, "codecache", gcmark.CodeCachePriority, "how the code-cache roots are queued: priority, last, split")
	flag.IntVar(&opts.RootSlotWork, "root-work", 0, "work per root slot in xorshift rounds (0: the default, negative: none)")
	cycles := flag.Int("cycles", 3, "GC cycles to run")
	traceFile := flag.String("trace", "", "write a Perfetto trace of the last cycle to this file")
	compare := flag.String("compare", "", "time these markers against each other, interleaved (see the package doc)")
	sweep := flag.String("sweep", "", "sweep the depth-first markers' batch (batch), the dfs marker's split settings (split), the scheduler's policies for the -closure design (policy) or the parts marker's partitions per worker (parts)")
	rounds := flag.Int("rounds", 10, "-compare, -sweep: rounds (samples per marker)")
	dump := flag.String("dump", "", "mark the heap of this Go heap dump (runtime/debug.WriteHeapDump; `go run ./examples/gcmark/heapdump/main gen` makes them) instead of a generated one")
	quiet := flag.Float64("quiet", 0, "-compare, -sweep: run a cycle again (up to 5 tries) when other processes, and the hypervisor's steal, used more than this share of one CPU during it (Linux; 0: never)")
	flag.Parse()

	hc := gcmark.DefaultHeapConfig(*scale, *seed)
	if shape == gcmark.ShapePowerLaw {
		hc = gcmark.PowerLawHeapConfig(*scale, *seed)
	}
	if *longRange >= 0 {
		hc.LongRange = *longRange
	}
	newHeap := func() (*gcmark.Heap, error) { return gcmark.NewHeap(hc), nil }
	if *dump != "" {
		newHeap = func() (*gcmark.Heap, error) { return heapdump.LoadHeap(*dump) }
	}
	ws, err := parseWorkers(*workers)
	if err == nil {
		switch {
		case *compare != "" || *sweep != "":
			err = runCompare(os.Stdout, newHeap, opts, ws, *compare, *sweep, *rounds, *quiet)
		case len(ws) != 1:
			err = errors.New("-workers: one count without -compare or -sweep")
		default:
			err = run(newHeap, ws[0], opts, *cycles, *traceFile)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gcmark:", err)
		os.Exit(1)
	}
}

func parseWorkers(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-workers: %q is not a worker count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// run marks the heap cycles times on a scheduler configured by opts.
func run(newHeap func() (*gcmark.Heap, error), workers int, opts gcmark.Options, cycles int, traceFile string) error {
	// 1. The heap, and the answer a sequential mark gives.
	t0 := time.Now()
	h, err := newHeap()
	if err != nil {
		return err
	}
	fmt.Printf("heap: %v (built in %v)\n", h, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	want := h.MarkSequential()
	seq := time.Since(t0)
	fmt.Printf("sequential BFS: %d objects marked in %v\n", want.Count(), seq.Round(time.Microsecond))

	// 2. A marker: a scheduler with stages Prepare → Closure → Release.
	var rec *trace.Recorder
	if traceFile != "" {
		rec = trace.NewRecorder(workers, trace.Options{Overwrite: true})
	}
	opts.Scheduler.Workers, opts.Scheduler.Tracer = workers, rec
	m, err := gcmark.NewMarker(h, opts)
	if err != nil {
		return err
	}
	defer m.Close()

	// 3. GC cycles; each must mark exactly what the BFS marked.
	for c := range cycles {
		r, err := m.Mark(context.Background())
		if err != nil {
			return err
		}
		if d := gcmark.FirstDifference(m.Marks(), want); d >= 0 {
			return fmt.Errorf("cycle %d: object %d marked differently from the sequential BFS", c+1, d)
		}
		fmt.Printf("\ncycle %d: %d marked, %d slots traced in %v (%.2f× the sequential BFS); steals %d, wake-ups %d, splits %d, forwarded %d\n",
			c+1, r.Marked, r.Slots, r.Elapsed.Round(time.Microsecond), float64(seq)/float64(r.Elapsed), r.Stats.Steals, r.Stats.Wakes, r.Splits, r.Forwarded)
		fmt.Printf("  %-8s %8s %12s %12s %12s %7s\n", "stage", "packets", "makespan", "lower bound", "longest", "ratio")
		for _, s := range r.Stages {
			fmt.Printf("  %-8s %8d %12v %12v %12v %7.3f\n", s.Name, s.Packets,
				s.Makespan.Round(time.Microsecond), s.LowerBound.Round(time.Microsecond), s.Longest.Round(time.Microsecond), s.Ratio())
		}
	}

	// 4. The trace of the last cycle.
	if rec != nil {
		st, err := perfetto.WriteFile(traceFile, rec.Snapshot(), perfetto.Options{ProcessName: "gcmark"})
		if err != nil {
			return err
		}
		fmt.Printf("\ntrace: %s (%d bytes, %d packet slices); open it in https://ui.perfetto.dev\n", traceFile, st.Bytes, st.Slices)
	}
	return nil
}

// A contender is one marker of a comparison.
type contender struct {
	name    string
	workers int
	new     func(h *gcmark.Heap) (marker, error)

	m       marker
	elapsed []float64    // ms per cycle
	stage   [3][]float64 // ms of each stage (Prepare, Closure, Release) per cycle
	bound   [3][]float64 // each stage's makespan ÷ lower bound per cycle
	ratio   []float64    // per round: seq-dfs's cycle ÷ this one's
	splits  int64
	steals  uint64
	redone  int // cycles run again: others were busy (-quiet)
	busy    int // cycles kept though others were busy after maxTries
}

// marker is what a Marker and a Baseline have in common.
type marker interface {
	Mark(context.Context) (gcmark.Result, error)
}

// contenders lists the markers of -compare, or of -sweep's grid.
func contenders(list, sweep string, opts gcmark.Options, workers []int) ([]*contender, error) {
	var out []*contender
	baselineBatch := func(k gcmark.BaselineKind, w int, batch int, name string) {
		out = append(out, &contender{name: name, workers: w, new: func(h *gcmark.Heap) (marker, error) {
			return gcmark.NewBaseline(h, k, gcmark.BaselineOptions{Workers: w, RootSlotWork: opts.RootSlotWork, Batch: batch})
		}})
	}
	baseline := func(k gcmark.BaselineKind, w int) {
		name := k.String()
		if k == gcmark.Goroutines {
			name = fmt.Sprintf("%v/%d", k, w)
		}
		baselineBatch(k, w, opts.Batch, name)
	}
	wsched := func(name string, o gcmark.Options, w int) {
		o.Scheduler.Workers = w
		out = append(out, &contender{name: name, workers: w, new: func(h *gcmark.Heap) (marker, error) {
			return gcmark.NewMarker(h, o)
		}})
	}
	w := workers[len(workers)-1]
	switch sweep {
	case "":
	case "split":
		baseline(gcmark.SequentialDFS, 1)
		for _, local := range []scheduler.LocalPolicy{scheduler.LocalPrivate, scheduler.LocalLIFO} {
			for _, keep := range []bool{false, true} {
				for _, every := range []int{16, 64, 256} {
					for _, share := range []float64{0.25, 0.5, 0.75} {
						o := opts
						o.Trace, o.SplitEvery, o.SplitShare, o.KeepRest, o.Scheduler.Local = gcmark.TraceDepthFirst, every, share, keep, local
						wsched(fmt.Sprintf("dfs/%d/every=%d/share=%g/keep=%v/%v", w, every, share, keep, local), o, w)
					}
				}
			}
		}
		return out, nil
	case "batch":
		baseline(gcmark.SequentialDFS, 1)
		for _, batch := range []int{1, 8, 16, 32, 48, 64} {
			baselineBatch(gcmark.SequentialDFS, 1, batch, fmt.Sprintf("seq-dfs/batch=%d", batch))
			for _, w := range workers {
				o := opts
				o.Trace, o.Batch = gcmark.TraceDepthFirst, batch
				wsched(fmt.Sprintf("dfs/%d/batch=%d", w, batch), o, w)
			}
		}
		return out, nil
	case "policy":
		baseline(gcmark.SequentialDFS, 1)
		for _, local := range []scheduler.LocalPolicy{scheduler.LocalPrivate, scheduler.LocalLIFO, scheduler.LocalFIFO} {
			for _, wake := range []scheduler.WakePolicy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher} {
				for _, steal := range []scheduler.StealPolicy{scheduler.StealOne, scheduler.StealHalf} {
					o := opts // the design of -closure
					o.Scheduler.Wake, o.Scheduler.Steal, o.Scheduler.Local = wake, steal, local
					wsched(fmt.Sprintf("%v/%d/%v/%v/%v", o.Trace, w, wake, steal, local), o, w)
				}
			}
		}
		return out, nil
	case "parts":
		baseline(gcmark.SequentialDFS, 1)
		for _, per := range []int{1, 2, 4, 8, 16, 32, 64} {
			o := opts
			o.Trace, o.Partitions = gcmark.TracePartitioned, per*w
			wsched(fmt.Sprintf("parts/%d/per-worker=%d", w, per), o, w)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("-sweep %q: want batch, split, policy or parts", sweep)
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if k, err := gcmark.ParseBaseline(name); err == nil {
			if k != gcmark.Goroutines {
				baseline(k, 1)
				continue
			}
			for _, w := range workers {
				baseline(k, w)
			}
			continue
		}
		var tr gcmark.Tracing
		if err := tr.UnmarshalText([]byte(name)); err != nil {
			return nil, fmt.Errorf("-compare: %q is neither a baseline (seq-dfs, seq-dfs-atomic, seq-bfs, goroutines) nor a Closure design (auto, dfs, edges, parts, worklist)", name)
		}
		for _, w := range workers {
			o := opts
			o.Trace = tr
			wsched(fmt.Sprintf("%v/%d", tr, w), o, w)
		}
	}
	return out, nil
}

// runCompare times the contenders against each other, interleaved: each
// round runs one cycle of each, starting one further along the list each
// round, and checks its marks. The first round is a warm-up, not counted.
func runCompare(out io.Writer, newHeap func() (*gcmark.Heap, error), opts gcmark.Options, workers []int, list, sweep string, rounds int, quiet float64) error {
	cs, err := contenders(list, sweep, opts, workers)
	if err != nil {
		return err
	}
	if rounds < 1 {
		return errors.New("-rounds: want at least 1")
	}
	h, err := newHeap()
	if err != nil {
		return err
	}
	want := h.MarkSequential()
	for _, c := range cs {
		if c.m, err = c.new(h); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if mk, ok := c.m.(*gcmark.Marker); ok && strings.HasPrefix(c.name, "auto/") {
			tr, _ := mk.Tracing()
			c.name = fmt.Sprintf("auto=%v/%d", tr, c.workers) // what auto chose
		}
		if cl, ok := c.m.(interface{ Close() error }); ok {
			defer cl.Close()
		}
	}
	var ref *contender // seq-dfs, if compared
	for _, c := range cs {
		if c.name == gcmark.SequentialDFS.String() {
			ref = c
		}
	}
	load0, t0 := loadavg(), time.Now()
	for round := range rounds + 1 {
		cycle := make([]float64, len(cs))
		for i := range cs {
			c := cs[(i+round)%len(cs)]
			var r gcmark.Result
			for try := 1; ; try++ {
				before := cpuTicks()
				r, err = c.m.Mark(context.Background())
				if err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				if quiet <= 0 || !busy(before, cpuTicks(), r.Elapsed, quiet) {
					break
				}
				if try == maxTries {
					if round > 0 {
						c.busy++
					}
					break
				}
				if round > 0 {
					c.redone++
				}
			}
			if r.Marked != int64(want.Count()) {
				return fmt.Errorf("%s marked %d objects, the sequential BFS %d", c.name, r.Marked, want.Count())
			}
			if round == 0 {
				continue
			}
			ms := float64(r.Elapsed) / 1e6
			cycle[(i+round)%len(cs)] = ms
			c.elapsed = append(c.elapsed, ms)
			for s := range c.stage {
				c.stage[s] = append(c.stage[s], float64(r.Stages[s].Makespan)/1e6)
				c.bound[s] = append(c.bound[s], r.Stages[s].Ratio())
			}
			c.splits += r.Splits
			c.steals += r.Stats.Steals
		}
		if ref != nil && round > 0 {
			for i, c := range cs {
				c.ratio = append(c.ratio, cycle[slices.Index(cs, ref)]/cycle[i])
			}
		}
	}
	fmt.Fprintf(out, "gcmark -compare: %s\n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(out, "heap: %v\n", h)
	wmax := slices.Max(workers)
	fmt.Fprintf(out, "sampled crossing share (gcmark.SampleCrossing over %d objects, %d ranges as parts uses at %d workers): %.3f\n",
		gcmark.AutoSampleObjects, gcmark.DefaultPartitionsPerWorker*wmax, wmax, gcmark.SampleCrossing(h, gcmark.DefaultPartitionsPerWorker*wmax, gcmark.AutoSampleObjects))
	fmt.Fprintf(out, "commit %s, %s, %s, GOMAXPROCS %d, %s; load average %s at the start, %s at the end (%v)\n",
		commit(), time.Now().UTC().Format("2006-01-02"), runtime.Version(), runtime.GOMAXPROCS(0), cpuModel(), load0, loadavg(), time.Since(t0).Round(time.Second))
	fmt.Fprintf(out, "%d rounds after one of warm-up, each marker once a round in turn; ms per cycle (median, range, 95%% CI of the median);\n", rounds)
	fmt.Fprintf(out, "speed = seq-dfs's cycle ÷ this marker's, per round (median and 95%% CI); prep, closure, rel = the stages' medians;\n")
	fmt.Fprintf(out, "bounds = each stage's makespan ÷ lower bound, max(longest packet, work ÷ workers), median (Prepare/Closure/Release)\n")
	if quiet > 0 {
		fmt.Fprintf(out, "a cycle was run again (redone) when other processes used more than %.0f%% of a CPU during it, up to %d tries (then kept: busy)\n", 100*quiet, maxTries)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%-44s %8s %17s %17s %6s %8s %6s %14s %18s %7s %7s %6s %5s\n", "marker", "median", "range", "95% CI", "prep", "closure", "rel", "bounds", "speed vs seq-dfs", "splits", "steals", "redone", "busy")
	for _, c := range cs {
		med, lo, hi := medianCI(c.elapsed)
		speed := "-"
		if ref != nil {
			m, l, u := medianCI(c.ratio)
			speed = fmt.Sprintf("%.3f [%.3f,%.3f]", m, l, u)
		}
		var sm, bm [3]float64
		for s := range sm {
			sm[s], _, _ = medianCI(c.stage[s])
			bm[s], _, _ = medianCI(c.bound[s])
		}
		n := float64(len(c.elapsed))
		fmt.Fprintf(out, "%-44s %8.2f %17s %17s %6.2f %8.2f %6.2f %14s %18s %7.1f %7.1f %6d %5d\n", c.name, med,
			fmt.Sprintf("%.2f–%.2f", slices.Min(c.elapsed), slices.Max(c.elapsed)), fmt.Sprintf("[%.2f, %.2f]", lo, hi),
			sm[0], sm[1], sm[2], fmt.Sprintf("%.2f/%.2f/%.2f", bm[0], bm[1], bm[2]), speed, float64(c.splits)/n, float64(c.steals)/n, c.redone, c.busy)
	}
	ceiling(out, cs, ref, workers)
	return nil
}

// ceiling prints, for each count of workers over one, the CAS ceiling:
// the speed against seq-dfs that those workers would reach if they shared
// seq-dfs-atomic's cycle among them with no loss at all, workers ×
// seq-dfs-atomic's speed. Workers that set the bits of one bitmap by CAS
// (dfs, edges, goroutines) cannot beat it; the parts design, whose
// partitions set theirs plainly, can. Where seq-dfs or seq-dfs-atomic is
// not compared there is nothing to print.
func ceiling(out io.Writer, cs []*contender, ref *contender, workers []int) {
	i := slices.IndexFunc(cs, func(c *contender) bool { return c.name == gcmark.SequentialDFSAtomic.String() })
	if ref == nil || i < 0 {
		return
	}
	sp, _, _ := medianCI(cs[i].ratio)
	for _, w := range workers {
		if w > 1 {
			fmt.Fprintf(out, "CAS ceiling at %d workers: %.3f× seq-dfs (%d × seq-dfs-atomic's speed: its cycle shared with no loss)\n", w, float64(w)*sp, w)
		}
	}
}

// maxTries bounds the cycles run for one sample under -quiet: retrying
// forever would only add to a busy neighbour's load.
const maxTries = 5

// ticks are CPU times in clock ticks (USER_HZ, 100 a second on Linux).
type ticks struct{ busy, self int64 }

// cpuTicks reads the machine's busy time (user, nice, system, irq,
// softirq, steal: /proc/stat) and this process's (/proc/self/stat); zero
// where they cannot be read.
func cpuTicks() ticks {
	var t ticks
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
			if i < len(f) {
				v, _ := strconv.ParseInt(f[i], 10, 64)
				t.busy += v
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		s := string(b)
		if j := strings.LastIndexByte(s, ')'); j >= 0 {
			f := strings.Fields(s[j+1:]) // f[0] is field 3, state
			if len(f) > 12 {
				u, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
				k, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
				t.self = u + k
			}
		}
	}
	return t
}

// busy reports whether, between a and b (a cycle of length d), others used
// more than share of one CPU: the machine's busy ticks beyond this
// process's. At 100 ticks a second a cycle of 100 ms is 10 ticks a CPU,
// so the test is coarse, and meant for a neighbour's build, not a blip.
func busy(a, b ticks, d time.Duration, share float64) bool {
	others := (b.busy - a.busy) - (b.self - a.self)
	return float64(others) > share*d.Seconds()*100
}

// medianCI returns the median of xs and a 95% confidence interval for it
// from order statistics (the binomial's normal approximation).
func medianCI(xs []float64) (med, lo, hi float64) {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	k := 1.96 * math.Sqrt(float64(n)) / 2
	l := max(int(math.Floor(float64(n)/2-k)), 0)
	u := min(int(math.Ceil(float64(n)/2+k)), n-1)
	return med, s[l], s[u]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// commit returns the commit measured: the build's VCS stamp, else git's
// HEAD (with -dirty for uncommitted changes to tracked files).
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			rev = rev[:min(len(rev), 12)]
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	b, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(b))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "-dirty"
	}
	return c
}
