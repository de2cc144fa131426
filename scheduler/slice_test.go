package scheduler

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weak"
)

// sliceRun is the bookkeeping of TestAddSlice: runs per packet ID, and per
// stage how many packets finished (stage 2's packets check that stage 1's
// were all done when they started).
type sliceRun struct {
	seen      []atomic.Int32
	done      [3]atomic.Int64
	early     atomic.Int64 // stage-2 packets that ran before stage 1 drained
	badStage  atomic.Int64 // packets that saw the wrong Worker.Stage
	perStage1 int64
	children  [][]Packet // per parent ID (parents only): lent by AddSlice from a packet
}

type slicePacket struct {
	id    int
	stage StageID
	r     *sliceRun
}

func (p *slicePacket) Run(w *Worker) {
	r := p.r
	r.begin(w, p.id, p.stage)
	if kids := r.children[p.id]; kids != nil {
		// From a packet, during the cycle: into its own (open) stage.
		if err := w.Scheduler().AddSlice(p.stage, kids); err != nil {
			panic(err)
		}
	}
	r.done[p.stage].Add(1)
}

// begin records that packet id of stage st started on w.
func (r *sliceRun) begin(w *Worker, id int, st StageID) {
	r.seen[id].Add(1)
	if w.Stage() != st {
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

// TestAddSlice: packets lent by AddSlice, before Run into two stages and
// from running packets into their own stage, mixed with BulkAdd, run
// exactly once, in their stage, stage 2 only after stage 1 drained; the
// same slices are lent again cycle after cycle (the span slots come back
// at every cycle's end), for several worker counts.
func TestAddSlice(t *testing.T) {
	const roots, fan = 200, 40 // per stage: 200 roots, the first 20 lending 40 children each
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers, Stages: []string{"a", "b"}})
			perStage := roots + 20*fan
			r := &sliceRun{perStage1: int64(perStage)}
			total := 2 * perStage
			r.seen = make([]atomic.Int32, total)
			r.children = make([][]Packet, total)
			var byStage [3][]Packet // roots lent by AddSlice
			var copied [3][]Packet  // roots queued by BulkAdd
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
					if err := s.AddSlice(st, byStage[st][:half]); err != nil {
						t.Fatal(err)
					}
					if err := s.BulkAdd(st, copied[st]); err != nil {
						t.Fatal(err)
					}
					if err := s.AddSlice(st, byStage[st][half:]); err != nil {
						t.Fatal(err)
					}
				}
				if err := runCycle(t, s); err != nil {
					t.Fatal(err)
				}
				if i, n, bad := notOnce(r.seen); bad {
					t.Fatalf("cycle %d: packet %d ran %d times", cycle, i, n)
				}
				if e, b := r.early.Load(), r.badStage.Load(); e != 0 || b != 0 {
					t.Fatalf("cycle %d: %d stage-2 packets ran before stage 1 drained, %d saw the wrong stage", cycle, e, b)
				}
			}
			if got := s.Stats().PacketsRun(); got != uint64(5*total) {
				t.Fatalf("Stats: %d packets, want %d", got, 5*total)
			}
		})
	}
}

