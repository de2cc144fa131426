package scheduler

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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
		ps[i] = valueChain{max(b.N/chains, 1), &done}
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
		if err := s.Add(joinNode{depth, &out}); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		if out != 1<<(depth+1)-1 {
			b.Fatalf("tree count %d, want %d", out, 1<<(depth+1)-1)
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

// treeNodeP is joinNode without the join: a node spawns its two
// children and nothing combines their results.
type treeNodeP struct{ depth int }

func (n treeNodeP) Run(w *Worker) error {
	if n.depth > 0 {
		Spawn(w, treeNodeP{n.depth - 1})
		Spawn(w, treeNodeP{n.depth - 1})
	}
	return nil
}

// BenchmarkJoinBaselineTree is BenchmarkJoin's tree without joins: 2^21-1
// value packets per op. ns/node is the time per inner node, to set
// against BenchmarkJoin's ns/join: the difference is what a join, its
// continuation and the result passing cost in that shape.
func BenchmarkJoinBaselineTree(b *testing.B) {
	const depth = 20
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tree := func() {
		if err := s.Add(treeNodeP{depth}); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	tree()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tree()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns/(1<<(depth+1)-1), "ns/packet")
	b.ReportMetric(ns/(1<<depth-1), "ns/node")
}

// abortRun is one cycle of BenchmarkAbortLatency: the packets spin
// for d each; the first to start once trigger packets have started and
// every worker has started one (so that packets run on every worker)
// fires: it fails after its spin (fail), recording when, or closes gate
// before it (a canceller waits on gate).
type abortRun struct {
	d       time.Duration
	trigger int64
	all     int32 // a bit per worker
	fail    bool

	seen    atomic.Int32
	started atomic.Int64
	fired   atomic.Bool
	failed  time.Time
	gate    chan struct{}
}

// reset readies r for the next cycle. The workers are parked.
func (r *abortRun) reset() {
	r.seen.Store(0)
	r.started.Store(0)
	r.fired.Store(false)
	r.gate = make(chan struct{})
}

type spinner struct{ r *abortRun }

var errBench = errors.New("bench failure")

func (p spinner) Run(w *Worker) error {
	r := p.r
	r.seen.Or(1 << w.ID())
	fire := r.started.Add(1) >= r.trigger && r.seen.Load() == r.all && r.fired.CompareAndSwap(false, true)
	if fire && !r.fail {
		close(r.gate)
		// Every P runs a worker: without a yield the canceller would
		// wait for the runtime to preempt one (10 ms).
		runtime.Gosched()
	}
	for start := time.Now(); time.Since(start) < r.d; {
	}
	if fire && r.fail {
		r.failed = time.Now()
		return errBench
	}
	return nil
}

// BenchmarkAbortLatency: the time from a cycle's cause to Run's return,
// one abort per op, while 20 us packets run on both workers (a stage of
// 1,000 of them: 10 ms of work per worker, the runtime's preemption
// period, so that a canceller descheduled meanwhile still cancels the
// cycle before it ends). error: a packet returns an error once 20 have
// started and both workers run packets (the time is taken just before
// its return). cancel: another goroutine cancels Run's context once 10
// packets have started on both workers (the time is taken just before
// cancel). ns/abort is the mean over the timed ops, p50-ns/abort and
// p90-ns/abort the quantiles; untimed/op counts the ops left out: the
// cycle ended before its trigger (a worker did not start in time) or
// before the cancel reached Run.
func BenchmarkAbortLatency(b *testing.B) {
	const spin = 20 * time.Microsecond
	const n = 1000
	const workers = 2
	setup := func(b *testing.B, r *abortRun) (*Scheduler, []Packet) {
		s, err := New(Config{Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		r.d, r.all = spin, 1<<workers-1
		ps := make([]Packet, n)
		for i := range ps {
			ps[i] = spinner{r}
		}
		return s, ps
	}
	report := func(b *testing.B, lat []time.Duration) {
		if len(lat) == 0 {
			b.Fatal("no op timed")
		}
		b.ReportMetric(float64(b.N-len(lat))/float64(b.N), "untimed/op")
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
		r := &abortRun{trigger: 20, fail: true}
		s, ps := setup(b, r)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			r.reset()
			if err := s.AddAll(ps); err != nil {
				b.Fatal(err)
			}
			err := s.Run(context.Background())
			end := time.Now()
			if !r.fired.Load() {
				continue
			}
			if !errors.Is(err, errBench) {
				b.Fatalf("Run = %v", err)
			}
			lat = append(lat, end.Sub(r.failed))
		}
		b.StopTimer()
		report(b, lat)
	})
	b.Run("cancel", func(b *testing.B) {
		r := &abortRun{trigger: 10}
		s, ps := setup(b, r)
		// The canceller is one goroutine, blocked on the gate before each
		// cycle starts (a goroutine started with the cycle could still be
		// waiting in a run queue when the gate closes).
		type request struct {
			gate, stop, done chan struct{}
			cancel           context.CancelFunc
			at               *time.Time
		}
		requests, ready := make(chan request), make(chan struct{})
		go func() {
			for q := range requests {
				ready <- struct{}{}
				select {
				case <-q.gate:
					*q.at = time.Now()
				case <-q.stop: // the cycle ended before its trigger
				}
				q.cancel()
				close(q.done)
			}
		}()
		defer close(requests)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			r.reset()
			ctx, cancel := context.WithCancel(context.Background())
			var cancelled time.Time
			q := request{r.gate, make(chan struct{}), make(chan struct{}), cancel, &cancelled}
			requests <- q
			<-ready
			if err := s.AddAll(ps); err != nil {
				b.Fatal(err)
			}
			err := s.Run(ctx)
			end := time.Now()
			close(q.stop)
			<-q.done
			if !r.fired.Load() || err == nil {
				continue
			}
			if !errors.Is(err, context.Canceled) {
				b.Fatalf("Run = %v", err)
			}
			lat = append(lat, end.Sub(cancelled))
		}
		b.StopTimer()
		report(b, lat)
	})
}

