package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/chromejson"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/rawtrace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/internal/wsfile"
	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/simulate"
)

// idleQueued lists the window's WorkerStat.IdleQueuedNs.
func idleQueued(w Window) []int64 {
	var out []int64
	for _, ws := range w.Workers {
		out = append(out, ws.IdleQueuedNs)
	}
	return out
}

// idleQueuedParked lists the window's WorkerStat.IdleQueuedParkedNs.
func idleQueuedParked(w Window) []int64 {
	var out []int64
	for _, ws := range w.Workers {
		out = append(out, ws.IdleQueuedParkedNs)
	}
	return out
}

func encode(t testing.TB, s *trace.Snapshot) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, s, perfetto.Options{Pid: 7})
	require.NoError(t, err)
	return buf.Bytes()
}

func TestAnalyzeSynthetic(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 3, Cycles: 2, Seed: 1, Heavy: 200_000, Packets: 60})
	r, err := Bytes(encode(t, res.Snapshot))
	require.NoError(t, err)
	require.Equal(t, 3, r.Workers)
	require.Len(t, r.Cycles, 2)
	require.Equal(t, res.Packets, r.Packets)
	steals, wakes := 0, 0
	var busy int64
	for _, c := range r.Cycles {
		steals += c.Steals
		wakes += c.Wakes
		require.Len(t, c.Stages, 3, "cycle %d", c.Cycle)
		assert.GreaterOrEqual(t, c.Ratio, 1.0, "cycle %d ratio", c.Cycle)
		assert.Positive(t, c.LowerBoundNs, "cycle %d lower bound", c.Cycle)
		assert.GreaterOrEqual(t, c.MakespanNs, c.LowerBoundNs, "cycle %d makespan", c.Cycle)
		busy += c.WorkNs
		// The heavy packet bounds stage 1 and sits on its critical path.
		s1 := c.Stages[0]
		assert.Equal(t, "ScanCodeCacheRoots", s1.Longest, "stage 1 longest")
		assert.Equal(t, int64(200_000), s1.LongestNs, "stage 1 longest")
		assert.Equal(t, "longest packet", s1.BoundBy, "stage 1 bound")
		if assert.NotEmpty(t, s1.Critical.Packets, "stage 1 critical path") {
			assert.Equal(t, "ScanCodeCacheRoots", s1.Critical.Packets[0].Name, "stage 1 critical path %+v", s1.Critical)
		}
		require.NotEmpty(t, s1.Heaviest)
		assert.Equal(t, "ScanCodeCacheRoots", s1.Heaviest[0].Name, "stage 1 heaviest %+v", s1.Heaviest)
		assert.GreaterOrEqual(t, c.WakeP50Ns, int64(1000), "wake latency p50 within the simulated 1-21 µs")
		assert.LessOrEqual(t, c.WakeP99Ns, int64(21000+2000), "wake latency p99 within the simulated 1-21 µs")
		for _, ws := range c.Workers {
			assert.GreaterOrEqual(t, ws.BusyPct, 0.0, "busy %d", ws.Worker)
			assert.LessOrEqual(t, ws.BusyPct, 100.0, "busy %d", ws.Worker)
		}
	}
	var simBusy int64
	for _, b := range res.Busy {
		simBusy += b
	}
	assert.Equal(t, simBusy, busy, "work against the simulation's")
	assert.Equal(t, res.Steals, steals, "steals against the simulation's")
	assert.Equal(t, res.Wakes, wakes, "wakes against the simulation's")
	var text, js bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	require.NoError(t, r.WriteJSON(&js))
	require.True(t, json.Valid(js.Bytes()), "bad JSON")
	for _, want := range []string{"cycle 1", "stage 1 Prepare", "lower bound", "critical path", "wakes", "idle while work was queued"} {
		assert.Contains(t, text.String(), want, "text report")
	}
	t.Logf("\n%s", text.String())
}

