package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fibJoin computes fib(n) into *out with joins: the continuation adds
// what the two children wrote into it. orRun spawns the children with
// SpawnOrRun.
type fibJoin struct {
	n     int
	out   *int
	orRun bool
}

type fibSumC struct {
	a, b int
	out  *int
}

func (s fibSumC) Run(*Worker) error { *s.out = s.a + s.b; return nil }

func (f fibJoin) Run(w *Worker) error {
	if f.n < 2 {
		*f.out = f.n
		return nil
	}
	s := Join(w, fibSumC{out: f.out})
	if f.orRun {
		SpawnOrRun(w, fibJoin{f.n - 1, &s.a, true})
		SpawnOrRun(w, fibJoin{f.n - 2, &s.b, true})
	} else {
		Spawn(w, fibJoin{f.n - 1, &s.a, false})
		Spawn(w, fibJoin{f.n - 2, &s.b, false})
	}
	return nil
}

// fibJoins is the number of joins (continuations) fibJoin{n} opens.
func fibJoins(n int) int {
	if n < 2 {
		return 0
	}
	return 1 + fibJoins(n-1) + fibJoins(n-2)
}

// TestJoinFib computes fib(0..25) by joins on 1, 2 and 4 workers, with
// Spawn and with SpawnOrRun children (inline on one worker, handed off
// and inline on more): every value is right and every continuation ran
// exactly once.
func TestJoinFibSpawnOrRun(t *testing.T) {
	top := 25
	if raceEnabled {
		top = 17
	}
	for _, workers := range []int{1, 2, 4} {
		for _, orRun := range []bool{false, true} {
			t.Run(fmt.Sprintf("workers=%d/orRun=%v", workers, orRun), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers})
				joins := 0
				for n := 0; n <= top; n++ {
					out := -1
					require.NoError(t, s.Add(fibJoin{n, &out, orRun}))
					require.NoError(t, runCycle(t, s))
					require.Equal(t, fibDirect(n), out, "fib(%d)", n)
					joins += fibJoins(n)
					require.EqualValues(t, joins, statCount(s.Stats(), "scheduler.fibSumC"), "continuations after fib(%d)", n)
				}
			})
		}
	}
}

// treeSum sums data into *out: halves by joins down to 8 elements.
type treeSum struct {
	data []int64
	out  *int64
}

type addTo struct {
	a, b int64
	out  *int64
}

func (p addTo) Run(*Worker) error { *p.out = p.a + p.b; return nil }

func (p treeSum) Run(w *Worker) error {
	if len(p.data) <= 8 {
		var sum int64
		for _, x := range p.data {
			sum += x
		}
		*p.out = sum
		return nil
	}
	mid := len(p.data) / 2
	c := Join(w, addTo{out: p.out})
	Spawn(w, treeSum{p.data[:mid], &c.a})
	SpawnOrRun(w, treeSum{p.data[mid:], &c.b})
	return nil
}

func TestJoinTreeSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]int64, scale(100_000, 10))
	var want int64
	for i := range data {
		data[i] = r.Int64N(1 << 20)
		want += data[i]
	}
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			for range 3 {
				var got int64
				require.NoError(t, s.Add(treeSum{data, &got}))
				require.NoError(t, runCycle(t, s))
				require.Equal(t, want, got)
			}
		})
	}
}

// sortPacket merge-sorts a with nested joins, using tmp (as long as a).
type sortPacket struct{ a, tmp []int }

type mergeC struct {
	a, tmp []int
	mid    int
}

func (p sortPacket) Run(w *Worker) error {
	if len(p.a) <= 16 {
		slices.Sort(p.a)
		return nil
	}
	mid := len(p.a) / 2
	Join(w, mergeC{p.a, p.tmp, mid})
	SpawnOrRun(w, sortPacket{p.a[:mid], p.tmp[:mid]})
	Spawn(w, sortPacket{p.a[mid:], p.tmp[mid:]})
	return nil
}

func (m mergeC) Run(*Worker) error {
	l, r := m.a[:m.mid], m.a[m.mid:]
	out := m.tmp[:0]
	for len(l) > 0 && len(r) > 0 {
		if r[0] < l[0] {
			out, r = append(out, r[0]), r[1:]
		} else {
			out, l = append(out, l[0]), l[1:]
		}
	}
	out = append(append(out, l...), r...)
	copy(m.a, out)
	return nil
}

func TestJoinMergeSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			for _, n := range []int{0, 1, 17, 1000, scale(50_000, 10)} {
				a := make([]int, n)
				for i := range a {
					a[i] = r.IntN(n + 1)
				}
				want := slices.Clone(a)
				slices.Sort(want)
				require.NoError(t, s.Add(sortPacket{a, make([]int, n)}))
				require.NoError(t, runCycle(t, s))
				require.Equal(t, want, a, "n=%d", n)
			}
		})
	}
}

// memberPacket is a join member without a join of its own: it spawns two
// children until depth 0 (they belong to the same join), and counts its
// end in fin as the last thing it does.
type memberPacket struct {
	depth int
	orRun bool
	fin   *atomic.Int64
}

func (m memberPacket) Run(w *Worker) error {
	if m.depth > 0 {
		for range 2 {
			c := memberPacket{m.depth - 1, m.orRun, m.fin}
			if m.orRun {
				SpawnOrRun(w, c)
			} else {
				Spawn(w, c)
			}
		}
	}
	m.fin.Add(1)
	return nil
}

// openerPacket opens a join whose continuation (seenPacket) records how many
// members had finished when it ran, and whether the opener had returned.
type openerPacket struct {
	kids, depth int
	orRun       bool
	fin         *atomic.Int64
	returned    *atomic.Bool
	conts, seen *atomic.Int64
}

type seenPacket struct {
	fin         *atomic.Int64
	returned    *atomic.Bool
	conts, seen *atomic.Int64
}

func (c seenPacket) Run(*Worker) error {
	c.conts.Add(1)
	c.seen.Store(c.fin.Load())
	if !c.returned.Load() {
		c.seen.Store(-1)
	}
	return nil
}

func (o openerPacket) Run(w *Worker) error {
	Join(w, seenPacket{o.fin, o.returned, o.conts, o.seen})
	for range o.kids {
		c := memberPacket{o.depth, o.orRun, o.fin}
		if o.orRun {
			SpawnOrRun(w, c)
		} else {
			Spawn(w, c)
		}
	}
	o.returned.Store(true)
	return nil
}

// TestJoinWaitsForGrandchildren: a continuation runs exactly once, after
// the opener returned and after every member finished, grandchildren and
// their children included, with Spawn and with SpawnOrRun members (on
// one worker every SpawnOrRun runs inline; on two, the first children
// are handed off to the idle worker).
func TestJoinWaitsForGrandchildren(t *testing.T) {
	const kids, depth = 8, 6
	members := kids * (1<<(depth+1) - 1)
	for _, workers := range []int{1, 2, 4} {
		for _, orRun := range []bool{false, true} {
			t.Run(fmt.Sprintf("workers=%d/orRun=%v", workers, orRun), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers})
				for range scale(20, 4) {
					var fin, conts, seen atomic.Int64
					var returned atomic.Bool
					before := s.Stats()
					require.NoError(t, s.Add(openerPacket{kids, depth, orRun, &fin, &returned, &conts, &seen}))
					require.NoError(t, runCycle(t, s))
					require.EqualValues(t, 1, conts.Load(), "continuation runs")
					require.EqualValues(t, members, seen.Load(), "members finished when the continuation ran (-1: before the opener returned)")
					st := s.Stats()
					inlined := st.Workers[0].Inlined - before.Workers[0].Inlined
					for i := 1; i < workers; i++ {
						inlined += st.Workers[i].Inlined - before.Workers[i].Inlined
					}
					switch {
					case !orRun:
						require.Zero(t, inlined)
					case workers == 1:
						require.EqualValues(t, members, inlined, "one busy worker runs every SpawnOrRun child inline")
					default:
						// At the opener's first child the other workers
						// are parked: it is handed off.
						require.Less(t, inlined, uint64(members))
					}
				}
			})
		}
	}
}

