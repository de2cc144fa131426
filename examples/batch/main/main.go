// Command batch parses every Go file under $(go env GOROOT)/src and counts
// the declarations of each package, two ways: sequentially, and on a wsched
// scheduler in stages List → Parse → Aggregate. It checks that both agree
// and prints how long each took. (The comparison with an errgroup limited
// to the number of workers is in the benchmarks module, package
// benchmarks/batchbase: see examples/batch's documentation.)
//
//	go run ./examples/batch/main
//	go run ./examples/batch/main -root $(go env GOROOT)/src/net -top 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"time"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/scheduler"
)

func main() {
	root := flag.String("root", "", "directory to parse (default $(go env GOROOT)/src)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "workers")
	top := flag.Int("top", 10, "print the packages with the most declarations")
	flag.Parse()
	if *root == "" {
		*root = batch.DefaultRoot()
	}
	if err := run(*root, *workers, *top); err != nil {
		fmt.Fprintln(os.Stderr, "batch:", err)
		os.Exit(1)
	}
}

func run(root string, workers, top int) error {
	ctx := context.Background()

	seq, err := batch.Sequential(root)
	if err != nil {
		return err
	}
	ws, err := batch.Run(ctx, root, scheduler.Config{Workers: workers})
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(ws.Packages, seq.Packages) || ws.Totals != seq.Totals {
		return fmt.Errorf("the wsched run disagrees with the sequential one")
	}

	t := seq.Totals
	fmt.Printf("%s: %d files, %.1f MB, %d packages, %d declarations (%d funcs, %d methods, %d types, %d vars, %d consts), %d files with syntax errors\n\n",
		root, t.Files, float64(t.Bytes)/1e6, len(seq.Packages), t.Decls(), t.Funcs, t.Methods, t.Types, t.Vars, t.Consts, t.ParseErrors)
	fmt.Printf("sequential            %10v\n", seq.Elapsed.Round(time.Millisecond))
	fmt.Printf("wsched (%2d workers)   %10v  %.2f×  (steals %d, wake-ups %d)\n", workers, ws.Elapsed.Round(time.Millisecond), speedup(seq, ws), ws.Stats.Steals, ws.Stats.Wakes)
	for _, s := range ws.Stages {
		fmt.Printf("  %-10s %6d packets  makespan %10v  lower bound %10v  (×%.3f)\n",
			s.Name, s.Packets, s.Makespan.Round(time.Microsecond), s.LowerBound.Round(time.Microsecond), s.Ratio())
	}

	ps := slices.Clone(seq.Packages)
	slices.SortStableFunc(ps, func(a, b batch.Package) int { return b.Decls() - a.Decls() })
	fmt.Printf("\nmost declarations:\n")
	for _, p := range ps[:min(top, len(ps))] {
		fmt.Printf("  %6d  %s (package %s, %d files)\n", p.Decls(), p.Dir, p.Name, p.Files)
	}
	return nil
}

func speedup(seq, r batch.Result) float64 { return float64(seq.Elapsed) / float64(r.Elapsed) }
