package scheduler

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// v1Chain is a value packet that spawns its successor, by value, until
// its chain is done.
type v1Chain struct {
	left int
	done *atomic.Int64
}

func (c v1Chain) Run(w *Worker) error {
	if c.left > 1 {
		Spawn(w, v1Chain{c.left - 1, c.done})
		return nil
	}
	c.done.Add(1)
	return nil
}

// BenchmarkSpawnValue: b.N value packets in Workers() chains, each packet
// spawning the next by value (BenchmarkSpawnTrivial's shape with value
// structs instead of a reused pointer); ns/packet is the per-packet
// overhead of a value spawn, and a spawn allocates nothing. The naive
// baseline is BenchmarkSpawnValueWaitGroup.
func BenchmarkSpawnValue(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	chains := s.Workers()
	var done atomic.Int64
	ps := make([]Packet, chains)
	for i := range ps {
		ps[i] = v1Chain{max(b.N/chains, 1), &done}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := s.AddAll(ps); err != nil {
		b.Fatal(err)
	}
	if err := s.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if done.Load() != int64(chains) {
		b.Fatalf("%d of %d chains done", done.Load(), chains)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
}

// BenchmarkSpawnValueWaitGroup is the naive baseline of
// BenchmarkSpawnValue: go f() and a sync.WaitGroup per packet.
func BenchmarkSpawnValueWaitGroup(b *testing.B) {
	b.ReportAllocs()
	var wg sync.WaitGroup
	var n atomic.Int64
	wg.Add(b.N)
	for range b.N {
		go func() { n.Add(1); wg.Done() }()
	}
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
}

// v1JoinNode is a node of a binary fork-join tree: it opens a join and
// spawns its two children by value; the continuation adds their results.
type v1JoinNode struct {
	depth int
	out   *int64
}

type v1JoinSum struct {
	a, b int64
	out  *int64
}

func (s v1JoinSum) Run(*Worker) error { *s.out = s.a + s.b; return nil }

func (n v1JoinNode) Run(w *Worker) error {
	if n.depth == 0 {
		*n.out = 1
		return nil
	}
	s := Join(w, v1JoinSum{out: n.out})
	Spawn(w, v1JoinNode{n.depth - 1, &s.a})
	Spawn(w, v1JoinNode{n.depth - 1, &s.b})
	return nil
}

// BenchmarkJoin: a binary fork-join tree of depth 20 per op, each inner
// node opening a join and spawning two value children, its continuation
// adding their results: 2^21-1 nodes and 2^20-1 continuations. ns/packet
// counts both; ns/join is the time per inner node, its join and its
// continuation, against two packets of BenchmarkSpawnValue.
func BenchmarkJoin(b *testing.B) {
	const depth = 20
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tree := func() {
		var out int64
		if err := s.Add(v1JoinNode{depth, &out}); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		if out != 1<<depth {
			b.Fatalf("tree sum %d, want %d", out, 1<<depth)
		}
	}
	tree() // the workers' arenas reach their size
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tree()
	}
	b.StopTimer()
	const joins = 1<<depth - 1
	const packets = 1<<(depth+1) - 1 + joins
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/packets, "ns/packet")
	b.ReportMetric(ns/joins, "ns/join")
}

// v1Spinner spins for d, then fails if fail is set, recording when.
type v1Spinner struct {
	d       time.Duration
	fail    bool
	failed  *time.Time
	started *atomic.Int64
	gate    *chan struct{}
}

var v1ErrBench = errors.New("v1 bench failure")

func (p *v1Spinner) Run(*Worker) error {
	if p.started != nil && p.started.Add(1) == 10 {
		close(*p.gate)
	}
	for start := time.Now(); time.Since(start) < p.d; {
	}
	if p.fail {
		*p.failed = time.Now()
		return v1ErrBench
	}
	return nil
}

// BenchmarkAbortLatency: the time from the end of a cycle's cause to
// Run's return, one abort per op, while 20 µs packets run on every
// worker (2 workers, a stage of 200 such packets). error: the 21st packet
// returns an error (the time is taken just before its return). cancel:
// another goroutine cancels Run's context once 10 packets have started
// (the time is taken just before cancel). ns/abort is the mean over the
// ops, p50-ns/abort and p90-ns/abort the quantiles.
func BenchmarkAbortLatency(b *testing.B) {
	const spin = 20 * time.Microsecond
	const n = 200
	report := func(b *testing.B, lat []time.Duration) {
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		slices.Sort(lat)
		b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns/abort")
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/abort")
		b.ReportMetric(float64(lat[len(lat)*9/10].Nanoseconds()), "p90-ns/abort")
	}
	b.Run("error", func(b *testing.B) {
		s, err := New(Config{Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var failed time.Time
		ps := make([]Packet, n)
		for i := range ps {
			ps[i] = &v1Spinner{d: spin, fail: i == 20, failed: &failed}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			if err := s.AddAll(ps); err != nil {
				b.Fatal(err)
			}
			err := s.Run(context.Background())
			end := time.Now()
			if !errors.Is(err, v1ErrBench) {
				b.Fatalf("Run = %v", err)
			}
			lat = append(lat, end.Sub(failed))
		}
		b.StopTimer()
		report(b, lat)
	})
	b.Run("cancel", func(b *testing.B) {
		s, err := New(Config{Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var started atomic.Int64
		var gate chan struct{}
		ps := make([]Packet, n)
		for i := range ps {
			ps[i] = &v1Spinner{d: spin, started: &started, gate: &gate}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			started.Store(0)
			gate = make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			var cancelled time.Time
			canceller := make(chan struct{})
			go func(gate chan struct{}) {
				defer close(canceller)
				<-gate
				cancelled = time.Now()
				cancel()
			}(gate)
			if err := s.AddAll(ps); err != nil {
				b.Fatal(err)
			}
			err := s.Run(ctx)
			end := time.Now()
			<-canceller
			if !errors.Is(err, context.Canceled) {
				b.Fatalf("Run = %v", err)
			}
			lat = append(lat, end.Sub(cancelled))
		}
		b.StopTimer()
		report(b, lat)
	})
}
