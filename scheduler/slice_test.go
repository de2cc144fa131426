package scheduler

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sliceRun is the bookkeeping of TestLend: runs per packet ID, and per
// stage how many packets finished (stage 2's packets check that stage 1's
// were all done when they started).
type sliceRun struct {
	seen      []atomic.Int32
	done      [3]atomic.Int64
	early     atomic.Int64 // stage-2 packets that ran before stage 1 drained
	badStage  atomic.Int64 // packets that ran in the wrong stage
	perStage1 int64
	children  [][]Packet // per parent ID (parents only): lent by AddAll from a packet
	addErrs   atomic.Int64
}

type slicePacket struct {
	id    int
	stage StageID
	r     *sliceRun
}

func (p *slicePacket) Run(w *Worker) error {
	r := p.r
	r.begin(w, p.id, p.stage)
	if kids := r.children[p.id]; kids != nil {
		// From a packet, during the cycle: into its own (open) stage.
		if err := w.Scheduler().AddAll(kids, p.stage, Lend); err != nil {
			r.addErrs.Add(1)
			return err
		}
	}
	r.done[p.stage].Add(1)
	return nil
}

// begin records that packet id of stage st started on w.
func (r *sliceRun) begin(w *Worker, id int, st StageID) {
	r.seen[id].Add(1)
	if stageOf(w) != st {
		r.badStage.Add(1)
	}
	if st == 2 && r.done[1].Load() != r.perStage1 {
		r.early.Add(1)
	}
}

// newCycle clears the run and stage counters before a cycle.
func (r *sliceRun) newCycle() {
	for i := range r.seen {
		r.seen[i].Store(0)
	}
	for i := range r.done {
		r.done[i].Store(0)
	}
}

// TestLend: packets lent by AddAll with Lend, before Run into two stages
// and from running packets into their own stage, mixed with copied ones,
// run exactly once, in their stage, stage 2 only after stage 1 drained;
// the same slices are lent again cycle after cycle (the span slots come
// back at every cycle's end), for several worker counts.
func TestLend(t *testing.T) {
	const roots, fan = 200, 40 // per stage: 200 roots, the first 20 lending 40 children each
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers, Stages: []string{"a", "b"}})
			perStage := roots + 20*fan
			r := &sliceRun{perStage1: int64(perStage)}
			total := 2 * perStage
			r.seen = make([]atomic.Int32, total)
			r.children = make([][]Packet, total)
			var byStage [3][]Packet // roots lent
			var copied [3][]Packet  // roots copied
			id := 0
			for st := StageID(1); st <= 2; st++ {
				var rs []*slicePacket
				for range roots {
					rs = append(rs, &slicePacket{id: id, stage: st, r: r})
					id++
				}
				for _, p := range rs[:20] {
					kids := make([]Packet, fan)
					for k := range kids {
						kids[k] = &slicePacket{id: id, stage: st, r: r}
						id++
					}
					r.children[p.id] = kids
				}
				for i, p := range rs {
					if i%5 == 4 {
						copied[st] = append(copied[st], p)
					} else {
						byStage[st] = append(byStage[st], p)
					}
				}
			}
			for cycle := range 5 {
				r.newCycle()
				// Stage 2 first: a later stage's bucket fills while closed.
				for st := StageID(2); st >= 1; st-- {
					half := len(byStage[st]) / 2
					require.NoError(t, s.AddAll(byStage[st][:half], st, Lend))
					require.NoError(t, s.AddAll(copied[st], st))
					require.NoError(t, s.AddAll(byStage[st][half:], st, Lend))
				}
				require.NoError(t, runCycle(t, s))
				i, n, bad := notOnce(r.seen)
				require.False(t, bad, "cycle %d: packet %d ran %d times", cycle, i, n)
				require.Zero(t, r.early.Load(), "cycle %d: stage-2 packets that ran before stage 1 drained", cycle)
				require.Zero(t, r.badStage.Load(), "cycle %d: packets in the wrong stage", cycle)
			}
			require.Equal(t, uint64(5*total), s.Stats().Ran)
		})
	}
}

