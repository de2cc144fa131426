// Command gcmark builds a synthetic heap, marks it in parallel on a wsched
// scheduler, checks the result against a sequential breadth-first search
// and prints each stage's makespan beside its lower bound.
//
//	go run ./examples/gcmark/main -scale 1 -workers 2
//	go run ./examples/gcmark/main -wake wake-all -steal steal-one -trace gcmark.pftrace
//
// Open a trace file in https://ui.perfetto.dev.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
)

func main() {
	scale := flag.Float64("scale", 1, "heap size: 1 is 2 Mi objects")
	seed := flag.Uint64("seed", 1, "heap seed")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "workers")
	var cfg scheduler.Config
	flag.TextVar(&cfg.Wake, "wake", scheduler.Policy(0), "wake policy: wake-one, wake-all, wake-n, wake-searcher, default")
	flag.TextVar(&cfg.Steal, "steal", scheduler.Policy(0), "steal policy: steal-one, steal-half, default")
	flag.IntVar(&cfg.StealLimit, "steal-limit", 0, "most packets a steal-half steal takes, 1…128 (0: the default, 128)")
	cycles := flag.Int("cycles", 3, "GC cycles to run")
	traceFile := flag.String("trace", "", "write a Perfetto trace of the last cycle to this file")
	flag.Parse()
	if err := run(*scale, *seed, *workers, cfg, *cycles, *traceFile); err != nil {
		fmt.Fprintln(os.Stderr, "gcmark:", err)
		os.Exit(1)
	}
}

// run marks the heap cycles times on a scheduler configured by cfg's
// policies.
func run(scale float64, seed uint64, workers int, cfg scheduler.Config, cycles int, traceFile string) error {
	// 1. The heap, and the answer a sequential mark gives.
	t0 := time.Now()
	h := gcmark.NewHeap(gcmark.DefaultHeapConfig(scale, seed))
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
	cfg.Workers, cfg.Tracer = workers, rec
	m, err := gcmark.NewMarker(h, gcmark.Options{Scheduler: cfg})
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
		fmt.Printf("\ncycle %d: %d marked, %d slots traced in %v (%.2f× the sequential BFS); steals %d, wake-ups %d\n",
			c+1, r.Marked, r.Slots, r.Elapsed.Round(time.Microsecond), float64(seq)/float64(r.Elapsed), r.Stats.Steals, r.Stats.Wakes)
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
