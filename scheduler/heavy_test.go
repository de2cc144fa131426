package scheduler

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/policy"
)

// spinFor burns d of CPU (a packet's work; no sleep).
func spinFor(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// lightPkt and heavyPkt record the order in which they start.
type lightPkt struct{ seq *atomic.Int64 }

func (p lightPkt) Run(*Worker) error { p.seq.Add(1); spinFor(20 * time.Microsecond); return nil }

type heavyPkt struct {
	seq   *atomic.Int64
	at    *atomic.Int64 // the seq number it started at
	spend time.Duration
}

func (p heavyPkt) Run(*Worker) error {
	p.at.Store(p.seq.Add(1))
	spinFor(p.spend)
	return nil
}

// heavyTracker follows a scheduler's learned set cycle by cycle. The rule
// works on measured run times, and on a loaded host (the race detector's
// packages side by side on two cores) a 20 µs packet descheduled for
// milliseconds can push a heavy packet below the share for one cycle; so
// after each cycle the tracker computes from that cycle's times (Stats
// before and after) what internal/policy's rule makes of the one
// candidate type, and the set the scheduler must publish then. The rule's
// own edge cases are policy's tests (PickHeavy, CarryHeavy).
type heavyTracker struct {
	t       *testing.T
	s       *Scheduler
	name    string   // the candidate type
	stage   StageID  // where it runs
	others  []string // the other types of its stage (their totals count as its stage's work)
	before  map[string]PacketStats
	set     []policy.Heavy[string]
	learned int // cycles whose times marked it heavy
}

func newHeavyTracker(t *testing.T, s *Scheduler, name string, stage StageID, others ...string) *heavyTracker {
	tr := &heavyTracker{t: t, s: s, name: name, stage: stage, others: others}
	tr.before = tr.stats()
	return tr
}

func (tr *heavyTracker) stats() map[string]PacketStats {
	m := map[string]PacketStats{}
	for _, p := range tr.s.Stats().Packets {
		m[p.Name] = p
	}
	return m
}

// cycleDone checks HeavyTypes after a cycle that ended normally: what the
// rule makes of the cycle's measured times, with the set before carried
// as CarryHeavy carries it. It returns whether the set holds the type.
func (tr *heavyTracker) cycleDone(msg string) bool {
	tr.t.Helper()
	after := tr.stats()
	delta := func(n string) PacketStats {
		a, b := after[n], tr.before[n]
		return PacketStats{Timed: a.Timed - b.Timed, Total: a.Total - b.Total}
	}
	c := delta(tr.name)
	work := c.Total
	for _, o := range tr.others {
		work += delta(o).Total
	}
	ws := make([]time.Duration, tr.stage+1)
	ws[tr.stage] = work
	var next []policy.Heavy[string]
	if pick := policy.PickHeavy([]policy.TypeTime{{Stage: int(tr.stage), N: int64(c.Timed), Total: c.Total}}, ws, len(tr.s.Stats().Workers), nil); len(pick) > 0 {
		next = append(next, policy.Heavy[string]{Key: tr.name, Stage: int(tr.stage)})
		tr.learned++
	} else {
		tr.t.Logf("%s: %s ran %v of its stage's %v: below the share", msg, tr.name, c.Total, work)
	}
	tr.set = policy.CarryHeavy(next, tr.set)
	var want []HeavyType
	for _, h := range tr.set {
		want = append(want, HeavyType{h.Key, StageID(h.Stage)})
	}
	assert.Equal(tr.t, want, tr.s.HeavyTypes(), msg)
	tr.before = after
	return len(want) > 0
}

// TestLearnHeavy: with Config.LearnHeavy, a packet type whose run bounds
// its stage (one 3 ms packet queued last behind 64 of 20 µs, on 2
// workers, MMTk's FIFO settings) starts late in the first cycle and first
// from the second on, added with AddAll or Add; HeavyTypes names it (and
// not the light type); two cycles in a row in which it is cheap take it
// out, one keeps it; an aborted cycle changes nothing; without LearnHeavy
// nothing is learned.
func TestLearnHeavy(t *testing.T) {
	cfg := Config{Workers: 2, Stages: []string{"prep"}, LearnHeavy: true, Wake: WakeAll, Steal: StealOne, Take: TakeFixed, Local: LocalFIFO}
	s := newSched(t, cfg)
	var seq, at atomic.Int64
	cycle := func(spend time.Duration, oneByOne bool) int64 {
		seq.Store(0)
		at.Store(-1)
		ps := make([]Packet, 0, 65)
		for range 64 {
			ps = append(ps, lightPkt{&seq})
		}
		ps = append(ps, heavyPkt{&seq, &at, spend})
		queueAll(t, s, ps, oneByOne)
		require.EqualValues(t, 65, seq.Load())
		return at.Load()
	}
	assert.Empty(t, s.HeavyTypes())
	tr := newHeavyTracker(t, s, "scheduler.heavyPkt", 1, "scheduler.lightPkt")
	assert.Greater(t, cycle(3*time.Millisecond, false), int64(32), "unlearned: the heavy packet starts late")
	in := tr.cycleDone("first cycle")
	for i, oneByOne := range []bool{false, true, false, true, false} {
		started := cycle(3*time.Millisecond, oneByOne)
		if in {
			assert.LessOrEqual(t, started, int64(cfg.Workers), "learned: it starts first (Add one by one: %v)", oneByOne)
		} else {
			assert.Greater(t, started, int64(32), "not learned: it starts late")
		}
		in = tr.cycleDone(fmt.Sprintf("heavy cycle %d", i+2))
	}
	require.GreaterOrEqual(t, tr.learned, 2, "cycles whose times marked it heavy, of 6")
	if !in {
		cycle(3*time.Millisecond, false)
		require.True(t, tr.cycleDone("one more heavy cycle"), "heavy after two heavy cycles in a row")
	}

	// An aborted cycle teaches nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Add(lightPkt{&seq}))
	require.Error(t, s.Run(ctx))
	assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes())
	tr.before = tr.stats()

	// Cheap cycles take it out, after two in a row below the share (the
	// tracker checks each step against the measured times).
	for i := range 6 {
		cycle(20*time.Microsecond, false)
		if !tr.cycleDone(fmt.Sprintf("cheap cycle %d", i+1)) {
			break
		}
	}
	assert.Empty(t, s.HeavyTypes(), "cheap cycles in a row take it out")

	// Without LearnHeavy nothing is learned, nothing moves.
	cfg.LearnHeavy = false
	s = newSched(t, cfg)
	cycle(3*time.Millisecond, false)
	assert.Greater(t, cycle(3*time.Millisecond, false), int64(32))
	assert.Empty(t, s.HeavyTypes())
}

