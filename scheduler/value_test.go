package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/watchdog"
)

// Helpers of the value packet, join, error, context, option,
// backpressure and lifecycle tests (helpers_test.go has the package's
// common ones).

// runCycleCtx is runCycle with Run's context.
func runCycleCtx(t testing.TB, s *Scheduler, ctx context.Context) error {
	t.Helper()
	var err error
	watchdog.Watch(t, 30*time.Second, func() { err = s.Run(ctx) })
	return err
}

// recvWithin receives from ch, failing t with every goroutine's stack if
// nothing comes within 30 seconds.
func recvWithin[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	var v T
	watchdog.Watch(t, 30*time.Second, func() { v = <-ch })
	return v
}

// waitUntil waits until cond holds, failing t after 10 seconds.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitFor(t, 10*time.Second, cond, "%s", what)
}

// fibDirect is fib(n), computed directly.
func fibDirect(n int) int {
	a, b := 0, 1
	for range n {
		a, b = b, a+b
	}
	return a
}

// counters returns n value packets that count into one counter.
func counters(n int, c *atomic.Int64) []Packet {
	ps := make([]Packet, n)
	for i := range ps {
		ps[i] = counter{c}
	}
	return ps
}

// statCount is the count of the packets named name in st (0 if none).
func statCount(st Stats, name string) uint64 {
	for _, p := range st.Packets {
		if p.Name == name {
			return p.Count
		}
	}
	return 0
}

// totalChunks counts the arena chunks of every worker of s (a scheduler
// between cycles: its workers are parked).
func totalChunks(s *Scheduler) int {
	n := 0
	for _, c := range arenaChunks(s) {
		n += c
	}
	return n
}

// leafTree is a node of a binary spawn tree over the leaves [lo, hi):
// each leaf counts its runs in runs, each node in nodes. kind picks how
// children are spawned: every form a value packet can take.
type leafTree struct {
	lo, hi int
	kind   leafKind
	runs   []atomic.Int32
	nodes  *atomic.Int64
}

type leafKind int

const (
	leafStruct    leafKind = iota // Spawn(w, struct value)
	leafPointer                   // Spawn(w, *T)
	leafInterface                 // Spawn[Packet](w, struct value)
	leafFunc                      // Spawn(w, Func(...))
	leafNamer                     // Spawn(w, struct value implementing Namer)
	leafOrRun                     // SpawnOrRun(w, struct value)
	leafKinds
)

func (k leafKind) String() string {
	return [...]string{"struct", "pointer", "interface", "func", "namer", "spawnorrun"}[k]
}

// childName is the stats name of leafTree' children of kind k.
func (k leafKind) childName() string {
	return [...]string{"scheduler.leafTree", "*scheduler.ptrLeafTree", "scheduler.leafTree",
		"func-leaves", "named-leaves", "scheduler.leafTree"}[k]
}

func (p leafTree) Run(w *Worker) error {
	p.nodes.Add(1)
	if p.hi-p.lo == 1 {
		p.runs[p.lo].Add(1)
		return nil
	}
	mid := (p.lo + p.hi) / 2
	p.spawn(w, leafTree{p.lo, mid, p.kind, p.runs, p.nodes})
	p.spawn(w, leafTree{mid, p.hi, p.kind, p.runs, p.nodes})
	return nil
}

func (p leafTree) spawn(w *Worker, c leafTree) {
	switch p.kind {
	case leafStruct:
		Spawn(w, c)
	case leafPointer:
		Spawn(w, &ptrLeafTree{c})
	case leafInterface:
		Spawn[Packet](w, c)
	case leafFunc:
		Spawn(w, Func("func-leaves", c.Run))
	case leafNamer:
		Spawn(w, namedLeafTree{c})
	case leafOrRun:
		SpawnOrRun(w, c)
	}
}

type ptrLeafTree struct{ v leafTree }

func (p *ptrLeafTree) Run(w *Worker) error { return p.v.Run(w) }

type namedLeafTree struct{ v leafTree }

func (p namedLeafTree) Run(w *Worker) error { return p.v.Run(w) }
func (namedLeafTree) PacketName() string    { return "named-leaves" }

