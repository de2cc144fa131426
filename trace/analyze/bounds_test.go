package analyze

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/rawtrace"
	"github.com/wsched/wsched/trace/internal/synth"
)

// The budget Bytes must keep for any input of n bytes: bytes allocated,
// events its replays simulate, text report and, with WSCHED_STRESS=1,
// wall time. wsched's own traces take about 10-25 bytes allocated and
// 30-70 ns per byte (BenchmarkAnalyze), and their replays fewer than one
// simulated event per 10 bytes each (simulate's bounds_test.go); the
// budget is a fixed multiple of n with room to spare, plus a constant for
// the smallest files, and far below what an analysis whose cost grows
// with what a file claims rather than holds costs (seconds and gigabytes
// for kilobytes).
func allocBudget(n int) uint64 { return 128*uint64(n) + 256<<10 }

func textBudget(n int) int { return 64*n + 64<<10 }

// replayBudget is the events of the at most 10 replays (1 + 9 fixes)
// together: simulate's per-replay budget, one event per byte plus 1,000,
// for each.
func replayBudget(n int) int64 { return 10 * (int64(n) + 1000) }

// stress turns on the wall-clock budget (WSCHED_STRESS=1): a clock is no
// unit test's to read on a shared machine. BenchmarkAnalyze and
// BenchmarkSVG give the time per byte; the events the replays simulate
// (replayBudget) bound the replays' time without a clock.
var stress = os.Getenv("WSCHED_STRESS") == "1"

func timeBudget(n int) time.Duration {
	d := time.Duration(n)*5*time.Microsecond + 250*time.Millisecond
	if raceEnabled {
		d *= 10
	}
	return d
}

// measured runs Bytes on data and returns what it allocated and how long
// it took. (No runtime.GC first: under -fuzz it takes seconds.)
func measured(data []byte) (*Report, error, uint64, time.Duration) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	r, err := Bytes(data)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	return r, err, after.TotalAlloc - before.TotalAlloc, elapsed
}

// withinBudget checks that analysing data kept the budget, and returns the
// report.
func withinBudget(t testing.TB, data []byte) (*Report, error) {
	t.Helper()
	r, err, alloc, elapsed := measured(data)
	assert.LessOrEqual(t, alloc, allocBudget(len(data)), "bytes allocated for a %d-byte file", len(data))
	if stress {
		assert.LessOrEqual(t, elapsed, timeBudget(len(data)), "time for a %d-byte file", len(data))
	}
	if err == nil {
		assert.LessOrEqual(t, r.replayed, replayBudget(len(data)), "events replayed for a %d-byte file", len(data))
		var text bytes.Buffer
		require.NoError(t, r.WriteText(&text))
		assert.LessOrEqual(t, text.Len(), textBudget(len(data)), "text report for a %d-byte file", len(data))
	}
	return r, err
}

// TestClaimedWorkersCostNothing: a process track that claims 65,536
// workers costs nothing for the workers that never appear. Windows list the
// workers that something happened to, and sum up the others.
func TestClaimedWorkersCostNothing(t *testing.T) {
	t.Run("empty cycles", func(t *testing.T) {
		data := rawtrace.ManyWorkersEmptyCycles(1<<16, 20)
		r, err := withinBudget(t, data)
		require.NoError(t, err)
		require.Len(t, r.Cycles, 20)
		for _, c := range r.Cycles {
			assert.Empty(t, c.Workers)
			require.NotNil(t, c.Others)
			assert.Equal(t, OtherWorkers{Workers: 1 << 16}, *c.Others)
		}
	})
	t.Run("counter samples", func(t *testing.T) {
		// The bucket holds a packet half of the time: every worker but
		// worker 0, which runs throughout, was idle while it did.
		const samples = 200
		data := rawtrace.ManyWorkersSamples(1<<14, samples)
		r, err := withinBudget(t, data)
		require.NoError(t, err)
		require.Len(t, r.Cycles, 1)
		c := r.Cycles[0]
		require.Len(t, c.Workers, 1)
		assert.Equal(t, WorkerStat{Worker: 0, BusyPct: 100 * float64(c.MakespanNs-100) / float64(c.MakespanNs)}, c.Workers[0])
		require.NotNil(t, c.Others)
		assert.Equal(t, OtherWorkers{Workers: 1<<14 - 1, IdleQueuedNs: samples / 2 * 100}, *c.Others)
	})
}

// TestOverlappingCyclesAndStagesRejected: wsched writes one cycle after
// another and one stage slice after another; a file with cycles or stage
// slices that overlap is rejected, instead of analysing every stage in
// every cycle around it.
func TestOverlappingCyclesAndStagesRejected(t *testing.T) {
	_, err := withinBudget(t, rawtrace.NestedCycles(100, 100))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cycle 2 (1-1199 ns) overlaps cycle 1 (0-1200 ns)")

	r := rawtrace.New(2)
	r.Cycle(0, 1)
	r.Stage(10, 1, "Outer")
	r.Stage(20, 2, "Inner")
	r.End(30, rawtrace.Stages)
	r.End(40, rawtrace.Stages)
	r.End(50, rawtrace.Control)
	_, err = withinBudget(t, r.Bytes())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `stage slice "Inner" (20-30 ns) overlaps stage slice "Outer" (10-40 ns)`)
}

