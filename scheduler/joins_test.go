package scheduler

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJoinFib: fib by joins (each inner call joins its two children and
// its continuation adds their results) is right for every n, on 1, 2 and
// 4 workers under every Local policy, cycle after cycle; Stats count every
// call and every continuation.
func TestJoinFib(t *testing.T) {
	ns := []int{0, 1, 2, 3, 10, 20, scale(25, 2)}
	for _, local := range []LocalPolicy{LocalPrivate, LocalLIFO, LocalFIFO} {
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%v/workers=%d", local, workers), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers, Local: local})
				var calls uint64
				for _, n := range ns {
					out := -1
					require.NoError(t, s.Add(fibArgs{n, &out}))
					require.NoError(t, runCycle(t, s))
					require.Equal(t, fib(n), out, "fib(%d)", n)
					calls += uint64(2*fib(n+1) - 1) // calls of the recursion
				}
				st := s.Stats()
				got := map[string]uint64{}
				for _, p := range st.Packets {
					got[p.Name] = p.Count
				}
				assert.Equal(t, calls, got["scheduler.fibArgs"], "fibArgs runs")
				assert.Equal(t, (calls-uint64(len(ns)))/2, got["scheduler.fibSum"], "continuations: one per inner call")
			})
		}
	}
}

// joinTree is the bookkeeping of a random tree of joins: every node runs
// once, every continuation once and only after all of its members.
type joinTree struct {
	nodes, conts atomic.Int64
	early        atomic.Int64 // continuations that ran before a member had finished
}

// jNode is a node of a random tree: above depth 0 it opens a join and
// spawns 1-3 children, by Spawn or SpawnOrRun (rng decides); its first
// child spawns a grandchild into the same join before opening its own;
// the continuation adds up what they all counted.
type jNode struct {
	tr    *joinTree
	depth int
	rng   uint64
	out   *int64
	fin   *atomic.Bool // set when the node's subtree is done
	// extra, if set, is where a grandchild this node spawns into its own
	// join counts.
	extraOut *int64
	extraFin *atomic.Bool
}

type jCont struct {
	tr    *joinTree
	parts [4]int64
	fins  [4]atomic.Bool
	n     int
	out   *int64
	fin   *atomic.Bool
}

func (c *jCont) Run(*Worker) error {
	c.tr.conts.Add(1)
	sum := int64(1)
	for i := range c.n {
		if !c.fins[i].Load() {
			c.tr.early.Add(1)
		}
		sum += c.parts[i]
	}
	*c.out = sum
	c.fin.Store(true)
	return nil
}

// grandchild is spawned by a member into its join (it opens none).
type grandchild struct {
	tr  *joinTree
	out *int64
	fin *atomic.Bool
}

func (g grandchild) Run(*Worker) error {
	g.tr.nodes.Add(1)
	*g.out = 1
	g.fin.Store(true)
	return nil
}

func (n jNode) Run(w *Worker) error {
	n.tr.nodes.Add(1)
	if n.extraOut != nil {
		// Before Join: into the join this node belongs to (its parent's).
		Spawn(w, grandchild{n.tr, n.extraOut, n.extraFin})
	}
	x := n.rng*6364136223846793005 + 1442695040888963407
	if n.depth == 0 {
		*n.out = 1
		n.fin.Store(true)
		return nil
	}
	k := 1 + int(x>>60)%3
	c := Join(w, &jCont{tr: n.tr, n: k + 1, out: n.out, fin: n.fin})
	for i := range k {
		x = x*6364136223846793005 + 1442695040888963407
		child := jNode{tr: n.tr, depth: n.depth - 1, rng: x, out: &(*c).parts[i], fin: &(*c).fins[i]}
		if i == 0 { // part k: the first child's grandchild
			child.extraOut, child.extraFin = &(*c).parts[k], &(*c).fins[k]
		}
		if x>>62 == 0 {
			SpawnOrRun(w, child)
		} else {
			Spawn(w, child)
		}
	}
	return nil
}

// jCount is what the root of the tree of jNode{depth, rng} counts (nodes
// and grandchildren) and the tree's number of continuations.
func jCount(depth int, rng uint64) (sum, conts int64) {
	x := rng*6364136223846793005 + 1442695040888963407
	if depth == 0 {
		return 1, 0
	}
	k := 1 + int(x>>60)%3
	sum, conts = 2, 1 // the node and its grandchild
	for range k {
		x = x*6364136223846793005 + 1442695040888963407
		s, c := jCount(depth-1, x)
		sum += s
		conts += c
	}
	return sum, conts
}

// TestJoinExactlyOnce: random trees of joins, their members spawned and
// run inline, under every wake × steal pair and every Local policy on 4
// workers: every node and continuation runs once, every continuation
// after all its members, and the root's sum counts every node.
func TestJoinExactlyOnce(t *testing.T) {
	const depth = 9
	for _, wake := range []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher} {
		for _, steal := range steals {
			for _, local := range []LocalPolicy{LocalPrivate, LocalLIFO, LocalFIFO} {
				t.Run(fmt.Sprintf("%v/%s/%v", wake, steal, local), func(t *testing.T) {
					cfg := Config{Workers: 4, Wake: wake, Local: local}
					steal.apply(&cfg)
					s := newSched(t, cfg)
					for cycle := range 3 {
						rng := uint64(cycle*7919 + 17)
						want, conts := jCount(depth, rng)
						tr := &joinTree{}
						var out int64
						var fin atomic.Bool
						require.NoError(t, s.Add(jNode{tr: tr, depth: depth, rng: rng, out: &out, fin: &fin}))
						require.NoError(t, runCycle(t, s))
						require.Zero(t, tr.early.Load(), "cycle %d: continuations before their members", cycle)
						require.True(t, fin.Load(), "cycle %d: the root's continuation ran", cycle)
						require.Equal(t, want, out, "cycle %d: the root's count", cycle)
						require.Equal(t, want, tr.nodes.Load(), "cycle %d: node runs", cycle)
						require.Equal(t, conts, tr.conts.Load(), "cycle %d: continuation runs", cycle)
					}
				})
			}
		}
	}
}

