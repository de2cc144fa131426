package benchmarks

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/wsched/wsched/benchmarks/harness"
	"github.com/wsched/wsched/benchmarks/system"
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

func benchWorkload(b *testing.B, name string) {
	wl, err := harness.LookupWorkload(name)
	if err != nil {
		b.Fatal(err)
	}
	workers := runtime.GOMAXPROCS(0)
	targets := []harness.Target{{System: system.WSched, Policy: system.DefaultPolicy}}
	for _, p := range wl.Peers() {
		targets = append(targets, harness.Target{System: p})
	}
	for _, t := range targets {
		sub := "sys=" + t.System
		if t.System == system.WSched {
			sub += "/policy=" + t.Policy.Spec
		}
		b.Run(sub+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
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
