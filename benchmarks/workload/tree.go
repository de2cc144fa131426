package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/wsched/wsched/benchmarks/system"
)

// A Tree is the shape of a task workload that every system can be asked to
// run: nodes are tasks, roots are submitted by the caller, and a node spawns
// its children from inside its task. A parent completes when its last child
// has completed (continuation-passing fork-join: the last child to finish
// runs the parent's join), so no task ever blocks waiting for another and a
// fixed pool of workers cannot deadlock on it.
//
// A Tree is immutable once built and may be shared by any number of
// Instances.
type Tree struct {
	Name   string
	Roots  []int32
	First  []int32         // children of i are Kids[First[i]:First[i+1]]
	Kids   []int32         // child ids, grouped by parent
	Parent []int32         // -1 for a root
	Cost   []time.Duration // simulated work per node
	// NoJoin: no task waits for its children (fan-outs): completion is
	// the executor's business alone, and a timed run does no shared
	// atomic per task.
	NoJoin bool
}

// Nested reports whether tasks spawn tasks.
func (t *Tree) Nested() bool { return len(t.Kids) > 0 }

// N is the number of tasks per run of the tree.
func (t *Tree) N() int { return len(t.Parent) }

// TotalWork is the sum of the nodes' simulated costs (the sequential
// critical work, excluding scheduling).
func (t *Tree) TotalWork() time.Duration {
	var s time.Duration
	for _, c := range t.Cost {
		s += c
	}
	return s
}

// Fanout is n independent trivial tasks submitted by the caller: the
// per-task overhead of a system, nothing else.
func Fanout(n int) *Tree {
	t := &Tree{Name: "fanout", NoJoin: true}
	t.Roots = make([]int32, n)
	t.First = make([]int32, n+1)
	t.Parent = make([]int32, n)
	t.Cost = make([]time.Duration, n)
	for i := range n {
		t.Roots[i] = int32(i)
		t.Parent[i] = -1
	}
	return t
}

// Uniform is n independent tasks of the same cost submitted by the
// caller: balanced CPU-bound work, where the result depends little on
// scheduling luck (the harness's self-test plants its slowdown here).
func Uniform(n int, cost time.Duration) *Tree {
	t := Fanout(n)
	t.Name = "uniform"
	for i := range t.Cost {
		t.Cost[i] = cost
	}
	return t
}

// Spawn is one root task, submitted by the caller, that spawns n-1
// trivial children from inside itself: the per-task overhead of spawning
// from a running task (a worker's local queue, where it has one).
func Spawn(n int) *Tree {
	t := &Tree{Name: "spawn", NoJoin: true}
	t.Roots = []int32{0}
	t.First = make([]int32, n+1)
	t.Kids = make([]int32, 0, n-1)
	t.Parent = make([]int32, n)
	t.Cost = make([]time.Duration, n)
	t.Parent[0] = -1
	for i := 1; i < n; i++ {
		t.Kids = append(t.Kids, int32(i))
	}
	for i := 1; i <= n; i++ {
		t.First[i] = int32(n - 1)
	}
	return t
}

// ForkJoin is a complete binary spawn tree of the given depth (2^(depth+1)-1
// nodes) with trivial work per node: one root submitted by the caller, every
// inner node spawns two children and joins them.
func ForkJoin(depth int) *Tree {
	n := 1<<(depth+1) - 1
	t := &Tree{Name: "forkjoin"}
	t.Roots = []int32{0}
	t.First = make([]int32, n+1)
	t.Kids = make([]int32, 0, n-1)
	t.Parent = make([]int32, n)
	t.Cost = make([]time.Duration, n)
	t.Parent[0] = -1
	for i := range n {
		t.First[i] = int32(len(t.Kids))
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < n {
				t.Kids = append(t.Kids, int32(c))
				t.Parent[c] = int32(i)
			}
		}
	}
	t.First[n] = int32(len(t.Kids))
	return t
}

// IrregularParams shape an Irregular tree.
type IrregularParams struct {
	N         int           // nodes
	Seed      uint64        // the tree is a pure function of the parameters
	MinCost   time.Duration // Pareto scale x_m of the per-node cost
	Alpha     float64       // Pareto shape; smaller = heavier tail
	MaxCost   time.Duration // cap on one node's cost
	MaxFanout int           // cap on one node's children
}

// DefaultIrregular: 32,768 nodes; cost Pareto(x_m = 100 ns, α = 1.3) capped
// at 1 ms (mean ≈ 0.4 µs, a few nodes take hundreds of µs, as in a GC heap
// where most objects are small and a few arrays are huge); branching also
// heavy-tailed, up to 64 children.
var DefaultIrregular = IrregularParams{
	N: 1 << 15, Seed: 1, MinCost: 100 * time.Nanosecond, Alpha: 1.3,
	MaxCost: time.Millisecond, MaxFanout: 64,
}

