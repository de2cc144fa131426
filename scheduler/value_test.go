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

// Helpers shared by the API v1 tests (value_test.go, join_test.go,
// errors_test.go, context_test.go, options_test.go, backpressure_test.go,
// lifecycle_test.go, bench_v1_test.go). Their names start with v1.

var v1Bg = context.Background()

// v1Sched returns a scheduler that the test closes at its end.
func v1Sched(t testing.TB, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// v1Run runs one cycle under a 30-second watchdog that dumps every
// goroutine's stack on a stall.
func v1Run(t testing.TB, s *Scheduler) error {
	t.Helper()
	return v1RunCtx(t, s, v1Bg)
}

// v1RunCtx is v1Run with Run's context.
func v1RunCtx(t testing.TB, s *Scheduler, ctx context.Context) error {
	t.Helper()
	var err error
	watchdog.Watch(t, 30*time.Second, func() { err = s.Run(ctx) })
	return err
}

// v1Recv receives from ch, failing t with every goroutine's stack if
// nothing comes within 30 seconds.
func v1Recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	var v T
	watchdog.Watch(t, 30*time.Second, func() { v = <-ch })
	return v
}

// v1WaitFor waits until cond holds, failing t after 10 seconds.
func v1WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 10s; goroutines:\n%s", what, watchdog.Stacks())
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// v1Scale returns n, divided by div under the race detector.
func v1Scale(n, div int) int {
	if raceEnabled {
		return max(n/div, 1)
	}
	return n
}

// v1Fib is fib(n), computed directly.
func v1Fib(n int) int {
	a, b := 0, 1
	for range n {
		a, b = b, a+b
	}
	return a
}

// v1Count counts its runs.
type v1Count struct{ n *atomic.Int64 }

func (c v1Count) Run(*Worker) error { c.n.Add(1); return nil }

// v1Counts returns n value packets that count into one counter.
func v1Counts(n int, c *atomic.Int64) []Packet {
	ps := make([]Packet, n)
	for i := range ps {
		ps[i] = v1Count{c}
	}
	return ps
}

// v1StatCount is the count of the packets named name in st (0 if none).
func v1StatCount(st Stats, name string) uint64 {
	for _, p := range st.Packets {
		if p.Name == name {
			return p.Count
		}
	}
	return 0
}

// v1Chunks counts the arena chunks of every worker of s (a scheduler
// between cycles: its workers are parked).
func v1Chunks(s *Scheduler) int {
	n := 0
	for _, w := range s.s.workers {
		for _, r := range w.arenaList {
			n += r.(interface{ v1Chunks() int }).v1Chunks()
		}
	}
	return n
}

func (a *arena[E]) v1Chunks() int { return 1 + len(a.sealed) + len(a.free) }

// v1Leaves is a node of a binary spawn tree over the leaves [lo, hi):
// each leaf counts its runs in runs, each node in nodes. kind picks how
// children are spawned: every form a value packet can take.
type v1Leaves struct {
	lo, hi int
	kind   v1Kind
	runs   []atomic.Int32
	nodes  *atomic.Int64
}

type v1Kind int

const (
	v1Struct    v1Kind = iota // Spawn(w, struct value)
	v1Pointer                 // Spawn(w, *T)
	v1Interface               // Spawn[Packet](w, struct value)
	v1Func                    // Spawn(w, Func(...))
	v1Namer                   // Spawn(w, struct value implementing Namer)
	v1OrRun                   // SpawnOrRun(w, struct value)
	v1Kinds
)

func (k v1Kind) String() string {
	return [...]string{"struct", "pointer", "interface", "func", "namer", "spawnorrun"}[k]
}

// v1ChildName is the stats name of v1Leaves' children of kind k.
func (k v1Kind) childName() string {
	return [...]string{"scheduler.v1Leaves", "*scheduler.v1PtrLeaves", "scheduler.v1Leaves",
		"v1-func-leaves", "v1-named-leaves", "scheduler.v1Leaves"}[k]
}

func (p v1Leaves) Run(w *Worker) error {
	p.nodes.Add(1)
	if p.hi-p.lo == 1 {
		p.runs[p.lo].Add(1)
		return nil
	}
	mid := (p.lo + p.hi) / 2
	p.spawn(w, v1Leaves{p.lo, mid, p.kind, p.runs, p.nodes})
	p.spawn(w, v1Leaves{mid, p.hi, p.kind, p.runs, p.nodes})
	return nil
}