// namedPkt is one Go type whose packets carry two names, as the prepare
// example's scanRoots is ScanMutatorRoots and ScanCodeCacheRoots.
type namedPkt struct {
	heavyPkt
	name string
}

func (p namedPkt) PacketName() string { return p.name }

// TestLearnHeavyByName: the heavy set holds a Namer type's heavy name,
// not its Go type: the one long "Code" packet queued last behind 64 short
// "Stack" packets of the same type starts first once it is learned, and
// HeavyTypes names "Code" alone (a set keyed by the type word merged both
// names, whose mean run is short, and learned nothing).
func TestLearnHeavyByName(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"prep"}, LearnHeavy: true, Wake: WakeAll, Steal: StealOne, Take: TakeFixed, Local: LocalFIFO})
	var seq, at, stackAt atomic.Int64
	cycle := func(oneByOne bool) int64 {
		seq.Store(0)
		at.Store(-1)
		ps := make([]Packet, 0, 65)
		for range 64 {
			ps = append(ps, namedPkt{heavyPkt{&seq, &stackAt, 20 * time.Microsecond}, "Stack"})
		}
		ps = append(ps, namedPkt{heavyPkt{&seq, &at, 3 * time.Millisecond}, "Code"})
		queueAll(t, s, ps, oneByOne)
		require.EqualValues(t, 65, seq.Load())
		return at.Load()
	}
	tr := newHeavyTracker(t, s, "Code", 1, "Stack")
	assert.Greater(t, cycle(false), int64(32), "unlearned: the long packet starts late")
	in := tr.cycleDone("first cycle")
	for i, oneByOne := range []bool{false, true, false, true} {
		started := cycle(oneByOne)
		if in {
			assert.LessOrEqual(t, started, int64(2), "learned: it starts first (Add one by one: %v)", oneByOne)
		}
		in = tr.cycleDone(fmt.Sprintf("cycle %d", i+2))
	}
	require.GreaterOrEqual(t, tr.learned, 2, "cycles whose times marked it heavy, of 5")
}