// Irregular builds a random spawn tree with heavy-tailed branching and
// heavy-tailed node costs, breadth first from one root until p.N nodes
// exist.
func Irregular(p IrregularParams) *Tree {
	if p.N < 1 || p.Alpha <= 0 || p.MaxFanout < 1 {
		panic(fmt.Sprintf("workload: bad irregular params %+v", p))
	}
	r := rand.New(rand.NewPCG(p.Seed, 0x5EED))
	n := p.N
	t := &Tree{Name: "irregular"}
	t.Roots = []int32{0}
	t.Parent = make([]int32, n)
	t.Cost = make([]time.Duration, n)
	t.First = make([]int32, n+1)
	t.Kids = make([]int32, 0, n-1)
	t.Parent[0] = -1
	next := 1 // next unassigned node id; BFS order keeps ids of siblings adjacent
	for i := range n {
		t.First[i] = int32(len(t.Kids))
		// Children: 40% leaves, otherwise 1 + Pareto(1, 1.2) capped.
		k := 0
		if r.Float64() >= 0.4 {
			k = 1 + int(math.Floor(1/math.Pow(1-r.Float64(), 1/1.2))) - 1
			k = min(k, p.MaxFanout)
		}
		if i == next-1 && next < n && k == 0 {
			k = 1 // never let the frontier die before n nodes exist
		}
		for range k {
			if next >= n {
				break
			}
			t.Kids = append(t.Kids, int32(next))
			t.Parent[next] = int32(i)
			next++
		}
		c := float64(p.MinCost) / math.Pow(1-r.Float64(), 1/p.Alpha)
		t.Cost[i] = time.Duration(min(c, float64(p.MaxCost)))
	}
	t.First[n] = int32(len(t.Kids))
	if next != n {
		panic("workload: irregular tree generation did not reach n nodes")
	}
	return t
}

// An Instance is the mutable state of one Tree being run: join counters and
// subtree sums. One Instance serves one system at a time; Reset it before
// each run.
type Instance struct {
	t           *Tree
	units       []int32        // Spin units per node, including the planted extra work
	pending     []atomic.Int32 // children not yet completed, per node
	initPending []atomic.Int32 // pending's value before a run; read by Reset only
	sum         []atomic.Int64 // nodes completed in each subtree, added up by the joins
	total       atomic.Int64   // nodes completed, summed through the joins
	roots       atomic.Int64   // completed root subtrees
	countAll    bool           // also count leafy roots (tests); off in timed runs
}

// NewInstance prepares t for running. extra is the planted slowdown: every
// node with work does (1+extra) times its work (0 for real measurements;
// the harness self-test sets 0.05).
func NewInstance(t *Tree, extra float64) *Instance {
	in := &Instance{t: t}
	in.units = make([]int32, t.N())
	for i, c := range t.Cost {
		in.units[i] = UnitsFor(time.Duration(float64(c) * (1 + extra)))
	}
	if !t.NoJoin {
		in.pending = make([]atomic.Int32, t.N())
		in.sum = make([]atomic.Int64, t.N())
		in.initPending = make([]atomic.Int32, t.N())
		for i := range in.initPending {
			in.initPending[i].Store(t.First[i+1] - t.First[i])
		}
	}
	return in
}

// CountLeaves makes a NoJoin tree count every task it runs, so that Verify
// can check it; it adds a shared atomic add per task, so timed runs leave it
// off.
func (in *Instance) CountLeaves() { in.countAll = true }

// Tree returns the instance's tree.
func (in *Instance) Tree() *Tree { return in.t }

// Reset prepares the instance for the next run. Not timed by the harness,
// but its length is the idle time between two timed runs, so it is a copy
// and a clear: 7.4–8.3 µs for the 32,767-node fork-join (BenchmarkReset),
// where an atomic Store per node, a locked exchange on amd64, takes
// 242–264 µs in the same run, long enough for wsched's parked workers to
// stop polling (Config.ParkSpin, 200 µs) and block. (The harness's -gap
// flag adds idle time on purpose, to measure that regime.) No run may be
// in progress: the copy and clear are plain writes, ordered before the
// next run's atomics by the executor's hand-off of the roots.
func (in *Instance) Reset() {
	copy(in.pending, in.initPending)
	clear(in.sum)
	in.total.Store(0)
	in.roots.Store(0)
}

// Run is the task body: node i does its work, spawns its children through
// sp, and, when it is a leaf, completes itself and every ancestor whose
// last child it was.
func (in *Instance) Run(sp system.Spawner, i int32) {
	if u := in.units[i]; u > 0 {
		Spin(u)
	}
	t := in.t
	lo, hi := t.First[i], t.First[i+1]
	if t.NoJoin {
		if in.countAll {
			in.total.Add(1)
		}
	} else if lo == hi {
		in.complete(i)
		return
	}
	if lo != hi {
		sp.SpawnAll(t.Kids[lo:hi])
	}
}

// complete finishes node i (all its children done) and walks up the joins.
func (in *Instance) complete(i int32) {
	t := in.t
	for {
		v := int64(1)
		if in.sum != nil {
			v += in.sum[i].Load() // all children have added: their Add precedes our pending hitting 0
		}
		p := t.Parent[i]
		if p < 0 {
			in.total.Add(v)
			in.roots.Add(1)
			return
		}
		in.sum[p].Add(v)
		if in.pending[p].Add(-1) != 0 { // acq-rel: the last child sees every sibling's sum
			return
		}
		i = p
	}
}

// Verify checks, after a run, that every node completed exactly once.
// NoJoin trees are checked only when CountLeaves is on.
func (in *Instance) Verify() error {
	t := in.t
	if t.NoJoin {
		if in.countAll && in.total.Load() != int64(t.N()) {
			return fmt.Errorf("workload %s: %d of %d tasks ran", t.Name, in.total.Load(), t.N())
		}
		return nil
	}
	if got, want := in.roots.Load(), int64(len(t.Roots)); got != want {
		return fmt.Errorf("workload %s: %d of %d roots completed", t.Name, got, want)
	}
	if got, want := in.total.Load(), int64(t.N()); got != want {
		return fmt.Errorf("workload %s: %d of %d nodes completed", t.Name, got, want)
	}
	return nil
}
