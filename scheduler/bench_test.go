package scheduler

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// chainPacket spawns its successor until its chain is done: Tokio's
// chained_spawn, the per-packet overhead of a packet spawned by a packet.
type chainPacket struct {
	left int
	done *atomic.Int64
	// Chains run on different workers and each packet writes left: without
	// the pad two chains allocated together share a cache line, and the
	// benchmark measures false sharing (≈ 13 ns/packet instead of ≈ 4).
	_ [48]byte
}

func (c *chainPacket) Run(w *Worker) error {
	if c.left > 1 {
		c.left--
		Spawn(w, c) // reuse the packet: measure the scheduler, not the allocator
		return nil
	}
	c.done.Add(1)
	return nil
}

// namedChainPacket is a chainPacket that names itself (Namer): its
// statistics go through the name cache instead of the type cache.
type namedChainPacket struct{ chainPacket }

func (c *namedChainPacket) PacketName() string { return "chain" }

func (c *namedChainPacket) Run(w *Worker) error {
	if c.left > 1 {
		c.left--
		Spawn(w, c)
		return nil
	}
	c.done.Add(1)
	return nil
}

// BenchmarkSpawnTrivial: b.N packets in Workers() chains, each packet
// spawning the next; ns/packet is the per-packet overhead.
func BenchmarkSpawnTrivial(b *testing.B) { benchSpawnChains(b, Config{}) }

// BenchmarkSpawnTrivialNamed is BenchmarkSpawnTrivial with packets that
// implement Namer.
func BenchmarkSpawnTrivialNamed(b *testing.B) { benchSpawnChains(b, Config{}, true) }

// BenchmarkSpawnTrivialPacketTiming is BenchmarkSpawnTrivial with
// Config.PacketTiming: the cost of timing every packet.
func BenchmarkSpawnTrivialPacketTiming(b *testing.B) {
	benchSpawnChains(b, Config{PacketTiming: true})
}

// BenchmarkSpawnTrivialLearnHeavy is BenchmarkSpawnTrivial with
// Config.LearnHeavy: PacketTiming's clock reads and the per-type record
// of each run.
func BenchmarkSpawnTrivialLearnHeavy(b *testing.B) {
	benchSpawnChains(b, Config{LearnHeavy: true})
}

// BenchmarkSpawnTrivialNoLIFOSlot is BenchmarkSpawnTrivial with every spawn
// going through the deque (Config.Local = LocalLIFO).
func BenchmarkSpawnTrivialNoLIFOSlot(b *testing.B) {
	benchSpawnChains(b, Config{Local: LocalLIFO})
}

func benchSpawnChains(b *testing.B, cfg Config, named ...bool) {
	cfg.Stages = []string{"work"}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	chains := s.Workers()
	var done atomic.Int64
	ps := make([]Packet, chains)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range chains {
		c := chainPacket{left: max(b.N/chains, 1), done: &done}
		if len(named) > 0 && named[0] {
			ps[i] = &namedChainPacket{c}
		} else {
			ps[i] = &c
		}
	}
	if err := s.AddAll(ps); err != nil {
		b.Fatal(err)
	}
	if err := s.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
}

// valueChain is a chain link spawned by value: each link is a new value
// in the spawning worker's arena, not a reused heap packet.
type valueChain struct {
	left int
	done *atomic.Int64
}

func (c valueChain) Run(w *Worker) error {
	if c.left > 1 {
		Spawn(w, valueChain{c.left - 1, c.done})
		return nil
	}
	c.done.Add(1)
	return nil
}

// joinNode is a fork-join tree node: below depth 0 it opens a join and
// spawns two children, whose counts its continuation adds up.
type joinNode struct {
	depth int
	out   *int64
}

type joinSum struct {
	a, b int64
	out  *int64
}

func (s joinSum) Run(*Worker) error { *s.out = s.a + s.b + 1; return nil }