// TestLearnHeavyPerStage: a type is judged in each stage on its runs
// there: 64 short packets in one stage and one of the same type alone in
// the next make it heavy in neither (with one record per type, its mean
// over both stages was set against the later stage's work, where it is
// alone, and it was marked heavy), while a long packet of another type
// in the first stage still is. (Stats totals are per type, not per
// stage, so the tracker counts the light type's one run in the second
// stage to the first stage's work too: an error of one short packet's
// time in a stage of milliseconds, which changes the expected set only
// if the long packet's mean lies within that much of the share.)
func TestLearnHeavyPerStage(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"load", "report"}, LearnHeavy: true})
	var seq, at atomic.Int64
	tr := newHeavyTracker(t, s, "scheduler.heavyPkt", 1, "scheduler.lightPkt")
	for i := range 5 {
		seq.Store(0)
		ps := make([]Packet, 0, 65)
		for range 64 {
			ps = append(ps, lightPkt{&seq})
		}
		ps = append(ps, heavyPkt{&seq, &at, 3 * time.Millisecond})
		require.NoError(t, s.AddAll(ps, StageID(1)))
		require.NoError(t, s.Add(lightPkt{&seq}, StageID(2)))
		require.NoError(t, runCycle(t, s))
		require.EqualValues(t, 66, seq.Load())
		if !tr.cycleDone(fmt.Sprintf("cycle %d", i+1)) {
			continue
		}
		// Heavy where it was measured, not in another stage, where its
		// packets go to the bucket as without learning.
		assert.True(t, s.sched().heavyOf(heavyPkt{&seq, &at, 0}, 1))
		assert.False(t, s.sched().heavyOf(heavyPkt{&seq, &at, 0}, 2))
		assert.False(t, s.sched().heavyOf(lightPkt{&seq}, 1))
		assert.False(t, s.sched().heavyOf(lightPkt{&seq}, 2))
	}
	require.GreaterOrEqual(t, tr.learned, 2, "cycles whose times marked it heavy, of 5")
}

// queueAll queues ps with one AddAll, or one Add each, and runs a cycle.
func queueAll(t *testing.T, s *Scheduler, ps []Packet, oneByOne bool) {
	t.Helper()
	if oneByOne {
		for _, p := range ps {
			require.NoError(t, s.Add(p))
		}
	} else {
		require.NoError(t, s.AddAll(ps))
	}
	require.NoError(t, runCycle(t, s))
}

// TestLearnHeavyAddAllKeepsEveryPacket: the split of an AddAll into heavy
// and other packets queues every packet once, in the order given apart
// from the heavy ones, under MaxQueued too.
func TestLearnHeavyAddAllKeepsEveryPacket(t *testing.T) {
	s := newSched(t, Config{Workers: 2, LearnHeavy: true, MaxQueued: 200})
	var seq, at atomic.Int64
	ps := []Packet{heavyPkt{&seq, &at, 3 * time.Millisecond}}
	for range 10 {
		ps = append(ps, lightPkt{&seq})
	}
	require.NoError(t, s.AddAll(ps))
	require.NoError(t, runCycle(t, s))
	require.NotEmpty(t, s.HeavyTypes())
	for range 3 {
		seq.Store(0)
		mixed := []Packet{}
		for i := range 100 {
			if i%25 == 24 {
				mixed = append(mixed, heavyPkt{&seq, &at, 10 * time.Microsecond})
			} else {
				mixed = append(mixed, lightPkt{&seq})
			}
		}
		require.NoError(t, s.AddAll(mixed))
		require.NoError(t, runCycle(t, s))
		assert.EqualValues(t, 100, seq.Load(), "every packet ran once")
	}
	assert.Equal(t, int64(0), queuedTotal(s.s))
}

// quickPkt does nearly nothing.
type quickPkt struct{}

func (quickPkt) Run(*Worker) error { return nil }

// TestPacketTimingExcludesIdle: a timed packet's run time starts at its
// burst's start, not at the end of the worker's previous burst: after 30
// ms between two cycles (the test goroutine busy meanwhile), the second
// cycle's packet is not timed at 30 ms.
func TestPacketTimingExcludesIdle(t *testing.T) {
	s := newSched(t, Config{Workers: 1, PacketTiming: true})
	require.NoError(t, s.Add(quickPkt{}))
	require.NoError(t, runCycle(t, s))
	spinFor(30 * time.Millisecond)
	require.NoError(t, s.Add(quickPkt{}))
	require.NoError(t, runCycle(t, s))
	st := s.Stats()
	require.Len(t, st.Packets, 1)
	assert.EqualValues(t, 2, st.Packets[0].Timed)
	assert.Less(t, st.Packets[0].Max, 10*time.Millisecond, "the idle time between the cycles is not the packet's")
}

// TestHeavyConstants: the values HeavyShare's and MaxHeavyTypes' docs
// state.
func TestHeavyConstants(t *testing.T) {
	assert.Equal(t, 0.5, HeavyShare)
	assert.Equal(t, 8, MaxHeavyTypes)
}
