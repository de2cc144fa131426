package scheduler

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
)

type sleeper struct{ d time.Duration }

func (p sleeper) Run(*Worker) error { time.Sleep(p.d); return nil }

type named struct{ name string }

func (named) Run(*Worker) error    { return nil }
func (p named) PacketName() string { return p.name }

// TestStats: counts add up per packet type; with PacketTiming the minimum
// is a real minimum (never the initial zero) and min ≤ mean ≤ max.
func TestStats(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}, PacketTiming: true})
	for range 20 {
		require.NoError(t, s.Add(sleeper{200 * time.Microsecond}))
	}
	for range 7 {
		require.NoError(t, s.Add(named{"seven"}, StageID(2)))
	}
	for range 3 {
		require.NoError(t, s.Add(named{"three"}, StageID(2)))
	}
	require.NoError(t, runCycle(t, s))
	st := s.Stats()
	got := map[string]PacketStats{}
	for _, p := range st.Packets {
		got[p.Name] = p
	}
	sl := got["scheduler.sleeper"]
	assert.Equal(t, uint64(20), sl.Count)
	assert.Equal(t, uint64(20), sl.Timed)
	assert.GreaterOrEqual(t, sl.Min, 200*time.Microsecond)
	assert.LessOrEqual(t, sl.Min, sl.Mean)
	assert.LessOrEqual(t, sl.Mean, sl.Max)
	assert.Equal(t, sl.Total/20, sl.Mean)
	assert.Equal(t, uint64(7), got["seven"].Count)
	assert.Equal(t, uint64(3), got["three"].Count)
	assert.Equal(t, uint64(30), st.Ran)
	assert.Equal(t, uint64(1), st.Cycles)
	for i, sg := range st.Stages[1:] {
		assert.Equal(t, uint64(1), sg.Opens, "stage %d", i+1)
		assert.Positive(t, sg.LastMakespan, "stage %d", i+1)
		assert.Equal(t, sg.LastMakespan, sg.TotalMakespan, "stage %d", i+1)
	}
	assert.GreaterOrEqual(t, st.Stages[2].LastOpenAt, st.Stages[1].LastMakespan, "stage 2 opened after stage 1 ended")
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
				if q.Timed > 0 && (q.Min < p.Min || q.Max > p.Max || q.Min > q.Max || q.Mean != q.Total/time.Duration(q.Timed)) {
					require.Failf(t, "a worker's share is outside the merged figures", "worker %d %s: %+v, merged %+v", i, p.Name, q, p)
				}
			}
		}
		require.Equal(t, p.Count, count, "%s: the workers' shares", p.Name)
		require.Equal(t, p.Timed, timed, "%s: the workers' shares", p.Name)
	}
	for i, w := range st.Workers {
		var n uint64
		for _, q := range w.PacketTypes {
			n += q.Count
		}
		require.Equal(t, w.Packets, n, "worker %d: its types add up", i)
		require.NotZero(t, w.Parks, "worker %d parks", i)
	}
	// Without timing: counts only, zero times.
	s2 := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	require.NoError(t, s2.Add(sleeper{}))
	require.NoError(t, runCycle(t, s2))
	p := s2.Stats().Packets[0]
	assert.Equal(t, PacketStats{Name: "scheduler.sleeper", Count: 1}, p, "untimed stats")
}