// TestIdleWhileQueued builds a trace by hand: worker 1 sits parked for
// 50 µs while worker 0's local deque holds work, then steals.
func TestIdleWhileQueued(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	a, st := r.Intern("A"), r.Intern("S")
	c, w0, w1 := r.Control(), r.Worker(0), r.Worker(1)
	now = 1000
	c.CycleBegin(1)
	c.StageOpen(1, st)
	w1.Park()
	w0.PacketBegin(a, 1, 0)
	w0.Counter(trace.CounterLocalLen, 0, 3) // three spawned packets queued at t=1000
	now = 51_000
	w1.Unpark()
	w1.Steal(0, 1, 9)
	w0.Counter(trace.CounterLocalLen, 0, 2)
	w1.PacketBegin(a, 1, 9)
	now = 61_000
	w1.PacketEnd()
	w0.PacketEnd()
	w0.Counter(trace.CounterLocalLen, 0, 0)
	now = 62_000
	c.StageClose(1)
	c.CycleEnd(1)
	rep, err := Bytes(encode(t, r.Snapshot()))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cycles)
	cy := rep.Cycles[0]
	assert.Equal(t, []int64{0, 50000}, idleQueued(cy.Window), "idle while queued")
	assert.Equal(t, []int64{0, 50000}, idleQueuedParked(cy.Window), "of which parked: worker 1 was parked throughout")
	assert.Equal(t, 1, cy.Gaps, "gaps")
	assert.Equal(t, int64(50_000), cy.LongestGapNs, "longest gap")
	assert.Equal(t, 1, cy.LongestGapWork, "longest gap's worker")
	assert.Equal(t, 1, cy.Steals, "steals")
	assert.Equal(t, int64(1), cy.Stolen, "stolen")
	assert.Equal(t, 2, cy.Packets, "packets")
	assert.Equal(t, int64(70_000), cy.WorkNs, "work")
	assert.Equal(t, int64(60_000), cy.LowerBoundNs, "bound")
	assert.Equal(t, "longest packet", cy.BoundBy, "bound by")
	assert.Equal(t, int64(61_000), cy.MakespanNs, "makespan")
	require.NotEmpty(t, cy.Stages)
	s := cy.Stages[0]
	assert.Equal(t, 0, s.Critical.Worker, "stage critical path %+v", s.Critical)
	assert.Len(t, s.Critical.Packets, 1, "stage critical path %+v", s.Critical)
	assert.Equal(t, int64(60_000), cy.Critical.BusyNs, "critical %+v", cy.Critical)
}

// TestIdleWhileQueuedParked: the parked share of a worker's idle time
// while work was queued. Worker 1 is parked from 1 to 21 µs, then awake
// without a packet (searching, or descheduled) until it steals at 51 µs:
// 50 µs idle while queued, 20 of them parked. A second stretch, 70 to 80
// µs, is idle but not while work was queued, and counts in neither.
func TestIdleWhileQueuedParked(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	a, st := r.Intern("A"), r.Intern("S")
	c, w0, w1 := r.Control(), r.Worker(0), r.Worker(1)
	now = 1000
	c.CycleBegin(1)
	c.StageOpen(1, st)
	w1.Park()
	w0.PacketBegin(a, 1, 0)
	w0.Counter(trace.CounterLocalLen, 0, 3)
	now = 21_000
	w1.Unpark()
	now = 51_000
	w1.Steal(0, 1, 9)
	w0.Counter(trace.CounterLocalLen, 0, 0)
	w1.PacketBegin(a, 1, 9)
	now = 61_000
	w1.PacketEnd()
	now = 70_000
	w1.Park()
	now = 80_000
	w1.Unpark()
	w0.PacketEnd()
	c.StageClose(1)
	c.CycleEnd(1)
	var text strings.Builder
	rep, err := Bytes(encode(t, r.Snapshot()))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cycles)
	cy := rep.Cycles[0]
	require.Greater(t, len(cy.Workers), 1)
	ws1 := cy.Workers[1]
	assert.Equal(t, int64(50_000), ws1.IdleQueuedNs, "worker 1 idle while queued")
	assert.Equal(t, int64(20_000), ws1.IdleQueuedParkedNs, "worker 1 idle while queued, parked")
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "w1 50µs (20µs parked)", "text report's parked share")
}

