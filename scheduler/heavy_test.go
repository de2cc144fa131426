package scheduler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestLearnHeavy: with Config.LearnHeavy, a packet type whose run bounds
// its stage (one 3 ms packet queued last behind 64 of 20 µs, on 2
// workers, MMTk's FIFO settings) starts late in the first cycle and first
// from the second on, added with AddAll or Add; HeavyTypes names it (and
// not the light type); two cycles in a row in which it is cheap take it
// out; an
// aborted cycle changes nothing; without LearnHeavy nothing is learned.
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
	assert.Greater(t, cycle(3*time.Millisecond, false), int64(32), "unlearned: the heavy packet starts late")
	assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes())
	for _, oneByOne := range []bool{false, true, false} {
		assert.LessOrEqual(t, cycle(3*time.Millisecond, oneByOne), int64(cfg.Workers), "learned: it starts first (Add one by one: %v)", oneByOne)
		assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes())
	}

	// An aborted cycle teaches nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Add(lightPkt{&seq}))
	require.Error(t, s.Run(ctx))
	assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes())

	// Two cycles in a row in which it is as cheap as the others take it
	// out; one keeps it.
	cycle(20*time.Microsecond, false)
	assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes(), "one cheap cycle keeps it")
	cycle(3*time.Millisecond, false)
	cycle(20*time.Microsecond, false)
	assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes(), "a heavy cycle between resets the count")
	cycle(20*time.Microsecond, false)
	assert.Empty(t, s.HeavyTypes(), "two cheap cycles in a row take it out")

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
// "Stack" packets of the same type starts first from the second cycle
// on, and HeavyTypes names "Code" alone (a set keyed by the type word
// merged both names, whose mean run is short, and learned nothing).
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
	assert.Greater(t, cycle(false), int64(32), "unlearned: the long packet starts late")
	assert.Equal(t, []HeavyType{{"Code", 1}}, s.HeavyTypes())
	for _, oneByOne := range []bool{false, true} {
		assert.LessOrEqual(t, cycle(oneByOne), int64(2), "learned: it starts first (Add one by one: %v)", oneByOne)
		assert.Equal(t, []HeavyType{{"Code", 1}}, s.HeavyTypes())
	}
}

// TestLearnHeavyPerStage: a type is judged in each stage on its runs
// there: 64 short packets in one stage and one of the same type alone in
// the next make it heavy in neither (with one record per type, its mean
// over both stages was set against the later stage's work, where it is
// alone, and it was marked heavy), while a long packet of another type
// in the first stage still is.
func TestLearnHeavyPerStage(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"load", "report"}, LearnHeavy: true})
	var seq, at atomic.Int64
	for range 3 {
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
		assert.Equal(t, []HeavyType{{"scheduler.heavyPkt", 1}}, s.HeavyTypes(), "heavy in the first stage")
		// Heavy where it was measured, not in another stage, where its
		// packets go to the bucket as without learning.
		assert.True(t, s.sched().heavyOf(heavyPkt{&seq, &at, 0}, 1))
		assert.False(t, s.sched().heavyOf(heavyPkt{&seq, &at, 0}, 2))
	}
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