// TestTraceHooks: with a Recorder, every packet has a begin and an end,
// every stage opens and closes once per cycle, stolen packets carry flows
// (packets added by Add, AddAll with Lend, and Spawn).
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
		require.NoError(t, s.Add(forkNode{8, &n}))
		require.NoError(t, s.Add(counter{&n}, StageID(3)))
		require.NoError(t, s.AddAll(lent, StageID(3), Lend))
		require.NoError(t, s.Add(fn(func(w *Worker) { // surplus for the other worker to steal
			for range 64 {
				Spawn(w, sleeper{20 * time.Microsecond})
			}
		}), StageID(2)))
		require.NoError(t, runCycle(t, s))
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
			require.NotEmpty(t, snap.Name(e.Name()), "packet name")
		}
	}
	packets := cycles * (1<<9 - 1 + 1 + 50 + 65)
	require.Equal(t, packets, count[trace.KindPacketBegin], "packet begins")
	require.Equal(t, packets, count[trace.KindPacketEnd], "packet ends")
	require.Equal(t, 3*cycles, count[trace.KindStageOpen], "stage/cycle events %v", count)
	require.Equal(t, 3*cycles, count[trace.KindStageClose], "stage/cycle events %v", count)
	require.Equal(t, cycles, count[trace.KindCycleBegin], "stage/cycle events %v", count)
	require.Equal(t, cycles, count[trace.KindCycleEnd], "stage/cycle events %v", count)
	require.Equal(t, count[trace.KindUnpark]+2, count[trace.KindPark], "parks: both parked at the end")
	require.Equal(t, count[trace.KindWakeSent], count[trace.KindWakeReceived], "wake-ups sent and received")
	require.NotEmpty(t, flowsStarted, "steal flows started")
	require.NotEmpty(t, flowsEnded, "steal flows ended")
	for f := range flowsEnded {
		require.True(t, flowsStarted[f], "flow %x ends without a steal", f)
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
			require.True(t, j+1 < len(ev) && ev[j+1].Kind() == trace.KindStealOrigin, "steal %v without its origin", e)
			o := ev[j+1]
			require.True(t, o.Born() <= e.Time && o.From() >= -1 && o.From() < 2, "steal %v: origin %v", e, o)
			if o.From() >= 0 {
				fromWorker++
			}
		}
	}
	require.NotZero(t, fromWorker, "no stolen packet was born on a worker (the spawners' 64 sleepers)")
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
	time.Sleep(30 * time.Millisecond) // the idle time to be measured
	var n atomic.Int64
	require.NoError(t, s.Add(counter{&n}, Unconstrained))
	waitFor(t, 10*time.Second, func() bool { return n.Load() == 1 }, "the packet to run")
	waitParked(t, s, 1)
	end()
	after := s.Stats()
	b, a := before.Workers[1], after.Workers[1]
	assert.GreaterOrEqual(t, a.Idle-b.Idle, 30*time.Millisecond, "worker 1 idle over a 30ms park")
	assert.GreaterOrEqual(t, a.WakesReceived-b.WakesReceived, uint64(1), "wake-ups received")
	assert.GreaterOrEqual(t, a.Parks-b.Parks, uint64(1), "parks")
	assert.GreaterOrEqual(t, after.ExternalWakes-before.ExternalWakes, uint64(1), "external wake-ups")
	assert.Equal(t, uint64(1), a.Packets-b.Packets, "worker 1 packets")
	assert.Equal(t, uint64(1), after.Workers[0].Packets, "worker 0 packets")
}

type countA struct{}

func (countA) Run(*Worker) error { return nil }

type countB struct{}

func (countB) Run(*Worker) error { return nil }

// spawnAs spawns p by Spawn or SpawnOrRun (inline), as a P or as a Packet
// (iface): the four ways a packet's stats are counted.
func spawnAs[P Packet](w *Worker, p P, inline, iface bool) {
	switch {
	case iface && inline:
		SpawnOrRun[Packet](w, p)
	case iface:
		Spawn[Packet](w, p)
	case inline:
		SpawnOrRun(w, p)
	default:
		Spawn(w, p)
	}
}

// mixedRoot spawns n children in runs of types: countA, countB and named
// packets of two names, by Spawn and SpawnOrRun in turn, every third as a
// Packet (an interface value) and the others by their own type.
type mixedRoot struct{ n int }