// TestStaleCountersExpire: counter samples are sparse, so a bucket's last
// sample can say 1 after its last packet was taken, and a thief's deque
// length stays as sampled after its steal. A stage's close empties every
// open bucket and a park empties the parking worker's deque: after either,
// the stale value must not count as queued work.
func TestStaleCountersExpire(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(3, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	a, s1, s2 := r.Intern("A"), r.Intern("S1"), r.Intern("S2")
	c, w0, w1, w2 := r.Control(), r.Worker(0), r.Worker(1), r.Worker(2)
	w0.Park()
	w1.Park()
	w2.Park() // w2 stays parked throughout
	now = 1000
	c.CycleBegin(1)
	c.StageOpen(1, s1)
	c.Counter(trace.CounterBucketDepth, 1, 2)
	w0.Unpark()
	w0.PacketBegin(a, 1, 0)
	w0.Counter(trace.CounterBucketDepth, 1, 1) // a batch take; the last packet goes unsampled
	now = 2000
	w1.Unpark()
	w1.PacketBegin(a, 1, 0)
	now = 3000
	w1.PacketEnd()
	w1.Park()
	now = 11_000
	w0.PacketEnd()
	w0.Park()
	now = 12_000
	c.StageClose(1) // bucket 1 is empty now, whatever its last sample said
	c.StageOpen(2, s2)
	c.Counter(trace.CounterBucketDepth, 2, 0)
	w0.Unpark()
	w0.PacketBegin(a, 2, 0)
	now = 12_500
	w1.Unpark()
	w1.Steal(0, 3, 7)
	w1.Counter(trace.CounterLocalLen, 1, 2) // two more in w1's deque
	w1.PacketBegin(a, 2, 7)
	for _, t := range []int64{13_000, 13_500} {
		now = t
		w1.PacketEnd()
		w1.PacketBegin(a, 2, 0) // popped from its deque: not sampled
	}
	now = 14_000
	w1.PacketEnd()
	w1.Park() // its deque is empty now
	now = 20_000
	w0.PacketEnd()
	w0.Park()
	now = 21_000
	c.StageClose(2)
	c.CycleEnd(1)
	now = 22_000
	rep, err := Bytes(encode(t, r.Snapshot()))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cycles)
	require.Greater(t, len(rep.Cycles[0].Stages), 1)
	st := rep.Cycles[0].Stages[1]
	assert.Equal(t, "S2", st.Name)
	assert.Equal(t, []int64{0, 0, 1500}, idleQueued(st.Window), "stage %s: idle while queued (w2 idle while w1's deque held work)", st.Name)
}

// TestCriticalPathFollowsSteals: the chain back from the last packet to
// finish steps to the previous packet on its worker, and from a stolen
// packet along its arrow: to the packet that spawned it, up to the spawn
// (a stamped steal), or to the packet its victim was running at the steal
// (an unstamped one).
func TestCriticalPathFollowsSteals(t *testing.T) {
	for _, stamped := range []bool{false, true} {
		t.Run(fmt.Sprintf("stamped=%v", stamped), func(t *testing.T) { criticalPathFollowsSteals(t, stamped) })
	}
}

