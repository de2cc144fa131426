package gcmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// Marker's scheduler workers (Close stops them), a baseline's goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHeapDeterministic(t *testing.T) {
	for _, cfg := range []func(float64, uint64) HeapConfig{DefaultHeapConfig, PowerLawHeapConfig} {
		a := NewHeap(cfg(0.01, 7))
		b := NewHeap(cfg(0.01, 7))
		c := NewHeap(cfg(0.01, 8))
		shape := a.Config().Shape
		require.Equal(t, a.Words, b.Words, "%v: same seed built different heaps", shape)
		require.Equal(t, a.Offsets, b.Offsets, "%v: same seed built different heaps", shape)
		require.Equal(t, a.CodeCache, b.CodeCache, "%v: same seed built different heaps", shape)
		require.NotEqual(t, a.Words, c.Words, "%v: different seeds built the same heap", shape)
		require.Len(t, a.CodeCache, CodeCacheSlots, "%v: code cache slots", shape)
		for _, arr := range a.Arrays {
			assert.Greater(t, len(a.Slots(arr)), ChunkSlots, "%v: array %d: want more than one chunk of slots", shape, arr)
		}
		refs := 0
		for o := range uint32(a.Objects()) {
			for _, c := range a.Slots(o) {
				require.True(t, c == Null || int(c) < a.Objects(), "%v: object %d points at %d", shape, o, c)
			}
			refs += len(a.Slots(o))
		}
		assert.Equal(t, a.References(), refs, "%v: References", shape)
	}
}

// TestPowerLawHeapGraph checks that the power-law heap is the graph it has
// always been for its seed: the hash of its degrees, targets and roots,
// laid out as they were before objects had headers.
func TestPowerLawHeapGraph(t *testing.T) {
	h := NewHeap(PowerLawHeapConfig(0.02, 1))
	f := fnv.New64a()
	var b [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(b[:], v)
		f.Write(b[:])
	}
	total := uint32(0)
	for o := range uint32(h.Objects()) { // the old Offsets
		put(total)
		total += uint32(len(h.Slots(o)))
	}
	put(total)
	for o := range uint32(h.Objects()) { // the old Refs
		for _, c := range h.Slots(o) {
			put(c)
		}
	}
	for _, vs := range append([][]uint32{h.Arrays, h.CodeCache}, h.Stacks...) {
		for _, v := range vs {
			put(v)
		}
	}
	assert.Equal(t, uint64(0x765fbfa38e989ce0), f.Sum64(), "the power-law heap of seed 1 changed")
}

// TestBuiltHeapLocality checks what the built heap is for: a depth-first
// mark (first slot first) reads it mostly in allocation order, a
// breadth-first one does not; and with no long-range references nearly
// all of a depth-first mark is in order.
func TestBuiltHeapLocality(t *testing.T) {
	inOrder := func(h *Heap, dfs bool) float64 {
		marks := NewBitmap(h.Objects())
		var q, order []uint32
		push := func(o uint32) {
			if o != Null && !marks.Has(o) {
				marks[o>>6] |= 1 << (o & 63)
				q = append(q, o)
			}
		}
		for _, s := range append(h.Stacks, h.CodeCache) {
			for _, o := range s {
				push(o)
			}
		}
		for len(q) > 0 {
			var o uint32
			if dfs {
				o, q = q[len(q)-1], q[:len(q)-1]
			} else {
				o, q = q[0], q[1:]
			}
			order = append(order, o)
			s := h.Slots(o)
			for i := range s {
				if dfs {
					push(s[len(s)-1-i]) // first slot popped first
				} else {
					push(s[i]) // first slot queued first
				}
			}
		}
		next := 0
		for i := 1; i < len(order); i++ {
			if order[i] == order[i-1]+1 {
				next++
			}
		}
		return float64(next) / float64(len(order))
	}
	cfg := DefaultHeapConfig(0.1, 1)
	h := NewHeap(cfg)
	dfs, bfs := inOrder(h, true), inOrder(h, false)
	t.Logf("next object scanned is the next allocated: depth-first %.2f, breadth-first %.2f", dfs, bfs)
	assert.Greater(t, dfs, 0.65, "depth-first")
	assert.Less(t, bfs, 0.35, "breadth-first")
	cfg.LongRange = 0
	assert.Greater(t, inOrder(NewHeap(cfg), true), 0.9, "depth-first, no long-range references")
}

