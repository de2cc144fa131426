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
		traceBenchCycle(b, off, ps)
		traceBenchCycle(b, on, ps)
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
			traceBenchCycle(b, first, ps)
			t1 := time.Now()
			traceBenchCycle(b, second, ps)
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
	})
}
