package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsched/wsched/benchmarks/harness"
	"github.com/wsched/wsched/benchmarks/system"
)

// matrixFlags are the flags shared by the matrix run and the sweeps.
type matrixFlags struct {
	fs        *flag.FlagSet
	quick     bool
	out       string
	count     int
	iters     int
	warmup    int
	gap       time.Duration
	workers   string
	policies  string
	workloads string
	peers     string
	procs     bool
	plots     bool
	utsSize   string
	utsRounds int
}

func newMatrixFlags(name string) *matrixFlags {
	m := &matrixFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	f := m.fs
	f.BoolVar(&m.quick, "quick", false, "smoke run, about a minute: -count 6 -iters 3 -warmup 1 at GOMAXPROCS workers only (explicit flags still win)")
	f.StringVar(&m.out, "out", "bench-out", "directory for raw.txt (Go benchmark format), summary.txt and the SVG plots")
	f.IntVar(&m.count, "count", 10, "K: invocations per configuration (samples); each starts a fresh scheduler or pool")
	f.IntVar(&m.iters, "iters", 5, "I: timed iterations per invocation; their median is the sample")
	f.IntVar(&m.warmup, "warmup", 2, "untimed iterations at the start of each invocation")
	f.DurationVar(&m.gap, "gap", 0, "idle time before every iteration (0: back to back); longer than wsched's ParkSpin (200us) it measures workers woken from blocking, as between a GC's cycles")
	f.StringVar(&m.workers, "workers", defaultWorkers(), "comma-separated worker counts")
	f.StringVar(&m.policies, "policies", "default", "comma-separated wsched policies, or none: default, or settings joined by '+': wake=one|all|n|searcher, steal=one|half|batch:N, batch=N, spins=N, parkspin=DUR|off, order=lifo|fifo, take=fair|fixed|guided, spawn=queue|inline|split, add=slice|copy, count=worker|join (wake, steal, order and take also take the scheduler's policy names: wake=wake-n, order=local-lifo, ...)")
	f.StringVar(&m.workloads, "workloads", "all", "comma-separated workloads, or all: "+strings.Join(harness.WorkloadNames(), ", "))
	f.StringVar(&m.peers, "peers", "all", "comma-separated peers, all, or none: "+strings.Join(knownPeers(), ", ")+" ("+harness.Sequential+", "+harness.SequentialRec+": the tree searches' fastest sequential search and sequential recursion; the last three run gcmark only)")
	f.BoolVar(&m.procs, "procs", true, "set GOMAXPROCS to each configuration's worker count, so workers means cores for every system")
	f.BoolVar(&m.plots, "plots", true, "write SVG plots beside the results")
	f.StringVar(&m.utsSize, "uts-size", "full", "trees of the utsgeo and utsbin searches: full (UTS T1 and T3, 4.1 million nodes each) or small (64 and 95 thousand nodes; -quick's)")
	f.IntVar(&m.utsRounds, "uts-rounds", 1, "SHA-1s per node of the tree searches (UTS -g; 1 as in UTS)")
	return m
}

// defaultWorkers is 1, 2, 4, … up to GOMAXPROCS, and GOMAXPROCS itself.
func defaultWorkers() string {
	p := runtime.GOMAXPROCS(0)
	var ws []string
	for w := 1; w < p; w *= 2 {
		ws = append(ws, strconv.Itoa(w))
	}
	ws = append(ws, strconv.Itoa(p))
	return strings.Join(ws, ",")
}

// applyQuick sets the -quick presets for every flag not given explicitly.
func (m *matrixFlags) applyQuick() {
	if !m.quick {
		return
	}
	set := map[string]bool{}
	m.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["count"] {
		m.count = 6
	}
	if !set["iters"] {
		m.iters = 3
	}
	if !set["warmup"] {
		m.warmup = 1
	}
	if !set["workers"] {
		m.workers = strconv.Itoa(runtime.GOMAXPROCS(0))
	}
	if !set["uts-size"] {
		m.utsSize = "small"
	}
}