// panicMsg returns the value f panics with, as a string ("" if it
// does not panic).
func panicMsg(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

// TestJoinTwicePanics: a second Join in one packet run panics with a
// message that says so; the cycle reports the panic and the first join's
// continuation never runs; the next cycle is exact.
func TestJoinTwicePanics(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	var conts atomic.Int64
	require.NoError(t, s.Add(Func("twice", func(w *Worker) error {
		Join(w, counter{&conts})
		Spawn(w, counter{&conts})
		Join(w, counter{&conts})
		return nil
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.Panicked)
	assert.Equal(t, "twice", ce.Packet)
	assert.Contains(t, fmt.Sprint(ce.Value), "scheduler: Join called twice in one packet run")
	assert.Zero(t, conts.Load(), "nothing of the aborted cycle ran")
	assert.EqualValues(t, 1, ce.Dropped, "the spawned member")

	out := 0
	require.NoError(t, s.Add(fibJoin{18, &out, true}))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, fibDirect(18), out)
}

// TestJoinMisuse: Join on a *Worker kept past its packet, and Join of a
// nil continuation, panic with messages that say what was wrong.
func TestJoinMisuse(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var kept *Worker
	require.NoError(t, s.Add(Func("keep", func(w *Worker) error { kept = w; return nil })))
	require.NoError(t, runCycle(t, s))
	assert.Contains(t, panicMsg(func() { Join(kept, counter{}) }), "Join on worker 0 outside its packet")

	require.NoError(t, s.Add(Func("nil-join", func(w *Worker) error {
		Join[Packet](w, nil)
		return nil
	})))
	var ce *CycleError
	require.ErrorAs(t, runCycle(t, s), &ce)
	assert.Contains(t, fmt.Sprint(ce.Value), "scheduler: Join of a nil Packet")
}

// failMember is a join member; the one with fail set returns an error.
type failMember struct {
	fail bool
	ran  *atomic.Int64
}

var errMember = errors.New("member failed")

func (m failMember) Run(*Worker) error {
	m.ran.Add(1)
	if m.fail {
		return errMember
	}
	return nil
}

// TestJoinAbortedCycle: when a member fails, the join's continuation
// never runs, and the next
// cycle, joins included, is exact.
func TestJoinAbortedCycle(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			for range scale(20, 4) {
				var conts, ran atomic.Int64
				const members = 200
				require.NoError(t, s.Add(Func("opener", func(w *Worker) error {
					Join(w, counter{&conts})
					for i := range members {
						Spawn(w, failMember{i == members/2, &ran})
					}
					return nil
				})))
				out := 0
				require.NoError(t, s.Add(fibJoin{16, &out, false}))
				err := runCycle(t, s)
				require.ErrorIs(t, err, errMember)
				var ce *CycleError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, "scheduler.failMember", ce.Packet)
				require.Zero(t, conts.Load(), "the continuation of a join with a failed member ran")

				out = 0
				var fin, seen atomic.Int64
				var returned atomic.Bool
				conts.Store(0)
				require.NoError(t, s.Add(fibJoin{16, &out, true}))
				require.NoError(t, s.Add(openerPacket{4, 4, false, &fin, &returned, &conts, &seen}))
				require.NoError(t, runCycle(t, s))
				require.Equal(t, fibDirect(16), out)
				require.EqualValues(t, 1, conts.Load())
				require.EqualValues(t, 4*31, seen.Load())
			}
		})
	}
}

// TestJoinContinuationFails: a continuation that fails ends the cycle
// with a *CycleError naming it, and the continuation of the join it
// belongs to never runs.
func TestJoinContinuationFails(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers})
			var outer, members atomic.Int64
			require.NoError(t, s.Add(Func("root", func(w *Worker) error {
				Join(w, counter{&outer})
				Spawn(w, Func("inner", func(w *Worker) error {
					Join(w, failKid{})
					Spawn(w, counter{&members})
					SpawnOrRun(w, counter{&members})
					return nil
				}))
				return nil
			})))
			err := runCycle(t, s)
			require.ErrorIs(t, err, errKid)
			var ce *CycleError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "scheduler.failKid", ce.Packet)
			assert.EqualValues(t, 2, members.Load(), "the failing continuation ran after both members")
			assert.Zero(t, outer.Load(), "the outer continuation ran")
			assert.Zero(t, ce.Dropped)

			out := 0
			require.NoError(t, s.Add(fibJoin{15, &out, true}))
			require.NoError(t, runCycle(t, s))
			assert.Equal(t, fibDirect(15), out)
		})
	}
}

