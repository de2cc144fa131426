// Command prepare runs a model of a GC's Prepare stage — per-mutator root
// packets, a designated packet per worker and one heavy ScanCodeCacheRoots
// packet — under the five configurations of MMTk's luindex case, prints each
// stage's makespan beside its lower bound, and writes a Perfetto trace per
// configuration.
//
//	go run ./examples/prepare/main
//	go run ./examples/prepare/main -workers 8 -config b,c -out /tmp/traces
//
// Open the traces in https://ui.perfetto.dev.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wsched/wsched/examples/prepare"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
)

func main() {
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "workers")
	scale := flag.Float64("scale", 1, "work per slot (1: the Prepare stage holds about 4 ms of work)")
	seed := flag.Uint64("seed", 1, "seed for the mutator stack depths")
	configs := flag.String("config", "a,b,c,d,e", "configurations to run, comma-separated")
	cycles := flag.Int("cycles", 11, "cycles per configuration; the median (by Prepare makespan) is shown")
	out := flag.String("out", "wsched-traces", "directory for the traces (\"\" for none)")
	flag.Parse()
	if err := run(*workers, *scale, *seed, *configs, *cycles, *out); err != nil {
		fmt.Fprintln(os.Stderr, "prepare:", err)
		os.Exit(1)
	}
}

func run(workers int, scale float64, seed uint64, configs string, cycles int, out string) error {
	model := prepare.DefaultModel(scale, seed)
	fmt.Printf("%d workers; Prepare: %d mutator stacks, code cache %d slots, %d slots in all\n\n",
		workers, len(model.StackSlots), model.CodeCacheSlots, model.PrepareSlots(workers))
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	fmt.Printf("%-3s %-52s %10s %10s %6s %10s %10s %6s %7s %6s\n",
		"", "configuration", "Prepare", "bound", "ratio", "Closure", "bound", "ratio", "steals", "wakes")
	for _, name := range strings.Split(configs, ",") {
		c, ok := prepare.Lookup(strings.TrimSpace(name))
		if !ok {
			return fmt.Errorf("unknown configuration %q (want a, b, c, d or e)", name)
		}
		var rec *trace.Recorder
		if out != "" {
			rec = trace.NewRecorder(workers, trace.Options{Overwrite: true})
		}
		res, err := prepare.Run(context.Background(), c, prepare.Options{Workers: workers, Model: model, Tracer: rec}, cycles)
		if err != nil {
			return err
		}
		m := res.Median()
		fmt.Printf("(%s) %-52s %10v %10v %6.3f %10v %10v %6.3f %7d %6d\n", c.Name, c.Title,
			m.Prepare.Makespan.Round(time.Microsecond), m.Prepare.LowerBound.Round(time.Microsecond), m.Prepare.Ratio(),
			m.Closure.Makespan.Round(time.Microsecond), m.Closure.LowerBound.Round(time.Microsecond), m.Closure.Ratio(),
			m.Stats.Steals, m.Stats.Wakes)
		if rec != nil {
			path := filepath.Join(out, "prepare-"+c.Name+".pftrace")
			if _, err := perfetto.WriteFile(path, rec.Snapshot(), perfetto.Options{ProcessName: "prepare (" + c.Name + ")"}); err != nil {
				return err
			}
		}
	}
	if out != "" {
		fmt.Printf("\ntraces: %s/prepare-*.pftrace; open them in https://ui.perfetto.dev\n", out)
	}
	return nil
}