// TestLendErrors: an unknown stage, Lend with Priority and a closed
// scheduler are errors that queue nothing; an empty slice queues nothing.
func TestLendErrors(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	var n atomic.Int64
	p := Packet(counter{&n})
	require.ErrorIs(t, s.AddAll([]Packet{p}, StageID(5), Lend), ErrInvalid, "stage 5")
	require.ErrorIs(t, s.AddAll([]Packet{p}, Lend, Priority), ErrInvalid, "Lend with Priority")
	require.NoError(t, s.AddAll(nil, Lend), "empty slice")
	require.NoError(t, s.AddAll([]Packet{}, Lend), "empty slice")
	require.NoError(t, runCycle(t, s))
	require.Equal(t, int64(0), n.Load(), "packets of rejected slices that ran")
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.AddAll([]Packet{p}, Lend), ErrClosed, "after Close")
}

// TestLendNilElement: AddAll with Lend does not scan its slice; a nil
// element ends the cycle when a worker takes it, as a failing packet,
// with an error that wraps ErrInvalid and names the element, and every
// other packet either ran or is counted in Dropped. The same when the
// bucket's span slots are used up and the slice is copied.
func TestLendNilElement(t *testing.T) {
	for _, full := range []bool{false, true} {
		s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
		var ran atomic.Int64
		if full { // use up the span slots with one-packet slices
			for range 64 {
				require.NoError(t, s.AddAll([]Packet{counter{&ran}}, Lend))
			}
		}
		ps := make([]Packet, 300)
		for i := range ps {
			if i != 123 {
				ps[i] = counter{&ran}
			}
		}
		require.NoError(t, s.AddAll(ps, Lend), "full=%v: the element is not looked at yet", full)
		err := runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce, "full=%v", full)
		require.ErrorIs(t, err, ErrInvalid, "full=%v", full)
		assert.Equal(t, "nil lent element", ce.Packet, "full=%v", full)
		assert.False(t, ce.Panicked, "full=%v", full)
		assert.Contains(t, ce.Error(), "index 123 ", "full=%v", full)
		want := uint64(len(ps)) - 1
		if full {
			want += 64
		}
		require.Equal(t, want, uint64(ran.Load())+ce.Dropped, "full=%v: ran + dropped", full)
	}
}

// TestLendManySlices: more slices than a bucket has span slots in one
// cycle; the rest are copied, and every packet runs once.
func TestLendManySlices(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	const slices, per = 100, 30
	var runs [slices * per]atomic.Int32
	for c := range 2 {
		for i := range runs {
			runs[i].Store(0)
		}
		for k := range slices {
			ps := make([]Packet, per)
			for j := range ps {
				i := k*per + j
				ps[j] = fn(func(*Worker) { runs[i].Add(1) })
			}
			require.NoError(t, s.AddAll(ps, Lend))
		}
		require.NoError(t, runCycle(t, s))
		i, n, bad := notOnce(runs[:])
		require.False(t, bad, "cycle %d: packet %d ran %d times", c, i, n)
	}
}

// TestLendAbort: a packet of a lent slice panics; the cycle ends with
// its CycleError, and every other packet either ran or is counted in
// Dropped.
func TestLendAbort(t *testing.T) {
	for _, workers := range []int{1, 3} {
		s := newSched(t, Config{Workers: workers, Stages: []string{"a", "b"}})
		const n = 2000
		var ran atomic.Int64
		ps := make([]Packet, n)
		for i := range ps {
			if i == 700 {
				ps[i] = fn(func(*Worker) { panic("boom") })
				continue
			}
			ps[i] = counter{&ran}
		}
		later := []Packet{counter{&ran}, counter{&ran}}
		require.NoError(t, s.AddAll(ps, Lend))
		require.NoError(t, s.AddAll(later, StageID(2), Lend))
		err := runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce, "workers=%d", workers)
		require.Equal(t, "boom", ce.Value)
		require.Equal(t, uint64(n+2), uint64(ran.Load())+ce.Dropped+1, "workers=%d: ran + dropped + 1 panicked", workers)
		// The scheduler is usable again, and nothing of the slice is left.
		ran.Store(0)
		require.NoError(t, runCycle(t, s), "workers=%d: next cycle", workers)
		require.Equal(t, int64(0), ran.Load(), "workers=%d: packets the next cycle ran", workers)
	}
}

// lendCounters lends s a fresh slice of 256 counters of ran in stage 1 and
// returns a weak pointer to it: the caller drops its own reference, so the
// slice can be collected once the scheduler has let go of it too.
func lendCounters(t *testing.T, s *Scheduler, ran *atomic.Int64) weak.Pointer[[256]Packet] {
	t.Helper()
	arr := new([256]Packet)
	for i := range arr {
		arr[i] = counter{ran}
	}
	require.NoError(t, s.AddAll(arr[:], Lend))
	return weak.Make(arr)
}

