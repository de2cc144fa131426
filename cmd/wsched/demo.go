package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/examples/prepare"
	"github.com/wsched/wsched/examples/stagetime"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
)

// defaultPolicies is what `wsched demo` runs without -policy: the five
// Prepare-stage configurations of the luindex case, and the mark under
// MMTk's policies (bulk adds wake all, steal one, FIFO deque) and three of
// wsched's.
const defaultPolicies = "a,b,c,d,e,a+learn,b+learn,e+learn,all/one/fifo,searcher/half,n/half,one/batch:8"

const demoUsage = `usage: wsched demo [flags]

Runs two jobs on the wsched scheduler under several policy configurations
and prints, per stage, the makespan beside its lower bound
max(longest packet, work ÷ workers), the steals and wake-ups, and the time
per packet; writes a Perfetto trace per configuration.

  prepare   a model of a GC's Prepare stage (MMTk's luindex case): 64
            mutator-root packets, one designated packet per worker and one
            heavy ScanCodeCacheRoots packet (26,845 slots), then Closure.
            Configurations:
              a  one Add per packet, wake one (MMTk before #1182)
              b  one AddAll, wake all, batch takes (MMTk after #1182)
              c  b + the heavy packet in the priority lane
              d  b + the heavy packet split into 4096-slot packets
              e  b with wake-N
              a+learn, b+learn, e+learn
                 a, b, e with Config.LearnHeavy: the scheduler measures
                 each packet type's run and queues the types that bound
                 the stage first from the second cycle on, with no hint;
                 their median is over the cycles from the second on
  gcmark    a parallel mark of a synthetic heap (2 Mi objects at scale 1)
            as MMTk does it (the power-law heap, 4096-slot edge buffers),
            checked against a sequential BFS. Policies are WAKE/STEAL[/fifo]:
            WAKE one|all|n|searcher|default (Config.Wake: wake-one ...),
            STEAL one|half|batch:N|default (Config.Steal: steal-one,
            steal-half; batch:N is steal-half with Config.StealLimit N),
            fifo for a FIFO local deque (Config.Local: local-fifo).

Open the traces in https://ui.perfetto.dev (Open trace file).

Flags:
`

// demoConfig is what the flags ask for.
type demoConfig struct {
	workers int
	scale   float64
	seed    uint64
	cycles  int
	out     string
	trace   bool
	prepare []prepare.Configuration
	mark    []markPolicy
}

// markPolicy is a gcmark scheduler configuration.
type markPolicy struct {
	name string
	cfg  scheduler.Config
}

// demo is `wsched demo`. It returns the exit status: 0 ok, 1 failure,
// 2 usage.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wsched demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	var (
		c        demoConfig
		policies string
	)
	fs.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "worker goroutines")
	fs.StringVar(&policies, "policy", defaultPolicies, "comma-separated configurations: prepare's a…e and a+learn, b+learn, e+learn, gcmark's WAKE/STEAL[/fifo]")
	fs.Float64Var(&c.scale, "scale", 1, "size of both jobs (gcmark heap objects ÷ 2 Mi, prepare work per slot)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed for the heap and the mutator stacks")
	fs.IntVar(&c.cycles, "cycles", 5, "cycles per configuration; the table shows the median (by makespan)")
	fs.StringVar(&c.out, "out", "wsched-traces", "directory for the traces")
	fs.BoolVar(&c.trace, "trace", true, "write a Perfetto trace per configuration")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2 // the flag package has printed the error and the usage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "wsched demo: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q (see -h)", fs.Arg(0))
	}
	if c.workers < 1 || c.workers > 1024 {
		return usage("-workers %d: want 1 … 1024", c.workers)
	}
	if !(c.scale > 0 && c.scale <= 64) {
		return usage("-scale %v: want a number in (0, 64]", c.scale)
	}
	if c.cycles < 1 {
		return usage("-cycles %d: want at least 1", c.cycles)
	}
	if err := parsePolicies(policies, &c); err != nil {
		return usage("-policy: %v", err)
	}
	if err := runDemoJobs(context.Background(), c, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "wsched demo: %v\n", err)
		return 1
	}
	return 0
}

