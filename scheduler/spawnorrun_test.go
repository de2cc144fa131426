package scheduler

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

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

func (n ssNode) Run(w *Worker) {
	t := n.t
	t.runs[n.i].Add(1)
	d := t.depth.Add(1)
	if d > t.max.Load() {
		t.max.Store(d)
	}
	for _, k := range []int{2*n.i + 1, 2*n.i + 2} {
		if k < len(t.runs) {
			w.SpawnOrRun(ssNode{t, k})
		}
	}
	t.depth.Add(-1)
}

func (t *ssTree) check(tb testing.TB) {
	tb.Helper()
	for i := range t.runs {
		if got := t.runs[i].Load(); got != 1 {
			tb.Fatalf("node %d ran %d times, want 1", i, got)
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
			for _, steal := range []StealPolicy{StealOne(), StealHalf(), StealBatch(8)} {
				name := fmt.Sprintf("w%d/%v/%v", workers, wake, steal)
				t.Run(name, func(t *testing.T) {
					s := newSched(t, Config{Workers: workers, Stages: []string{"run"}, Wake: wake, Steal: steal})
					for cycle := range 3 {
						tr := &ssTree{runs: make([]atomic.Int32, nodes)}
						before := s.Stats()
						if err := s.Add(1, ssNode{tr, 0}); err != nil {
							t.Fatal(err)
						}
						if err := runCycle(t, s); err != nil {
							t.Fatal(err)
						}
						tr.check(t)
						after := s.Stats()
						var packets, inlined uint64
						for i := range after.Workers {
							packets += after.Workers[i].Packets - before.Workers[i].Packets
							inlined += after.Workers[i].Inlined - before.Workers[i].Inlined
						}
						if packets != nodes {
							t.Fatalf("cycle %d: Stats count %d packets, want %d", cycle, packets, nodes)
						}
						if workers == 1 && inlined != nodes-1 {
							t.Fatalf("cycle %d: one worker inlined %d, want %d (all but the root)", cycle, inlined, nodes-1)
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
	var chain func(i int) Packet
	chain = func(i int) Packet {
		return fn(func(w *Worker) {
			runs[i].Add(1)
			d := depth.Add(1)
			deepest.Store(max(deepest.Load(), d))
			if i+1 < n {
				w.SpawnOrRun(chain(i + 1))
			}
			depth.Add(-1)
		})
	}
	s.Add(1, chain(0))
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		if got := runs[i].Load(); got != 1 {
			t.Fatalf("packet %d ran %d times", i, got)
		}
	}
	// The root is not inline: maxInline inline levels below it.
	if got := deepest.Load(); got != maxInline+1 {
		t.Errorf("deepest nesting %d, want %d (the root and maxInline inline runs)", got, maxInline+1)
	}
	if st := s.Stats(); st.Workers[0].Inlined == 0 || st.Workers[0].Inlined >= n {
		t.Errorf("Inlined = %d, want some but not all of %d", st.Workers[0].Inlined, n)
	}
}

// ssBoom panics when run inline or not.
type ssBoom struct{}

func (ssBoom) Run(*Worker)        { panic("ssBoom") }
func (ssBoom) PacketName() string { return "SSBoom" }

// TestSpawnOrRunPanic: a child that panics while running inline ends the
// cycle with a PanicError that names the child, and the next cycle inlines
// again from depth 0.
func TestSpawnOrRunPanic(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	s.Add(1, fn(func(w *Worker) { w.SpawnOrRun(fn(func(w *Worker) { w.SpawnOrRun(ssBoom{}) })) }))
	err := runCycle(t, s)
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Run = %v, want a *PanicError", err)
	}
	if pe.Packet != "SSBoom" || pe.Value != "ssBoom" {
		t.Fatalf("PanicError names %q (value %v), want SSBoom", pe.Packet, pe.Value)
	}
	// Next cycle: every node but the root inline again only if the
	// worker's inline state was restored.
	checkInlinesAll(t, s, "after a panic")
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
		s.Add(1, ssNode{tr, 0})
		if err := runCycle(t, s); err != nil {
			t.Fatal(err)
		}
		tr.check(t)
		if got := s.Stats().Workers[0].Inlined; got != 0 {
			t.Errorf("tracer %v timing %v: %d inline runs, want 0", cfg.Tracer != nil, cfg.PacketTiming, got)
		}
		s.Close()
	}
}

func TestSpawnOrRunNil(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	var got any
	s.Add(1, fn(func(w *Worker) {
		defer func() { got = recover() }()
		w.SpawnOrRun(nil)
	}))
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if got != "scheduler: SpawnOrRun(nil)" {
		t.Fatalf("SpawnOrRun(nil) panicked with %v", got)
	}
}

// TestSpawnOrRunPanicNotSwallowed: a running packet that recovers panics
// cannot swallow its inline child's: the cycle still ends with the child's
// PanicError, the parent goes on, and the worker's inline state is intact
// for the next cycle.
func TestSpawnOrRunPanicNotSwallowed(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	var parentRecovered any
	var parentWentOn bool
	s.Add(1, fn(func(w *Worker) {
		defer func() { parentRecovered = recover() }()
		w.SpawnOrRun(ssBoom{})
		parentWentOn = true
	}))
	err := runCycle(t, s)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Packet != "SSBoom" {
		t.Fatalf("Run = %v, want a PanicError naming SSBoom", err)
	}
	if parentRecovered != nil || !parentWentOn {
		t.Fatalf("the parent saw the child's panic (recovered %v, went on %v)", parentRecovered, parentWentOn)
	}
	if st := s.Stats(); st.Workers[0].Panics != 1 {
		t.Errorf("Panics = %d, want 1", st.Workers[0].Panics)
	}
	checkInlinesAll(t, s, "next cycle")
}

// TestSpawnOrRunGoexit: runtime.Goexit in an inline child ends the cycle
// with a PanicError naming the child; a fresh goroutine takes the worker
// over and inlines from depth 0 again.
func TestSpawnOrRunGoexit(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"run"}})
	s.Add(1, fn(func(w *Worker) { w.SpawnOrRun(ssExit{}) }))
	err := runCycle(t, s)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Packet != "SSExit" {
		t.Fatalf("Run = %v, want a PanicError naming SSExit", err)
	}
	checkInlinesAll(t, s, "after Goexit")
}

type ssExit struct{}

func (ssExit) Run(*Worker)        { runtime.Goexit() }
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
	s.Add(1, fn(func(w *Worker) {
		for range children {
			w.SpawnOrRun(child)
		}
	}))
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
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
	if total != children {
		t.Fatalf("%d children ran, want %d", total, children)
	}
	t.Logf("children per worker: %v", per)
	if busy < workers/2 {
		t.Errorf("children ran on %d of %d workers (%v): SpawnOrRun kept them on too few", busy, workers, per)
	}
}