// orRunNode is a tree node as users write a packet per node: a value of
// 40 bytes holding a pointer to shared state, its children run with
// SpawnOrRun, each node counted on its worker's value of a Reducer.
type orRunNode struct {
	sh         *orRunShared
	key, a, b  uint64
	depth, pad int32
}

type orRunShared struct {
	nodes *Reducer[int64]
	depth int32
	chain bool  // each node a leaf child and an inner child, down to depth
	plain int64 // the recursion's count
}

// mix is a node's work: a few multiplications, so that the cost per node
// is mostly the scheduler's.
func (n *orRunNode) mix() uint64 {
	x := n.key ^ n.a ^ n.b
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	return x
}

func (n orRunNode) Run(w *Worker) error {
	*n.sh.nodes.Local(w)++
	if n.depth == n.sh.depth {
		return nil
	}
	x := n.mix()
	if n.sh.chain { // a leaf child and an inner one
		SpawnOrRun(w, orRunNode{n.sh, x, n.a + 1, n.b, n.sh.depth, 0})
	} else {
		SpawnOrRun(w, orRunNode{n.sh, x, n.a + 1, n.b, n.depth + 1, 0})
	}
	SpawnOrRun(w, orRunNode{n.sh, x + 1, n.a, n.b + 1, n.depth + 1, 0})
	return nil
}

// visit is Run as plain recursion: the baseline.
//
//go:noinline
func (n orRunNode) visit() {
	n.sh.plain++
	if n.depth == n.sh.depth {
		return
	}
	x := n.mix()
	if n.sh.chain {
		orRunNode{n.sh, x, n.a + 1, n.b, n.sh.depth, 0}.visit()
	} else {
		orRunNode{n.sh, x, n.a + 1, n.b, n.depth + 1, 0}.visit()
	}
	orRunNode{n.sh, x + 1, n.a, n.b + 1, n.depth + 1, 0}.visit()
}

// BenchmarkSpawnOrRunNode: a packet per node written as users write it
// (orRunNode), on one worker, against plain recursion over the same
// values (exec=recursion) in the same run; ns/node per node. shape=tree:
// a binary tree of depth 16 (131,071 nodes) per op; shape=chain-D: a
// path D nodes long, each with a leaf child besides the next (2D-1
// nodes), where D beyond SpawnOrRun's nesting bound (64) shows what the
// bound costs.
func BenchmarkSpawnOrRunNode(b *testing.B) {
	for _, c := range []struct {
		name  string
		depth int32
		chain bool
		nodes int64
	}{
		{"tree", 16, false, 1<<17 - 1},
		{"chain-60", 59, true, 2*60 - 1},
		{"chain-1000", 999, true, 2*1000 - 1},
		{"chain-100000", 99999, true, 2*100000 - 1},
	} {
		b.Run("shape="+c.name, func(b *testing.B) { benchOrRunNode(b, c.depth, c.chain, c.nodes) })
	}
}

func benchOrRunNode(b *testing.B, depth int32, chain bool, nodes int64) {
	s, err := New(Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sh := &orRunShared{nodes: NewReducer(s, func(a, b int64) int64 { return a + b }), depth: depth, chain: chain}
	b.Run("exec=recursion", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sh.plain = 0
			orRunNode{sh: sh, key: 1}.visit()
			if sh.plain != nodes {
				b.Fatalf("%d nodes, want %d", sh.plain, nodes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*nodes), "ns/node")
	})
	b.Run("exec=spawnorrun", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sh.nodes.Reset()
			if err := s.Add(orRunNode{sh: sh, key: 1}); err != nil {
				b.Fatal(err)
			}
			if err := s.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			if got := sh.nodes.Result(); got != nodes {
				b.Fatalf("%d nodes, want %d", got, nodes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*nodes), "ns/node")
	})
}