// TestAddSliceErrors: an unknown stage and a closed scheduler are errors;
// an empty slice queues nothing.
func TestAddSliceErrors(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	var n atomic.Int64
	p := Packet(counter{&n})
	if err := s.AddSlice(5, []Packet{p}); !errors.Is(err, ErrUnknownStage) {
		t.Fatalf("stage 5: %v, want ErrUnknownStage", err)
	}
	if err := s.AddSlice(1, nil); err != nil {
		t.Fatalf("empty slice: %v", err)
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 0 {
		t.Fatalf("%d packets of rejected slices ran", n.Load())
	}
	s.Close()
	if err := s.AddSlice(1, []Packet{p}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// TestAddSliceNilElement: AddSlice does not scan its slice; a nil element
// ends the cycle when a worker takes it, as a panicking packet, with an
// error that wraps ErrNilPacket and names the element, and every other
// packet either ran or is counted in Dropped. The same when the bucket's
// span slots are used up and the slice is copied.
func TestAddSliceNilElement(t *testing.T) {
	for _, full := range []bool{false, true} {
		s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
		var ran atomic.Int64
		if full { // use up the span slots with one-packet slices
			for range 64 {
				if err := s.AddSlice(1, []Packet{counter{&ran}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		ps := make([]Packet, 300)
		for i := range ps {
			if i != 123 {
				ps[i] = counter{&ran}
			}
		}
		if err := s.AddSlice(1, ps); err != nil {
			t.Fatalf("full=%v: AddSlice = %v, want nil (the element is not looked at yet)", full, err)
		}
		err := runCycle(t, s)
		var pe *PanicError
		if !errors.As(err, &pe) || !errors.Is(err, ErrNilPacket) {
			t.Fatalf("full=%v: Run = %v, want a *PanicError wrapping ErrNilPacket", full, err)
		}
		if pe.Packet != "nil AddSlice element" || !strings.Contains(pe.Error(), "element 123 ") {
			t.Fatalf("full=%v: %q (packet %q), want the element's index and name", full, pe.Error(), pe.Packet)
		}
		want := uint64(len(ps)) - 1
		if full {
			want += 64
		}
		if got := uint64(ran.Load()) + pe.Dropped; got != want {
			t.Fatalf("full=%v: ran %d + dropped %d = %d, want %d", full, ran.Load(), pe.Dropped, got, want)
		}
	}
}

// TestAddSliceManySlices: more slices than a bucket has span slots in one
// cycle; the rest are copied, and every packet runs once.
func TestAddSliceManySlices(t *testing.T) {
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
			if err := s.AddSlice(1, ps); err != nil {
				t.Fatal(err)
			}
		}
		if err := runCycle(t, s); err != nil {
			t.Fatal(err)
		}
		if i, n, bad := notOnce(runs[:]); bad {
			t.Fatalf("cycle %d: packet %d ran %d times", c, i, n)
		}
	}
}

// TestAddSliceAbort: a packet of a lent slice panics; the cycle ends with
// its PanicError, and every other packet either ran or is counted in
// Dropped.
func TestAddSliceAbort(t *testing.T) {
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
		if err := s.AddSlice(1, ps); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSlice(2, later); err != nil {
			t.Fatal(err)
		}
		err := runCycle(t, s)
		var pe *PanicError
		if !errors.As(err, &pe) {
			t.Fatalf("workers=%d: Run = %v, want *PanicError", workers, err)
		}
		if got := uint64(ran.Load()) + pe.Dropped + 1; got != n+2 {
			t.Fatalf("workers=%d: ran %d + dropped %d + 1 panicked = %d, want %d", workers, ran.Load(), pe.Dropped, got, n+2)
		}
		// The scheduler is usable again, and nothing of the slice is left.
		ran.Store(0)
		if err := runCycle(t, s); err != nil || ran.Load() != 0 {
			t.Fatalf("workers=%d: next cycle: %v, %d packets ran", workers, err, ran.Load())
		}
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
	if err := s.AddSlice(1, arr[:]); err != nil {
		t.Fatal(err)
	}
	return weak.Make(arr)
}

// collected reports whether wp's slice has been garbage-collected.
func collected(wp weak.Pointer[[256]Packet]) bool {
	for range 3 {
		runtime.GC()
	}
	return wp.Value() == nil
}

// TestAddSliceForgets: once the cycle that ran a lent slice has ended, the
// scheduler holds no reference to it (the span's source is released), so
// the caller's slice can be collected.
func TestAddSliceForgets(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	var ran atomic.Int64
	wp := lendCounters(t, s, &ran)
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 256 {
		t.Fatalf("ran %d, want 256", ran.Load())
	}
	if !collected(wp) {
		t.Fatal("the scheduler still references a slice whose cycle ended")
	}
}

// TestAddSliceCloseForgets: a slice lent and never run is counted as
// dropped by Close, not lost, and released, so the caller's slice can be
// collected while the closed Scheduler is still referenced.
func TestAddSliceCloseForgets(t *testing.T) {
	s, err := New(Config{Workers: 2, Stages: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int64
	wp := lendCounters(t, s, &ran)
	s.Close()
	if !collected(wp) {
		t.Fatal("a closed scheduler still references a slice it dropped")
	}
	if st := s.Stats(); st.Dropped != 256 || ran.Load() != 0 {
		t.Fatalf("dropped %d, ran %d; want 256, 0", st.Dropped, ran.Load())
	}
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

func (p *deepPacket) Run(w *Worker) {
	r := p.r
	r.begin(w, p.id, p.stage)
	if p.id%7 == 0 {
		for t0 := time.Now(); time.Since(t0) < time.Microsecond; {
		}
	}
	if p.child != nil {
		w.Spawn(p.child)
	}
	r.done[p.stage].Add(1)
}

// TestDeepBulkExactlyOnce: deep stages, where guided takes move up to 128
// packets at once and hold them, run every packet exactly once and in
// stage order under every take policy, from 1 to 16 workers (more workers
// than cores: takes, held batches and exposures interleave in every
// order), with BulkAdd and AddSlice in the same stage and packets that
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
						if err := s.BulkAdd(st, copied[st]); err != nil {
							t.Fatal(err)
						}
						if err := s.AddSlice(st, lent[st]); err != nil {
							t.Fatal(err)
						}
					}
					if err := runCycle(t, s); err != nil {
						t.Fatal(err)
					}
					if i, c, bad := notOnce(r.seen); bad {
						t.Fatalf("cycle %d: packet %d ran %d times", cycle, i, c)
					}
					if e := r.early.Load(); e != 0 {
						t.Fatalf("cycle %d: %d stage-2 packets ran before stage 1 drained", cycle, e)
					}
				}
			})
		}
	}
}