// checkInlinesAll runs a 511-node SpawnOrRun tree on s (one worker) and
// checks that every node ran once and every node but the root ran inline:
// the worker's inline state (depth, running packet) is intact.
func checkInlinesAll(t *testing.T, s *Scheduler, when string) {
	t.Helper()
	tr := &ssTree{runs: make([]atomic.Int32, 1<<9-1)}
	before := s.Stats().Workers[0].Inlined
	s.Add(1, ssNode{tr, 0})
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	tr.check(t)
	if got := s.Stats().Workers[0].Inlined - before; got != uint64(len(tr.runs)-1) {
		t.Errorf("%s: %d inline runs, want %d", when, got, len(tr.runs)-1)
	}
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
	s.Add(1, fn(func(w *Worker) {
		// Through the bucket (a spawned blocker would stay private): the
		// other worker takes it and stays in it.
		s.Add(1, blocker{started: started, release: release})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			fail = "the other worker never took the blocker"
			close(release)
			return
		}
		defer close(release)
		inl := func() uint64 { w.flush(); return s.Stats().Workers[w.ID()].Inlined }

		s.nSearching.Add(1) // one idle worker, and the deque holds nothing
		base := inl()
		for range handoff {
			w.SpawnOrRun(child)
		}
		check(w, "a full streak", handoff-1, 1, 0, base)
		w.SpawnOrRun(child) // the deque holds plenty for one idle worker
		check(w, "after the streak", handoff-1, 1, 1, base)

		s.nSearching.Add(99) // a hundred idle: another streak starts
		w.SpawnOrRun(child)
		s.nSearching.Add(-100) // nobody idle: the streak ends at its 2nd child
		w.SpawnOrRun(child)
		w.SpawnOrRun(child)
		check(w, "a streak cut short", handoff+1, 1, 2, base)
	}))
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if fail != "" {
		t.Fatal(fail)
	}
	if got := ran.Load(); got != handoff+4 {
		t.Fatalf("%d children ran, want %d", got, handoff+4)
	}
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
	s.Add(1, fn(func(w *Worker) {
		for range 4 {
			w.SpawnOrRun(child)
		}
		// Compute until three children have run elsewhere (or give up).
		deadline := time.Now().Add(5 * time.Second)
		for ran.Load() < 3 && time.Now().Before(deadline) {
			runtime.Gosched()
		}
		seen = ran.Load()
	}))
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 4 {
		t.Fatalf("%d children ran, want 4", ran.Load())
	}
	if seen < 3 {
		t.Fatalf("while the parent computed, %d of its 4 children ran on the other worker, want 3", seen)
	}
}