// TestJoinInlineContinuationFails: a join whose members all run inline
// (SpawnOrRun on one worker) runs its continuation inline as its last
// member finishes, before the packet that ran them goes on; one that
// fails or panics there ends the cycle with a *CycleError naming it, the
// continuation of the join it belongs to never runs, and the scheduler
// runs the next cycle.
func TestJoinInlineContinuationFails(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprintf("panics=%v", panics), func(t *testing.T) {
			s := newSched(t, Config{Workers: 1})
			var outer, members, after atomic.Int64
			var beforeRootWentOn atomic.Bool
			cont := Func("cont", func(*Worker) error {
				beforeRootWentOn.Store(after.Load() == 0)
				if panics {
					panic("continuation panics")
				}
				return errKid
			})
			require.NoError(t, s.Add(Func("root", func(w *Worker) error {
				Join(w, counter{&outer})
				SpawnOrRun(w, Func("inner", func(w *Worker) error {
					Join(w, cont)
					SpawnOrRun(w, counter{&members})
					SpawnOrRun(w, counter{&members})
					return nil
				}))
				after.Add(1) // the root goes on after its inline child
				return nil
			})))
			err := runCycle(t, s)
			var ce *CycleError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "cont", ce.Packet)
			assert.Equal(t, panics, ce.Panicked)
			assert.EqualValues(t, 2, members.Load(), "the continuation ran after both members")
			assert.True(t, beforeRootWentOn.Load(), "the continuation ran inline, before the root went on")
			assert.EqualValues(t, 1, after.Load(), "the root went on")
			assert.Zero(t, outer.Load(), "the outer continuation ran")

			out := 0
			require.NoError(t, s.Add(fibJoin{15, &out, true}))
			require.NoError(t, runCycle(t, s))
			assert.Equal(t, fibDirect(15), out)
		})
	}
}

// phase is one of a chain of joins: phase i opens a join whose
// continuation is phase i+1, with one inline member; each records the
// depth of its goroutine's stack.
type phase struct {
	i, n   int
	depths *[]int
}

func (p phase) Run(w *Worker) error {
	pcs := make([]uintptr, 1<<16)
	*p.depths = append(*p.depths, runtime.Callers(0, pcs))
	if p.i >= p.n {
		return nil
	}
	Join(w, phase{p.i + 1, p.n, p.depths})
	SpawnOrRun(w, counter{new(atomic.Int64)})
	return nil
}

// TestJoinInlineContinuationChainBounded: a chain of joins whose
// continuations each open the next (a sequence of parallel phases), all
// members inline, runs every phase once, and its continuations nest on
// the stack at most SpawnOrRun's 64 levels: past them they are spawned,
// and the stack stays as deep as at the start, however long the chain.
func TestJoinInlineContinuationChainBounded(t *testing.T) {
	const n = 500
	s := newSched(t, Config{Workers: 1})
	var depths []int
	require.NoError(t, s.Add(Func("root", func(w *Worker) error {
		SpawnOrRun(w, phase{0, n, &depths})
		return nil
	})))
	require.NoError(t, runCycle(t, s))
	require.Len(t, depths, n+1, "phases run")
	deepest := slices.Max(depths)
	assert.Less(t, deepest-depths[1], 64*12, "frames the chain added (phase 1: %d, deepest: %d)", depths[1], deepest)
	assert.Less(t, depths[n]-depths[1], 64*12, "frames at the last phase (phase 1: %d, last: %d)", depths[1], depths[n])
}

// goexitCont is a continuation that calls runtime.Goexit.
type goexitCont struct{}

func (goexitCont) Run(*Worker) error { runtime.Goexit(); return nil }

// TestJoinInlineContinuationGoexit: runtime.Goexit in a continuation run
// inline is reported naming it, and leaves the worker as it was: in the
// next cycle a join whose member was spawned runs its continuation as a
// packet of its own, not inline.
func TestJoinInlineContinuationGoexit(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var m atomic.Int64
	require.NoError(t, s.Add(Func("root", func(w *Worker) error {
		SpawnOrRun(w, Func("inner", func(w *Worker) error {
			Join(w, goexitCont{})
			SpawnOrRun(w, counter{&m})
			return nil
		}))
		return nil
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "scheduler.goexitCont", ce.Packet)
	assert.True(t, ce.Panicked)

	before := s.Stats().Workers[0].Inlined
	var ran, cont atomic.Int64
	require.NoError(t, s.Add(Func("opener", func(w *Worker) error {
		Join(w, counter{&cont})
		Spawn(w, counter{&ran})
		return nil
	})))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 1, ran.Load())
	assert.EqualValues(t, 1, cont.Load())
	assert.Zero(t, s.Stats().Workers[0].Inlined-before, "packets run inline in the second cycle")
}