func (p v1Leaves) spawn(w *Worker, c v1Leaves) {
	switch p.kind {
	case v1Struct:
		Spawn(w, c)
	case v1Pointer:
		Spawn(w, &v1PtrLeaves{c})
	case v1Interface:
		Spawn[Packet](w, c)
	case v1Func:
		Spawn(w, Func("v1-func-leaves", c.Run))
	case v1Namer:
		Spawn(w, v1NamedLeaves{c})
	case v1OrRun:
		SpawnOrRun(w, c)
	}
}

type v1PtrLeaves struct{ v v1Leaves }

func (p *v1PtrLeaves) Run(w *Worker) error { return p.v.Run(w) }

type v1NamedLeaves struct{ v v1Leaves }

func (p v1NamedLeaves) Run(w *Worker) error { return p.v.Run(w) }
func (v1NamedLeaves) PacketName() string    { return "v1-named-leaves" }

// TestSpawnValueExactlyOnce runs spawn trees of every value packet form
// on 1, 2 and 4 workers (with and without instrumentation), several
// cycles per scheduler: every leaf runs exactly once, and Stats name the
// packets by their type, Namer name or Func name, with exact counts.
func TestSpawnValueExactlyOnce(t *testing.T) {
	leaves := v1Scale(2048, 8)
	nodes := 2*leaves - 1
	for _, workers := range []int{1, 2, 4} {
		for _, timing := range []bool{false, true} {
			for kind := range v1Kinds {
				t.Run(fmt.Sprintf("workers=%d/timing=%v/%v", workers, timing, kind), func(t *testing.T) {
					s := v1Sched(t, Config{Workers: workers, PacketTiming: timing})
					const cycles = 3
					for c := range cycles {
						runs := make([]atomic.Int32, leaves)
						var n atomic.Int64
						require.NoError(t, s.Add(v1Leaves{0, leaves, kind, runs, &n}))
						require.NoError(t, v1Run(t, s))
						require.EqualValues(t, nodes, n.Load(), "cycle %d: nodes run", c)
						for i := range runs {
							require.EqualValues(t, 1, runs[i].Load(), "cycle %d: leaf %d", c, i)
						}
					}
					st := s.Stats()
					assert.EqualValues(t, cycles*nodes, st.Ran)
					// The root was added (a Packet holding a v1Leaves); its
					// descendants were spawned in the kind's form.
					want := map[string]uint64{"scheduler.v1Leaves": cycles}
					want[kind.childName()] += cycles * uint64(nodes-1)
					got := map[string]uint64{}
					for _, p := range st.Packets {
						got[p.Name] = p.Count
						if timing {
							assert.Equal(t, p.Count, p.Timed, "%s: every run timed", p.Name)
						}
					}
					assert.Equal(t, want, got)
					if kind == v1OrRun && workers == 1 && !timing {
						// One worker, never idle: every child ran inline.
						assert.EqualValues(t, cycles*(nodes-1), st.Workers[0].Inlined)
					}
				})
			}
		}
	}
}

// v1Fan spawns n value children that count, then each spawns grand
// grandchildren (0 or 1) more.
type v1Fan struct {
	n, grand int
	count    *atomic.Int64
	named    bool // spawn v1NamedKids
}

func (f *v1Fan) Run(w *Worker) error {
	for range f.n {
		if f.named {
			Spawn(w, v1NamedKid{f.grand, f.count, "kid"})
		} else {
			Spawn(w, v1Kid{f.grand, f.count})
		}
	}
	return nil
}

// v1NamedKid is v1Kid with a name (a Namer), bigger than a pointer: a
// copy of it in an interface would need a box.
type v1NamedKid struct {
	grand int
	count *atomic.Int64
	name  string
}

func (k v1NamedKid) PacketName() string { return k.name }

func (k v1NamedKid) Run(w *Worker) error {
	k.count.Add(1)
	for range k.grand {
		Spawn(w, v1NamedKid{0, k.count, k.name})
	}
	return nil
}

type v1Kid struct {
	grand int
	count *atomic.Int64
}

