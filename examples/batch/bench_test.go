package batch

import (
	"context"
	"runtime"
	"testing"

	"github.com/wsched/wsched/scheduler"
)

// BenchmarkBatch parses all of GOROOT/src once per op: sequentially (the
// naive baseline) and on a wsched scheduler with GOMAXPROCS workers. Each
// op takes seconds; keep -benchtime small.
//
//	go test -run XXX -bench Batch -benchtime 1x -count 5 ./examples/batch/
//
// The comparison with errgroup (the target: wsched not slower than
// errgroup) is BenchmarkBatch in the benchmarks module, which runs
// the sequential and wsched runs beside errgroup in one binary:
//
//	cd benchmarks && go test -run XXX -bench Batch -benchtime 1x -count 5 ./batchbase/
func BenchmarkBatch(b *testing.B) {
	root := DefaultRoot()
	if err := Warm(root); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	workers := runtime.GOMAXPROCS(0)
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Sequential(root); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wsched", func(b *testing.B) {
		j, err := NewJob(root, scheduler.Config{Workers: workers})
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
