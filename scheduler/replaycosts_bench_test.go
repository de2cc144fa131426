package scheduler

import (
	"context"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/bucket"
	"github.com/wsched/wsched/internal/deque"
)

// BenchmarkReplayCosts measures the costs that `wsched simulate` adds to
// a recorded run (trace/simulate.Costs), each under its own name:
//
//   - local: a packet taken from the worker's own queues: a value spawn
//     chain on one worker, ns per packet (spawn, pop, run, count);
//   - take, take-per: a bucket take and each packet it moves, from takes
//     of 1 and of 32 from a deep bucket (two points of a line);
//   - steal, steal-per: a steal and each packet it moves, from steals of
//     1 and batches of 32 (StealInto) out of a FIFO deque, uncontended;
//   - round: one empty search round of a worker (the steal pass over the
//     other worker, runtime.Gosched, its queues, the open buckets), on a
//     scheduler whose workers are parked;
//   - park: the monitor's lock, the re-check of every queue (P4) and
//     the counters' flush, which a park adds to its wait;
//   - wake-polled, wake-blocked: from an Add (every other worker parked)
//     to the packet's start on another CPU (the adding goroutine spins,
//     as a busy worker would), median, with the default ParkSpin (the
//     worker polls) and with ParkSpin < 0 (it blocks at once; a
//     millisecond after it parked: its thread, and its CPU, asleep).
//
// Run with
//
//	go test -run '^$' -bench 'ReplayCosts' -count 5 ./scheduler/
func BenchmarkReplayCosts(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		s, err := New(Config{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var done atomic.Int64
		b.ResetTimer()
		if err := s.Add(valueChain{max(b.N, 1), &done}); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "local-ns")
	})
	b.Run("take", func(b *testing.B) {
		one, batch := takeCost(b, 1), takeCost(b, 32)
		per := (batch - one) / 31
		b.ReportMetric(one-per, "take-ns")
		b.ReportMetric(per, "take-per-ns")
	})
	b.Run("steal", func(b *testing.B) {
		one, batch := stealCost(b, 1), stealCost(b, 32)
		per := (batch - one) / 31
		b.ReportMetric(one-per, "steal-ns")
		b.ReportMetric(per, "steal-per-ns")
	})
	b.Run("round", func(b *testing.B) {
		h, err := New(Config{Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		s := h.s
		w := s.workers[0]
		s.mu.Lock() // the workers are parked: their state is still
		s.mu.Unlock()
		b.ResetTimer()
		for range b.N {
			w.steal()
			runtime.Gosched()
			w.findLocal()
			w.findBuckets()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "round-ns")
	})
	b.Run("park", func(b *testing.B) {
		h, err := New(Config{Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		s := h.s
		w := s.workers[0]
		b.ResetTimer()
		for range b.N {
			s.mu.Lock()
			s.mu.Unlock()
			w.workVisible()
			w.flush()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "park-ns")
	})
	b.Run("wake-polled", func(b *testing.B) { wakeLatency(b, Config{Stages: []string{"work"}}, "wake-polled-ns") })
	b.Run("wake-blocked", func(b *testing.B) {
		wakeLatency(b, Config{Stages: []string{"work"}, ParkSpin: -1}, "wake-blocked-ns")
	})
}

// takeCost is the time of a take of k packets from a deep bucket.
func takeCost(b *testing.B, k int) float64 {
	bk := bucket.New[task]()
	bk.Open()
	fill := make([]task, 4096)
	dst := make([]task, k)
	var total time.Duration
	takes := 0
	for range max(b.N/4096, 1) * 32 {
		bk.Add(fill, false)
		t0 := time.Now()
		for {
			n, retry := bk.Take(dst)
			if n == 0 && !retry {
				break
			}
			takes++
		}
		total += time.Since(t0)
		bk.Reclaim()
	}
	return float64(total.Nanoseconds()) / float64(takes)
}

// stealCost is the time of a steal of k packets (k = 1: Steal, else
// StealInto) from a FIFO deque.
func stealCost(b *testing.B, k int) float64 {
	d := deque.NewFIFO[task]()
	into := make([]task, k)
	fill := make([]task, 64*k)
	var total time.Duration
	steals := 0
	for range max(b.N/len(fill), 1) * 32 {
		d.PushBatch(fill)
		t0 := time.Now()
		for d.Len() > 0 {
			if k == 1 {
				d.Steal()
			} else {
				d.StealInto(into)
			}
			steals++
		}
		total += time.Since(t0)
	}
	return float64(total.Nanoseconds()) / float64(steals)
}

// wakeLatency is BenchmarkWakeLatency under cfg: the median from an Add
// (every other worker parked, mid-cycle) to the packet's start, reported
// as unit.
func wakeLatency(b *testing.B, cfg Config, unit string) {
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	if err := s.AddDesignated(0, holdPacket{release}); err != nil {
		b.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(context.Background()) }()
	var at atomic.Int64
	lat := make([]int64, 0, b.N)
	for b.Loop() {
		for int(s.s.nParked.Load()) < s.s.n-1 {
			runtime.Gosched()
		}
		if cfg.ParkSpin < 0 {
			time.Sleep(time.Millisecond) // let its thread sleep
		}
		at.Store(0)
		t0 := int64(time.Since(benchEpoch))
		if err := s.Add(stamp{&at}, Unconstrained); err != nil {
			b.Fatal(err)
		}
		// Spin without yielding: the woken worker must run on the other
		// CPU, as one woken by a busy worker does (a yield would run it
		// here, with no OS wake-up).
		for at.Load() == 0 {
		}
		lat = append(lat, at.Load()-t0)
	}
	close(release)
	if err := <-runErr; err != nil {
		b.Fatal(err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2]), unit)
	}
}
