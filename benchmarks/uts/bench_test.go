package uts

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/wsched/wsched/scheduler"
)

// BenchmarkSearch: every executor on T1 (geometric) and T3 (binomial),
// 4.1 million nodes each, at 1 and 2 workers (GOMAXPROCS set to match), the
// sequential recursion first; ns/node and cpu-ns/node (the process's CPU
// time) beside ns/op:
//
//	go test -run '^$' -bench 'Search/' -count 10 . > search.txt
//
// (The worker counts are sub-benchmarks, not -cpu: testing runs a
// benchmark's sub-benchmarks once before it applies the first -cpu value,
// so with -cpu 1,2 the "1" results would be measured at the default
// GOMAXPROCS.)
func BenchmarkSearch(b *testing.B) { benchSearch(b, T1, T3) }

// BenchmarkSearchSmall is BenchmarkSearch on the small trees, T1S and
// T3S (64 and 95 thousand nodes).
func BenchmarkSearchSmall(b *testing.B) { benchSearch(b, T1S, T3S) }

// benchWorkers are the worker counts of the benchmarks: 1 and 2, and the
// machine's CPU count if more.
func benchWorkers() []int {
	ws := []int{1, 2}
	if n := runtime.NumCPU(); n > 2 {
		ws = append(ws, n)
	}
	return ws
}

