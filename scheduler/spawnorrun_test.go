package scheduler

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
)

// ssTree is node i of a complete binary tree laid out as a heap, run with
// SpawnOrRun: every node counts its runs, so a node run twice or never is
// seen.
type ssTree struct {
	runs  []atomic.Int32
	depth atomic.Int32 // inline nesting now (one-worker tests only)
	max   atomic.Int32 // deepest nesting seen
}

type ssNode struct {
	t *ssTree
	i int
}

func (n ssNode) Run(w *Worker) error {
	t := n.t
	t.runs[n.i].Add(1)
	d := t.depth.Add(1)
	if d > t.max.Load() {
		t.max.Store(d)
	}
	for _, k := range []int{2*n.i + 1, 2*n.i + 2} {
		if k < len(t.runs) {
			SpawnOrRun(w, ssNode{t, k})
		}
	}
	t.depth.Add(-1)
	return nil
}

func (t *ssTree) check(tb testing.TB) {
	tb.Helper()
	for i := range t.runs {
		if c := t.runs[i].Load(); c != 1 { // plain test first: testify per node is slow
			require.Equal(tb, int32(1), c, "node %d's runs", i)
		}
	}
}

// TestSpawnOrRunExactlyOnce: a fork-join tree of 2^15-1 nodes built with
// SpawnOrRun runs every node once under every wake and steal policy, and
// the statistics count inline runs as packets. With one worker nobody can
// take a child, so every node but the root runs inline.
func TestSpawnOrRunExactlyOnce(t *testing.T) {
	const nodes = 1<<15 - 1
	for _, workers := range []int{1, 2, 4} {
		for _, wake := range []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher} {
			for _, steal := range []stealCase{{StealOne, 0}, {StealHalf, 0}, {StealHalf, 8}} {
				t.Run(fmt.Sprintf("w%d/%v/%s", workers, wake, steal), func(t *testing.T) {
					cfg := Config{Workers: workers, Stages: []string{"run"}, Wake: wake}
					steal.apply(&cfg)
					s := newSched(t, cfg)
					for cycle := range 3 {
						tr := &ssTree{runs: make([]atomic.Int32, nodes)}
						before := s.Stats()
						require.NoError(t, s.Add(ssNode{tr, 0}))
						require.NoError(t, runCycle(t, s))
						tr.check(t)
						after := s.Stats()
						var packets, inlined uint64
						for i := range after.Workers {
							packets += after.Workers[i].Packets - before.Workers[i].Packets
							inlined += after.Workers[i].Inlined - before.Workers[i].Inlined
						}
						require.Equal(t, uint64(nodes), packets, "cycle %d: Stats' packets", cycle)
						if workers == 1 {
							require.Equal(t, uint64(nodes-1), inlined, "cycle %d: one worker inlines all but the root", cycle)
						}
					}
				})
			}
		}
	}
}

// TestSpawnOrRunDepthBound: a chain of 1000 packets, each SpawnOrRun-ing
// the next, never nests inline runs deeper than maxInline; beyond it, it
// spawns, and every packet still runs once.
func TestSpawnOrRunDepthBound(t *testing.T) {
	const n = 1000
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	var runs [n]atomic.Int32
	var depth, deepest atomic.Int32
	var chain func(i int) fn
	chain = func(i int) fn {
		return func(w *Worker) {
			runs[i].Add(1)
			d := depth.Add(1)
			deepest.Store(max(deepest.Load(), d))
			if i+1 < n {
				SpawnOrRun(w, chain(i+1))
			}
			depth.Add(-1)
		}
	}
	require.NoError(t, s.Add(chain(0)))
	require.NoError(t, runCycle(t, s))
	i, r, bad := notOnce(runs[:])
	require.False(t, bad, "packet %d ran %d times", i, r)
	// The root is not inline: maxInline inline levels below it.
	assert.Equal(t, int32(maxInline+1), deepest.Load(), "deepest nesting: the root and maxInline inline runs")
	st := s.Stats()
	assert.NotZero(t, st.Workers[0].Inlined)
	assert.Less(t, st.Workers[0].Inlined, uint64(n))
	assert.Equal(t, uint64(n), st.Ran)
}

// ssBoom panics when run inline or not.
type ssBoom struct{}

func (ssBoom) Run(*Worker) error  { panic("ssBoom") }
func (ssBoom) PacketName() string { return "SSBoom" }

// TestSpawnOrRunPanic: a child that panics while running inline ends the
// cycle with a CycleError that names the child, and the next cycle inlines
// again from depth 0.
func TestSpawnOrRunPanic(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	require.NoError(t, s.Add(fn(func(w *Worker) { SpawnOrRun(w, fn(func(w *Worker) { SpawnOrRun(w, ssBoom{}) })) })))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "SSBoom", ce.Packet)
	assert.Equal(t, "ssBoom", ce.Value)
	assert.True(t, ce.Panicked)
	// Next cycle: every node but the root inline again only if the
	// worker's inline state was restored.
	checkInlinesAll(t, s, "after a panic")
}

