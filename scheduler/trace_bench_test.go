package scheduler

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wsched/wsched/trace"
)

// traceSpinIters is the number of spin iterations that take about 1 µs,
// measured once.
var (
	traceSpinOnce  sync.Once
	traceSpinIters int
)

func traceSpin(n int) uint64 {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func calibrateTraceSpin() int {
	traceSpinOnce.Do(func() {
		const probe = 1 << 20
		start := time.Now()
		traceSpinSink = traceSpin(probe)
		per := float64(time.Since(start).Nanoseconds()) / probe
		traceSpinIters = max(int(1000/per), 1)
	})
	return traceSpinIters
}

var traceSpinSink uint64

// microPacket runs for about 1 µs.
type microPacket struct{ iters int }

func (p microPacket) Run(*Worker) error { traceSpinSink += traceSpin(p.iters); return nil }

// traceBenchCycle runs one cycle of ps.
func traceBenchCycle(b *testing.B, s *Scheduler, ps []Packet) {
	if err := s.AddAll(ps); err != nil {
		b.Fatal(err)
	}
	if err := s.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTraceOverhead measures what tracing costs a scheduler running
// ~1 µs packets: one op is one cycle of 1000 packets. Off and On run the
// same workload with Config.Tracer nil and set (a recorder in Overwrite
// mode, so that it records for the whole run); Interleaved alternates an
// off cycle and an on cycle on two schedulers in the same loop, so that
// machine noise hits both alike, and reports overhead_% = the median over
// the pairs of on/off - 1 (and overhead_of_sums_%, Σon/Σoff - 1, which one
// preempted cycle can move by several percent on a shared machine).
//
//	go test -run XXX -bench TraceOverhead -benchtime 200x -count 5 ./scheduler/
func BenchmarkTraceOverhead(b *testing.B) {
	const packets = 1000
	iters := calibrateTraceSpin()
	ps := make([]Packet, packets)
	for i := range ps {
		ps[i] = microPacket{iters}
	}
	newSched := func(b *testing.B, traced bool) *Scheduler {
		cfg := Config{Stages: []string{"work"}, Workers: runtime.GOMAXPROCS(0)}
		if traced {
			cfg.Tracer = trace.NewRecorder(cfg.Workers, trace.Options{MaxBytes: 8 << 20, Overwrite: true})
		}
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	for _, mode := range []struct {
		name   string
		traced bool
	}{{"Off", false}, {"On", true}} {
		b.Run(mode.name, func(b *testing.B) {
			s := newSched(b, mode.traced)
			traceBenchCycle(b, s, ps) // warm up: workers started, deques grown
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				traceBenchCycle(b, s, ps)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packets), "ns/packet")
		})
	}
	b.Run("Interleaved", func(b *testing.B) {
		off, on := newSched(b, false), newSched(b, true)
		interleaveTraced(b, packets, off, on, func(s *Scheduler) { traceBenchCycle(b, s, ps) })
	})
}

// spinTree is a packet of about 1 µs that spawns two children, depth
// levels down.
type spinTree struct{ iters, depth int }

func (p spinTree) Run(w *Worker) error {
	traceSpinSink += traceSpin(p.iters)
	if p.depth > 0 {
		Spawn(w, spinTree{p.iters, p.depth - 1})
		Spawn(w, spinTree{p.iters, p.depth - 1})
	}
	return nil
}

// BenchmarkTraceOverheadSpawn is BenchmarkTraceOverhead's Interleaved
// case for spawned packets: one op is one cycle of a binary tree of 2,047
// packets of about 1 µs, each spawned by its parent (each spawn is
// stamped while tracing).
//
//	go test -run XXX -bench TraceOverheadSpawn -benchtime 200x -count 5 ./scheduler/
func BenchmarkTraceOverheadSpawn(b *testing.B) {
	const depth = 10
	iters := calibrateTraceSpin()
	newSched := func(traced bool) *Scheduler {
		cfg := Config{Stages: []string{"work"}, Workers: runtime.GOMAXPROCS(0)}
		if traced {
			cfg.Tracer = trace.NewRecorder(cfg.Workers, trace.Options{MaxBytes: 8 << 20, Overwrite: true})
		}
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	off, on := newSched(false), newSched(true)
	cycle := func(s *Scheduler) {
		if err := s.Add(spinTree{iters, depth}); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	interleaveTraced(b, 1<<(depth+1)-1, off, on, cycle)
}

// interleaveTraced runs b.N pairs of cycles, one on off and one on on,
// alternating which goes first, and reports the tracing overhead as
// BenchmarkTraceOverhead's Interleaved case does.
func interleaveTraced(b *testing.B, packets int, off, on *Scheduler, cycle func(*Scheduler)) {
	cycle(off)
	cycle(on)
	{
		ratios := make([]float64, 0, b.N)
		var tOff, tOn time.Duration
		b.ResetTimer()
		for i := range b.N {
			// Alternate which runs first, so that neither gains from going
			// second (warm caches, a woken machine).
			first, second := off, on
			if i&1 == 1 {
				first, second = on, off
			}
			t0 := time.Now()
			cycle(first)
			t1 := time.Now()
			cycle(second)
			dOff, dOn := t1.Sub(t0), time.Since(t1)
			if i&1 == 1 {
				dOff, dOn = dOn, dOff
			}
			tOff += dOff
			tOn += dOn
			ratios = append(ratios, float64(dOn)/float64(dOff))
		}
		// The median of the per-pair ratios: a pair that another process
		// preempted moves the sum of times, not the median.
		slices.Sort(ratios)
		b.ReportMetric(100*(ratios[len(ratios)/2]-1), "overhead_%")
		b.ReportMetric(100*(float64(tOn)/float64(tOff)-1), "overhead_of_sums_%")
		b.ReportMetric(float64(tOff.Nanoseconds())/float64(b.N*packets), "off_ns/packet")
		b.ReportMetric(float64(tOn.Nanoseconds())/float64(b.N*packets), "on_ns/packet")
	}
}