func criticalPathFollowsSteals(t *testing.T, stamped bool) {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	a, b, c, d, st := r.Intern("A"), r.Intern("B"), r.Intern("C"), r.Intern("D"), r.Intern("S")
	ctl, w0, w1 := r.Control(), r.Worker(0), r.Worker(1)
	now = 500
	ctl.CycleBegin(1)
	ctl.StageOpen(1, st)
	now = 1000
	w0.PacketBegin(a, 1, 0) // A spawns C and D at 1.5 µs
	now = 1500
	born := w0.Stamp()
	now = 2000
	if stamped { // C runs at once, D goes to w1's deque
		w1.StealStamped(0, 2, 5, born, 0)
	} else {
		w1.Steal(0, 2, 5)
	}
	w1.PacketBegin(c, 1, 5)
	now = 3000
	w1.PacketEnd()
	w1.PacketBegin(d, 1, 0)
	now = 5000
	w0.PacketEnd()
	w0.PacketBegin(b, 1, 0)
	now = 9000
	w0.PacketEnd()
	now = 12_000
	w1.PacketEnd() // D finishes last
	ctl.StageClose(1)
	ctl.CycleEnd(1)
	rep, err := Bytes(encode(t, r.Snapshot()))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cycles)
	require.NotEmpty(t, rep.Cycles[0].Stages)
	cp := rep.Cycles[0].Stages[0].Critical
	var names []string
	for _, p := range cp.Packets {
		names = append(names, p.Name)
	}
	// D (9 µs) ← C (1 µs, stolen) ← A up to the steal (1 µs of its 4),
	// or up to C's spawn (0.5 µs) when the steal was stamped.
	busy := int64(11_000)
	if stamped {
		busy = 10_500
	}
	// Want D, C (stolen), A: 3 packets ending on w1, 1 steal, span 11 µs.
	assert.Equal(t, 1, cp.Worker, "critical path %+v", cp)
	assert.Equal(t, 3, cp.Length, "critical path %+v", cp)
	assert.Equal(t, 1, cp.Steals, "critical path %+v", cp)
	assert.Equal(t, busy, cp.BusyNs, "critical path %+v", cp)
	assert.Equal(t, int64(11_000), cp.SpanNs, "critical path %+v", cp)
	assert.Equal(t, int64(500), cp.DelayNs, "critical path %+v", cp)
	assert.Equal(t, []string{"D", "A", "C"}, names, "critical path %+v", cp)
	if assert.Len(t, cp.Packets, 3) {
		assert.True(t, cp.Packets[2].Stolen, "critical path %+v", cp)
	}
	cy := rep.Cycles[0].Critical
	assert.Equal(t, -1, cy.Worker, "cycle critical path %+v", cy)
	assert.Equal(t, 3, cy.Length, "cycle critical path %+v", cy)
	assert.Equal(t, busy, cy.BusyNs, "cycle critical path %+v", cy)
}

// TestMemoryLinearInFile: a trace with many stages, each with its own
// bucket counter, must not make the analysis quadratic (every stage's close
// empties the buckets of all earlier stages).
func TestMemoryLinearInFile(t *testing.T) {
	const stages = 3000
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 8 << 20, Clock: func() int64 { now += 10; return now }})
	a := r.Intern("A")
	c, w0 := r.Control(), r.Worker(0)
	c.CycleBegin(1)
	for st := 1; st <= stages; st++ {
		c.StageOpen(st, r.Intern(fmt.Sprint("S", st)))
		c.Counter(trace.CounterBucketDepth, st, 1)
		w0.PacketBegin(a, st, 0)
		w0.PacketEnd()
		c.StageClose(st)
	}
	c.CycleEnd(1)
	data := encode(t, r.Snapshot())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := Bytes(data)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cycles)
	require.Len(t, rep.Cycles[0].Stages, stages)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of trace, %d allocated (%.0fx)", len(data), alloc, float64(alloc)/float64(len(data)))
	assert.LessOrEqual(t, alloc, 200*uint64(len(data)), "bytes allocated for a %d-byte file", len(data))
}