func (m *matrixFlags) validate() error {
	if m.count < 1 || m.iters < 1 || m.warmup < 0 {
		return usagef("-count and -iters must be >= 1, -warmup >= 0")
	}
	if m.gap < 0 || m.gap > time.Second {
		return usagef("-gap must be a duration in [0, 1s], such as 1ms")
	}
	if m.out == "" {
		return usagef("-out must name a directory")
	}
	if m.utsSize != "full" && m.utsSize != "small" {
		return usagef("-uts-size must be full or small")
	}
	if err := harness.SetUTS(harness.UTSOptions{Small: m.utsSize == "small", Rounds: m.utsRounds}); err != nil {
		return usagef("-uts-rounds must be 1..64")
	}
	return nil
}

func parseWorkers(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1024 {
			return nil, usagef("-workers: %q is not a worker count (1..1024)", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usagef("-workers: empty list")
	}
	return out, nil
}

func parseWorkloads(s string) ([]*harness.Workload, error) {
	names := harness.WorkloadNames()
	if s != "all" {
		names = nil
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				names = append(names, f)
			}
		}
	}
	var out []*harness.Workload
	for _, n := range names {
		w, err := harness.LookupWorkload(n)
		if err != nil {
			return nil, usagef("-workloads: %v", err)
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, usagef("-workloads: empty list")
	}
	return out, nil
}

// knownPeers are the names -peers takes: the executors of package system,
// the tree searches' sequential baselines and gcmark's.
func knownPeers() []string {
	return slices.Concat(system.Peers(), []string{harness.Sequential, harness.SequentialRec}, harness.GCMarkPeers)
}