func (r mixedRoot) Run(w *Worker) error {
	for i := range r.n {
		inline, iface := i%2 == 1, i%3 == 0
		switch k := i % 23; {
		case k < 9:
			spawnAs(w, countA{}, inline, iface)
		case k < 15:
			spawnAs(w, countB{}, inline, iface)
		case k < 20:
			spawnAs(w, named{"x"}, inline, iface)
		default:
			spawnAs(w, named{"y"}, inline, iface)
		}
	}
	return nil
}

// TestStatsCountRuns: without instrumentation a worker counts a run of
// packets of one type with one increment (countPacket, countValue) and
// folds it into the type's count when the type changes or it publishes;
// the counts by type must still be exact, across runs of alternating
// types, Namer packets, value and interface packets, inline children and
// more packets than a flush interval; and the same with PacketTiming,
// which counts each packet as it times it.
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
	for _, timing := range []bool{false, true} {
		for _, workers := range []int{1, 2} {
			s := newSched(t, Config{Workers: workers, Stages: []string{"a"}, PacketTiming: timing})
			for range 2 {
				require.NoError(t, s.Add(mixedRoot{n}))
				require.NoError(t, runCycle(t, s))
			}
			got := map[string]uint64{}
			for _, p := range s.Stats().Packets {
				got[p.Name] = p.Count
			}
			for name, c := range want {
				assert.Equal(t, 2*c, got[name], "timing %v, workers %d: %s (all: %v)", timing, workers, name, got)
			}
			assert.Len(t, got, len(want), "timing %v, workers %d: names %v, want %v", timing, workers, got, want)
		}
	}
}

type valueP struct{}

func (valueP) Run(*Worker) error { return nil }

type ptrP struct{}

func (*ptrP) Run(*Worker) error { return nil }

// namesRoot queues a valueP, a *ptrP, a Func packet and a join
// continuation every way a packet can be queued.
type namesRoot struct{ f Packet }

func (r namesRoot) Run(w *Worker) error {
	Spawn(w, valueP{})
	SpawnOrRun(w, valueP{})
	Spawn[Packet](w, valueP{})
	Spawn(w, &ptrP{})
	SpawnOrRun[Packet](w, &ptrP{})
	Spawn(w, r.f)
	SpawnOrRun(w, r.f)
	if err := w.Scheduler().Add(valueP{}); err != nil {
		return err
	}
	Join(w, countA{}) // runs once the rest of this packet's spawns have
	Spawn(w, &ptrP{})
	return nil
}

// TestStatsNames: a packet is counted under one name however it was
// queued (Add, AddAll, a lent slice, Spawn of a value, of a pointer or of
// a Packet, SpawnOrRun inline or not, a join's continuation) and whether
// or not the scheduler is instrumented: its Go type ("scheduler.valueP",
// "*scheduler.ptrP"), its Func name, its Namer name.
func TestStatsNames(t *testing.T) {
	f := Func("my func", func(*Worker) error { return nil })
	for _, cfg := range []Config{{}, {PacketTiming: true}, {Workers: 1}} {
		if cfg.Workers == 0 {
			cfg.Workers = 2
		}
		name := fmt.Sprintf("workers=%d/timing=%v", cfg.Workers, cfg.PacketTiming)
		s := newSched(t, cfg)
		require.NoError(t, s.Add(valueP{}))
		require.NoError(t, s.Add(&ptrP{}))
		require.NoError(t, s.AddAll([]Packet{valueP{}, &ptrP{}, f, named{"x"}}))
		require.NoError(t, s.AddAll([]Packet{valueP{}, &ptrP{}, f}, Lend))
		require.NoError(t, s.Add(namesRoot{f}))
		require.NoError(t, runCycle(t, s))
		got := map[string]uint64{}
		for _, p := range s.Stats().Packets {
			got[p.Name] = p.Count
		}
		assert.Equal(t, map[string]uint64{
			"scheduler.valueP":    3 + 4,
			"*scheduler.ptrP":     3 + 3,
			"my func":             2 + 2,
			"x":                   1,
			"scheduler.namesRoot": 1,
			"scheduler.countA":    1,
		}, got, name)
	}
}