// policies is every wake policy crossed with each way of stealing: one
// packet, half, and half at most 8; then the two other local orders.
func policies() []scheduler.Config {
	var out []scheduler.Config
	for _, wake := range []scheduler.WakePolicy{scheduler.WakeOne, scheduler.WakeAll, scheduler.WakeN, scheduler.WakeSearcher} {
		for _, steal := range []struct {
			p     scheduler.StealPolicy
			limit int
		}{{scheduler.StealOne, 0}, {scheduler.StealHalf, 0}, {scheduler.StealHalf, 8}} {
			out = append(out, scheduler.Config{Wake: wake, Steal: steal.p, StealLimit: steal.limit})
		}
	}
	for _, local := range []scheduler.LocalPolicy{scheduler.LocalLIFO, scheduler.LocalFIFO} {
		out = append(out, scheduler.Config{Local: local})
	}
	return out
}

// testHeaps are small heaps of both shapes (~42 Ki objects: fast under
// -race), with the marks a sequential breadth-first search finds.
var testHeaps = sync.OnceValue(func() []*Heap {
	return []*Heap{NewHeap(DefaultHeapConfig(0.02, 1)), NewHeap(PowerLawHeapConfig(0.02, 1))}
})

// requireMarks fails t now, naming the first object marked differently,
// unless got has exactly the marks of want.
func requireMarks(t testing.TB, got, want Bitmap, cycle int) {
	t.Helper()
	if d := FirstDifference(got, want); d >= 0 {
		require.Failf(t, "marks differ from the sequential search",
			"cycle %d: object %d: marked=%v, sequential=%v", cycle, d, got.Has(uint32(d)), want.Has(uint32(d)))
	}
}

// checkCycles runs cycles on m and checks each cycle's marks against
// want and its counts against each other.
func checkCycles(t *testing.T, m *Marker, want Bitmap, cycles int) []Result {
	t.Helper()
	var out []Result
	for cycle := range cycles {
		r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
		requireMarks(t, m.Marks(), want, cycle)
		require.Equal(t, int64(want.Count()), r.Marked, "cycle %d: Marked", cycle)
		require.Equal(t, r.Marked, r.Live, "cycle %d: Live", cycle)
		out = append(out, r)
	}
	return out
}

// TestMarkMatchesBFS checks that the parallel mark finds exactly the objects
// a sequential breadth-first search finds, on both heap shapes, with both
// Closure designs, under every policy and 1–3 workers, twice on the same
// Marker (the second cycle must clear the first's marks).
//
// Under -short it runs 42 of the 252 combinations: each policy on one heap
// shape (the shapes alternate along the policies), with every design, at
// one worker count per design; the counts rotate, so each policy still
// meets 1, 2 and 3 workers and all three code-cache placements.
func TestMarkMatchesBFS(t *testing.T) {
	for hi, h := range testHeaps() {
		want := h.MarkSequential()
		for ti, tracing := range []Tracing{TracePartitioned, TraceDepthFirst, TraceEdgeBuffers} {
			for pi, cfg := range policies() {
				workerCounts := []int{1, 2, 3}
				if testing.Short() {
					if (hi+pi)%2 != 0 {
						continue
					}
					workerCounts = []int{1 + (hi+ti+pi)%3}
				}
				for _, workers := range workerCounts {
					cfg.Workers = workers
					name := fmt.Sprintf("%v/%v/wake=%v/steal=%v/limit=%d/local=%v/workers=%d", h.Config().Shape, tracing, cfg.Wake, cfg.Steal, cfg.StealLimit, cfg.Local, workers)
					t.Run(name, func(t *testing.T) {
						m, err := NewMarker(h, Options{Scheduler: cfg, Trace: tracing, CodeCache: CodeCachePlacement(workers % 3), RootSlotWork: -1})
						require.NoError(t, err)
						defer m.Close()
						checkCycles(t, m, want, 2)
					})
				}
			}
		}
	}
}

