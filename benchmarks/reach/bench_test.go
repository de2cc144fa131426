package reach

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// defaultGraph is Default, generated once for every benchmark.
var defaultGraph = sync.OnceValue(func() *Graph { return MustNew(Default) })

// withProcs runs f with GOMAXPROCS set to workers.
func withProcs(workers int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
	f()
}

// BenchmarkReach: every executor on the Default graph (2 Mi nodes, 8 Mi
// edges) at 1 and 2 workers, GOMAXPROCS set to match; ns/node is per
// reached node. Each search's Reset (clearing the marks) runs with the
// timer stopped; one search before the timed ones grows the executor's
// stacks, which later searches reuse.
//
//	go test -run '^$' -bench 'Reach$' -count 10 . > reach.txt
//
// (Worker counts are sub-benchmarks, not -cpu, as in package uts.)
func BenchmarkReach(b *testing.B) {
	g := defaultGraph()
	want := SequentialPlain(g, NewPlainMarks(g.Nodes()))
	for _, workers := range []int{1, 2} {
		names, mk := executors(g, workers)
		for _, name := range names {
			b.Run(fmt.Sprintf("workers=%d/exec=%s", workers, name), func(b *testing.B) {
				withProcs(workers, func() {
					ex, err := mk[name]()
					if err != nil {
						b.Fatal(err)
					}
					defer ex.Close()
					warmUp(b, ex, want)
					b.ReportAllocs()
					for b.Loop() {
						b.StopTimer()
						ex.Reset()
						b.StartTimer()
						n, err := ex.Search()
						if err != nil || n != want {
							b.Fatalf("%d nodes, %v; want %d", n, err, want)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*float64(want)), "ns/node")
				})
			})
		}
	}
}

// BenchmarkReachMin measures what BenchmarkReach cannot resolve on a
// shared machine: each executor's fastest of b.N searches of the Default
// graph, the executors taking turns (seq-atomic, seq-plain, worklist,
// seq-atomic-take, worklist-take, the batches, then seq-atomic again, …), so that a moment of interference
// costs one search, not a sample. <exec>-min-ns/node is an executor's
// fastest search per reached node (its name without '=':
// worklist-batch8); <exec>-speedup is seq-atomic's fastest
// search over that executor's. For example, 20 rounds:
//
//	go test -run '^$' -bench ReachMin -benchtime 20x .
func BenchmarkReachMin(b *testing.B) {
	g := defaultGraph()
	want := SequentialPlain(g, NewPlainMarks(g.Nodes()))
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			withProcs(workers, func() { reachMin(b, g, want, workers) })
		})
	}
}

func reachMin(b *testing.B, g *Graph, want, workers int) {
	names, mk := executors(g, workers) // names[0] is seq-atomic
	exs := make([]Exec, len(names))
	for i, n := range names {
		ex, err := mk[n]()
		if err != nil {
			b.Fatal(err)
		}
		defer ex.Close()
		warmUp(b, ex, want)
		exs[i] = ex
	}
	best := make([]time.Duration, len(names))
	for b.Loop() {
		for i, ex := range exs {
			ex.Reset()
			t0 := time.Now()
			n, err := ex.Search()
			d := time.Since(t0)
			if err != nil || n != want {
				b.Fatalf("%s: %d nodes, %v; want %d", names[i], n, err, want)
			}
			if best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	for i, n := range names {
		n = strings.ReplaceAll(n, "=", "") // worklist-batch8: no '=' in a unit
		b.ReportMetric(float64(best[i])/float64(want), n+"-min-ns/node")
		if i > 0 {
			b.ReportMetric(float64(best[0])/float64(best[i]), n+"-speedup")
		}
	}
}

// warmUp runs one search on ex, untimed: its stacks grow to the search's
// depth, as they stay for the searches after it.
func warmUp(b *testing.B, ex Exec, want int) {
	ex.Reset()
	if n, err := ex.Search(); err != nil || n != want {
		b.Fatalf("warm-up: %d nodes, %v; want %d", n, err, want)
	}
}
