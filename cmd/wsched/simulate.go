package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/simulate"
)

const simulateUsage = `usage: wsched simulate [-workers LIST] [-policy LIST] [-out FILE] [-json] [-cycles] [-untraced] [-against TRACE2] TRACE

Replays the cycles recorded in TRACE on virtual workers, with the
scheduler's own policy decisions (internal/policy, shared with the
scheduler) and its measured costs (trace/simulate.MeasuredCosts), and
prints per stage the predicted makespan (median over the cycles), its
lower bound max(longest packet, work ÷ workers), their ratio and the
workers' utilisation, beside the recorded figures. Each packet keeps its
recorded run time, stage, and how it was queued: spawned by which packet
and in which order, added by which call (a priority lane, a wake option),
designated. The replay is deterministic.

A stage's makespan runs from when its work could start (its opening, or
the queuing of its first packet if later: the demo's definition) to its
last packet's end; the window (wsched analyze's stage slice, from its
opening to its close) is printed beside it.

TRACE must say how its packets were queued: wsched demo writes such
traces (perfetto.Options.Origins). -policy overrides the recorded
configuration, comma-separated: a policy name (wake-all, wake-n, steal-one,
steal-half, take-fair, take-fixed, take-guided, local-lifo, ...) or
key=value (steal_limit, bucket_batch, spins, park_spin, wake_calls: a wake
policy for the add calls that chose one, priority=NAME: queue the packets
named NAME in the priority lane, learn_heavy=true|false: learn the heavy
packet types from each cycle as scheduler.Config.LearnHeavy does and queue
them in the priority lane from the next, seed).

-against TRACE2 compares the prediction at TRACE2's worker count with
what TRACE2 recorded (the same job), per stage: median makespans and the
error, then the error's two factors, as makespan = bound × ratio: the
bounds (the packets' run times, which the replay takes from TRACE and
which change from one recording to the next) and the ratios (the
schedule, which the replay models).

Flags:
`