// The depth-first and worklist markers set their bits plainly exactly
// when they have one worker (nobody else marks); the edge-buffer design
// and more workers use CAS (the partitioned design's bits are always plain, each
// partition's set by its own packet: TestPartitionsMatchBFS). Both kinds
// of marker find the sequential marks (above); this checks which kind
// each configuration is.
func TestPlainBitsOnlyAlone(t *testing.T) {
	h := testHeaps()[0]
	for _, c := range []struct {
		workers int
		trace   Tracing
		plain   bool
	}{{1, TraceDepthFirst, true}, {2, TraceDepthFirst, false}, {3, TraceDepthFirst, false}, {1, TraceEdgeBuffers, false},
		{1, TraceWorklist, true}, {2, TraceWorklist, false}} {
		m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: c.workers}, Trace: c.trace})
		require.NoError(t, err)
		assert.Equal(t, c.plain, m.plain, "%d workers, %v", c.workers, c.trace)
		require.NoError(t, m.Close())
	}
}

// TestSplitMatchesBFS checks the depth-first mark's splits: asking
// ShouldSplit after every object, giving away from one object to all but
// one, going on with the rest or spawning it too; the marks must not
// change. With 3 workers on these heaps some cycles split.
func TestSplitMatchesBFS(t *testing.T) {
	var splits int64
	for _, h := range testHeaps() {
		want := h.MarkSequential()
		for _, share := range []float64{0.01, 0.5, 0.99} {
			for _, keep := range []bool{false, true} {
				for _, local := range []scheduler.LocalPolicy{scheduler.LocalPrivate, scheduler.LocalLIFO} {
					name := fmt.Sprintf("%v/share=%v/keep=%v/local=%v", h.Config().Shape, share, keep, local)
					t.Run(name, func(t *testing.T) {
						m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: 3, Local: local}, Trace: TraceDepthFirst,
							SplitEvery: 1, SplitShare: share, KeepRest: keep, Batch: 5, RootSlotWork: -1})
						require.NoError(t, err)
						defer m.Close()
						for _, r := range checkCycles(t, m, want, 3) {
							splits += r.Splits
						}
					})
				}
			}
		}
	}
	t.Logf("%d splits", splits)
}

// TestPartitionsMatchBFS checks the partitioned mark with one partition
// to one per 512 objects (more asked for than the heap has lines), on
// 1–3 workers: the partitions are whole lines of the bitmap, no more than
// asked for, and cover every object once; the marks must not change, and
// a referent is forwarded to another partition's packet exactly when
// there is more than one. Under -short each heap runs each partition
// count on one worker count, rotating, so that every count meets two.
func TestPartitionsMatchBFS(t *testing.T) {
	for hi, h := range testHeaps() {
		want := h.MarkSequential()
		for pi, parts := range []int{1, 2, 3, 7, 64, 1 << 30, math.MaxInt} {
			workerCounts := []int{1, 2, 3}
			if testing.Short() {
				workerCounts = []int{1 + (hi+pi)%3}
			}
			for _, workers := range workerCounts {
				t.Run(fmt.Sprintf("%v/partitions=%d/workers=%d", h.Config().Shape, parts, workers), func(t *testing.T) {
					m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}, Trace: TracePartitioned, Partitions: parts, Batch: 5, RootSlotWork: -1})
					require.NoError(t, err)
					defer m.Close()
					n := len(m.parts) // whole lines each, covering every object once
					assert.True(t, n >= 1 && n <= parts && n <= (h.Objects()+partLine-1)/partLine, "%d partitions", n)
					assert.Zero(t, m.partSize%partLine)
					assert.True(t, int(m.partSize)*n >= h.Objects() && int(m.partSize)*(n-1) < h.Objects(), "%d × %d objects", n, m.partSize)
					for _, r := range checkCycles(t, m, want, 2) {
						if parts == 1 {
							assert.Zero(t, r.Forwarded)
						} else {
							assert.Positive(t, r.Forwarded)
						}
					}
				})
			}
		}
	}
}

