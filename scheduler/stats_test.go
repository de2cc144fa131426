package scheduler

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/trace"
)

type sleeper struct{ d time.Duration }

func (p sleeper) Run(*Worker) { time.Sleep(p.d) }

type named struct{ name string }

func (named) Run(*Worker)          {}
func (p named) PacketName() string { return p.name }

// TestStats: counts add up per packet type; with PacketTiming the minimum
// is a real minimum (never the initial zero) and min ≤ mean ≤ max.
func TestStats(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}, PacketTiming: true})
	for range 20 {
		s.Add(1, sleeper{200 * time.Microsecond})
	}
	for range 7 {
		s.Add(2, named{"seven"})
	}
	for range 3 {
		s.Add(2, named{"three"})
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	got := map[string]PacketStats{}
	for _, p := range st.Packets {
		got[p.Name] = p
	}
	sl := got["scheduler.sleeper"]
	if sl.Count != 20 || sl.Timed != 20 || sl.Min < 200*time.Microsecond || sl.Min > sl.Mean() || sl.Mean() > sl.Max {
		t.Fatalf("sleeper stats %+v (mean %v)", sl, sl.Mean())
	}
	if got["seven"].Count != 7 || got["three"].Count != 3 {
		t.Fatalf("named stats %+v", st.Packets)
	}
	if st.PacketsRun() != 30 || st.Cycles != 1 {
		t.Fatalf("packets %d cycles %d", st.PacketsRun(), st.Cycles)
	}
	for i, sg := range st.Stages[1:] {
		if sg.Opens != 1 || sg.LastMakespan <= 0 || sg.TotalMakespan != sg.LastMakespan {
			t.Fatalf("stage %d stats %+v", i+1, sg)
		}
	}
	if st.Stages[2].LastOpenAt < st.Stages[1].LastMakespan {
		t.Fatalf("stage 2 opened at %v, before stage 1 ended (%v)", st.Stages[2].LastOpenAt, st.Stages[1].LastMakespan)
	}
	// Per worker: the shares add up to the merged figures, and each
	// worker's minimum is at least the merged one.
	for _, p := range st.Packets {
		var count, timed uint64
		for i, w := range st.Workers {
			for _, q := range w.PacketTypes {
				if q.Name != p.Name {
					continue
				}
				count += q.Count
				timed += q.Timed
				if q.Timed > 0 && (q.Min < p.Min || q.Max > p.Max || q.Min > q.Max) {
					t.Fatalf("worker %d %s: min %v max %v, merged min %v max %v", i, p.Name, q.Min, q.Max, p.Min, p.Max)
				}
			}
		}
		if count != p.Count || timed != p.Timed {
			t.Fatalf("%s: workers' shares count %d timed %d, merged %d %d", p.Name, count, timed, p.Count, p.Timed)
		}
	}
	for i, w := range st.Workers {
		var n uint64
		for _, q := range w.PacketTypes {
			n += q.Count
		}
		if n != w.Packets || w.Parks == 0 {
			t.Fatalf("worker %d: %d packets, its types add up to %d; %d parks", i, w.Packets, n, w.Parks)
		}
	}
	// Without timing: counts only, zero times.
	s2 := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	s2.Add(1, sleeper{})
	runCycle(t, s2)
	if p := s2.Stats().Packets[0]; p.Count != 1 || p.Timed != 0 || p.Min != 0 || p.Max != 0 {
		t.Fatalf("untimed stats %+v", p)
	}
}

// TestTraceHooks: with a Recorder, every packet has a begin and an end,
// every stage opens and closes once per cycle, stolen packets carry flows
// (packets added by Add, AddSlice and Spawn).
func TestTraceHooks(t *testing.T) {
	rec := trace.NewRecorder(2, trace.Options{MaxBytes: 8 << 20})
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b", "c"}, Tracer: rec})
	var n atomic.Int64
	const cycles = 3
	lent := make([]Packet, 50)
	for i := range lent {
		lent[i] = counter{&n}
	}
	for range cycles {
		s.Add(1, forkNode{8, &n})
		s.Add(3, counter{&n})
		s.AddSlice(3, lent)
		s.Add(2, fn(func(w *Worker) { // surplus for the other worker to steal
			for range 64 {
				w.Spawn(sleeper{20 * time.Microsecond})
			}
		}))
		if err := runCycle(t, s); err != nil {
			t.Fatal(err)
		}
	}
	snap := rec.Snapshot()
	count := map[trace.Kind]int{}
	flowsStarted, flowsEnded := map[uint64]bool{}, map[uint64]bool{}
	for _, e := range snap.All() {
		count[e.Kind()]++
		switch e.Kind() {
		case trace.KindSteal:
			flowsStarted[e.Flow()] = true
		case trace.KindPacketBegin:
			if e.Flow() != 0 {
				flowsEnded[e.Flow()] = true
			}
			if name := snap.Name(e.Name()); name == "" {
				t.Fatalf("packet name %q", name)
			}
		}
	}
	packets := cycles * (1<<9 - 1 + 1 + 50 + 65)
	if count[trace.KindPacketBegin] != packets || count[trace.KindPacketEnd] != packets {
		t.Fatalf("packet begin/end = %d/%d, want %d", count[trace.KindPacketBegin], count[trace.KindPacketEnd], packets)
	}
	if count[trace.KindStageOpen] != 3*cycles || count[trace.KindStageClose] != 3*cycles ||
		count[trace.KindCycleBegin] != cycles || count[trace.KindCycleEnd] != cycles {
		t.Fatalf("stage/cycle events %v", count)
	}
	if count[trace.KindPark] != count[trace.KindUnpark]+2 { // both parked at the end
		t.Fatalf("park %d unpark %d", count[trace.KindPark], count[trace.KindUnpark])
	}
	if count[trace.KindWakeSent] != count[trace.KindWakeReceived] {
		t.Fatalf("wake sent %d received %d", count[trace.KindWakeSent], count[trace.KindWakeReceived])
	}
	if len(flowsStarted) == 0 || len(flowsEnded) == 0 {
		t.Fatalf("no steal flows: %d started, %d ended", len(flowsStarted), len(flowsEnded))
	}
	for f := range flowsEnded {
		if !flowsStarted[f] {
			t.Fatalf("flow %x ends without a steal", f)
		}
	}
	// Every steal is stamped: its origin follows it, born no later, on a
	// worker (the stolen packet was spawned there) or the control buffer
	// (added by Scheduler.Add from outside or from a packet).
	fromWorker := 0
	for i := range snap.Buffers {
		ev := snap.Buffers[i].Events
		for j, e := range ev {
			if e.Kind() != trace.KindSteal {
				continue
			}
			if j+1 == len(ev) || ev[j+1].Kind() != trace.KindStealOrigin {
				t.Fatalf("steal %v without its origin", e)
			}
			o := ev[j+1]
			if o.Born() > e.Time || o.From() < -1 || o.From() >= 2 {
				t.Fatalf("steal %v: origin %v", e, o)
			}
			if o.From() >= 0 {
				fromWorker++
			}
		}
	}
	if fromWorker == 0 {
		t.Fatal("no stolen packet was born on a worker (the spawners' 64 sleepers)")
	}
	t.Logf("events %v, %d steals with flows, %d of them of packets spawned on a worker", count, len(flowsStarted), fromWorker)
}