// TestSpawnValueExactlyOnce runs spawn trees of every value packet form
// on 1, 2 and 4 workers (with and without instrumentation), several
// cycles per scheduler: every leaf runs exactly once, and Stats name the
// packets by their type, Namer name or Func name, with exact counts.
func TestSpawnValueExactlyOnce(t *testing.T) {
	leaves := scale(2048, 8)
	nodes := 2*leaves - 1
	for _, workers := range []int{1, 2, 4} {
		for _, timing := range []bool{false, true} {
			for kind := range leafKinds {
				t.Run(fmt.Sprintf("workers=%d/timing=%v/%v", workers, timing, kind), func(t *testing.T) {
					s := newSched(t, Config{Workers: workers, PacketTiming: timing})
					const cycles = 3
					for c := range cycles {
						runs := make([]atomic.Int32, leaves)
						var n atomic.Int64
						require.NoError(t, s.Add(leafTree{0, leaves, kind, runs, &n}))
						require.NoError(t, runCycle(t, s))
						require.EqualValues(t, nodes, n.Load(), "cycle %d: nodes run", c)
						for i := range runs {
							if r := runs[i].Load(); r != 1 { // plain test first: testify per leaf is slow
								require.EqualValues(t, 1, r, "cycle %d: leaf %d", c, i)
							}
						}
					}
					st := s.Stats()
					assert.EqualValues(t, cycles*nodes, st.Ran)
					// The root was added (a Packet holding a leafTree); its
					// descendants were spawned in the kind's form.
					want := map[string]uint64{"scheduler.leafTree": cycles}
					want[kind.childName()] += cycles * uint64(nodes-1)
					got := map[string]uint64{}
					for _, p := range st.Packets {
						got[p.Name] = p.Count
						if timing {
							assert.Equal(t, p.Count, p.Timed, "%s: every run timed", p.Name)
						}
					}
					assert.Equal(t, want, got)
					if kind == leafOrRun && workers == 1 && !timing {
						// One worker, never idle: every child ran inline.
						assert.EqualValues(t, cycles*(nodes-1), st.Workers[0].Inlined)
					}
				})
			}
		}
	}
}

// fanPacket spawns n value children that count, then each spawns grand
// grandchildren (0 or 1) more.
type fanPacket struct {
	n, grand int
	count    *atomic.Int64
	named    bool // spawn namedKids
}

func (f *fanPacket) Run(w *Worker) error {
	for range f.n {
		if f.named {
			Spawn(w, namedKid{f.grand, f.count, "kid"})
		} else {
			Spawn(w, kidPacket{f.grand, f.count})
		}
	}
	return nil
}

// namedKid is kidPacket with a name (a Namer), bigger than a pointer: a
// copy of it in an interface would need a box.
type namedKid struct {
	grand int
	count *atomic.Int64
	name  string
}

func (k namedKid) PacketName() string { return k.name }

func (k namedKid) Run(w *Worker) error {
	k.count.Add(1)
	for range k.grand {
		Spawn(w, namedKid{0, k.count, k.name})
	}
	return nil
}

type kidPacket struct {
	grand int
	count *atomic.Int64
}

func (k kidPacket) Run(w *Worker) error {
	k.count.Add(1)
	for range k.grand {
		Spawn(w, kidPacket{0, k.count})
	}
	return nil
}

// TestSpawnValueZeroAllocs: spawning value packets allocates nothing, so
// a cycle's allocations do not grow with the number of children: plain
// values and Namers (whose name is asked every run), counted in the stats
// by the worker or, with PacketTiming, by the instrumented run.
func TestSpawnValueZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, c := range []struct {
		workers      int
		named, timed bool
	}{{1, false, false}, {2, false, false}, {1, true, false}, {2, true, false}, {2, true, true}} {
		t.Run(fmt.Sprintf("workers=%d/named=%v/timed=%v", c.workers, c.named, c.timed), func(t *testing.T) {
			s := newSched(t, Config{Workers: c.workers, PacketTiming: c.timed})
			var count atomic.Int64
			cycle := func(f *fanPacket) func() {
				return func() {
					// Designated: the root runs on worker 0 every cycle, so
					// its arena is the one warmed up.
					if err := s.AddDesignated(0, f); err != nil {
						panic(err)
					}
					if err := s.Run(bg); err != nil {
						panic(err)
					}
				}
			}
			small := &fanPacket{n: 16, grand: 1, count: &count, named: c.named}
			big := &fanPacket{n: 8192, grand: 1, count: &count, named: c.named}
			var aSmall, aBig float64
			watchdog.Watch(t, 60*time.Second, func() {
				aSmall = testing.AllocsPerRun(50, cycle(small))
				aBig = testing.AllocsPerRun(50, cycle(big))
			})
			t.Logf("allocs per cycle: %d children %.2f, %d children %.2f", 2*small.n, aSmall, 2*big.n, aBig)
			assert.Less(t, aBig, aSmall+1, "allocations grow with the number of value children")
			assert.EqualValues(t, 51*2*(small.n+big.n), count.Load())
		})
	}
}

