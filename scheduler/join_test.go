package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// v1FibJoin computes fib(n) into *out with joins: the continuation adds
// what the two children wrote into it. orRun spawns the children with
// SpawnOrRun.
type v1FibJoin struct {
	n     int
	out   *int
	orRun bool
}

type v1FibSum struct {
	a, b int
	out  *int
}

func (s v1FibSum) Run(*Worker) error { *s.out = s.a + s.b; return nil }

func (f v1FibJoin) Run(w *Worker) error {
	if f.n < 2 {
		*f.out = f.n
		return nil
	}
	s := Join(w, v1FibSum{out: f.out})
	if f.orRun {
		SpawnOrRun(w, v1FibJoin{f.n - 1, &s.a, true})
		SpawnOrRun(w, v1FibJoin{f.n - 2, &s.b, true})
	} else {
		Spawn(w, v1FibJoin{f.n - 1, &s.a, false})
		Spawn(w, v1FibJoin{f.n - 2, &s.b, false})
	}
	return nil
}

// v1FibJoins is the number of joins (continuations) v1FibJoin{n} opens.
func v1FibJoins(n int) int {
	if n < 2 {
		return 0
	}
	return 1 + v1FibJoins(n-1) + v1FibJoins(n-2)
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
				s := v1Sched(t, Config{Workers: workers})
				joins := 0
				for n := 0; n <= top; n++ {
					out := -1
					require.NoError(t, s.Add(v1FibJoin{n, &out, orRun}))
					require.NoError(t, v1Run(t, s))
					require.Equal(t, v1Fib(n), out, "fib(%d)", n)
					joins += v1FibJoins(n)
					require.EqualValues(t, joins, v1StatCount(s.Stats(), "scheduler.v1FibSum"), "continuations after fib(%d)", n)
				}
			})
		}
	}
}

// v1TreeSum sums data into *out: halves by joins down to 8 elements.
type v1TreeSum struct {
	data []int64
	out  *int64
}

type v1AddTo struct {
	a, b int64
	out  *int64
}

func (p v1AddTo) Run(*Worker) error { *p.out = p.a + p.b; return nil }

func (p v1TreeSum) Run(w *Worker) error {
	if len(p.data) <= 8 {
		var sum int64
		for _, x := range p.data {
			sum += x
		}
		*p.out = sum
		return nil
	}
	mid := len(p.data) / 2
	c := Join(w, v1AddTo{out: p.out})
	Spawn(w, v1TreeSum{p.data[:mid], &c.a})
	SpawnOrRun(w, v1TreeSum{p.data[mid:], &c.b})
	return nil
}

func TestJoinTreeSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]int64, v1Scale(100_000, 10))
	var want int64
	for i := range data {
		data[i] = r.Int64N(1 << 20)
		want += data[i]
	}
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := v1Sched(t, Config{Workers: workers})
			for range 3 {
				var got int64
				require.NoError(t, s.Add(v1TreeSum{data, &got}))
				require.NoError(t, v1Run(t, s))
				require.Equal(t, want, got)
			}
		})
	}
}

// v1Sort merge-sorts a with nested joins, using tmp (as long as a).
type v1Sort struct{ a, tmp []int }

type v1Merge struct {
	a, tmp []int
	mid    int
}

func (p v1Sort) Run(w *Worker) error {
	if len(p.a) <= 16 {
		slices.Sort(p.a)
		return nil
	}
	mid := len(p.a) / 2
	Join(w, v1Merge{p.a, p.tmp, mid})
	SpawnOrRun(w, v1Sort{p.a[:mid], p.tmp[:mid]})
	Spawn(w, v1Sort{p.a[mid:], p.tmp[mid:]})
	return nil
}

func (m v1Merge) Run(*Worker) error {
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
			s := v1Sched(t, Config{Workers: workers})
			for _, n := range []int{0, 1, 17, 1000, v1Scale(50_000, 10)} {
				a := make([]int, n)
				for i := range a {
					a[i] = r.IntN(n + 1)
				}
				want := slices.Clone(a)
				slices.Sort(want)
				require.NoError(t, s.Add(v1Sort{a, make([]int, n)}))
				require.NoError(t, v1Run(t, s))
				require.Equal(t, want, a, "n=%d", n)
			}
		})
	}
}

// v1Member is a join member without a join of its own: it spawns two
// children until depth 0 (they belong to the same join), and counts its
// end in fin as the last thing it does.
type v1Member struct {
	depth int
	orRun bool
	fin   *atomic.Int64
}