// TestBadInput: input that is no wsched trace, or breaks the rules its
// writer keeps, is an error that says what is wrong, and simulate, which
// reads files through the same loader (trace/internal/wsfile), gives the
// same error.
func TestBadInput(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Seed: 3})
	good := encode(t, res.Snapshot)
	var js bytes.Buffer
	_, err := chromejson.Write(&js, res.Snapshot, chromejson.Options{})
	require.NoError(t, err)
	// A Perfetto trace that is not wsched's: one thread track, one slice.
	foreign := bytes.Clone(good)
	foreign = bytes.ReplaceAll(foreign, []byte(perfetto.DescProcess), []byte("other trace v1!"))
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":                  {nil, "empty file"},
		"garbage":                {[]byte("this is not a trace at all"), "not a valid Perfetto trace"},
		"json":                   {js.Bytes(), "not a valid Perfetto trace"},
		"truncated":              {good[:len(good)-5], "not a valid Perfetto trace"},
		"cut at packet boundary": {good[:packetBoundary(t, good, 0.6)], "truncated"},
		"foreign":                {foreign, "not a wsched trace"},
	}
	// Files that break the rules wsched's writer keeps.
	overlap := rawtrace.New(1)
	overlap.Cycle(10, 1)
	overlap.Cycle(20, 2)
	overlap.End(30, rawtrace.Control)
	overlap.End(40, rawtrace.Control)
	cases["nested cycles"] = struct {
		data []byte
		want string
	}{overlap.Bytes(), "overlaps cycle"}
	for name, tc := range cases {
		_, err := Bytes(tc.data)
		assert.ErrorContains(t, err, tc.want, name)
		// simulate reads a file through the same loader: the same
		// error, word for word.
		_, serr := simulate.Load(tc.data)
		assert.EqualError(t, serr, err.Error(), name)
	}
	// An add of no known kind is the replay's to refuse: analyze reports
	// on the file, with no predictions, and says why.
	badAdd := rawtrace.New(1)
	badAdd.Cycle(0, 1)
	badAdd.Stage(0, 1, "main")
	badAdd.AddCall(5, "nonsense", 1, 1, 5)
	badAdd.QueuedPacket(0, 10, 20, "p", "main", 1)
	badAdd.End(30, rawtrace.Stages)
	badAdd.End(30, rawtrace.Control)
	r, err := Bytes(badAdd.Bytes())
	require.NoError(t, err)
	assert.Contains(t, r.PredictionNote, "add with an unknown how")
	_, err = simulate.Load(badAdd.Bytes())
	assert.ErrorContains(t, err, "add with an unknown how")
	_, err = Bytes(foreign)
	assert.ErrorIs(t, err, ErrNotWsched, "foreign")
	_, err = File(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err, "missing file accepted")
}

// packetBoundary returns the offset of the first packet after frac of data.
func packetBoundary(t *testing.T, data []byte, frac float64) int {
	at := -1
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		if at < 0 && float64(p.Offset) > frac*float64(len(data)) {
			at = p.Offset
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, at, 0, "no boundary")
	return at
}

func TestDroppedReported(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10})
	r, err := Bytes(encode(t, res.Snapshot))
	require.NoError(t, err)
	require.NotZero(t, r.Dropped)
	require.Equal(t, res.Snapshot.Dropped(), r.Dropped)
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	assert.Contains(t, text.String(), "DROPPED", "text flags drops")
}

// FuzzAnalyze: any input gives a report or an error, never a panic, and
// whatever it claims, nests or repeats, its analysis keeps to a fixed
// multiple of its size in bytes allocated, events replayed and text
// (allocBudget, replayBudget, textBudget), and with WSCHED_STRESS=1 in
// time (timeBudget). Seeds: the golden trace and junk, and files
// that claim 65,536 workers, nest cycles and stages, or carry many counter
// samples (budgetSeeds).
//
//	WSCHED_STRESS=1 go test -run XXX -fuzz FuzzAnalyze -fuzztime 30s ./trace/analyze/
func FuzzAnalyze(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("..", "perfetto", "testdata", "small.pftrace.golden"))
	require.NoError(f, err)
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add([]byte{0x0a, 0x00})
	f.Add([]byte("garbage"))
	for _, s := range budgetSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		withinBudget(t, data)
	})
}