func (n joinNode) Run(w *Worker) error {
	if n.depth == 0 {
		*n.out = 1
		return nil
	}
	s := Join(w, joinSum{out: n.out})
	Spawn(w, joinNode{n.depth - 1, &s.a})
	Spawn(w, joinNode{n.depth - 1, &s.b})
	return nil
}

// BenchmarkSpawnTrivialWaitGroup is the naive baseline: go f() + WaitGroup.
func BenchmarkSpawnTrivialWaitGroup(b *testing.B) {
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

// BenchmarkSpawnTrivialChanPool is the common baseline: a buffered channel
// feeding GOMAXPROCS goroutines.
func BenchmarkSpawnTrivialChanPool(b *testing.B) {
	b.ReportAllocs()
	ch := make(chan func(), 1024)
	var wg sync.WaitGroup
	var n atomic.Int64
	f := func() { n.Add(1) }
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range ch {
				g()
			}
		}()
	}
	for range b.N {
		ch <- f
	}
	close(ch)
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
}

type nop struct{}

func (nop) Run(*Worker) error { return nil }

// BenchmarkBulkAddFanout: cycles of one AddAll of fanoutBatch trivial
// packets into the stage (waking by the default policy) and the run that
// drains them; one op is one packet. add-ns/packet is the AddAll part.
func BenchmarkBulkAddFanout(b *testing.B) {
	const fanoutBatch = 4096
	s, err := New(Config{Stages: []string{"work"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ps := make([]Packet, fanoutBatch)
	for i := range ps {
		ps[i] = nop{}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var add time.Duration
	for left := b.N; left > 0; left -= fanoutBatch {
		t0 := time.Now()
		if err := s.AddAll(ps[:min(left, fanoutBatch)]); err != nil {
			b.Fatal(err)
		}
		add += time.Since(t0)
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet")
	b.ReportMetric(float64(add.Nanoseconds())/float64(b.N), "add-ns/packet")
}

// forkNode is a binary spawn tree node: it spawns two children until depth
// 0 (a leaf).
type forkNode struct {
	depth  int
	leaves *atomic.Int64
}

func (f forkNode) Run(w *Worker) error {
	if f.depth == 0 {
		f.leaves.Add(1)
		return nil
	}
	Spawn(w, forkNode{f.depth - 1, f.leaves})
	Spawn(w, forkNode{f.depth - 1, f.leaves})
	return nil
}

// heapNode is node i of a complete binary tree laid out as a heap
// (children 2i+1, 2i+2), preallocated so that the benchmark allocates
// nothing per packet and measures the scheduler alone.
type heapNode struct {
	tree *heapTree
	i    int
}

type heapTree struct {
	nodes  []heapNode
	leaves []paddedCount // per worker: a shared atomic would measure contention
	inline bool          // children by SpawnOrRun, not Spawn
}

type paddedCount struct {
	n int64
	_ [56]byte
}

func (t *heapTree) leafCount() int64 {
	var n int64
	for i := range t.leaves {
		n += t.leaves[i].n
	}
	return n
}

func (n *heapNode) Run(w *Worker) error {
	t := n.tree
	c := 2*n.i + 1
	if c >= len(t.nodes) {
		t.leaves[w.ID()].n++
		return nil
	}
	if t.inline {
		SpawnOrRun(w, &t.nodes[c])
		SpawnOrRun(w, &t.nodes[c+1])
		return nil
	}
	Spawn(w, &t.nodes[c])
	Spawn(w, &t.nodes[c+1])
	return nil
}

// BenchmarkForkJoinTree: one cycle per iteration over a binary spawn tree
// of 2^20 leaves (2^21-1 packets); ns/packet is per tree node.
func BenchmarkForkJoinTree(b *testing.B) { benchForkJoinTree(b, false) }

// BenchmarkSpawnOrRunTree: the same tree with SpawnOrRun: children run
// inline unless idle workers lack queued work to take.
func BenchmarkSpawnOrRunTree(b *testing.B) { benchForkJoinTree(b, true) }

// wideRoot spawns its children in one loop with SpawnOrRun.
type wideRoot struct{ kids []Packet }

func (r *wideRoot) Run(w *Worker) error {
	for _, k := range r.kids {
		SpawnOrRun(w, k)
	}
	return nil
}

// BenchmarkSpawnOrRunWide: one packet SpawnOrRuns 16,383 trivial children
// per cycle (the harness's Spawn shape); ns/packet per child, and how the
// children went: inline-% run inline, stolen/cycle taken by other workers.
func BenchmarkSpawnOrRunWide(b *testing.B) {
	const kids = 16383
	s, err := New(Config{Stages: []string{"work"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	root := &wideRoot{kids: make([]Packet, kids)}
	for i := range root.kids {
		root.kids[i] = nop{}
	}
	before := s.Stats()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Add(root); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	after := s.Stats()
	var inlined, stolen uint64
	for i := range after.Workers {
		inlined += after.Workers[i].Inlined - before.Workers[i].Inlined
		stolen += after.Workers[i].Stolen - before.Workers[i].Stolen
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/kids, "ns/packet")
	b.ReportMetric(100*float64(inlined)/float64(b.N)/kids, "inline-%")
	b.ReportMetric(float64(stolen)/float64(b.N), "stolen/cycle")
}

// spinKid is a child that computes for about iters dependent steps.
type spinKid struct{ iters int }

var spinSink atomic.Uint64

func (k spinKid) Run(*Worker) error {
	if xorshift(k.iters) == 0 {
		spinSink.Add(1) // never: keeps the loop
	}
	return nil
}

// BenchmarkSpawnOrRunWideCost: BenchmarkSpawnOrRunWide's shape with
// children of rising cost (iters xorshift steps each, about 1 ns per
// step on the EPYC), where SpawnOrRun must hand children to idle workers
// for the run to scale: ns/packet per child against the cost of one
// child run serially (serial-ns).
func BenchmarkSpawnOrRunWideCost(b *testing.B) {
	for _, c := range []struct{ iters, kids int }{{0, 16383}, {64, 16383}, {512, 4096}, {4096, 1024}, {32768, 256}} {
		b.Run(fmt.Sprintf("iters=%d", c.iters), func(b *testing.B) {
			s, err := New(Config{Stages: []string{"work"}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			root := &wideRoot{kids: make([]Packet, c.kids)}
			for i := range root.kids {
				root.kids[i] = spinKid{c.iters}
			}
			t0 := time.Now()
			for _, k := range root.kids {
				k.Run(nil)
			}
			serial := time.Since(t0)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := s.Add(root); err != nil {
					b.Fatal(err)
				}
				if err := s.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.kids), "ns/packet")
			b.ReportMetric(float64(serial.Nanoseconds())/float64(c.kids), "serial-ns")
		})
	}
}

func benchForkJoinTree(b *testing.B, inline bool) {
	const depth = 20
	s, err := New(Config{Stages: []string{"work"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t := &heapTree{nodes: make([]heapNode, 1<<(depth+1)-1), leaves: make([]paddedCount, s.Workers()), inline: inline}
	for i := range t.nodes {
		t.nodes[i] = heapNode{tree: t, i: i}
	}
	b.ReportAllocs()
	for b.Loop() {
		clear(t.leaves)
		if err := s.Add(&t.nodes[0]); err != nil {
			b.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		if n := t.leafCount(); n != 1<<depth {
			b.Fatalf("leaves = %d", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.nodes)), "ns/packet")
}

// stamp records when it started running.
type stamp struct {
	at *atomic.Int64
}

func (p stamp) Run(*Worker) error { p.at.Store(int64(time.Since(benchEpoch))); return nil }

var benchEpoch = time.Now()

// BenchmarkWakeLatency: from Add (every worker parked, mid-cycle) to the
// packet starting on a worker. A blocker packet keeps the cycle open.
func BenchmarkWakeLatency(b *testing.B) {
	s, err := New(Config{Stages: []string{"work"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	holder := holdPacket{release}
	lat := make([]int64, 0, b.N)
	var at atomic.Int64
	if err := s.AddDesignated(0, holder); err != nil {
		b.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(context.Background()) }()
	b.ReportAllocs()
	for b.Loop() {
		// wait until every other worker is parked
		for int(s.s.nParked.Load()) < s.s.n-1 {
			runtime.Gosched()
		}
		at.Store(0)
		t0 := int64(time.Since(benchEpoch))
		if err := s.Add(stamp{&at}, Unconstrained); err != nil {
			b.Fatal(err)
		}
		for at.Load() == 0 {
			runtime.Gosched()
		}
		lat = append(lat, at.Load()-t0)
	}
	close(release)
	if err := <-runErr; err != nil {
		b.Fatal(err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
	}
}

// holdPacket blocks its worker until release is closed.
type holdPacket struct{ release chan struct{} }

func (h holdPacket) Run(*Worker) error { <-h.release; return nil }

// BenchmarkCycle: the fixed cost of a cycle: three stages with one trivial
// packet each, every worker parked before and after.
func BenchmarkCycle(b *testing.B) {
	s, err := New(Config{Stages: []string{"a", "b", "c"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		for st := StageID(1); st <= 3; st++ {
			if err := s.Add(nop{}, st); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// phaseProbe is packet i of BenchmarkFanoutPhases: every 1024th records
// when it starts into the cycle's first and last start times.
type phaseProbe struct {
	i           int
	first, last *atomic.Int64
	epoch       time.Time
}

func (p *phaseProbe) Run(*Worker) error {
	if p.i%1024 != 0 {
		return nil
	}
	now := int64(time.Since(p.epoch))
	p.first.CompareAndSwap(0, now)
	for l := p.last.Load(); now > l && !p.last.CompareAndSwap(l, now); l = p.last.Load() {
	}
	return nil
}

// BenchmarkFanoutPhases: where the time of a fan-out cycle of 16,384
// trivial packets goes, per cycle, at 1 and 2 workers, the packets queued
// by AddAll (add=copy) or AddAll with Lend (add=slice): add-µs, the add
// before Run; start-µs, from Run to the first packet; run-µs, from the
// first packet to the last (sampled every 1024 packets); end-µs, from the
// last packet to Run's return.
//
//	go test -run '^$' -bench FanoutPhases -benchtime 300x -count 5 ./scheduler/
func BenchmarkFanoutPhases(b *testing.B) {
	const n = 16384
	for _, c := range []struct {
		workers int
		add     string
	}{{1, "copy"}, {1, "slice"}, {2, "copy"}, {2, "slice"}} {
		workers := c.workers
		b.Run(fmt.Sprintf("workers=%d/add=%s", workers, c.add), func(b *testing.B) {
			s, err := New(Config{Workers: workers, Stages: []string{"work"}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var opts []Option
			if c.add == "slice" {
				opts = []Option{Lend}
			}
			var first, last atomic.Int64
			epoch := time.Now()
			ps := make([]Packet, n)
			for i := range ps {
				ps[i] = &phaseProbe{i: i, first: &first, last: &last, epoch: epoch}
			}
			var add, start, run, end time.Duration
			b.ReportAllocs()
			for b.Loop() {
				first.Store(0)
				last.Store(0)
				t0 := time.Since(epoch)
				if err := s.AddAll(ps, opts...); err != nil {
					b.Fatal(err)
				}
				t1 := time.Since(epoch)
				if err := s.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				t2 := time.Since(epoch)
				f, l := time.Duration(first.Load()), time.Duration(last.Load())
				add, start, run, end = add+t1-t0, start+f-t1, run+l-f, end+t2-l
			}
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
			b.ReportMetric(us(add), "add-µs")
			b.ReportMetric(us(start), "start-µs")
			b.ReportMetric(us(run), "run-µs")
			b.ReportMetric(us(end), "end-µs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/packet")
		})
	}
}

// BenchmarkParkSpin: what Config.ParkSpin buys and costs. One cycle per
// iteration over a binary spawn tree of 2^15-1 packets (about 0.5 ms of
// work here): every cycle starts with the workers parked, so the second
// worker's first packet waits for a wake-up. back-to-back starts the next
// cycle at once; gap=100us and gap=1000us sleep that long between cycles
// (untimed; a batch job preparing its next batch), so a wake-up is polled
// only if the poll outlasts the gap. ns/op is the cycle (Run) alone;
// cpu-ns/op is the process's CPU time (user + system) per cycle, gap
// included: what the polling costs.
func BenchmarkParkSpin(b *testing.B) {
	const depth = 14
	for _, gap := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond} {
		// Off, 10 µs, the default and 200 µs (the default's value, set
		// explicitly: "parkspin=200us#01").
		for _, spin := range []time.Duration{-1, 10 * time.Microsecond, defaultParkSpin, 200 * time.Microsecond} {
			name := "back-to-back"
			if gap > 0 {
				name = "gap=" + strconv.Itoa(int(gap/time.Microsecond)) + "us"
			}
			sp := "off"
			if spin > 0 {
				sp = strconv.Itoa(int(spin/time.Microsecond)) + "us"
			}
			b.Run(name+"/parkspin="+sp, func(b *testing.B) {
				s, err := New(Config{Stages: []string{"work"}, ParkSpin: spin})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				t := &heapTree{nodes: make([]heapNode, 1<<(depth+1)-1), leaves: make([]paddedCount, s.Workers())}
				for i := range t.nodes {
					t.nodes[i] = heapNode{tree: t, i: i}
				}
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					if gap > 0 {
						b.StopTimer()
						time.Sleep(gap)
						b.StartTimer()
					}
					clear(t.leaves)
					if err := s.Add(&t.nodes[0]); err != nil {
						b.Fatal(err)
					}
					if err := s.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// busyFor is a packet that computes (polls the clock) for d.
type busyFor time.Duration

func (d busyFor) Run(*Worker) error {
	for t0 := time.Now(); time.Since(t0) < time.Duration(d); {
	}
	return nil
}

// BenchmarkHeavyTailedBulk: one bulk add of 4,096 packets whose costs are
// Pareto(1 µs, α = 1.1) capped at 2 ms, under each take policy: the case
// where a large take could hide packets behind a long one after the bucket
// drained. bound-ratio is the median of each cycle's makespan over its
// lower bound max(longest packet, work ÷ workers); a new draw of costs each
// iteration, the same sequence of draws for every policy (ns/op includes
// drawing them).
//
//	go test -run '^$' -bench HeavyTailedBulk -benchtime 30x -count 3 ./scheduler/
func BenchmarkHeavyTailedBulk(b *testing.B) {
	const n = 4096
	for _, take := range []struct {
		name   string
		policy TakePolicy
	}{{"fair", TakeFair}, {"guided", TakeGuided}} {
		b.Run("take="+take.name, func(b *testing.B) {
			s, err := New(Config{Stages: []string{"a"}, Take: take.policy})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ps := make([]Packet, n)
			var ratios []float64
			seed := uint64(1)
			for b.Loop() {
				var total, longest time.Duration
				for i := range ps {
					seed = seed*6364136223846793005 + 1442695040888963407
					u := float64(seed>>11) / (1 << 53) // [0, 1)
					d := time.Duration(min(float64(time.Microsecond)/math.Pow(1-u, 1/1.1), float64(2*time.Millisecond)))
					ps[i] = busyFor(d)
					total += d
					longest = max(longest, d)
				}
				bound := max(longest, total/time.Duration(s.Workers()))
				if err := s.AddAll(ps); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := s.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				ratios = append(ratios, float64(time.Since(t0))/float64(bound))
			}
			sort.Float64s(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "bound-ratio")
		})
	}
}