// TestJoinNoMembers: a join with no members runs its continuation once the
// opener returns, in the opener's stage; the next stage opens after it.
func TestJoinNoMembers(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}})
	var order []string
	note := func(s string) fn { return func(*Worker) { order = append(order, s) } }
	var contStage StageID = -1
	require.NoError(t, s.Add(fn(func(w *Worker) {
		order = append(order, "opener")
		Join(w, fn(func(w *Worker) { contStage = stageOf(w); order = append(order, "continuation") }))
	})))
	require.NoError(t, s.Add(note("stage b"), StageID(2)))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, []string{"opener", "continuation", "stage b"}, order)
	assert.Equal(t, StageID(1), contStage)
}

// TestJoinWaitsForSpawnsOfMembers: a member that spawns (without a join
// of its own) adds to its join: the continuation waits for the whole
// subtree, spawned and run inline, however deep.
func TestJoinWaitsForSpawnsOfMembers(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		s := newSched(t, Config{Workers: workers})
		var ran atomic.Int64
		var atCont int64 = -1
		var left atomic.Int64
		left.Store(400)
		var spread fn
		spread = func(w *Worker) {
			ran.Add(1)
			if left.Add(-2) >= 0 {
				Spawn(w, spread)
				SpawnOrRun(w, counter{&ran})
			}
		}
		require.NoError(t, s.Add(fn(func(w *Worker) {
			Join(w, fn(func(*Worker) { atCont = ran.Load() }))
			Spawn(w, spread)
		})))
		require.NoError(t, runCycle(t, s))
		assert.Equal(t, ran.Load(), atCont, "workers %d: the continuation saw every member done", workers)
		assert.Equal(t, int64(401), ran.Load(), "workers %d: members", workers)
	}
}

// TestJoinTwice: a second Join in one packet run panics, ending the cycle.
func TestJoinTwice(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var contRan atomic.Int64
	require.NoError(t, s.Add(fn(func(w *Worker) {
		Join(w, counter{&contRan})
		Join(w, counter{&contRan})
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "scheduler: Join called twice in one packet run", ce.Value)
	assert.Equal(t, int64(0), contRan.Load(), "a continuation of the failed packet")
	// A continuation may open a join of its own.
	var out int
	require.NoError(t, s.Add(fn(func(w *Worker) {
		Join(w, fibArgs{10, &out})
	})))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, fib(10), out)
}

// TestJoinAbort: when a member fails, the cycle ends with its error, the
// continuations of unfinished joins never run, and the next cycle's joins
// (in arenas reset by the abort) are right.
func TestJoinAbort(t *testing.T) {
	for _, workers := range []int{1, 2} {
		s := newSched(t, Config{Workers: workers})
		var contRan, ran atomic.Int64
		require.NoError(t, s.Add(fn(func(w *Worker) {
			Join(w, counter{&contRan})
			for i := range 100 {
				if i == 50 {
					Spawn(w, Func("failing member", func(*Worker) error { return errFail }))
					continue
				}
				Spawn(w, counter{&ran})
			}
		})))
		err := runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, errFail)
		assert.Equal(t, "failing member", ce.Packet)
		assert.Equal(t, int64(0), contRan.Load(), "workers %d: the continuation of a join whose member failed", workers)
		assert.Equal(t, uint64(99), uint64(ran.Load())+ce.Dropped, "workers %d: members ran or dropped", workers)
		for _, n := range []int{5, 15} {
			var out int
			require.NoError(t, s.Add(fibArgs{n, &out}))
			require.NoError(t, runCycle(t, s))
			require.Equal(t, fib(n), out, "workers %d: fib(%d) after the abort", workers, n)
		}
	}
}

// TestJoinInterface: Join and Spawn of Packet interface values (the
// continuation chosen at run time).
func TestJoinInterface(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	var contRan, ran atomic.Int64
	require.NoError(t, s.Add(fn(func(w *Worker) {
		c := Join[Packet](w, counter{&contRan})
		*c = counter{&ran} // the children may replace the continuation's value
		for range 10 {
			Spawn[Packet](w, counter{&ran})
		}
	})))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(0), contRan.Load())
	assert.Equal(t, int64(11), ran.Load())
}

// TestJoinInlineMember: a member that the opener runs inline (SpawnOrRun)
// counts in its join like a spawned one: the continuation waits for the
// members spawned after it. (The inline run restored the opener's join
// state as it was before counting the child, so the join's count missed
// one member per inline child: on one worker the continuation ran before
// the spawned member, and a later member's spawn could bring the count to
// zero again and run it twice.)
func TestJoinInlineMember(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var order []string
	note := func(s string) fn { return func(*Worker) { order = append(order, s) } }
	require.NoError(t, s.Add(fn(func(w *Worker) {
		Join(w, note("continuation"))
		SpawnOrRun(w, note("inline")) // one worker: runs inline
		Spawn(w, note("spawned"))
	})))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, []string{"inline", "spawned", "continuation"}, order)
	assert.Equal(t, uint64(1), s.Stats().Workers[0].Inlined)
}
