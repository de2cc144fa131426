package uts

import (
	"fmt"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSearch: every executor on T1 (geometric) and T3 (binomial),
// 4.1 million nodes each, at GOMAXPROCS workers, the sequential recursion
// first; ns/node and allocs/node beside ns/op. -short uses the small
// trees (T1S, T3S). For example, at 1 and 2 workers:
//
//	go test -run '^$' -bench Search -cpu 1,2 -count 10 . > search.txt
func BenchmarkSearch(b *testing.B) { benchSearch(b, T1, T3) }

// BenchmarkSearchSmall is BenchmarkSearch on the small trees, T1S and
// T3S (64 and 95 thousand nodes): many operations a second, for A/B
// comparisons of scheduler changes.
func BenchmarkSearchSmall(b *testing.B) { benchSearch(b, T1S, T3S) }

func benchSearch(b *testing.B, trees ...Params) {
	for _, p := range trees {
		tr := MustNew(p)
		want := tr.Count()
		var names []string
		for n := range executors(tr, 1) {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			return rank(names[i]) < rank(names[j]) || rank(names[i]) == rank(names[j]) && names[i] < names[j]
		})
		for _, name := range names {
			b.Run(fmt.Sprintf("tree=%s/exec=%s", p.Name, name), func(b *testing.B) {
				// -cpu sets GOMAXPROCS for each leaf benchmark: the
				// executor is built here, with that many workers.
				ex, err := executors(tr, runtime.GOMAXPROCS(0))[name]()
				if err != nil {
					b.Fatal(err)
				}
				defer ex.Close()
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					n, err := ex.Search()
					if err != nil || n != want {
						b.Fatalf("%d nodes, %v; want %d", n, err, want)
					}
				}
				cpu := processCPU() - cpu0
				nodes := float64(b.N) * float64(want)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/nodes, "ns/node")
				b.ReportMetric(float64(cpu.Nanoseconds())/nodes, "cpu-ns/node")
			})
		}
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rank puts the sequential baseline first, then wsched, then the peers.
func rank(name string) int {
	switch {
	case name == "seq":
		return 0
	case len(name) > 6 && name[:6] == "wsched":
		return 1
	}
	return 2
}