func parsePeers(s string) ([]string, error) {
	known := knownPeers()
	switch s {
	case "all":
		return known, nil
	case "none", "":
		return nil, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(known, f) {
			return nil, usagef("-peers: unknown peer %q (known: %s)", f, strings.Join(known, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

// buildMatrix lists the configurations: per workload and worker count,
// every policy, then every peer that can express the workload.
func buildMatrix(wls []*harness.Workload, workers []int, pols []system.Policy, peers []string) []harness.Config {
	var cfgs []harness.Config
	for _, wl := range wls {
		can := map[string]bool{}
		for _, p := range wl.Peers() {
			can[p] = true
		}
		for _, w := range workers {
			for _, p := range pols {
				if wl.SupportsPolicy != nil && !wl.SupportsPolicy(p) {
					continue
				}
				cfgs = append(cfgs, harness.Config{Workload: wl, Target: harness.Target{System: system.WSched, Policy: p}, Workers: w})
			}
			for _, p := range peers {
				if can[p] {
					cfgs = append(cfgs, harness.Config{Workload: wl, Target: harness.Target{System: p}, Workers: w})
				}
			}
		}
	}
	return cfgs
}

const matrixUsage = `The matrix run (no subcommand) runs policies × workloads × worker counts,
plus every peer that can express each workload, K invocations each,
interleaved, and writes DIR/raw.txt (Go benchmark format, with the
environment fingerprint), DIR/summary.txt (medians, 95% CIs, verdicts,
targets) and SVG plots. Progress on stderr. Its flags:

`

func cmdMatrix(args []string, stdout, stderr io.Writer) error {
	m := newMatrixFlags("bench")
	if err := parseFlags(m.fs, args, stdout, topUsage+"\n"+matrixUsage); err != nil {
		return err
	}
	if m.fs.NArg() > 0 {
		return usagef("unexpected argument %q", m.fs.Arg(0))
	}
	m.applyQuick()
	if err := m.validate(); err != nil {
		return err
	}
	workers, err := parseWorkers(m.workers)
	if err != nil {
		return err
	}
	var pols []system.Policy
	if m.policies != "none" {
		if pols, err = system.ParsePolicies(m.policies); err != nil {
			return usagef("-policies: %v", err)
		}
	}
	wls, err := parseWorkloads(m.workloads)
	if err != nil {
		return err
	}
	peers, err := parsePeers(m.peers)
	if err != nil {
		return err
	}
	cfgs := buildMatrix(wls, workers, pols, peers)
	set, err := measure(cfgs, m, stderr, "raw.txt")
	if err != nil {
		return err
	}
	var sum bytes.Buffer
	header(&sum, "wsched benchmark matrix", m.out, "raw.txt")
	writeMatrixSummary(&sum, set)
	if err := os.WriteFile(filepath.Join(m.out, "summary.txt"), sum.Bytes(), 0o644); err != nil {
		return err
	}
	stdout.Write(sum.Bytes())
	if m.plots {
		files, err := harness.PlotBars(set, m.out, "bars-")
		if err != nil {
			return err
		}
		sp, err := harness.PlotSpeedup(set, m.out, "")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "plots: %s\n", strings.Join(append(files, sp...), " "))
	}
	return nil
}

// writeMatrixSummary writes a matrix's summary after its header: every
// group, wsched's targets against its peers, and the tree searches' table and targets
// when the set has them.
func writeMatrixSummary(w io.Writer, set *harness.Set) {
	harness.WriteSummary(w, set)
	fmt.Fprintln(w, "## targets against the peers")
	fmt.Fprintln(w)
	harness.WriteTargets(w, harness.CheckTargets(set))
	fmt.Fprintln(w)
	if harness.WriteUTSTable(w, set) {
		fmt.Fprintln(w, "## targets of the tree searches")
		fmt.Fprintln(w)
		harness.WriteTargets(w, harness.CheckUTSTargets(set))
		fmt.Fprintln(w)
	}
}

// measure runs the configurations, writing DIR/rawName as it goes, and
// returns the set of results.
func measure(cfgs []harness.Config, m *matrixFlags, stderr io.Writer, rawName string) (*harness.Set, error) {
	if err := os.MkdirAll(m.out, 0o755); err != nil {
		return nil, err
	}
	rawPath := filepath.Join(m.out, rawName)
	f, err := os.Create(rawPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fp := harness.TakeFingerprint()
	tty := false
	if sf, ok := stderr.(*os.File); ok {
		tty = harness.IsTerminal(sf)
	}
	start := time.Now()
	fmt.Fprintf(stderr, "bench: %d configurations × %d invocations × (%d warm-up + %d timed iterations); load average %s\n",
		len(cfgs), m.count, m.warmup, m.iters, fp.Get(harness.KeyLoadStart))
	prog := harness.NewProgress(stderr, len(cfgs)*m.count, tty)
	rs, err := harness.RunMatrix(cfgs, harness.RunOptions{
		Count: m.count, Iters: m.iters, Warmup: m.warmup, Gap: m.gap, SetProcs: m.procs,
		Fingerprint: fp, Out: f, Progress: prog, Command: commandLine(),
	})
	prog.Done()
	// The end of the run goes into the file even when it failed, so that a
	// partial file still says what the machine was doing.
	fmt.Fprintf(f, "\n%s: %s\n", harness.KeyLoadEnd, harness.LoadAvg())
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "bench: done in %s; raw results in %s\n", time.Since(start).Round(time.Second), rawPath)
	return harness.NewSet(rs), nil
}

// commandLine is how this process was started, as the go run command
// that does the same.
func commandLine() string {
	return strings.TrimSpace("go run ./cmd/bench " + strings.Join(os.Args[1:], " "))
}

// header writes a summary file's header: what, the command (as recorded in
// the raw file, else this process's), and the fingerprint read back from
// the raw file (so it includes loadavg-end).
func header(w io.Writer, title, dir, rawName string) {
	fmt.Fprintf(w, "# %s\n\n", title)
	data, err := os.ReadFile(filepath.Join(dir, rawName))
	cmd := commandLine()
	if err == nil {
		if fp, err := harness.ReadFingerprint(bytes.NewReader(data)); err == nil && fp.Get("command") != "" {
			cmd = fp.Get("command")
		}
	}
	fmt.Fprintf(w, "command: %s\n", cmd)
	fmt.Fprintf(w, "raw results: %s (Go benchmark format; benchstat reads it)\n\n", rawName)
	if err == nil {
		if fp, err := harness.ReadFingerprint(bytes.NewReader(data)); err == nil {
			for _, kv := range fp.Pairs {
				if kv.Key != harness.KeyCommand {
					fmt.Fprintf(w, "%s: %s\n", kv.Key, kv.Value)
				}
			}
		}
		opts := harness.ReadRunOptions(data, rawName)
		for _, k := range harness.RunOptionKeys {
			if v := opts[k]; v != "" {
				fmt.Fprintf(w, "%s: %s\n", k, v)
			}
		}
	}
	fmt.Fprintln(w)
}