// TestMarkAfterCancel cancels cycles at spread-out moments, on 1 and 2
// workers and every Closure design: a cancelled Mark reports the cancel
// (or, cancelled too late to matter, a whole cycle), and the next cycle
// marks exactly the sequential marks, whatever the cancel left behind
// (half-drained stacks and inboxes, buffers handed on). The moments are
// spread by the delay of the timer that cancels; what is asserted holds
// for any moment. Under -short the moments span the same 3.5 ms, a third
// as many of them.
func TestMarkAfterCancel(t *testing.T) {
	h := testHeaps()[0]
	want := h.MarkSequential()
	moments, step := 24, 150*time.Microsecond
	if testing.Short() {
		moments, step = 8, 3*step
	}
	for _, tracing := range []Tracing{TracePartitioned, TraceDepthFirst, TraceEdgeBuffers, TraceWorklist} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/workers=%d", tracing, workers), func(t *testing.T) {
				m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}, Trace: tracing, RootSlotWork: -1})
				require.NoError(t, err)
				defer m.Close()
				cancelled := 0
				for i := range moments {
					ctx, cancel := context.WithCancel(context.Background())
					timer := time.AfterFunc(time.Duration(i)*step, cancel)
					r, err := m.Mark(ctx)
					timer.Stop()
					if err != nil {
						require.ErrorIs(t, err, context.Canceled)
						cancelled++
					} else {
						require.Equal(t, int64(want.Count()), r.Marked)
					}
					cancel()
					checkCycles(t, m, want, 1)
				}
				t.Logf("%d of %d cycles cancelled", cancelled, moments)
			})
		}
	}
}

// TestBitmapAligned: a bitmap starts a 64-byte line whatever its size,
// and holds exactly the words its objects need.
func TestBitmapAligned(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 512, 600, 4096, 100_000} {
		b := NewBitmap(n)
		require.Len(t, b, (n+63)/64)
		assert.Equal(t, len(b), cap(b))
		if len(b) > 0 {
			assert.Zero(t, uintptr(unsafe.Pointer(&b[0]))%64, "%d objects", n)
		}
	}
}

// TestBaselinesMatchBFS checks every baseline's marks and counts, on both
// shapes, against the sequential search and the Marker's.
func TestBaselinesMatchBFS(t *testing.T) {
	for _, h := range testHeaps() {
		want := h.MarkSequential()
		m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: 2}, RootSlotWork: -1})
		require.NoError(t, err)
		mr := checkCycles(t, m, want, 1)[0]
		require.NoError(t, m.Close())
		for _, kind := range BaselineKinds {
			for _, workers := range []int{1, 3} {
				batch := 2*workers - 1 // 1 and 5
				name := fmt.Sprintf("%v/%v/workers=%d/batch=%d", h.Config().Shape, kind, workers, batch)
				t.Run(name, func(t *testing.T) {
					b, err := NewBaseline(h, kind, BaselineOptions{Workers: workers, Batch: batch})
					require.NoError(t, err)
					for cycle := range 2 {
						r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return b.Mark(context.Background()) })
						requireMarks(t, b.Marks(), want, cycle)
						assert.Equal(t, mr.Marked, r.Marked, "cycle %d: Marked", cycle)
						assert.Equal(t, mr.Live, r.Live, "cycle %d: Live", cycle)
						assert.Equal(t, mr.LiveBytes, r.LiveBytes, "cycle %d: LiveBytes", cycle)
						assert.Equal(t, mr.Slots, r.Slots, "cycle %d: Slots", cycle)
						require.Len(t, r.Stages, len(Stages))
					}
				})
			}
		}
	}
}