// TestSpawnValueArenaReuse: many cycles of value spawns (a wide fan-out
// with grandchildren, and fib by joins) reuse the workers' arena chunks:
// their number stays at what one cycle needs.
func TestSpawnValueArenaReuse(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	const kids = 2000
	var count atomic.Int64
	cycle := func() {
		require.NoError(t, s.Add(&fanPacket{n: kids, grand: 1, count: &count}))
		var out int
		require.NoError(t, s.Add(fibJoin{n: 15, out: &out}))
		require.NoError(t, runCycle(t, s))
		require.Equal(t, fibDirect(15), out)
	}
	for range 10 {
		cycle()
	}
	early := totalChunks(s)
	cycles := scale(300, 10)
	for range cycles {
		cycle()
	}
	late := totalChunks(s)
	require.EqualValues(t, (10+cycles)*2*kids, count.Load())
	// One cycle spawns 4,000 kidPacket values (63 chunks' worth) and about
	// 3,000 fib nodes and frames; without reuse the chunks would grow by
	// that every cycle.
	perCycle := (2*kids + 3*fibDirect(16)) / chunkSlots
	t.Logf("chunks after 10 cycles %d, after %d more %d (one cycle's spawns fill %d)", early, cycles, late, perCycle)
	assert.LessOrEqual(t, late, 2*early+16)
	assert.LessOrEqual(t, late, 2*perCycle+16)
}

// aborteePacket spawns n value children, one of which (fail) returns an
// error; each other child spawns a grandchild. Every packet that starts
// counts: the children in kids, the grandchildren in grand.
type aborteePacket struct {
	n, fail     int
	kids, grand *atomic.Int64
}

var errAbortee = errors.New("abortee failed")

func (a *aborteePacket) Run(w *Worker) error {
	for i := range a.n {
		Spawn(w, abortKid{i == a.fail, a.kids, a.grand})
	}
	return nil
}

type abortKid struct {
	fail        bool
	kids, grand *atomic.Int64
}

func (k abortKid) Run(w *Worker) error {
	k.kids.Add(1)
	if k.fail {
		return errAbortee
	}
	Spawn(w, counter{k.grand}) // a grandchild, in another arena
	return nil
}

// TestSpawnValueAbortResetsArenas: cycles aborted half-way, with value
// packets still queued (their slots never consumed), alternate with
// normal cycles: every cycle is exact (what ran plus what was dropped is
// everything spawned), the normal ones compute the right results, and the
// arenas do not grow.
func TestSpawnValueAbortResetsArenas(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			const kids = 600
			var dropped uint64
			round := func() {
				ranBefore := s.Stats().Ran
				var kidsRan, grandRan atomic.Int64
				// The newest children run first on the root's worker: the
				// failing one runs after about 100 of them, while hundreds
				// are still queued.
				require.NoError(t, s.Add(&aborteePacket{n: kids, fail: kids - 100, kids: &kidsRan, grand: &grandRan}))
				err := runCycle(t, s)
				require.ErrorIs(t, err, errAbortee)
				var ce *CycleError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, "scheduler.abortKid", ce.Packet)
				// Spawned: the root, kids children, and a grandchild per
				// child that ran and did not fail. Ran: the root, and
				// the children and grandchildren that started.
				spawned := 1 + kids + kidsRan.Load() - 1
				ran := 1 + kidsRan.Load() + grandRan.Load()
				require.EqualValues(t, spawned-ran, ce.Dropped, "Dropped is what never ran")
				require.EqualValues(t, ran, s.Stats().Ran-ranBefore, "Stats.Ran counts what started")
				dropped += ce.Dropped

				var out int
				var count atomic.Int64
				require.NoError(t, s.Add(fibJoin{n: 14, out: &out}))
				require.NoError(t, s.Add(&fanPacket{n: kids, grand: 1, count: &count}))
				require.NoError(t, runCycle(t, s))
				require.Equal(t, fibDirect(14), out)
				require.EqualValues(t, 2*kids, count.Load())
			}
			for range 5 {
				round()
			}
			early := totalChunks(s)
			rounds := scale(100, 5)
			for range rounds {
				round()
			}
			late := totalChunks(s)
			t.Logf("chunks after 5 rounds %d, after %d more %d; %d packets dropped", early, rounds, late, dropped)
			assert.Positive(t, dropped, "the cycles were aborted with packets queued")
			assert.LessOrEqual(t, late, 2*early+16)
			st := s.Stats()
			assert.EqualValues(t, 5+rounds, st.Aborted)
			assert.EqualValues(t, 2*(5+rounds), st.Cycles)
		})
	}
}