func (m v1Member) Run(w *Worker) error {
	if m.depth > 0 {
		for range 2 {
			c := v1Member{m.depth - 1, m.orRun, m.fin}
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

// v1Opener opens a join whose continuation (v1Seen) records how many
// members had finished when it ran, and whether the opener had returned.
type v1Opener struct {
	kids, depth int
	orRun       bool
	fin         *atomic.Int64
	returned    *atomic.Bool
	conts, seen *atomic.Int64
}

type v1Seen struct {
	fin         *atomic.Int64
	returned    *atomic.Bool
	conts, seen *atomic.Int64
}

func (c v1Seen) Run(*Worker) error {
	c.conts.Add(1)
	c.seen.Store(c.fin.Load())
	if !c.returned.Load() {
		c.seen.Store(-1)
	}
	return nil
}

func (o v1Opener) Run(w *Worker) error {
	Join(w, v1Seen{o.fin, o.returned, o.conts, o.seen})
	for range o.kids {
		c := v1Member{o.depth, o.orRun, o.fin}
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
				s := v1Sched(t, Config{Workers: workers})
				for range v1Scale(20, 4) {
					var fin, conts, seen atomic.Int64
					var returned atomic.Bool
					before := s.Stats()
					require.NoError(t, s.Add(v1Opener{kids, depth, orRun, &fin, &returned, &conts, &seen}))
					require.NoError(t, v1Run(t, s))
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

// v1PanicMsg returns the value f panics with, as a string ("" if it
// does not panic).
func v1PanicMsg(f func()) (msg string) {
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
	s := v1Sched(t, Config{Workers: 2})
	var conts atomic.Int64
	require.NoError(t, s.Add(Func("twice", func(w *Worker) error {
		Join(w, v1Count{&conts})
		Spawn(w, v1Count{&conts})
		Join(w, v1Count{&conts})
		return nil
	})))
	err := v1Run(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.Panicked)
	assert.Equal(t, "twice", ce.Packet)
	assert.Contains(t, fmt.Sprint(ce.Value), "scheduler: Join called twice in one packet run")
	assert.Zero(t, conts.Load(), "nothing of the aborted cycle ran")
	assert.EqualValues(t, 1, ce.Dropped, "the spawned member")

	out := 0
	require.NoError(t, s.Add(v1FibJoin{18, &out, true}))
	require.NoError(t, v1Run(t, s))
	assert.Equal(t, v1Fib(18), out)
}

// TestJoinMisuse: Join on a *Worker kept past its packet, and Join of a
// nil continuation, panic with messages that say what was wrong.
func TestJoinMisuse(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1})
	var kept *Worker
	require.NoError(t, s.Add(Func("keep", func(w *Worker) error { kept = w; return nil })))
	require.NoError(t, v1Run(t, s))
	assert.Contains(t, v1PanicMsg(func() { Join(kept, v1Count{}) }), "Join on worker 0 outside its packet")

	require.NoError(t, s.Add(Func("nil-join", func(w *Worker) error {
		Join[Packet](w, nil)
		return nil
	})))
	var ce *CycleError
	require.ErrorAs(t, v1Run(t, s), &ce)
	assert.Contains(t, fmt.Sprint(ce.Value), "scheduler: Join of a nil Packet")
}

// v1FailMember is a join member; the one with fail set returns an error.
type v1FailMember struct {
	fail bool
	ran  *atomic.Int64
}

var v1ErrMember = errors.New("v1 member failed")

func (m v1FailMember) Run(*Worker) error {
	m.ran.Add(1)
	if m.fail {
		return v1ErrMember
	}
	return nil
}

// TestJoinAbortedCycle: when a member fails, the join's continuation
// never runs, and the next
// cycle, joins included, is exact.
func TestJoinAbortedCycle(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := v1Sched(t, Config{Workers: workers})
			for range v1Scale(20, 4) {
				var conts, ran atomic.Int64
				const members = 200
				require.NoError(t, s.Add(Func("opener", func(w *Worker) error {
					Join(w, v1Count{&conts})
					for i := range members {
						Spawn(w, v1FailMember{i == members/2, &ran})
					}
					return nil
				})))
				out := 0
				require.NoError(t, s.Add(v1FibJoin{16, &out, false}))
				err := v1Run(t, s)
				require.ErrorIs(t, err, v1ErrMember)
				var ce *CycleError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, "scheduler.v1FailMember", ce.Packet)
				require.Zero(t, conts.Load(), "the continuation of a join with a failed member ran")

				out = 0
				var fin, seen atomic.Int64
				var returned atomic.Bool
				conts.Store(0)
				require.NoError(t, s.Add(v1FibJoin{16, &out, true}))
				require.NoError(t, s.Add(v1Opener{4, 4, false, &fin, &returned, &conts, &seen}))
				require.NoError(t, v1Run(t, s))
				require.Equal(t, v1Fib(16), out)
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
			s := v1Sched(t, Config{Workers: workers})
			var outer, members atomic.Int64
			require.NoError(t, s.Add(Func("root", func(w *Worker) error {
				Join(w, v1Count{&outer})
				Spawn(w, Func("inner", func(w *Worker) error {
					Join(w, v1FailKid{})
					Spawn(w, v1Count{&members})
					SpawnOrRun(w, v1Count{&members})
					return nil
				}))
				return nil
			})))
			err := v1Run(t, s)
			require.ErrorIs(t, err, v1ErrKid)
			var ce *CycleError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "scheduler.v1FailKid", ce.Packet)
			assert.EqualValues(t, 2, members.Load(), "the failing continuation ran after both members")
			assert.Zero(t, outer.Load(), "the outer continuation ran")
			assert.Zero(t, ce.Dropped)

			out := 0
			require.NoError(t, s.Add(v1FibJoin{15, &out, true}))
			require.NoError(t, v1Run(t, s))
			assert.Equal(t, v1Fib(15), out)
		})
	}
}
