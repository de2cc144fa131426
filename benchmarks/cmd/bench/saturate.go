package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wsched/wsched/benchmarks/harness"
	"github.com/wsched/wsched/benchmarks/system"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

const saturateUsage = `usage: bench saturate [flags]

Open-loop arrival: packets of a fixed cost are submitted on a fixed
schedule, at rates rising from 1/64 of the nominal capacity (workers/cost)
to 1.25×, and the submit-to-start latency (p50, p99) and the throughput
achieved are measured at each rate. Writes DIR/saturation.txt (raw, Go
benchmark format, with fingerprint), DIR/saturation.summary.txt (tables,
saturation point per cost) and DIR/saturation.svg.

`

func cmdSaturate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("saturate", flag.ContinueOnError)
	out := fs.String("out", "bench-out", "output directory")
	quick := fs.Bool("quick", false, "shorter steps (40 ms) and fewer rates")
	workers := fs.Int("workers", runtimeProcs(), "workers")
	policy := fs.String("policy", "default", "wsched policy (see bench -h)")
	costs := fs.String("costs", "100ns,1us,10us,100us", "comma-separated packet costs")
	step := fs.Duration("step", 200*time.Millisecond, "length of one rate step")
	maxRate := fs.Float64("max-rate", 20e6, "cap on the offered rate, packets/s")
	if err := parseFlags(fs, args, stdout, saturateUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	pol, err := system.ParsePolicy(*policy)
	if err != nil {
		return usagef("-policy: %v", err)
	}
	var cs []time.Duration
	for _, c := range strings.Split(*costs, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(c))
		if err != nil || d <= 0 {
			return usagef("-costs: %q is not a positive duration", c)
		}
		cs = append(cs, d)
	}
	if *workers < 1 || *step <= 0 || *maxRate <= 0 {
		return usagef("-workers, -step and -max-rate must be positive")
	}
	fr := harness.DefaultSatFractions
	if *quick {
		fr = []float64{1.0 / 16, 0.25, 0.5, 0.75, 1.0, 1.25}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["step"] {
			*step = 40 * time.Millisecond
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	fp := harness.TakeFingerprint()
	fp.Set(harness.KeyCommand, commandLine())
	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = harness.IsTerminal(f)
	}
	fmt.Fprintf(stderr, "bench: saturate: %d costs × %d rates, %v per step, %d workers; load average %s\n",
		len(cs), len(fr), *step, *workers, fp.Get(harness.KeyLoadStart))
	prog := harness.NewProgress(stderr, len(cs)*len(fr), tty)
	pts, err := harness.Saturate(harness.SatOptions{Workers: *workers, Policy: pol, Costs: cs, Fractions: fr,
		MaxRate: *maxRate, Step: *step, MaxPackets: 1 << 20, Progress: prog})
	prog.Done()
	if err != nil {
		return err
	}
	var raw bytes.Buffer
	if err := harness.WriteSatRaw(&raw, fp, *workers, pol, pts); err != nil {
		return err
	}
	fmt.Fprintf(&raw, "\n%s: %s\n", harness.KeyLoadEnd, harness.LoadAvg())
	if err := os.WriteFile(filepath.Join(*out, "saturation.txt"), raw.Bytes(), 0o644); err != nil {
		return err
	}
	var sum bytes.Buffer
	header(&sum, "wsched saturation curves (open-loop arrival)", *out, "saturation.txt")
	harness.WriteSatSummary(&sum, pts)
	if err := os.WriteFile(filepath.Join(*out, "saturation.summary.txt"), sum.Bytes(), 0o644); err != nil {
		return err
	}
	stdout.Write(sum.Bytes())
	svg := filepath.Join(*out, "saturation.svg")
	if err := harness.PlotSaturation(pts, svg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "plot: %s\n", svg)
	return nil
}