func (k v1Kid) Run(w *Worker) error {
	k.count.Add(1)
	for range k.grand {
		Spawn(w, v1Kid{0, k.count})
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
			s := v1Sched(t, Config{Workers: c.workers, PacketTiming: c.timed})
			var count atomic.Int64
			cycle := func(f *v1Fan) func() {
				return func() {
					// Designated: the root runs on worker 0 every cycle, so
					// its arena is the one warmed up.
					if err := s.AddDesignated(0, f); err != nil {
						panic(err)
					}
					if err := s.Run(v1Bg); err != nil {
						panic(err)
					}
				}
			}
			small := &v1Fan{n: 16, grand: 1, count: &count, named: c.named}
			big := &v1Fan{n: 8192, grand: 1, count: &count, named: c.named}
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
	s := v1Sched(t, Config{Workers: 2})
	const kids = 2000
	var count atomic.Int64
	cycle := func() {
		require.NoError(t, s.Add(&v1Fan{n: kids, grand: 1, count: &count}))
		var out int
		require.NoError(t, s.Add(v1FibJoin{n: 15, out: &out}))
		require.NoError(t, v1Run(t, s))
		require.Equal(t, v1Fib(15), out)
	}
	for range 10 {
		cycle()
	}
	early := v1Chunks(s)
	cycles := v1Scale(300, 10)
	for range cycles {
		cycle()
	}
	late := v1Chunks(s)
	require.EqualValues(t, (10+cycles)*2*kids, count.Load())
	// One cycle spawns 4,000 v1Kid values (63 chunks' worth) and about
	// 3,000 fib nodes and frames; without reuse the chunks would grow by
	// that every cycle.
	perCycle := (2*kids + 3*v1Fib(16)) / chunkSlots
	t.Logf("chunks after 10 cycles %d, after %d more %d (one cycle's spawns fill %d)", early, cycles, late, perCycle)
	assert.LessOrEqual(t, late, 2*early+16)
	assert.LessOrEqual(t, late, 2*perCycle+16)
}

// v1Abortee spawns n value children, one of which (fail) returns an
// error; each other child spawns a grandchild. Every packet that starts
// counts: the children in kids, the grandchildren in grand.
type v1Abortee struct {
	n, fail     int
	kids, grand *atomic.Int64
}

var v1ErrAbortee = errors.New("v1 abortee failed")

func (a *v1Abortee) Run(w *Worker) error {
	for i := range a.n {
		Spawn(w, v1AbortKid{i == a.fail, a.kids, a.grand})
	}
	return nil
}

type v1AbortKid struct {
	fail        bool
	kids, grand *atomic.Int64
}

func (k v1AbortKid) Run(w *Worker) error {
	k.kids.Add(1)
	if k.fail {
		return v1ErrAbortee
	}
	Spawn(w, v1Count{k.grand}) // a grandchild, in another arena
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
			s := v1Sched(t, Config{Workers: workers})
			const kids = 600
			var dropped uint64
			round := func() {
				ranBefore := s.Stats().Ran
				var kidsRan, grandRan atomic.Int64
				// The newest children run first on the root's worker: the
				// failing one runs after about 100 of them, while hundreds
				// are still queued.
				require.NoError(t, s.Add(&v1Abortee{n: kids, fail: kids - 100, kids: &kidsRan, grand: &grandRan}))
				err := v1Run(t, s)
				require.ErrorIs(t, err, v1ErrAbortee)
				var ce *CycleError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, "scheduler.v1AbortKid", ce.Packet)
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
				require.NoError(t, s.Add(v1FibJoin{n: 14, out: &out}))
				require.NoError(t, s.Add(&v1Fan{n: kids, grand: 1, count: &count}))
				require.NoError(t, v1Run(t, s))
				require.Equal(t, v1Fib(14), out)
				require.EqualValues(t, 2*kids, count.Load())
			}
			for range 5 {
				round()
			}
			early := v1Chunks(s)
			rounds := v1Scale(100, 5)
			for range rounds {
				round()
			}
			late := v1Chunks(s)
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
			s := v1Sched(t, Config{Workers: workers})
			for range v1Scale(10, 3) {
				var out, in mixCounts
				var conts, early atomic.Int64
				before := s.Stats()
				require.NoError(t, s.Add(mixRoot{leaves, &out, &in, &conts, &early}))
				require.NoError(t, v1Run(t, s))
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