// parsePolicies splits the -policy list into prepare configurations and
// gcmark policies.
func parsePolicies(list string, c *demoConfig) error {
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if p, ok := prepare.Lookup(name); ok {
			c.prepare = append(c.prepare, p)
			continue
		}
		parts := strings.Split(name, "/")
		if len(parts) < 2 || len(parts) > 3 || (len(parts) == 3 && parts[2] != "fifo") {
			return fmt.Errorf("%q: want a … e or WAKE/STEAL[/fifo]", name)
		}
		cfg, err := markConfig(parts[0], parts[1])
		if err != nil {
			return err
		}
		if len(parts) == 3 {
			cfg.Local = scheduler.LocalFIFO
		}
		c.mark = append(c.mark, markPolicy{name: name, cfg: cfg})
	}
	if len(c.prepare)+len(c.mark) == 0 {
		return errors.New("no configurations")
	}
	return nil
}

// demoWakes are the wake policies by their short names in -policy.
var demoWakes = map[string]scheduler.WakePolicy{
	"default": 0, "one": scheduler.WakeOne, "all": scheduler.WakeAll, "n": scheduler.WakeN, "searcher": scheduler.WakeSearcher,
}

// markConfig returns the scheduler configuration of a gcmark policy's WAKE
// and STEAL parts.
func markConfig(wake, steal string) (scheduler.Config, error) {
	var cfg scheduler.Config
	w, ok := demoWakes[wake]
	if !ok {
		return cfg, fmt.Errorf("unknown wake policy %q (want one, all, n, searcher or default)", wake)
	}
	cfg.Wake = w
	switch steal {
	case "default":
	case "one":
		cfg.Steal = scheduler.StealOne
	case "half":
		cfg.Steal = scheduler.StealHalf
	default:
		rest, ok := strings.CutPrefix(steal, "batch:")
		if !ok {
			return cfg, fmt.Errorf("unknown steal policy %q (want one, half, batch:N or default)", steal)
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > 128 {
			return cfg, fmt.Errorf("bad steal batch limit in %q (want batch:N, 1 <= N <= 128)", steal)
		}
		cfg.Steal, cfg.StealLimit = scheduler.StealHalf, n
	}
	return cfg, nil
}

// row is one line of the comparison table.
type row struct {
	job, config string
	stage       stagetime.Stage
	workers     int
	counters    stagetime.Counters // of the whole cycle; shown on its first stage
	first       bool
}

func runDemoJobs(ctx context.Context, c demoConfig, stdout, stderr io.Writer) error {
	if c.trace {
		if err := os.MkdirAll(c.out, 0o755); err != nil {
			return err
		}
	}
	prog := newProgress(stderr, 2*time.Second)
	var rows []row
	var traces []string
	var heap string

	newTracer := func() *trace.Recorder {
		if !c.trace {
			return nil
		}
		return trace.NewRecorder(c.workers, trace.Options{Overwrite: true})
	}
	writeTrace := func(rec *trace.Recorder, file, process string) error {
		if rec == nil {
			return nil
		}
		path := filepath.Join(c.out, file)
		if _, err := perfetto.WriteFile(path, rec.Snapshot(), perfetto.Options{ProcessName: process, Origins: true}); err != nil {
			return err
		}
		traces = append(traces, path)
		return nil
	}

	// prepare: every configuration, the median cycle by Prepare makespan.
	model := prepare.DefaultModel(c.scale, c.seed)
	for _, p := range c.prepare {
		prog.printf("prepare (%s): %s", p.Name, nouns(c.cycles, "cycle"))
		rec := newTracer()
		res, err := prepare.Run(ctx, p, prepare.Options{Workers: c.workers, Model: model, Tracer: rec}, c.cycles)
		if err != nil {
			return fmt.Errorf("prepare (%s): %w", p.Name, err)
		}
		m := res.Median()
		for i, s := range []stagetime.Stage{m.Prepare, m.Closure} {
			rows = append(rows, row{job: "prepare", config: "(" + p.Name + ") " + p.Title, stage: s, workers: c.workers, counters: m.Stats, first: i == 0})
		}
		if err := writeTrace(rec, "prepare-"+p.Name+".pftrace", "prepare ("+p.Name+")"); err != nil {
			return err
		}
	}

	// gcmark: one heap, checked against the sequential BFS every cycle;
	// MMTk's design (edge buffers on the power-law heap), on which the
	// policies above are MMTk's and wsched's. examples/gcmark/main runs
	// the depth-first design on the built heap.
	if len(c.mark) > 0 {
		prog.printf("gcmark: building the heap (scale %g)", c.scale)
		h := gcmark.NewHeap(gcmark.PowerLawHeapConfig(c.scale, c.seed))
		want := h.MarkSequential()
		for _, mp := range c.mark {
			prog.printf("gcmark %s: %s", mp.name, nouns(c.cycles, "cycle"))
			rec := newTracer()
			cfg := mp.cfg
			cfg.Workers, cfg.Tracer = c.workers, rec
			results, err := markCycles(ctx, h, want, cfg, c.cycles)
			if err != nil {
				return fmt.Errorf("gcmark %s: %w", mp.name, err)
			}
			slices.SortFunc(results, func(a, b gcmark.Result) int { return int(a.Elapsed - b.Elapsed) })
			m := results[len(results)/2]
			for i, s := range m.Stages {
				rows = append(rows, row{job: "gcmark", config: mp.name, stage: s, workers: c.workers, counters: m.Stats, first: i == 0})
			}
			if err := writeTrace(rec, "gcmark-"+strings.NewReplacer("/", "-", ":", "").Replace(mp.name)+".pftrace", "gcmark "+mp.name); err != nil {
				return err
			}
		}
		heap = h.String()
	}

	fmt.Fprintf(stdout, "%d workers, scale %g, seed %d, median of %d cycles per configuration; %s\n",
		c.workers, c.scale, c.seed, c.cycles, runtime.Version())
	if heap != "" {
		fmt.Fprintf(stdout, "gcmark heap: %s\n", heap)
	}
	fmt.Fprintln(stdout)
	printTable(stdout, rows)
	fmt.Fprintln(stdout, "\nmakespan: from when the stage's work could start to its last packet's end; ratio = makespan ÷ lower bound,\n"+
		"lower bound = max(longest packet, work ÷ workers). wsched analyze and wsched simulate use the same definition\n"+
		"(\"from when its work could start\") and print beside it the stage's window, from its opening to its close.")
	if len(traces) > 0 {
		fmt.Fprintf(stdout, "\ntraces (open in https://ui.perfetto.dev):\n")
		for _, t := range traces {
			fmt.Fprintf(stdout, "  %s\n", t)
		}
	}
	return nil
}

// markCycles runs cycles GC cycles on one marker and checks each against
// the sequential mark.
func markCycles(ctx context.Context, h *gcmark.Heap, want gcmark.Bitmap, cfg scheduler.Config, cycles int) ([]gcmark.Result, error) {
	m, err := gcmark.NewMarker(h, gcmark.Options{Scheduler: cfg, Trace: gcmark.TraceEdgeBuffers})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var out []gcmark.Result
	for i := range cycles {
		r, err := m.Mark(ctx)
		if err != nil {
			return nil, err
		}
		if d := gcmark.FirstDifference(m.Marks(), want); d >= 0 {
			return nil, fmt.Errorf("cycle %d marked object %d differently from the sequential BFS", i+1, d)
		}
		out = append(out, r)
	}
	return out, nil
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "job\tconfiguration\tstage\tpackets\tmakespan\tlower bound\tratio\trun/packet\tidle/packet\tsteals\twake-ups\t")
	last := ""
	for _, r := range rows {
		job, config, steals, wakes := "", "", "", ""
		if r.first {
			config = r.config
			steals = fmt.Sprint(r.counters.Steals)
			wakes = fmt.Sprint(r.counters.Wakes)
			if r.job != last {
				job, last = r.job, r.job
			}
		}
		s := r.stage
		// idle/packet: worker time in the stage not spent running its
		// packets (waking, searching, waiting), per packet.
		idle := time.Duration(0)
		if s.Packets > 0 {
			idle = max(s.Makespan*time.Duration(r.workers)-s.Work, 0) / time.Duration(s.Packets)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%v\t%v\t%.3f\t%v\t%v\t%s\t%s\t\n", job, config, s.Name, s.Packets,
			round(s.Makespan), round(s.LowerBound), s.Ratio(), round(s.PerPacket()), round(idle), steals, wakes)
	}
	tw.Flush()
}

// round keeps three or four significant digits.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond)
	}
	return d
}

// progress prints lines to w once the run has lasted longer than after, so
// that short runs stay quiet and long ones show they are alive.
type progress struct {
	w     io.Writer
	start time.Time
	after time.Duration
}

func newProgress(w io.Writer, after time.Duration) *progress {
	return &progress{w: w, start: time.Now(), after: after}
}

func (p *progress) printf(format string, a ...any) {
	if el := time.Since(p.start); el >= p.after {
		fmt.Fprintf(p.w, "[%5.1fs] "+format+"\n", append([]any{el.Seconds()}, a...)...)
	}
}
