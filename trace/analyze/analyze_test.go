package analyze

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/chromejson"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
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
	if _, err := perfetto.Write(&buf, s, perfetto.Options{Pid: 7}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestAnalyzeSynthetic(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 3, Cycles: 2, Seed: 1, Heavy: 200_000, Packets: 60})
	r, err := Bytes(encode(t, res.Snapshot))
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers != 3 || len(r.Cycles) != 2 || r.Packets != res.Packets {
		t.Fatalf("workers %d cycles %d packets %d (want 3, 2, %d)", r.Workers, len(r.Cycles), r.Packets, res.Packets)
	}
	steals, wakes := 0, 0
	var busy int64
	for _, c := range r.Cycles {
		steals += c.Steals
		wakes += c.Wakes
		if len(c.Stages) != 3 {
			t.Fatalf("cycle %d: %d stages", c.Cycle, len(c.Stages))
		}
		if c.Ratio < 1 || c.LowerBoundNs <= 0 || c.MakespanNs < c.LowerBoundNs {
			t.Errorf("cycle %d: makespan %d lower bound %d ratio %f", c.Cycle, c.MakespanNs, c.LowerBoundNs, c.Ratio)
		}
		busy += c.WorkNs
		// The heavy packet bounds stage 1 and sits on its critical path.
		s1 := c.Stages[0]
		if s1.Longest != "ScanCodeCacheRoots" || s1.LongestNs != 200_000 || s1.BoundBy != "longest packet" {
			t.Errorf("stage 1: longest %s %d bound by %s", s1.Longest, s1.LongestNs, s1.BoundBy)
		}
		if len(s1.Critical.Packets) == 0 || s1.Critical.Packets[0].Name != "ScanCodeCacheRoots" {
			t.Errorf("stage 1 critical path %+v", s1.Critical)
		}
		if s1.Heaviest[0].Name != "ScanCodeCacheRoots" {
			t.Errorf("stage 1 heaviest %+v", s1.Heaviest)
		}
		if c.WakeP50Ns < 1000 || c.WakeP99Ns > 21000+2000 {
			t.Errorf("wake latency p50 %d p99 %d outside the simulated 1-21 µs", c.WakeP50Ns, c.WakeP99Ns)
		}
		for _, ws := range c.Workers {
			if p := ws.BusyPct; p < 0 || p > 100 {
				t.Errorf("busy %d = %f", ws.Worker, p)
			}
		}
	}
	var simBusy int64
	for _, b := range res.Busy {
		simBusy += b
	}
	if busy != simBusy {
		t.Errorf("work %d, simulation says %d", busy, simBusy)
	}
	if steals != res.Steals || wakes != res.Wakes {
		t.Errorf("steals %d wakes %d, simulation %d %d", steals, wakes, res.Steals, res.Wakes)
	}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil || !json.Valid(js.Bytes()) {
		t.Fatal("bad JSON", err)
	}
	for _, want := range []string{"cycle 1", "stage 1 Prepare", "lower bound", "critical path", "wakes", "idle while work was queued"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
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
	if err != nil {
		t.Fatal(err)
	}
	cy := rep.Cycles[0]
	if idle := idleQueued(cy.Window); fmt.Sprint(idle) != "[0 50000]" {
		t.Errorf("idle while queued %v, want [0 50000]", idle)
	}
	if parked := idleQueuedParked(cy.Window); fmt.Sprint(parked) != "[0 50000]" {
		t.Errorf("of which parked %v, want [0 50000]: worker 1 was parked throughout", parked)
	}
	if cy.Gaps != 1 || cy.LongestGapNs != 50_000 || cy.LongestGapWork != 1 {
		t.Errorf("gaps %d longest %d on %d", cy.Gaps, cy.LongestGapNs, cy.LongestGapWork)
	}
	if cy.Steals != 1 || cy.Stolen != 1 || cy.Packets != 2 || cy.WorkNs != 70_000 {
		t.Errorf("steals %d stolen %d packets %d work %d", cy.Steals, cy.Stolen, cy.Packets, cy.WorkNs)
	}
	if cy.LowerBoundNs != 60_000 || cy.BoundBy != "longest packet" || cy.MakespanNs != 61_000 {
		t.Errorf("bound %d by %s, makespan %d", cy.LowerBoundNs, cy.BoundBy, cy.MakespanNs)
	}
	if s := rep.Cycles[0].Stages[0]; s.Critical.Worker != 0 || len(s.Critical.Packets) != 1 || cy.Critical.BusyNs != 60_000 {
		t.Errorf("critical %+v", cy.Critical)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	cy := rep.Cycles[0]
	if w1 := cy.Workers[1]; w1.IdleQueuedNs != 50_000 || w1.IdleQueuedParkedNs != 20_000 {
		t.Errorf("worker 1 idle while queued %d, parked %d; want 50000 and 20000", w1.IdleQueuedNs, w1.IdleQueuedParkedNs)
	}
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "w1 50µs (20µs parked)") {
		t.Errorf("text report lacks the parked share:\n%s", text.String())
	}
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
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Cycles[0].Stages[1]
	if idle := idleQueued(st.Window); st.Name != "S2" || fmt.Sprint(idle) != "[0 0 1500]" {
		t.Errorf("stage %s: idle while queued %v, want [0 0 1500] (w2 idle while w1's deque held work)", st.Name, idle)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if cp.Worker != 1 || cp.Length != 3 || cp.Steals != 1 || cp.BusyNs != busy || cp.SpanNs != 11_000 || cp.DelayNs != 500 ||
		fmt.Sprint(names) != "[D A C]" || !cp.Packets[2].Stolen {
		t.Errorf("critical path %+v, want D, C (stolen), A: 3 packets ending on w1, 1 steal, busy %d, span 11 µs", cp, busy)
	}
	if cy := rep.Cycles[0].Critical; cy.Worker != -1 || cy.Length != 3 || cy.BusyNs != busy {
		t.Errorf("cycle critical path %+v", cy)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cycles[0].Stages) != stages {
		t.Fatalf("%d stages", len(rep.Cycles[0].Stages))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of trace, %d allocated (%.0fx)", len(data), alloc, float64(alloc)/float64(len(data)))
	if alloc > 200*uint64(len(data)) {
		t.Errorf("analysis allocated %d bytes for a %d-byte file", alloc, len(data))
	}
}

func TestBadInput(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Seed: 3})
	good := encode(t, res.Snapshot)
	var js bytes.Buffer
	if _, err := chromejson.Write(&js, res.Snapshot, chromejson.Options{}); err != nil {
		t.Fatal(err)
	}
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
	for name, tc := range cases {
		_, err := Bytes(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	if _, err := Bytes(foreign); !errors.Is(err, ErrNotWsched) {
		t.Errorf("foreign: %v is not ErrNotWsched", err)
	}
	if _, err := File(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

// packetBoundary returns the offset of the first packet after frac of data.
func packetBoundary(t *testing.T, data []byte, frac float64) int {
	at := -1
	err := perfetto.Decode(data, func(p *perfetto.Packet) error {
		if at < 0 && float64(p.Offset) > frac*float64(len(data)) {
			at = p.Offset
		}
		return nil
	})
	if err != nil || at < 0 {
		t.Fatal("no boundary", err)
	}
	return at
}

func TestDroppedReported(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10})
	r, err := Bytes(encode(t, res.Snapshot))
	if err != nil {
		t.Fatal(err)
	}
	if r.Dropped == 0 || r.Dropped != res.Snapshot.Dropped() {
		t.Fatalf("dropped %d, snapshot %d", r.Dropped, res.Snapshot.Dropped())
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !strings.Contains(text.String(), "DROPPED") {
		t.Error("text does not flag drops")
	}
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
	if err != nil {
		f.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	cy := rep.Cycles[0]
	if cy.Wakes != 2 || cy.BlockedWakes != 1 || cy.BlockedWakeP50Ns != 181_000 || cy.PolledWakes != 1 || cy.PolledWakeP50Ns != 2000 {
		t.Errorf("wakes %d: blocked %d (p50 %d), polled %d (p50 %d); want 2: 1 (181000), 1 (2000)",
			cy.Wakes, cy.BlockedWakes, cy.BlockedWakeP50Ns, cy.PolledWakes, cy.PolledWakeP50Ns)
	}
	var text strings.Builder
	rep.WriteText(&text)
	for _, want := range []string{"1 to a blocked worker (p50 181µs)", "1 to a polling one (p50 2µs)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
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