// mixLeaf is a leaf packet of TestSpawnMixedKinds, spawned by pointer,
// as an interface and by value.
type mixLeaf struct{ n *atomic.Int64 }

func (l mixLeaf) Run(*Worker) error { l.n.Add(1); return nil }

type mixPtrLeaf struct{ n *atomic.Int64 }

func (l *mixPtrLeaf) Run(*Worker) error { l.n.Add(1); return nil }

// mixCounts counts the leaves of each kind that ran.
type mixCounts struct{ ptr, val, iface atomic.Int64 }

// mixRoot spawns leaves of the three kinds in turn, outside any join
// (counted in out) and then inside one (in), so that each spawn changes
// the kind of the one before.
type mixRoot struct {
	leaves       int
	out, in      *mixCounts
	conts, early *atomic.Int64
}

func (r mixRoot) spawnAll(w *Worker, c *mixCounts) {
	for range r.leaves { // twice in a row: the second takes the fast path
		Spawn(w, &mixPtrLeaf{&c.ptr})
		Spawn(w, &mixPtrLeaf{&c.ptr})
		Spawn(w, Packet(mixLeaf{&c.iface}))
		Spawn(w, Packet(mixLeaf{&c.iface}))
		Spawn(w, mixLeaf{&c.val})
	}
}

func (r mixRoot) Run(w *Worker) error {
	r.spawnAll(w, r.out)
	Join(w, Func("mix-cont", func(*Worker) error {
		// Every member of the join has run, whatever its kind.
		n := int64(r.leaves)
		if r.in.ptr.Load() != 2*n || r.in.iface.Load() != 2*n || r.in.val.Load() != n {
			r.early.Add(1)
		}
		r.conts.Add(1)
		return nil
	}))
	r.spawnAll(w, r.in)
	return nil
}

// TestSpawnMixedKinds: pointers and interfaces are queued as they are
// outside joins and in slots inside them, values always in slots; a
// worker's spawns switching between the kinds lose nothing, a join waits
// for its members of every kind, and Stats name each by its dynamic type.
func TestSpawnMixedKinds(t *testing.T) {
	const leaves = 500
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			for range scale(10, 3) {
				var out, in mixCounts
				var conts, early atomic.Int64
				before := s.Stats()
				require.NoError(t, s.Add(mixRoot{leaves, &out, &in, &conts, &early}))
				require.NoError(t, runCycle(t, s))
				for _, c := range []*mixCounts{&out, &in} {
					require.EqualValues(t, 2*leaves, c.ptr.Load(), "pointer leaves run")
					require.EqualValues(t, 2*leaves, c.iface.Load(), "interface leaves run")
					require.EqualValues(t, leaves, c.val.Load(), "value leaves run")
				}
				require.EqualValues(t, 1, conts.Load(), "continuation runs")
				require.Zero(t, early.Load(), "the continuation ran before every member of its join")
				after := s.Stats()
				count := func(st Stats, name string) uint64 {
					for _, p := range st.Packets {
						if p.Name == name {
							return p.Count
						}
					}
					return 0
				}
				assert.EqualValues(t, 4*leaves, count(after, "*scheduler.mixPtrLeaf")-count(before, "*scheduler.mixPtrLeaf"))
				assert.EqualValues(t, 6*leaves, count(after, "scheduler.mixLeaf")-count(before, "scheduler.mixLeaf"))
				assert.EqualValues(t, 10*leaves+2, after.Ran-before.Ran)
			}
		})
	}
}
