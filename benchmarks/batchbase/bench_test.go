package batchbase

import (
	"context"
	"runtime"
	"testing"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/scheduler"
)

// BenchmarkBatch parses all of GOROOT/src once per op: sequentially (the
// naive baseline), with an errgroup limited to GOMAXPROCS, and on a wsched
// scheduler with GOMAXPROCS workers (examples/batch's Job). The target:
// wsched not slower than errgroup. Each op takes seconds; keep
// -benchtime small.
//
//	go test -run XXX -bench Batch -benchtime 1x -count 5 ./batchbase/
//
// scripts/batch-pairs.sh runs its errgroup and wsched sub-benchmarks in
// alternating pairs of processes.
func BenchmarkBatch(b *testing.B) {
	root := batch.DefaultRoot()
	if err := batch.Warm(root); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	workers := runtime.GOMAXPROCS(0)
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := batch.Sequential(root); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("errgroup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Errgroup(context.Background(), root, workers); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wsched", func(b *testing.B) {
		j, err := batch.NewJob(root, scheduler.Config{Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		var parse float64
		b.ReportAllocs()
		for b.Loop() {
			r, err := j.Run(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			parse += r.Stages[1].Ratio()
		}
		b.ReportMetric(parse/float64(b.N), "Parse-ratio")
	})
}