// simulateCmd is `wsched simulate`.
func simulateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wsched simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), simulateUsage)
		fs.PrintDefaults()
	}
	workersFlag := fs.String("workers", "", "comma-separated worker counts (default: the recorded count)")
	policyFlag := fs.String("policy", "", "comma-separated overrides of the recorded configuration")
	out := fs.String("out", "", "write the simulated run as a Perfetto trace to `FILE` (one worker count)")
	asJSON := fs.Bool("json", false, "print the predictions as JSON")
	perCycle := fs.Bool("cycles", false, "also print each cycle's stages")
	untraced := fs.Bool("untraced", false, "predict a run without tracing (the hooks' cost is not charged)")
	against := fs.String("against", "", "compare with the stage makespans that `TRACE2` recorded, at its worker count")
	files, code, ok := parseAround(fs, args)
	if !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "wsched simulate: "+format+"\n", a...)
		return 2
	}
	if len(files) != 1 {
		return usage("want one TRACE, got %d arguments (see -h)", len(files))
	}
	fail := func(err error) int {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(stderr, "wsched simulate: %s\n", msg)
		return 1
	}
	data, err := readTrace(files[0])
	if err != nil {
		return fail(err)
	}
	wl, err := simulate.Load(data)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", files[0], err))
	}
	cfg := wl.Config
	if *policyFlag != "" {
		for _, kv := range strings.Split(*policyFlag, ",") {
			if err := cfg.Set(strings.TrimSpace(kv)); err != nil {
				return usage("-policy: %v", err)
			}
		}
	}
	var ref *simulate.Workload
	if *against != "" {
		d, err := readTrace(*against)
		if err != nil {
			return fail(err)
		}
		if ref, err = simulate.Load(d); err != nil {
			return fail(fmt.Errorf("%s: %w", *against, err))
		}
	}
	var counts []int
	switch {
	case *workersFlag != "":
		for _, f := range strings.Split(*workersFlag, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > simulate.MaxWorkers {
				return usage("-workers: %q: want counts from 1 to %d", f, simulate.MaxWorkers)
			}
			counts = append(counts, n)
		}
	case ref != nil:
		counts = []int{ref.Workers}
	default:
		if wl.Workers > simulate.MaxWorkers {
			return fail(fmt.Errorf("%s claims %d workers; simulate replays at most %d (give -workers)", files[0], wl.Workers, simulate.MaxWorkers))
		}
		counts = []int{wl.Workers}
	}
	if *out != "" && len(counts) != 1 {
		return usage("-out writes one simulated run: give one -workers count")
	}
	var results []*simulate.Result
	for _, n := range counts {
		c := cfg
		c.Workers = n
		r, err := simulate.Run(wl, c, simulate.Options{Untraced: *untraced, Record: *out != ""})
		if err != nil {
			return fail(fmt.Errorf("%s at %d workers: %w", files[0], n, err))
		}
		results = append(results, r)
	}
	if *out != "" {
		if _, err := perfetto.WriteFile(*out, results[0].Snapshot(), perfetto.Options{ProcessName: "simulated", Origins: true}); err != nil {
			return fail(err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		v := struct {
			Trace    string             `json:"trace"`
			Recorded recordedJSON       `json:"recorded"`
			Results  []*simulate.Result `json:"predictions"`
			Against  *comparisonJSON    `json:"against,omitempty"`
		}{Trace: files[0], Recorded: recorded(wl), Results: results}
		if ref != nil {
			c := compare(results, ref, *against)
			v.Against = &c
		}
		if err := enc.Encode(v); err != nil {
			return fail(err)
		}
		return 0
	}
	printSimulation(stdout, files[0], wl, results, *perCycle)
	if ref != nil {
		printComparison(stdout, compare(results, ref, *against))
	}
	if *out != "" {
		fmt.Fprintf(stdout, "\nsimulated run written to %s\n", *out)
	}
	return 0
}

type recordedJSON struct {
	Workers   int                     `json:"workers"`
	Config    string                  `json:"config"`
	HasConfig bool                    `json:"config_recorded"`
	Orphans   int                     `json:"orphans"`
	Stages    []simulate.StageSummary `json:"stages"`
	Cycles    []simulate.CycleResult  `json:"cycles"`
}

func recorded(wl *simulate.Workload) recordedJSON {
	r := recordedJSON{Workers: wl.Workers, Config: wl.Config.String(), HasConfig: wl.HasConfig, Orphans: wl.Orphans}
	for _, c := range wl.Cycles {
		r.Cycles = append(r.Cycles, simulate.CycleResult{Cycle: c.Number, MakespanNs: c.End - c.Start, Stages: c.Recorded})
	}
	r.Stages = simulate.Summarize(r.Cycles)
	return r
}

func printSimulation(w io.Writer, file string, wl *simulate.Workload, results []*simulate.Result, perCycle bool) {
	packets := 0
	for _, c := range wl.Cycles {
		packets += len(c.Packets)
	}
	conf := "(not recorded: the scheduler's defaults)"
	if wl.HasConfig {
		conf = wl.Config.String()
	}
	fmt.Fprintf(w, "%s: %s, %s, %s; recorded under %s\n", file, nouns(wl.Workers, "worker"), nouns(len(wl.Cycles), "cycle"), nouns(packets, "packet"), conf)
	if wl.Orphans > 0 {
		fmt.Fprintf(w, "%d packets' queuing is not in the trace: replayed as added before their cycle\n", wl.Orphans)
	}
	fmt.Fprintf(w, "medians over the cycles; makespan from when a stage's work could start, window from its opening to its close\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workers\tpolicy\tstage\tmakespan\tbound\tratio\tutil\twindow\twindow ratio\t")
	rec := recorded(wl)
	for _, s := range rec.Stages {
		fmt.Fprintf(tw, "%d\trecorded\t%s\t%v\t%v\t%.3f\t%.0f%%\t%v\t%.3f\t\n", wl.Workers, s.Name, round(time.Duration(s.MakespanNs)),
			round(time.Duration(s.BoundNs)), s.Ratio, 100*s.Utilisation, round(time.Duration(s.WindowNs)), s.WindowRatio)
	}
	for _, r := range results {
		for _, s := range r.Stages {
			fmt.Fprintf(tw, "%d\tsimulated\t%s\t%v\t%v\t%.3f\t%.0f%%\t%v\t%.3f\t\n", r.Workers, s.Name, round(time.Duration(s.MakespanNs)),
				round(time.Duration(s.BoundNs)), s.Ratio, 100*s.Utilisation, round(time.Duration(s.WindowNs)), s.WindowRatio)
		}
	}
	tw.Flush()
	if more := slices.IndexFunc(results, func(r *simulate.Result) bool { return r.Workers > wl.Workers }); more >= 0 {
		printAssumptions(w, wl)
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%d workers: %s (%d simulated events)\n", r.Workers, r.Policy, r.Events)
		if !perCycle {
			continue
		}
		for _, c := range r.Cycles {
			fmt.Fprintf(w, "  cycle %d: %v", c.Cycle, round(time.Duration(c.MakespanNs)))
			for _, s := range c.Stages {
				fmt.Fprintf(w, "; %s %v (%.2f)", s.Name, round(time.Duration(s.MakespanNs)), s.Ratio)
			}
			fmt.Fprintln(w)
		}
	}
}

type comparisonJSON struct {
	Trace   string           `json:"trace"`
	Workers int              `json:"workers"`
	Stages  []stageErrorJSON `json:"stages"`
}

// stageErrorJSON is one stage's prediction beside its measurement, and
// the error's two factors: the bound (how long the packets ran in each
// recording) and the ratio (the schedule).
type stageErrorJSON struct {
	Name        string  `json:"name"`
	MeasuredNs  int64   `json:"measured_ns"`
	PredictedNs int64   `json:"predicted_ns"`
	Error       float64 `json:"error"` // predicted ÷ measured − 1
	// The medians of the bound and of the ratio over the cycles, and
	// predicted ÷ measured − 1 of each.
	MeasuredBoundNs  int64   `json:"measured_bound_ns"`
	PredictedBoundNs int64   `json:"predicted_bound_ns"`
	BoundError       float64 `json:"bound_error"`
	MeasuredRatio    float64 `json:"measured_ratio"`
	PredictedRatio   float64 `json:"predicted_ratio"`
	RatioError       float64 `json:"ratio_error"`
}

func compare(results []*simulate.Result, ref *simulate.Workload, file string) comparisonJSON {
	c := comparisonJSON{Trace: file, Workers: ref.Workers}
	var r *simulate.Result
	for _, x := range results {
		if x.Workers == ref.Workers {
			r = x
		}
	}
	if r == nil {
		return c
	}
	rec := recorded(ref)
	for _, m := range rec.Stages {
		for _, p := range r.Stages {
			if p.Stage == m.Stage && m.MakespanNs > 0 {
				e := stageErrorJSON{Name: m.Name, MeasuredNs: m.MakespanNs, PredictedNs: p.MakespanNs,
					Error:           float64(p.MakespanNs)/float64(m.MakespanNs) - 1,
					MeasuredBoundNs: m.BoundNs, PredictedBoundNs: p.BoundNs,
					MeasuredRatio: m.Ratio, PredictedRatio: p.Ratio}
				if m.BoundNs > 0 {
					e.BoundError = float64(p.BoundNs)/float64(m.BoundNs) - 1
				}
				if m.Ratio > 0 {
					e.RatioError = p.Ratio/m.Ratio - 1
				}
				c.Stages = append(c.Stages, e)
			}
		}
	}
	return c
}

func printComparison(w io.Writer, c comparisonJSON) {
	fmt.Fprintf(w, "\nagainst %s (%d workers, recorded):\n", c.Trace, c.Workers)
	if len(c.Stages) == 0 {
		fmt.Fprintf(w, "  no prediction at %d workers (add it to -workers)\n", c.Workers)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmakespan\t\t\tbound\t\t\tratio\t\t\t")
	fmt.Fprintln(tw, "stage\tmeasured\tpredicted\terror\tmeasured\tpredicted\terror\tmeasured\tpredicted\terror\t")
	for _, s := range c.Stages {
		fmt.Fprintf(tw, "%s\t%v\t%v\t%+.1f%%\t%v\t%v\t%+.1f%%\t%.3f\t%.3f\t%+.1f%%\t\n", s.Name,
			round(time.Duration(s.MeasuredNs)), round(time.Duration(s.PredictedNs)), 100*s.Error,
			round(time.Duration(s.MeasuredBoundNs)), round(time.Duration(s.PredictedBoundNs)), 100*s.BoundError,
			s.MeasuredRatio, s.PredictedRatio, 100*s.RatioError)
	}
	tw.Flush()
	fmt.Fprintln(w, "bound: the packets' run times (the replay keeps TRACE's; they differ between recordings); ratio: the schedule (the replay's model)")
}

// nouns is "1 cycle" or "n cycles": n and the noun in number.
func nouns[N int | int64 | uint64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printAssumptions is printed under a prediction for more workers than
// the trace recorded: what the replay assumes (each packet runs for its
// recorded time whatever the number of workers), and what the trace shows
// of it: packet types whose run times grow when other packets run beside
// them (their time goes to waiting or to memory, which more workers do not
// scale; or their runs alone were the smaller ones), or, when the trace
// cannot show it, a note saying so.
func printAssumptions(w io.Writer, wl *simulate.Workload) {
	fmt.Fprintln(w, "\nassumptions: each packet runs for its recorded time on any number of workers, its cost")
	fmt.Fprintln(w, "independent of how many run beside it.")
	cs := wl.Contention()
	var grown []simulate.Contention
	for _, c := range cs {
		if c.Ratio() > simulate.ContentionGrowth {
			grown = append(grown, c)
		}
	}
	switch {
	case len(grown) > 0:
		fmt.Fprintln(w, "The trace may contradict it: these packets ran longer beside other packets than alone")
		fmt.Fprintln(w, "(medians). Either their time goes to waiting (I/O, a lock, a channel) or to memory, and")
		fmt.Fprintln(w, "for them the predicted speed-up is an upper bound; or the runs alone were smaller ones")
		fmt.Fprintln(w, "(a stage's last packets, run while the other workers had none): the trace cannot tell")
		fmt.Fprintln(w, "these apart, so the replay does not scale their times.")
		for _, c := range grown {
			fmt.Fprintf(w, "  %s: %v alone (%s), %v beside others (%s): ×%.2f\n", c.Name, round(time.Duration(c.AloneNs)), nouns(c.Alone, "run"),
				round(time.Duration(c.SharedNs)), nouns(c.Shared, "run"), c.Ratio())
		}
	case len(cs) > 0:
		fmt.Fprintf(w, "The trace agrees as far as it shows: %s ran as long beside other packets as alone\n", nouns(len(cs), "packet type"))
		fmt.Fprintf(w, "(medians within ×%.1f); past %s it cannot show it.\n", simulate.ContentionGrowth, nouns(wl.Workers, "worker"))
	default:
		fmt.Fprintln(w, "The trace cannot show whether that holds (too few packets of a type ran both alone and")
		fmt.Fprintln(w, "beside others, or one worker ran them all). A packet that waits (I/O, a lock, a")
		fmt.Fprintln(w, "channel) or is bound by memory bandwidth may run longer with more workers: for such")
		fmt.Fprintln(w, "work a predicted speed-up is an upper bound.")
	}
}
