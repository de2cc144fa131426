package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wsched/wsched/benchmarks/harness"
	"github.com/wsched/wsched/benchmarks/system"
)

const compareUsage = `usage: bench compare OLD NEW

Compares two raw result files (raw.txt of two runs). First it warns when
the environment fingerprints differ (CPU, microcode, kernel, Go, …): a
difference between machines is not a difference between builds. Then, per
benchmark in both files: medians, 95% CIs and the verdict.

`

func cmdCompare(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	if err := parseFlags(fs, args, stdout, compareUsage); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("compare needs two files, OLD and NEW")
	}
	_, err := harness.Compare(stdout, fs.Arg(0), fs.Arg(1))
	return err
}

const sweepUsage = `usage: bench sweep [flags] NAME...

Sweeps one wsched setting over its values on every chosen workload (wsched
only, no peers) and writes DIR/sweep-NAME.txt (raw, with fingerprint),
DIR/sweep-NAME.summary.txt (per-value verdicts against the current default
and a table of ratios) and DIR/sweep-NAME.svg. NAME is one of:
`

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	m := newMatrixFlags("sweep")
	var names []string
	for _, s := range harness.Sweeps {
		names = append(names, fmt.Sprintf("  %-6s %s: %s", s.Name, s.Doc, strings.Join(s.Specs, " ")))
	}
	if err := parseFlags(m.fs, args, stdout, sweepUsage+strings.Join(names, "\n")+"\n\n"); err != nil {
		return err
	}
	if m.fs.NArg() == 0 {
		return usagef("sweep needs a setting to sweep (batch, spins, parkspin, take, order, wake, steal)")
	}
	var sweeps []harness.Sweep
	for _, n := range m.fs.Args() {
		sw, err := harness.LookupSweep(n)
		if err != nil {
			return usagef("%v", err)
		}
		sweeps = append(sweeps, sw)
	}
	m.applyQuick()
	if err := m.validate(); err != nil {
		return err
	}
	workers, err := parseWorkers(m.workers)
	if err != nil {
		return err
	}
	wls, err := parseWorkloads(m.workloads)
	if err != nil {
		return err
	}
	for _, sw := range sweeps {
		var pols []system.Policy
		for _, spec := range sw.Specs {
			p, err := system.ParsePolicy(spec)
			if err != nil {
				return err
			}
			pols = append(pols, p)
		}
		cfgs := buildMatrix(wls, workers, pols, nil)
		raw := "sweep-" + sw.Name + ".txt"
		set, err := measure(cfgs, m, stderr, raw)
		if err != nil {
			return err
		}
		var sum bytes.Buffer
		header(&sum, "wsched sweep: "+sw.Doc, m.out, raw)
		harness.WriteSweepTable(&sum, set, sw)
		fmt.Fprintln(&sum)
		harness.WriteSummaryBase(&sum, set, "wsched/"+sw.Base)
		if err := os.WriteFile(filepath.Join(m.out, "sweep-"+sw.Name+".summary.txt"), sum.Bytes(), 0o644); err != nil {
			return err
		}
		stdout.Write(sum.Bytes())
		if m.plots {
			svg := filepath.Join(m.out, "sweep-"+sw.Name+".svg")
			if err := harness.PlotSweep(set, sw, svg); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "plot: %s\n", svg)
		}
	}
	return nil
}

const selftestUsage = `usage: bench selftest [flags]

Tests the harness with its own machinery: -trials A/A trials (the same
configuration measured twice, interleaved) count false alarms, which should
be at most 5% at 95% confidence; then -trials trials with a planted slowdown
(-plant, extra work per packet in B) count detections. Writes
DIR/selftest.txt.

`

func cmdSelftest(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	out := fs.String("out", "bench-out", "directory for selftest.txt")
	trials := fs.Int("trials", 100, "trials of each kind")
	count := fs.Int("count", 8, "samples per variant per trial")
	iters := fs.Int("iters", 2, "timed iterations per sample")
	warmup := fs.Int("warmup", 1, "untimed iterations per sample")
	wlName := fs.String("workload", "uniform", "workload")
	sysName := fs.String("system", system.WSched, "system to measure (wsched uses its default policy)")
	workers := fs.Int("workers", 0, "workers (0 = GOMAXPROCS)")
	plant := fs.Float64("plant", 0.05, "planted slowdown: extra work per packet in B")
	if err := parseFlags(fs, args, stdout, selftestUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *trials < 1 || *count < 2 || *iters < 1 || *warmup < 0 || *plant < 0 {
		return usagef("-trials >= 1, -count >= 2, -iters >= 1, -warmup >= 0, -plant >= 0")
	}
	wl, err := harness.LookupWorkload(*wlName)
	if err != nil {
		return usagef("-workload: %v", err)
	}
	if _, err := system.Lookup(*sysName); err != nil {
		return usagef("-system: %v", err)
	}
	w := *workers
	if w == 0 {
		w = runtimeProcs()
	}
	c := harness.Config{Workload: wl, Target: harness.Target{System: *sysName, Policy: system.DefaultPolicy}, Workers: w}
	o := harness.RunOptions{Count: *count, Iters: *iters, Warmup: *warmup, SetProcs: true}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	fp := harness.TakeFingerprint()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# harness self-test\n\ncommand: go run ./cmd/bench selftest %s\n\n", strings.Join(args, " "))
	fp.WriteTo(&buf)
	fmt.Fprintf(&buf, "configuration: %s, %d samples per variant per trial, %d timed + %d warm-up iterations per sample\n\n",
		c.Name(), *count, *iters, *warmup)
	fmt.Fprintf(stderr, "bench: selftest: %d A/A trials, then %d trials with +%.0f%% work planted\n", *trials, *trials, *plant*100)
	aa, err := harness.RepeatTrials(c, 0, *trials, o)
	if err != nil {
		return err
	}
	harness.WriteRate(&buf, "A/A (false alarms)", aa)
	pl, err := harness.RepeatTrials(c, *plant, *trials, o)
	if err != nil {
		return err
	}
	harness.WriteRate(&buf, fmt.Sprintf("A/B with +%.0f%% work per packet in B (detections)", *plant*100), pl)
	fmt.Fprintf(&buf, "\n%s: %s\n", harness.KeyLoadEnd, harness.LoadAvg())
	if err := os.WriteFile(filepath.Join(*out, "selftest.txt"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	stdout.Write(buf.Bytes())
	return nil
}