// TestBlockedAndPolledWakes: the control track wakes worker 1, which had
// blocked (its first packet 181 µs later), and worker 2, which was polling
// for its wake-up (2 µs later); the report tells the two apart.
func TestBlockedAndPolledWakes(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(3, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	a, st := r.Intern("A"), r.Intern("S")
	c, w1, w2 := r.Control(), r.Worker(1), r.Worker(2)
	now = 500
	c.CycleBegin(1)
	c.StageOpen(1, st)
	w1.Park()
	w2.Park()
	now = 1000
	c.WakeSent(1)
	c.WakeSent(2)
	now = 2500
	w2.Unpark()
	w2.WakeReceived(false)
	now = 3000
	w2.PacketBegin(a, 1, 0)
	now = 10_000
	w2.PacketEnd()
	now = 181_000
	w1.Unpark()
	w1.WakeReceived(true)
	now = 182_000
	w1.PacketBegin(a, 1, 0)
	now = 190_000
	w1.PacketEnd()
	c.StageClose(1)
	c.CycleEnd(1)
	rep, err := Bytes(encode(t, r.Snapshot()))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cycles)
	cy := rep.Cycles[0]
	assert.Equal(t, 2, cy.Wakes, "wakes")
	assert.Equal(t, 1, cy.BlockedWakes, "blocked wakes")
	assert.Equal(t, int64(181_000), cy.BlockedWakeP50Ns, "blocked wakes' p50")
	assert.Equal(t, 1, cy.PolledWakes, "polled wakes")
	assert.Equal(t, int64(2000), cy.PolledWakeP50Ns, "polled wakes' p50")
	var text strings.Builder
	require.NoError(t, rep.WriteText(&text))
	for _, want := range []string{"1 to a blocked worker (p50 181µs)", "1 to a polling one (p50 2µs)"} {
		assert.Contains(t, text.String(), want, "text report")
	}
}

// TestDeltaAndAbsoluteTimestampsAgree: the golden trace as the Perfetto
// writer encodes it (delta timestamps, default tracks) and as it encoded it
// before (absolute timestamps) give the same report.
func TestDeltaAndAbsoluteTimestampsAgree(t *testing.T) {
	cur, err := File(filepath.Join("..", "perfetto", "testdata", "small.pftrace.golden"))
	require.NoError(t, err)
	old, err := File(filepath.Join("..", "perfetto", "testdata", "small-absolute.pftrace.golden"))
	require.NoError(t, err)
	require.NotZero(t, cur.Packets)
	require.Equal(t, old, cur)
}

// TestOverwriteWithDrops: a real recording whose Overwrite recorder lost
// its oldest events, one of the add calls it kept stamped before the
// window it kept (a negative born), is read by analyze and replayed by
// simulate (an add stamped before the window is one made before the
// cycle). Which events the window keeps depends on timing: the run is
// recorded again, up to 5 times, until it holds such an add.
func TestOverwriteWithDrops(t *testing.T) {
	record := func() ([]byte, uint64) {
		rec := trace.NewRecorder(2, trace.Options{MaxBytes: 64 << 10, Overwrite: true})
		s, err := scheduler.New(scheduler.Config{Workers: 2, Tracer: rec})
		require.NoError(t, err)
		var ran atomic.Int64
		leaf := scheduler.Func("leaf", func(*scheduler.Worker) error { ran.Add(1); return nil })
		for range 3 {
			ps := make([]scheduler.Packet, 3000)
			for i := range ps {
				ps[i] = scheduler.Func("node", func(w *scheduler.Worker) error {
					ran.Add(1)
					scheduler.Spawn(w, leaf)
					return nil
				})
			}
			require.NoError(t, s.AddAll(ps))
			require.NoError(t, s.Run(context.Background()))
		}
		require.NoError(t, s.Close())
		require.EqualValues(t, 3*6000, ran.Load())
		snap := rec.Snapshot()
		require.Positive(t, snap.Dropped(), "the recorder must have lost events for this test")
		var buf bytes.Buffer
		_, err = perfetto.Write(&buf, snap, perfetto.Options{Origins: true})
		require.NoError(t, err)
		return buf.Bytes(), snap.Dropped()
	}
	for try := 0; ; try++ {
		data, dropped := record()
		f, err := wsfile.Load(data)
		require.NoError(t, err)
		require.NoError(t, f.AddsErr, "every add call read")
		early := false
		for _, a := range f.Adds {
			early = early || a.Born < 0
		}
		if !early {
			if try == 4 {
				t.Skip("5 recordings, none keeping an add stamped before its window")
			}
			continue
		}
		r, err := Bytes(data)
		require.NoError(t, err)
		assert.EqualValues(t, dropped, r.Dropped)
		wl, err := simulate.Load(data)
		require.NoError(t, err)
		_, err = simulate.Run(wl, wl.Config, simulate.Options{})
		require.NoError(t, err)
		return
	}
}