// wlNode is BenchmarkWorklistNode's item: orRunNode's values without the
// shared pointer (the body holds it), 32 bytes.
type wlNode struct {
	key, a, b  uint64
	depth, pad int32
}

// children is a node's work and its children: the mix of orRunNode, and
// two children below depth.
func (n *wlNode) children(depth int32) (x uint64, ok bool) {
	if n.depth == depth {
		return 0, false
	}
	x = n.key ^ n.a ^ n.b
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	return x, true
}

// BenchmarkWorklistNode: a worklist item's cost on one worker, the body
// counting the node on a Reducer and feeding its two children with
// Feeder.Next, against the same search on an explicit stack in a local
// slice, the body's work called directly (exec=stack), in the same run;
// ns/node per node. A binary tree of depth 16 (131,071 nodes) per op.
func BenchmarkWorklistNode(b *testing.B) {
	const depth, nodes = 16, 1<<17 - 1
	s, err := New(Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Run("exec=stack", func(b *testing.B) {
		b.ReportAllocs()
		var st []wlNode
		for b.Loop() {
			count := int64(0)
			st = append(st[:0], wlNode{key: 1})
			for len(st) > 0 {
				n := st[len(st)-1]
				st = st[:len(st)-1]
				count++
				if x, ok := n.children(depth); ok {
					st = append(st, wlNode{x, n.a + 1, n.b, n.depth + 1, 0}, wlNode{x + 1, n.a, n.b + 1, n.depth + 1, 0})
				}
			}
			if count != nodes {
				b.Fatalf("%d nodes, want %d", count, nodes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*nodes), "ns/node")
	})
	b.Run("exec=worklist", func(b *testing.B) {
		count := NewReducer(s, func(a, b int64) int64 { return a + b })
		wl, err := NewWorklist(s, "node", func(w *Worker, n *wlNode, f *Feeder[wlNode]) error {
			*count.Local(w)++
			if x, ok := n.children(depth); ok {
				*f.Next() = wlNode{x, n.a + 1, n.b, n.depth + 1, 0}
				*f.Next() = wlNode{x + 1, n.a, n.b + 1, n.depth + 1, 0}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			count.Reset()
			if err := wl.Add([]wlNode{{key: 1}}); err != nil {
				b.Fatal(err)
			}
			if err := s.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			if got := count.Result(); got != nodes {
				b.Fatalf("%d nodes, want %d", got, nodes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*nodes), "ns/node")
	})
}

// arrNode is orRunNode with its three keys in an array: the same 40
// bytes, but a struct with an array field of more than one element is
// passed in memory, not in registers (Go's register ABI), so every copy
// of the node is a store and a load.
type arrNode struct {
	sh         *orRunShared
	key        [3]uint64
	depth, pad int32
}

func (n *arrNode) mix() uint64 {
	x := n.key[0] ^ n.key[1] ^ n.key[2]
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	return x
}

func (n arrNode) Run(w *Worker) error {
	*n.sh.nodes.Local(w)++
	if n.depth == n.sh.depth {
		return nil
	}
	x := n.mix()
	SpawnOrRun(w, arrNode{n.sh, [3]uint64{x, n.key[1] + 1, n.key[2]}, n.depth + 1, 0})
	SpawnOrRun(w, arrNode{n.sh, [3]uint64{x + 1, n.key[1], n.key[2] + 1}, n.depth + 1, 0})
	return nil
}

//go:noinline
func (n arrNode) visit() {
	n.sh.plain++
	if n.depth == n.sh.depth {
		return
	}
	x := n.mix()
	arrNode{n.sh, [3]uint64{x, n.key[1] + 1, n.key[2]}, n.depth + 1, 0}.visit()
	arrNode{n.sh, [3]uint64{x + 1, n.key[1], n.key[2] + 1}, n.depth + 1, 0}.visit()
}

// BenchmarkSpawnOrRunArrayNode is BenchmarkSpawnOrRunNode's tree with
// arrNode, a node passed in memory, against its own recursion.
func BenchmarkSpawnOrRunArrayNode(b *testing.B) {
	const depth, nodes = 16, 1<<17 - 1
	s, err := New(Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sh := &orRunShared{nodes: NewReducer(s, func(a, b int64) int64 { return a + b }), depth: depth}
	b.Run("exec=recursion", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sh.plain = 0
			arrNode{sh: sh, key: [3]uint64{1}}.visit()
			if sh.plain != nodes {
				b.Fatalf("%d nodes, want %d", sh.plain, nodes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*nodes), "ns/node")
	})
	b.Run("exec=spawnorrun", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sh.nodes.Reset()
			if err := s.Add(arrNode{sh: sh, key: [3]uint64{1}}); err != nil {
				b.Fatal(err)
			}
			if err := s.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			if got := sh.nodes.Result(); got != nodes {
				b.Fatalf("%d nodes, want %d", got, nodes)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*nodes), "ns/node")
	})
}