// TestSpawnOrRunError: a child that fails while running inline ends the
// cycle with a CycleError that names the child and wraps its error; the
// parent goes on, sees its cycle's context cancelled, and what it spawns
// afterwards is dropped; the next cycle inlines again from depth 0.
func TestSpawnOrRunError(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	var ran atomic.Int64
	var cancelled bool
	require.NoError(t, s.Add(fn(func(w *Worker) {
		SpawnOrRun(w, Func("inline failer", func(*Worker) error { return errFail }))
		cancelled = context.Cause(w.Context()) != nil
		Spawn(w, counter{&ran})
		SpawnOrRun(w, counter{&ran}) // spawned: the cycle is ending
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, errFail)
	assert.Equal(t, "inline failer", ce.Packet)
	assert.False(t, ce.Panicked)
	assert.True(t, cancelled, "the parent's context is cancelled once its inline child failed")
	assert.Equal(t, int64(0), ran.Load())
	assert.Equal(t, uint64(2), ce.Dropped)
	assert.Equal(t, uint64(1), s.Stats().Workers[0].Failed)
	checkInlinesAll(t, s, "after an error")
}

// TestSpawnOrRunInstrumentedSpawns: with tracing on, every packet keeps its
// own slice: SpawnOrRun spawns and nothing is inlined.
func TestSpawnOrRunInstrumentedSpawns(t *testing.T) {
	rec := trace.NewRecorder(1, trace.Options{MaxBytes: 8 << 20})
	for _, cfg := range []Config{
		{Workers: 1, Stages: []string{"run"}, Tracer: rec},
		{Workers: 1, Stages: []string{"run"}, PacketTiming: true},
	} {
		s := newSched(t, cfg)
		tr := &ssTree{runs: make([]atomic.Int32, 1<<8-1)}
		require.NoError(t, s.Add(ssNode{tr, 0}))
		require.NoError(t, runCycle(t, s))
		tr.check(t)
		assert.Equal(t, uint64(0), s.Stats().Workers[0].Inlined, "tracer %v timing %v: inline runs", cfg.Tracer != nil, cfg.PacketTiming)
		require.NoError(t, s.Close())
	}
}

func TestSpawnOrRunNil(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	var got any
	require.NoError(t, s.Add(fn(func(w *Worker) {
		defer func() { got = recover() }()
		SpawnOrRun[Packet](w, nil)
	})))
	require.NoError(t, runCycle(t, s))
	require.Equal(t, "scheduler: SpawnOrRun of a nil Packet", got)
}

// TestSpawnOrRunPanicNotSwallowed: a running packet that recovers panics
// cannot swallow its inline child's: the cycle still ends with the child's
// CycleError, the parent goes on, and the worker's inline state is intact
// for the next cycle.
func TestSpawnOrRunPanicNotSwallowed(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	var parentRecovered any
	var parentWentOn bool
	require.NoError(t, s.Add(fn(func(w *Worker) {
		defer func() { parentRecovered = recover() }()
		SpawnOrRun(w, ssBoom{})
		parentWentOn = true
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "SSBoom", ce.Packet)
	assert.Nil(t, parentRecovered, "the parent saw the child's panic")
	assert.True(t, parentWentOn, "the parent went on")
	assert.Equal(t, uint64(1), s.Stats().Workers[0].Panics)
	checkInlinesAll(t, s, "next cycle")
}

// TestSpawnOrRunGoexit: runtime.Goexit in an inline child ends the cycle
// with a CycleError naming the child; a fresh goroutine takes the worker
// over and inlines from depth 0 again.
//
// Nested inline runs name the innermost, the one that called it; a parent
// that calls it after an inline child returned is named itself.
func TestSpawnOrRunGoexit(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	for _, c := range []struct {
		root Packet
		want string
	}{
		{fn(func(w *Worker) { SpawnOrRun(w, ssExit{}) }), "SSExit"},
		{fn(func(w *Worker) {
			SpawnOrRun(w, named{"outer"})
			SpawnOrRun(w, fn(func(w *Worker) { SpawnOrRun(w, ssExit{}) }))
		}), "SSExit"},
		{Func("parent", func(w *Worker) error { SpawnOrRun(w, named{"child"}); runtime.Goexit(); return nil }), "parent"},
	} {
		require.NoError(t, s.Add(c.root))
		err := runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, c.want, ce.Packet)
		assert.True(t, ce.Panicked)
		assert.Equal(t, 0, ce.Worker)
		checkInlinesAll(t, s, "after Goexit")
	}
}

type ssExit struct{}

func (ssExit) Run(*Worker) error  { runtime.Goexit(); return nil }
func (ssExit) PacketName() string { return "SSExit" }

// TestSpawnOrRunFlatFanoutSpreads: a packet that SpawnOrRuns many children
// in a loop while workers are idle keeps as many children queued as there
// are idle workers, so the children spread over the workers instead of
// running inline on a few (the first version kept one child queued: its
// 128 children ran on 3 of 8 workers while five stayed parked; this rule
// used 7 or 8).
func TestSpawnOrRunFlatFanoutSpreads(t *testing.T) {
	const workers, children = 8, 128
	s := newSched(t, Config{Workers: workers, Stages: []string{"run"}})
	var ran [workers]atomic.Int32
	child := fn(func(w *Worker) {
		ran[w.ID()].Add(1)
		time.Sleep(500 * time.Microsecond)
	})
	require.NoError(t, s.Add(fn(func(w *Worker) {
		for range children {
			SpawnOrRun(w, child)
		}
	})))
	require.NoError(t, runCycle(t, s))
	busy, total := 0, 0
	per := make([]int, workers)
	for i := range ran {
		n := int(ran[i].Load())
		per[i] = n
		total += n
		if n > 0 {
			busy++
		}
	}
	require.Equal(t, children, total, "children run")
	t.Logf("children per worker: %v", per)
	assert.GreaterOrEqual(t, busy, workers/2, "children ran on %d of %d workers (%v): SpawnOrRun kept them on too few", busy, workers, per)
}

// checkInlinesAll runs a 511-node SpawnOrRun tree on s (one worker) and
// checks that every node ran once and every node but the root ran inline:
// the worker's inline state (depth, running packet) is intact.
func checkInlinesAll(t *testing.T, s *Scheduler, when string) {
	t.Helper()
	tr := &ssTree{runs: make([]atomic.Int32, 1<<9-1)}
	before := s.Stats().Workers[0].Inlined
	require.NoError(t, s.Add(ssNode{tr, 0}))
	require.NoError(t, runCycle(t, s), when)
	tr.check(t)
	assert.Equal(t, uint64(len(tr.runs)-1), s.Stats().Workers[0].Inlined-before, "%s: inline runs", when)
}

// TestSpawnOrRunHandsOffBatches: when SpawnOrRun finds an idle worker short
// of work it spawns a streak of handoff children without asking again,
// moving all but the newest to its deque as it goes, and ends a streak
// early once nobody is idle. Deterministic: the other worker is held in a
// blocker packet, and idleness is faked through nSearching, so nothing is
// stolen meanwhile. (One child at a time, as before streaks, the parent
// spawned 2 of the 16 children and ran 14 inline.)
func TestSpawnOrRunHandsOffBatches(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"run"}})
	started, release := make(chan int, 1), make(chan struct{})
	var ran atomic.Int32
	child := fn(func(*Worker) { ran.Add(1) })
	var fail string
	check := func(w *Worker, what string, deque, priv int, inlined uint64, before uint64) {
		if fail != "" {
			return
		}
		w.flush()
		got := s.Stats().Workers[w.ID()].Inlined - before
		if w.local.Len() != deque || int(w.privTail-w.privHead) != priv || got != inlined {
			fail = fmt.Sprintf("%s: deque %d, private %d, inlined %d; want %d, %d, %d",
				what, w.local.Len(), w.privTail-w.privHead, got, deque, priv, inlined)
		}
	}
	require.NoError(t, s.Add(fn(func(w *Worker) {
		// Through the bucket (a spawned blocker would stay private): the
		// other worker takes it and stays in it.
		if err := s.Add(blocker{started: started, release: release}); err != nil {
			fail = err.Error()
			return
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			fail = "the other worker never took the blocker"
			close(release)
			return
		}
		defer close(release)
		inl := func() uint64 { w.flush(); return s.Stats().Workers[w.ID()].Inlined }

		s.s.nSearching.Add(1) // one idle worker, and the deque holds nothing
		base := inl()
		for range handoff {
			SpawnOrRun(w, child)
		}
		check(w, "a full streak", handoff-1, 1, 0, base)
		SpawnOrRun(w, child) // the deque holds plenty for one idle worker
		check(w, "after the streak", handoff-1, 1, 1, base)

		s.s.nSearching.Add(99) // a hundred idle: another streak starts
		SpawnOrRun(w, child)
		s.s.nSearching.Add(-100) // nobody idle: the streak ends at its 2nd child
		SpawnOrRun(w, child)
		SpawnOrRun(w, child)
		check(w, "a streak cut short", handoff+1, 1, 2, base)
	})))
	require.NoError(t, runCycle(t, s))
	require.Empty(t, fail)
	require.Equal(t, int32(handoff+4), ran.Load(), "children run")
}

// TestSpawnOrRunOffersBeforeComputing: a parent that hands off a few
// children and then computes for long does not keep them from an idle
// worker: all but the newest are in its deque by the time it computes
// (a first version of the hand-off streak kept them private until the
// streak's 16th child or the parent's return).
func TestSpawnOrRunOffersBeforeComputing(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"run"}})
	var ran atomic.Int32
	child := fn(func(*Worker) { ran.Add(1) })
	var seen int32
	require.NoError(t, s.Add(fn(func(w *Worker) {
		for range 4 {
			SpawnOrRun(w, child)
		}
		// Compute until three children have run elsewhere (or give up).
		deadline := time.Now().Add(5 * time.Second)
		for ran.Load() < 3 && time.Now().Before(deadline) {
			runtime.Gosched()
		}
		seen = ran.Load()
	})))
	require.NoError(t, runCycle(t, s))
	require.Equal(t, int32(4), ran.Load(), "children run")
	require.GreaterOrEqual(t, seen, int32(3), "children run on the other worker while the parent computed")
}