// TestOptionsInvalid checks that NewMarker and NewBaseline refuse what
// they cannot run.
func TestOptionsInvalid(t *testing.T) {
	h := testHeaps()[0]
	for _, o := range []Options{
		{Trace: Tracing(9)},
		{Partitions: -1},
		{SplitEvery: -1},
		{SplitShare: 1},
		{SplitShare: -0.5},
		{Batch: MaxBatch + 1},
		{Scheduler: scheduler.Config{Workers: -1}},
	} {
		m, err := NewMarker(h, o)
		if !assert.Error(t, err, "%+v", o) {
			m.Close()
		}
	}
	_, err := NewBaseline(h, BaselineKind(0), BaselineOptions{})
	assert.Error(t, err)
	_, err = NewBaseline(h, Goroutines, BaselineOptions{Workers: -1})
	assert.Error(t, err)
	_, err = NewBaseline(h, SequentialDFS, BaselineOptions{Batch: -1})
	assert.Error(t, err)
	for _, k := range BaselineKinds {
		got, err := ParseBaseline(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	_, err = ParseBaseline("nope")
	assert.Error(t, err)
	var tr Tracing
	for _, want := range []Tracing{TracePartitioned, TraceDepthFirst, TraceEdgeBuffers} {
		require.NoError(t, tr.UnmarshalText([]byte(want.String())))
		assert.Equal(t, want, tr)
	}
	assert.Error(t, tr.UnmarshalText([]byte("bfs")))
	var s HeapShape
	require.NoError(t, s.UnmarshalText([]byte("powerlaw")))
	assert.Equal(t, ShapePowerLaw, s)
	assert.Error(t, s.UnmarshalText([]byte("round")))
}

// TestStageFigures checks that the per-stage figures add up.
func TestStageFigures(t *testing.T) {
	h := NewHeap(DefaultHeapConfig(0.02, 3))
	m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: 2}})
	require.NoError(t, err)
	defer m.Close()
	r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
	require.Len(t, r.Stages, len(Stages), "stages: %v", r.Stages)
	var sum time.Duration
	for i, s := range r.Stages {
		assert.Equal(t, Stages[i], s.Name, "stage %d", i)
		assert.False(t, s.LowerBound < s.Longest || s.LowerBound < s.Work/2, "%v: lower bound below max(longest, work/2)", s)
		assert.GreaterOrEqual(t, s.Makespan, s.Longest, "%v: makespan shorter than its longest packet", s)
		sum += s.Makespan
	}
	assert.LessOrEqual(t, sum, r.Elapsed, "stage makespans add to more than the cycle")
	// The code-cache packet is the Prepare stage's heavy one: at least a
	// quarter of its root slots, far more than any stack's. Checked in
	// slots, which the heap fixes; the times (logged) move with the
	// machine: one preempted stack packet inflates the stage's work.
	var stackSlots, deepest int
	for _, st := range h.Stacks {
		stackSlots += len(st)
		deepest = max(deepest, len(st))
	}
	cc := len(h.CodeCache)
	assert.False(t, cc*4 < cc+stackSlots || cc < 4*deepest,
		"Prepare: code cache %d slots, stacks %d in all and %d at most: not the heavy packet", cc, stackSlots, deepest)
	p := r.Stages[0]
	t.Logf("Prepare: longest packet %v of %v work", p.Longest, p.Work)
}

// TestWorklistStageFigures: under the worklist design each body call is
// one of Closure's packets, so Closure's figures count every object: at
// least Marked ÷ Batch packets, and a makespan no shorter than its bound,
// on 1 and 2 workers.
func TestWorklistStageFigures(t *testing.T) {
	h := NewHeap(DefaultHeapConfig(0.02, 3))
	for _, workers := range []int{1, 2} {
		m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}, Trace: TraceWorklist})
		require.NoError(t, err)
		r := watchdog.Within(t, 30*time.Second, func() (Result, error) { return m.Mark(context.Background()) })
		require.NoError(t, m.Close())
		c := r.Stages[stageClosure-1]
		require.Equal(t, "Closure", c.Name)
		assert.GreaterOrEqual(t, c.Packets, r.Marked/int64(DefaultBatch), "%d workers: %v for %d objects", workers, c, r.Marked)
		assert.Positive(t, c.Work)
		assert.GreaterOrEqual(t, c.Makespan, c.LowerBound, "%d workers: %v: makespan under its lower bound", workers, c)
	}
}