// collected reports whether wp's slice has been garbage-collected.
func collected(wp weak.Pointer[[256]Packet]) bool {
	for range 3 {
		runtime.GC()
	}
	return wp.Value() == nil
}

// TestLendForgets: once the cycle that ran a lent slice has ended, the
// scheduler holds no reference to it (the span's source is released), so
// the caller's slice can be collected.
func TestLendForgets(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	var ran atomic.Int64
	wp := lendCounters(t, s, &ran)
	require.NoError(t, runCycle(t, s))
	require.Equal(t, int64(256), ran.Load())
	require.True(t, collected(wp), "the scheduler still references a slice whose cycle ended")
}

// TestLendCloseForgets: a slice lent and never run is counted as
// dropped by Close, not lost, and released, so the caller's slice can be
// collected while the closed Scheduler is still referenced.
func TestLendCloseForgets(t *testing.T) {
	s, err := New(Config{Workers: 2, Stages: []string{"a"}})
	require.NoError(t, err)
	var ran atomic.Int64
	wp := lendCounters(t, s, &ran)
	require.NoError(t, s.Close())
	require.True(t, collected(wp), "a closed scheduler still references a slice it dropped")
	require.Equal(t, uint64(256), s.Stats().Dropped)
	require.Equal(t, int64(0), ran.Load())
	runtime.KeepAlive(s)
}

// deepPacket is a packet of TestDeepBulkExactlyOnce: it records its run
// and its stage's order, works a little (every 7th, about a microsecond,
// so that takes and held batches end unevenly) and spawns a child now and
// then (every 11th), which also counts.
type deepPacket struct {
	id    int
	stage StageID
	r     *sliceRun
	child *deepPacket
}

func (p *deepPacket) Run(w *Worker) error {
	r := p.r
	r.begin(w, p.id, p.stage)
	if p.id%7 == 0 {
		for t0 := time.Now(); time.Since(t0) < time.Microsecond; {
		}
	}
	if p.child != nil {
		Spawn(w, p.child)
	}
	r.done[p.stage].Add(1)
	return nil
}

// TestDeepBulkExactlyOnce: deep stages, where guided takes move up to 128
// packets at once and hold them, run every packet exactly once and in
// stage order under every take policy, from 1 to 16 workers (more workers
// than cores: takes, held batches and exposures interleave in every
// order), with copied and lent slices in the same stage and packets that
// spawn, cycle after cycle.
func TestDeepBulkExactlyOnce(t *testing.T) {
	n := scale(6000, 3) // packets per stage, a third of them spawned children
	for _, take := range []TakePolicy{TakeFair, TakeFixed, TakeGuided} {
		for _, workers := range []int{1, 2, 4, 8, 16} {
			t.Run(fmt.Sprintf("%v/workers=%d", take, workers), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers, Stages: []string{"a", "b"}, Take: take})
				r := &sliceRun{perStage1: int64(n), seen: make([]atomic.Int32, 2*n)}
				var lent, copied [3][]Packet
				for st := StageID(1); st <= 2; st++ {
					base := int(st-1) * n
					ps := make([]*deepPacket, n)
					for i := range ps {
						ps[i] = &deepPacket{id: base + i, stage: st, r: r}
					}
					// Packets 0..k-1 are queued; every 11th of them spawns one
					// of the rest, until the rest run out.
					next := n
					for i := 0; i < next; i++ {
						if i%11 == 0 && next > i+1 {
							next--
							ps[i].child = ps[next]
						}
					}
					for i, p := range ps[:next] {
						if i%3 == 0 {
							copied[st] = append(copied[st], p)
						} else {
							lent[st] = append(lent[st], p)
						}
					}
				}
				cycles := 3
				if stress() {
					cycles = 40
				}
				for cycle := range cycles {
					r.newCycle()
					for st := StageID(2); st >= 1; st-- {
						require.NoError(t, s.AddAll(copied[st], st))
						require.NoError(t, s.AddAll(lent[st], st, Lend))
					}
					require.NoError(t, runCycle(t, s))
					i, c, bad := notOnce(r.seen)
					require.False(t, bad, "cycle %d: packet %d ran %d times", cycle, i, c)
					require.Zero(t, r.early.Load(), "cycle %d: stage-2 packets that ran before stage 1 drained", cycle)
					require.Zero(t, r.badStage.Load(), "cycle %d: packets in the wrong stage", cycle)
				}
			})
		}
	}
}