// TestWorkerStats: a worker parked for a while and then woken by an Add
// records the idle time, the park and the wake-up; the waker's wake-up is
// counted as external.
func TestWorkerStats(t *testing.T) {
	// WakeOne: nobody wakes worker 1 at the start, so it is still in the
	// sleep it began in New.
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, Wake: WakeOne})
	end := holdCycle(t, s) // worker 0 blocked, worker 1 parked
	before := s.Stats()
	time.Sleep(30 * time.Millisecond)
	var n atomic.Int64
	if err := s.Add(Unconstrained, counter{&n}); err != nil {
		t.Fatal(err)
	}
	waitParked(t, s, 1)
	for n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	end()
	after := s.Stats()
	b, a := before.Workers[1], after.Workers[1]
	if idle := a.Idle - b.Idle; idle < 30*time.Millisecond {
		t.Fatalf("worker 1 idle %v over a 30ms park", idle)
	}
	if a.WakesReceived-b.WakesReceived < 1 || a.Parks-b.Parks < 1 || after.ExternalWakes-before.ExternalWakes < 1 {
		t.Fatalf("worker 1 before %+v after %+v; external wakes %d -> %d", b, a, before.ExternalWakes, after.ExternalWakes)
	}
	if a.Packets-b.Packets != 1 || after.Workers[0].Packets != 1 {
		t.Fatalf("packets: worker 0 %d, worker 1 %d more", after.Workers[0].Packets, a.Packets-b.Packets)
	}
}

type countA struct{}

func (countA) Run(*Worker) {}

type countB struct{}

func (countB) Run(*Worker) {}

// mixedRoot spawns, by Spawn and by SpawnOrRun in turn, n children in
// runs of types: countA, countB and named packets of two names.
type mixedRoot struct{ n int }

func (r mixedRoot) Run(w *Worker) {
	for i := range r.n {
		var p Packet
		switch k := i % 23; {
		case k < 9:
			p = countA{}
		case k < 15:
			p = countB{}
		case k < 20:
			p = named{"x"}
		default:
			p = named{"y"}
		}
		if i%2 == 0 {
			w.Spawn(p)
		} else {
			w.SpawnOrRun(p)
		}
	}
}

// TestStatsCountRuns: without instrumentation a worker counts a run of
// packets of one type with one increment (countPacket) and folds it into
// the type's count when the type changes or it publishes; the counts by
// type must still be exact, across runs of alternating types, Namer
// packets, inline children and more packets than a flush interval.
func TestStatsCountRuns(t *testing.T) {
	const n = 3*flushEvery + 17
	want := map[string]uint64{"scheduler.mixedRoot": 1}
	for i := range n {
		switch k := i % 23; {
		case k < 9:
			want["scheduler.countA"]++
		case k < 15:
			want["scheduler.countB"]++
		case k < 20:
			want["x"]++
		default:
			want["y"]++
		}
	}
	for _, workers := range []int{1, 2} {
		s := newSched(t, Config{Workers: workers, Stages: []string{"a"}})
		for range 2 {
			if err := s.Add(1, mixedRoot{n}); err != nil {
				t.Fatal(err)
			}
			if err := runCycle(t, s); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]uint64{}
		for _, p := range s.Stats().Packets {
			got[p.Name] = p.Count
		}
		for name, c := range want {
			if got[name] != 2*c {
				t.Errorf("workers %d: %s counted %d, want %d (all: %v)", workers, name, got[name], 2*c, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("workers %d: names %v, want %v", workers, got, want)
		}
	}
}