// treeHeap is a heap where every object has exactly one referrer, laid out
// in no traversal order (ids shuffled, as a real heap's size classes
// scatter objects): a forest of random trees of up to 4 children an
// object, some Null slots, the first two trees' roots on two stacks and
// the third's in the global roots, the other trees garbage. A marker that
// loses a hand-over loses a whole subtree here; on heaps of many
// referrers another path marks it anyway.
func treeHeap(n int, seed uint64) *Heap {
	rng := rand.New(rand.NewPCG(seed, 7))
	perm := rng.Perm(n)
	children := make([][]uint32, n) // by tree position
	var roots []int                 // tree positions of the forest's roots
	next := 1
	roots = append(roots, 0)
	for k := 0; k < n; k++ {
		if next <= k { // the queue ran dry: a new tree
			roots = append(roots, next)
			next++
		}
		for range rng.IntN(5) {
			if next == n {
				break
			}
			children[k] = append(children[k], uint32(perm[next]))
			next++
		}
		if rng.IntN(4) == 0 {
			children[k] = append(children[k], Null)
		}
	}
	offsets := make([]uint32, n+1)
	byID := make([][]uint32, n)
	for k := range n {
		byID[perm[k]] = children[k]
	}
	var words []uint32
	for id := range n {
		words = append(words, uint32(len(byID[id])))
		words = append(words, byID[id]...)
		words = append(words, 0, 0) // scalars
		offsets[id+1] = uint32(len(words))
	}
	id := func(pos int) uint32 { return uint32(perm[pos]) }
	p := HeapParts{Name: "tree", Offsets: offsets, Words: words, Stacks: [][]uint32{{id(roots[0])}}}
	if len(roots) > 1 {
		p.Stacks = append(p.Stacks, []uint32{id(roots[1]), Null})
	}
	if len(roots) > 2 {
		p.CodeCache = []uint32{id(roots[2])}
	}
	h, err := NewHeapFrom(p)
	if err != nil {
		panic(err)
	}
	return h
}

// TestEveryDesignOnEveryHeap: every Closure design, TraceAuto included,
// marks object for object what the sequential search marks, on 1–3
// workers, on the generated heaps and on a heap of single referrers in no
// traversal order (where a lost hand-over shows).
func TestEveryDesignOnEveryHeap(t *testing.T) {
	heaps := append(append([]*Heap(nil), testHeaps()...), treeHeap(30000, 1))
	for _, h := range heaps {
		want := h.MarkSequential()
		require.Greater(t, want.Count(), 1000, "%v", h)
		for _, tracing := range []Tracing{TraceAuto, TracePartitioned, TraceDepthFirst, TraceEdgeBuffers, TraceWorklist} {
			for _, workers := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%.20s/%v/workers=%d", h.String(), tracing, workers), func(t *testing.T) {
					m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}, Trace: tracing, RootSlotWork: -1})
					require.NoError(t, err)
					defer m.Close()
					checkCycles(t, m, want, 2)
				})
			}
		}
	}
}

// TestAutoChoosesFromTheHeap: TraceAuto partitions the built heap (few
// references cross its ranges), marks with the worklist a heap whose
// references cross (the shuffled tree), and marks depth-first on one
// worker; the sampled share is the one SampleCrossing gives.
func TestAutoChoosesFromTheHeap(t *testing.T) {
	built, tree := testHeaps()[0], treeHeap(30000, 2)
	for _, c := range []struct {
		h       *Heap
		workers int
		want    Tracing
	}{{built, 2, TracePartitioned}, {built, 1, TraceDepthFirst}, {tree, 2, TraceWorklist}, {tree, 3, TraceWorklist}} {
		m, err := NewMarker(c.h, Options{Scheduler: scheduler.Config{Workers: c.workers}})
		require.NoError(t, err)
		got, crossing := m.Tracing()
		assert.Equal(t, c.want, got, "%.20s on %d workers (crossing %.3f)", c.h, c.workers, crossing)
		if c.workers == 1 {
			assert.Equal(t, -1.0, crossing)
		} else {
			assert.Equal(t, SampleCrossing(c.h, DefaultPartitionsPerWorker*c.workers, AutoSampleObjects), crossing)
		}
		require.NoError(t, m.Close())
	}
	assert.Less(t, SampleCrossing(built, 64, AutoSampleObjects), AutoCrossingLimit)
	assert.Greater(t, SampleCrossing(tree, 64, AutoSampleObjects), 0.9, "shuffled ids: nearly every reference crosses")
	assert.Zero(t, SampleCrossing(tree, 1, AutoSampleObjects), "one range: nothing crosses")
}