// TestStageBelongsToOneCycle: cycles may touch; a stage that opens where
// one cycle ends and the next begins belongs to the next one only.
func TestStageBelongsToOneCycle(t *testing.T) {
	r := rawtrace.New(2)
	r.Cycle(0, 1)
	r.Stage(0, 1, "A")
	r.End(100, rawtrace.Stages)
	r.End(100, rawtrace.Control)
	r.Cycle(100, 2)
	r.Stage(100, 1, "B")
	r.End(200, rawtrace.Stages)
	r.End(200, rawtrace.Control)
	rep, err := Bytes(r.Bytes())
	require.NoError(t, err)
	require.Len(t, rep.Cycles, 2)
	var names [][]string
	for _, c := range rep.Cycles {
		var ns []string
		for _, s := range c.Stages {
			ns = append(ns, s.Name)
		}
		names = append(names, ns)
	}
	assert.Equal(t, [][]string{{"A"}, {"B"}}, names)
}

// TestClaimedWorkersListed: a file whose process track claims 64
// workers and describes the tracks of 2 lists those 2 in every window and
// sums up the 62 others, though 64 workers × 3 windows fit in its size:
// every window listing every claimed worker would make the report's size
// (135 MB for an 8.8 MB recording of 2 workers that claims 4,094) follow
// the claim.
func TestClaimedWorkersListed(t *testing.T) {
	r := rawtrace.New(64)
	r.Cycle(0, 1)
	r.Stage(0, 1, "S")
	r.Packet(0, 10, 500, "P", "S")
	r.Packet(1, 20, 400, "P", "S")
	r.End(600, rawtrace.Stages)
	r.End(600, rawtrace.Control)
	data := r.Bytes()
	require.LessOrEqual(t, 64*3, len(data))
	rep, err := withinBudget(t, data)
	require.NoError(t, err)
	require.Len(t, rep.Cycles, 1)
	c := rep.Cycles[0]
	for _, w := range []Window{c.Window, c.Stages[0].Window} {
		require.Len(t, w.Workers, 2)
		require.NotNil(t, w.Others)
		assert.Equal(t, 62, w.Others.Workers)
	}
}

// TestOthersMatchEveryWorker: a window that sums up the workers nothing
// happened to (OtherWorkers) says what listing each of them says. Around
// the cycle, worker 2 runs one long packet, workers 3 and 5 sleep, and
// worker 4 never appears; in it, worker 1 runs packets and parks while the
// bucket is sampled, and worker 0's deque alone holds work for a while.
func TestOthersMatchEveryWorker(t *testing.T) {
	r := rawtrace.New(6)
	r.Packet(2, 0, 2_000_000, "Long", "S")
	r.Park(3, 0, 2_000_000)
	r.Park(5, 0, 2_000_000)
	r.Cycle(10_000, 1)
	r.Stage(10_000, 1, "S")
	r.Sample(10_000, trace.CounterBucketDepth, 1, 3)
	r.Packet(1, 110_000, 210_000, "A", "S")
	r.Park(1, 210_000, 310_000)
	r.Sample(310_000, trace.CounterBucketDepth, 1, 0)
	r.Sample(410_000, trace.CounterLocalLen, 0, 2)
	r.Sample(460_000, trace.CounterBucketDepth, 1, 1)
	r.Sample(510_000, trace.CounterBucketDepth, 1, 0)
	r.Sample(610_000, trace.CounterLocalLen, 0, 0)
	r.Packet(1, 710_000, 810_000, "A", "S")
	r.End(1_010_000, rawtrace.Stages)
	r.End(1_010_000, rawtrace.Control)
	data := r.Bytes()
	every, err := analyzeWith(data, listEvery)
	require.NoError(t, err)
	some, err := analyzeWith(data, listPresent)
	require.NoError(t, err)
	cy := every.Cycles[0]
	// Work is queued from 10 to 310 µs and from 410 to 610 µs, all of it
	// in worker 0's deque from 410 to 460 and from 510 to 610 µs.
	assert.Equal(t, []int64{350_000, 400_000, 0, 500_000, 500_000, 500_000}, idleQueued(cy.Window))
	assert.Equal(t, []int64{0, 100_000, 0, 500_000, 0, 500_000}, idleQueuedParked(cy.Window))
	assert.Equal(t, 2+3+2+2+2, cy.Gaps)
	assert.Equal(t, int64(300_000), cy.LongestGapNs)
	assert.Equal(t, 0, cy.LongestGapWork)
	sc := some.Cycles[0]
	require.NotNil(t, sc.Others)
	assert.Equal(t, OtherWorkers{Workers: 4, Busy: 1, Parked: 2, IdleQueuedNs: 500_000, Gaps: 2}, *sc.Others)
	var listed []int
	for _, ws := range sc.Workers {
		listed = append(listed, ws.Worker)
	}
	assert.Equal(t, []int{0, 1}, listed, "worker 1 ran packets, worker 0's deque held all the work")
	assertOthersMatch(t, every, some)
}

