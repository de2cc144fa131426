package gcmark

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/wsched/wsched/scheduler"
)

// benchHeap is the default heap (scale 1: 2 Mi objects), built once.
var benchHeap = sync.OnceValue(func() *Heap { return NewHeap(DefaultHeapConfig(1, 1)) })

// BenchmarkGCMark marks the default heap once per op with 1 and 2 workers
// (default policies), beside the sequential BFS it must beat. Metrics:
// each stage's makespan ÷ lower bound (median over ops), traced slots per
// second, steals and wake-ups per op, Go GCs per op.
//
//	go test -run XXX -bench GCMark -benchtime 5x -count 5 ./examples/gcmark/
func BenchmarkGCMark(b *testing.B) {
	h := benchHeap()
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		gcs := numGC()
		for b.Loop() {
			h.MarkSequential()
		}
		b.ReportMetric(float64(numGC()-gcs)/float64(b.N), "gcs/op")
	})
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			if _, err := m.Mark(context.Background()); err != nil { // warm: buffers, page faults
				b.Fatal(err)
			}
			ratios := make([][]float64, len(Stages))
			var slots, steals, wakes uint64
			b.ReportAllocs()
			gcs := numGC()
			for b.Loop() {
				r, err := m.Mark(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				for i, s := range r.Stages {
					ratios[i] = append(ratios[i], s.Ratio())
				}
				slots += uint64(r.Slots)
				steals += r.Stats.Steals
				wakes += r.Stats.Wakes
			}
			n := float64(b.N)
			b.ReportMetric(float64(numGC()-gcs)/n, "gcs/op")
			for i, name := range Stages {
				b.ReportMetric(median(ratios[i]), name+"-ratio")
			}
			b.ReportMetric(float64(slots)/b.Elapsed().Seconds(), "slots/s")
			b.ReportMetric(float64(steals)/n, "steals/op")
			b.ReportMetric(float64(wakes)/n, "wakes/op")
		})
	}
}

func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
