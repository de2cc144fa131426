package benchmarks

import (
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/benchmarks/harness"
	"github.com/wsched/wsched/benchmarks/system"
	"github.com/wsched/wsched/benchmarks/workload"
)

// The harness's workloads as testing.B benchmarks: wsched with its default
// policy and every peer that can express the workload, at GOMAXPROCS
// workers, with the same names as the harness's raw results, so that
// benchstat compares the two. For example:
//
//	go test -run '^$' -bench 'Fanout' -benchmem -count 10 > new.txt
//	benchstat old.txt new.txt
//
// The naive baselines (go + WaitGroup, the channel pool) run in the same
// benchmark as wsched, as sub-benchmarks.

func BenchmarkFanout(b *testing.B)    { benchWorkload(b, "fanout") }
func BenchmarkSpawn(b *testing.B)     { benchWorkload(b, "spawn") }
func BenchmarkUniform(b *testing.B)   { benchWorkload(b, "uniform") }
func BenchmarkForkJoin(b *testing.B)  { benchWorkload(b, "forkjoin") }
func BenchmarkIrregular(b *testing.B) { benchWorkload(b, "irregular") }
func BenchmarkGCMark(b *testing.B)    { benchWorkload(b, "gcmark") }
func BenchmarkPrepare(b *testing.B)   { benchWorkload(b, "prepare") }
func BenchmarkBatch(b *testing.B)     { benchWorkload(b, "batch") }

// The tree searches (UTS T1 and T3, 4.1 million nodes each; about half a
// second an operation for the sequential recursion), at 1 and 2 workers
// (GOMAXPROCS set to match in each sub-benchmark: with -cpu, testing runs
// sub-benchmarks once before it applies the first -cpu value), the
// sequential baseline (sys=seq) first, ns/task the time per node:
//
//	go test -run '^$' -bench 'UTS' -count 10 .
func BenchmarkUTSGeo(b *testing.B) { benchWorkload(b, "utsgeo", 1, 2) }
func BenchmarkUTSBin(b *testing.B) { benchWorkload(b, "utsbin", 1, 2) }

// benchWorkload runs workload name on wsched and its peers at each worker
// count of workersList, GOMAXPROCS set to match; none: at GOMAXPROCS.
func benchWorkload(b *testing.B, name string, workersList ...int) {
	if len(workersList) == 0 {
		workersList = []int{runtime.GOMAXPROCS(0)}
	}
	for _, workers := range workersList {
		benchWorkloadAt(b, name, workers)
	}
}

func benchWorkloadAt(b *testing.B, name string, workers int) {
	wl, err := harness.LookupWorkload(name)
	if err != nil {
		b.Fatal(err)
	}
	var targets []harness.Target
	for _, p := range wl.Peers() {
		if p == harness.Sequential { // the baseline first
			targets = append(targets, harness.Target{System: p})
		}
	}
	targets = append(targets, harness.Target{System: system.WSched, Policy: system.DefaultPolicy})
	if strings.HasPrefix(name, "uts") { // SpawnOrRun: the documented choice for recursion
		p, err := system.ParsePolicy("spawn=inline")
		if err != nil {
			b.Fatal(err)
		}
		targets = append(targets, harness.Target{System: system.WSched, Policy: p})
	}
	for _, p := range wl.Peers() {
		if p != harness.Sequential {
			targets = append(targets, harness.Target{System: p})
		}
	}
	for _, t := range targets {
		sub := "sys=" + t.System
		if t.System == system.WSched {
			sub += "/policy=" + t.Policy.Spec
		}
		b.Run(sub+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
			r, err := wl.New(t, workers, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			b.ReportAllocs()
			var gc0, gc1 runtime.MemStats
			runtime.ReadMemStats(&gc0)
			cpu0, cpuOK := harness.ProcessCPU()
			for b.Loop() {
				b.StopTimer()
				r.Reset()
				b.StartTimer()
				if err := r.Op(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu1, _ := harness.ProcessCPU()
			runtime.ReadMemStats(&gc1)
			if cpuOK {
				// Process CPU per operation, the untimed Resets included.
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), harness.UnitCPUOp)
			}
			b.ReportMetric(float64(gc1.NumGC-gc0.NumGC)/float64(b.N), "GCs/op")
			if wl.Tasks != nil {
				if n := wl.Tasks(); n > 0 {
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
				}
			}
		})
	}
}

// BenchmarkSecondWorkerStart: how long after an operation of the
// fork-join starts its second worker runs its first task (node 1, the root's
// left subtree, which every system hands to another worker), for wsched and
// errgroup, with the operations back to back, 1 ms apart (every parked
// worker has blocked), and each after a full GC (as the harness's first
// timed operation was until the GC moved before the last warm-up). start-µs
// and op-µs are medians over the iterations. Needs GOMAXPROCS >= 2:
//
//	go test -run '^$' -bench SecondWorkerStart -benchtime 200x -count 3 .
func BenchmarkSecondWorkerStart(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		b.Skip("needs GOMAXPROCS >= 2")
	}
	tr := workload.ForkJoin(harness.ForkJoinDepth)
	for _, sys := range []string{system.WSched, "errgroup"} {
		for _, regime := range []string{"back-to-back", "gap=1ms", "after-gc"} {
			b.Run("sys="+sys+"/"+regime, func(b *testing.B) {
				in := workload.NewInstance(tr, 0)
				var node1 atomic.Int64
				body := func(sp system.Spawner, i int32) {
					if i == 1 {
						node1.Store(time.Now().UnixNano())
					}
					in.Run(sp, i)
				}
				t := harness.Target{System: sys, Policy: system.DefaultPolicy}
				ex, err := harness.NewExec(t, workers, tr.N(), true, body)
				if err != nil {
					b.Fatal(err)
				}
				defer ex.Close()
				// No StopTimer around the untimed part: it reads the
				// memory statistics, which stops the world under the
				// polling workers. ns/op includes Reset and the gap or
				// GC; op-µs is the operation alone.
				var starts, ops []float64
				for b.Loop() {
					in.Reset()
					switch regime {
					case "gap=1ms":
						time.Sleep(time.Millisecond)
					case "after-gc":
						runtime.GC()
					}
					t0 := time.Now()
					if err := ex.Run(tr.Roots); err != nil {
						b.Fatal(err)
					}
					ops = append(ops, float64(time.Since(t0))/1e3)
					starts = append(starts, float64(node1.Load()-t0.UnixNano())/1e3)
				}
				b.ReportMetric(median(starts), "start-µs")
				b.ReportMetric(median(ops), "op-µs")
			})
		}
	}
}

// median sorts xs and returns its middle element.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}