// TestOthersMatchOnSynthetic: on simulated runs, the summed-up windows
// agree with the full listing.
func TestOthersMatchOnSynthetic(t *testing.T) {
	for _, cfg := range []synth.Config{
		{Workers: 4, Cycles: 2, Seed: 1, Heavy: 200_000, Packets: 30},
		{Workers: 7, Cycles: 3, Seed: 2, Packets: 5},
		{Workers: 3, Cycles: 2, Seed: 3, MaxBytes: 16 << 10},
	} {
		data := encode(t, synth.Generate(cfg).Snapshot)
		every, err := analyzeWith(data, listEvery)
		require.NoError(t, err)
		auto, err := Bytes(data)
		require.NoError(t, err)
		assert.Equal(t, every, auto, "a simulated run lists every worker")
		some, err := analyzeWith(data, listPresent)
		require.NoError(t, err)
		assertOthersMatch(t, every, some)
	}
}

// assertOthersMatch checks, window by window, that some (workers listed
// only when something happened to them) agrees with every (all listed).
func assertOthersMatch(t *testing.T, every, some *Report) {
	t.Helper()
	require.Len(t, some.Cycles, len(every.Cycles))
	var pairs [][2]Window
	for i, c := range every.Cycles {
		sc := some.Cycles[i]
		pairs = append(pairs, [2]Window{c.Window, sc.Window})
		require.Len(t, sc.Stages, len(c.Stages))
		for j := range c.Stages {
			pairs = append(pairs, [2]Window{c.Stages[j].Window, sc.Stages[j].Window})
		}
	}
	for _, p := range pairs {
		all, w := p[0], p[1]
		assert.Equal(t, all.Gaps, w.Gaps)
		assert.Equal(t, all.LongestGapNs, w.LongestGapNs)
		listed := map[int]bool{}
		for _, ws := range w.Workers {
			listed[ws.Worker] = true
			assert.Equal(t, all.Workers[ws.Worker], ws)
		}
		// The longest gap is named on a listed worker (the first in the
		// full listing, unless an unlisted one before it had one as long),
		// or on the others.
		switch {
		case w.LongestGapNs == 0:
		case w.LongestGapWork >= 0:
			assert.True(t, listed[w.LongestGapWork], "longest gap on worker %d, not listed", w.LongestGapWork)
			assert.LessOrEqual(t, all.LongestGapWork, w.LongestGapWork)
		default:
			require.NotNil(t, w.Others)
			assert.False(t, listed[all.LongestGapWork], "longest gap on listed worker %d, said to be on the others", all.LongestGapWork)
		}
		var o OtherWorkers
		for _, ws := range all.Workers {
			if listed[ws.Worker] {
				continue
			}
			o.Workers++
			if ws.BusyPct == 100 {
				o.Busy++
				continue
			}
			require.NotNil(t, w.Others)
			assert.Equal(t, w.Others.IdleQueuedNs, ws.IdleQueuedNs, "worker %d", ws.Worker)
		}
		if o.Workers == 0 {
			assert.Nil(t, w.Others)
			continue
		}
		require.NotNil(t, w.Others)
		assert.Equal(t, o.Workers, w.Others.Workers)
		if all.MakespanNs > 0 { // else a busy worker's share is 0 too
			assert.Equal(t, o.Busy, w.Others.Busy)
		}
	}
}

// budgetSeeds are FuzzAnalyze's seeds that claim 65,536 workers, nest
// cycles and stages, or carry many counter samples.
func budgetSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{
		rawtrace.ManyWorkersEmptyCycles(1<<16, 30),
		rawtrace.ManyWorkersSamples(1<<16, 300),
		rawtrace.NestedCycles(20, 20),
	}
	nested := rawtrace.New(1 << 16)
	for c := range 20 {
		nested.Cycle(int64(c), uint64(c+1))
		nested.Stage(int64(c), c+1, strings.Repeat("S", c+1))
	}
	for c := range 20 {
		nested.End(int64(100+c), rawtrace.Stages)
		nested.End(int64(100+c), rawtrace.Control)
	}
	// Workers in a packet or asleep through every cycle, and deques that
	// alone hold the queued work.
	long := rawtrace.New(1 << 16)
	for w := range 50 {
		long.Packet(w, 0, 1<<40, "Long", "S")
		long.Park(50+w, 0, 1<<40)
	}
	for c := range 50 {
		t := int64(c) * 1000
		long.Cycle(t, uint64(c+1))
		long.Stage(t, 1, "S")
		long.Sample(t+100, trace.CounterLocalLen, c, 1)
		long.Sample(t+200, trace.CounterLocalLen, c, 0)
		long.End(t+500, rawtrace.Stages)
		long.End(t+500, rawtrace.Control)
	}
	return append(seeds, nested.Bytes(), long.Bytes(),
		encode(tb, synth.Generate(synth.Config{Workers: 3, Cycles: 2, Seed: 1, Packets: 20}).Snapshot),
		// Replayable: the verdicts replay them.
		rawtrace.ManyWorkersChain(1<<16, 200), rawtrace.ManyWorkersChain(4, 200))
}