// withProcs runs f with GOMAXPROCS set to workers.
func withProcs(workers int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
	f()
}

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
		for _, workers := range benchWorkers() {
			for _, name := range names {
				b.Run(fmt.Sprintf("tree=%s/workers=%d/exec=%s", p.Name, workers, name), func(b *testing.B) {
					withProcs(workers, func() {
						ex, err := executors(tr, workers)[name]()
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
				})
			}
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

// rank puts the sequential baselines first, then wsched, then the peers.
func rank(name string) int {
	switch {
	case name == "seq" || name == "seq-rec" || name == "seq-feed" || name == "seq-feed-take":
		return 0
	case len(name) > 6 && name[:6] == "wsched":
		return 1
	}
	return 2
}

// BenchmarkSearchMin measures on a shared machine what BenchmarkSearch
// cannot resolve there: each wsched executor's cost over the sequential
// recursion on the small trees, as the fastest of b.N searches, the
// executors taking turns (seq, then each wsched executor, then seq
// again, …), so that a moment of interference on the machine costs one
// search, not a sample. min-ns/node is an executor's fastest search;
// over-seq-ns/node is that minus the sequential recursion's fastest. For
// example, 60 rounds:
//
//	go test -run '^$' -bench SearchMin -benchtime 60x .
func BenchmarkSearchMin(b *testing.B) {
	for _, p := range []Params{T1S, T3S} {
		tr := MustNew(p)
		want := tr.Count()
		for _, workers := range benchWorkers() {
			b.Run(fmt.Sprintf("tree=%s/workers=%d", p.Name, workers), func(b *testing.B) {
				withProcs(workers, func() { searchMin(b, tr, want, workers) })
			})
		}
	}
}

func searchMin(b *testing.B, tr *Tree, want int64, workers int) {
	alternate(b, tr, want, workers, []string{"seq", "wsched-inline", "wsched-inline-scalar", "wsched-spawn", "wsched-inline-join", "wsched-spawn-join", "wsched-split", "wsched-worklist"}, false)
}

// BenchmarkTargets: the worklist's targets on T1 and T3 (4.1 million
// nodes each), the executors taking turns as in BenchmarkSearchMin:
// med-ns/node is each one's median search, med-over-seq-ns/node its
// median minus the fastest sequential search's (the fastest median of
// seq, Search's loop, seq-feed, the worklist's loop without the
// scheduler, and seq-feed-take, that loop taking 16 nodes at once, the
// loop of wsched-worklist-take's body), eff the efficiency T_seq ÷ (workers · T_exec) of the
// medians (T_seq that fastest median in the same run), and vs-waitgroup the goroutines' median ÷ its own (above
// 1: faster than goroutines with a depth cutoff). For example:
//
//	go test -run '^$' -bench Targets -benchtime 9x .
func BenchmarkTargets(b *testing.B) {
	for _, p := range []Params{T1, T3} {
		tr := MustNew(p)
		want := tr.Count()
		for _, workers := range benchWorkers() {
			b.Run(fmt.Sprintf("tree=%s/workers=%d", p.Name, workers), func(b *testing.B) {
				withProcs(workers, func() {
					alternate(b, tr, want, workers, []string{"seq", "seq-feed", "seq-feed-take", "wsched-worklist", "wsched-worklist-take", "wsched-split", "wsched-inline", "wsched-inline-scalar", "waitgroup"}, true)
				})
			})
		}
	}
}

// alternate runs the executors names (the first the baseline) in turn,
// b.N rounds, and reports each one's fastest search and, with medians,
// its median, its median's excess over the baseline's, its efficiency
// and its ratio to waitgroup's.
func alternate(b *testing.B, tr *Tree, want int64, workers int, names []string, medians bool) {
	mk := executors(tr, workers)
	exs := make([]Exec, len(names))
	for i, n := range names {
		ex, err := mk[n]()
		if err != nil {
			b.Fatal(err)
		}
		defer ex.Close()
		exs[i] = ex
	}
	times := make([][]time.Duration, len(names))
	for b.Loop() {
		for i, ex := range exs {
			t0 := time.Now()
			n, err := ex.Search()
			d := time.Since(t0)
			if err != nil || n != want {
				b.Fatalf("%s: %d nodes, %v; want %d", names[i], n, err, want)
			}
			times[i] = append(times[i], d)
		}
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(want) }
	best := func(ts []time.Duration) time.Duration { return slices.Min(ts) }
	median := func(ts []time.Duration) time.Duration {
		s := slices.Clone(ts)
		slices.Sort(s)
		return s[len(s)/2]
	}
	// The baseline of the medians is the fastest sequential executor's
	// median (seq or seq-feed, whichever ran faster in this run).
	base := median(times[0])
	for i, n := range names {
		if rank(n) == 0 {
			base = min(base, median(times[i]))
		}
	}
	for i, n := range names {
		b.ReportMetric(per(best(times[i])), n+"-min-ns/node")
		if i > 0 {
			b.ReportMetric(per(best(times[i]))-per(best(times[0])), n+"-over-seq-ns/node")
		}
		if !medians {
			continue
		}
		m := median(times[i])
		b.ReportMetric(per(m), n+"-med-ns/node")
		if rank(n) != 0 {
			b.ReportMetric(per(m)-per(base), n+"-med-over-seq-ns/node")
			b.ReportMetric(float64(base)/(float64(workers)*float64(m)), n+"-eff")
		}
		if w := slices.Index(names, "waitgroup"); w >= 0 && w != i && i > 0 {
			b.ReportMetric(float64(median(times[w]))/float64(m), n+"-vs-waitgroup")
		}
	}
}

// BenchmarkWorklistBatch: the worklist search of T1 and T3 on 2 workers
// under each batch (the most items a split packet carries), the sweep
// behind scheduler.DefaultWorklistBatch:
//
//	go test -run '^$' -bench WorklistBatch -count 6 .
func BenchmarkWorklistBatch(b *testing.B) {
	for _, p := range []Params{T1, T3} {
		tr := MustNew(p)
		want := tr.Count()
		for _, batch := range []int{1, 2, 4, 8, 16} {
			b.Run(fmt.Sprintf("tree=%s/workers=2/batch=%d", p.Name, batch), func(b *testing.B) {
				withProcs(2, func() {
					ex, err := WSched(tr, WSchedOptions{Config: scheduler.Config{Workers: 2}, Worklist: true, WorklistBatch: batch})
					if err != nil {
						b.Fatal(err)
					}
					defer ex.Close()
					b.ReportAllocs()
					for b.Loop() {
						if n, err := ex.Search(); err != nil || n != want {
							b.Fatalf("%d nodes, %v; want %d", n, err, want)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*float64(want)), "ns/node")
				})
			})
		}
	}
}
