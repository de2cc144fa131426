package simulate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
)

// claimWorkers is synth.ClaimWorkers, failing t on an error.
func claimWorkers(t testing.TB, data []byte, workers int) []byte {
	t.Helper()
	out, err := synth.ClaimWorkers(data, workers)
	require.NoError(t, err)
	return out
}

// tick is a packet that runs for about n iterations of a counter.
type tick struct{ n int }

func (p tick) Run(*scheduler.Worker) error {
	var x uint64
	for range p.n {
		x++
	}
	tickSink.Add(x) // one shared write a packet: packets run on two workers
	return nil
}

// tickSink keeps the ticks' loops from being dropped.
var tickSink atomic.Uint64

// manyStages records cycles cycles of a real run on 2 workers under
// wake-all with stages stages, each stage one Add of two packets, and
// returns the trace with origins.
func manyStages(t testing.TB, stages, cycles int) []byte {
	t.Helper()
	rec := trace.NewRecorder(2, trace.Options{MaxBytes: 64 << 20})
	names := make([]string, stages)
	for i := range names {
		names[i] = fmt.Sprint("S", i+1)
	}
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: names, Wake: scheduler.WakeAll, Tracer: rec})
	require.NoError(t, err)
	for range cycles {
		for st := 1; st <= stages; st++ {
			require.NoError(t, s.AddAll([]scheduler.Packet{tick{100}, tick{100}}, scheduler.StageID(st)))
		}
		require.NoError(t, s.Run(context.Background()))
	}
	require.NoError(t, s.Close())
	var buf bytes.Buffer
	_, err = perfetto.Write(&buf, rec.Snapshot(), perfetto.Options{Origins: true})
	require.NoError(t, err)
	return buf.Bytes()
}

// TestWriteHostile writes the hostile traces of this file into the
// directory WSCHED_HOSTILE_DIR names, for timing the command-line tools on
// them (doc.go, Costs), and claimWorkers' rewrite of each file that
// WSCHED_HOSTILE_CLAIM names (4,094 workers).
func TestWriteHostile(t *testing.T) {
	dir := os.Getenv("WSCHED_HOSTILE_DIR")
	if dir == "" {
		t.Skip("WSCHED_HOSTILE_DIR names no directory")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stages-2047x30.pftrace"), manyStages(t, 2047, 30), 0o644))
	if f := os.Getenv("WSCHED_HOSTILE_CLAIM"); f != "" {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "claim-4094-"+filepath.Base(f)), claimWorkers(t, data, MaxWorkers), 0o644))
	}
}

// TestClaimedWorkersRejected: a real 2-worker recording whose process
// track claims 4,094 workers does not load (a replay at the claim would
// wake 4,094 virtual workers at every stage opening under wake-all); the
// recording as it was loads, its claim backed by its tracks.
func TestClaimedWorkersRejected(t *testing.T) {
	data := record(t, 2, scheduler.Config{Wake: scheduler.WakeAll})
	wl, err := Load(data)
	require.NoError(t, err)
	assert.Equal(t, 2, wl.Workers)
	assert.Equal(t, 2, wl.WorkerTracks)

	_, err = Load(claimWorkers(t, data, MaxWorkers))
	require.ErrorIs(t, err, ErrClaimedWorkers)
	assert.ErrorContains(t, err, "claims 4094 workers")
	assert.ErrorContains(t, err, "holds events on 2 worker track(s)")
}

// TestManyStagesStepsFollowEvents: a real recording of 2,047 stages
// (the scheduler's most) on 2 workers under wake-all, replayed at 2 and
// at 64 workers: what the replay visits stays within a small multiple of
// its simulated events plus the stages and workers it sets up, whatever
// the number of open stages (a find, a park's look and the last-parked
// decision each visit one stage, not every open one).
func TestManyStagesStepsFollowEvents(t *testing.T) {
	stages, cycles := 2047, 2
	if testing.Short() || raceEnabled {
		stages = 500
	}
	wl, err := Load(manyStages(t, stages, cycles))
	require.NoError(t, err)
	require.Len(t, wl.Cycles, cycles)
	for _, w := range []int{2, 64} {
		cfg := wl.Config
		cfg.Workers = w
		r, err := Run(wl, cfg, Options{})
		require.NoError(t, err)
		setup := int64(w + cycles*(stages+1))
		t.Logf("%d workers: %d events, %d steps", w, r.Events, r.steps)
		assert.LessOrEqual(t, r.steps, 4*r.Events+setup, "steps at %d workers", w)
		// Every stage opening wakes every parked worker under wake-all:
		// the events follow stages × workers, as the recording's wake-ups
		// at that count would.
		assert.LessOrEqual(t, r.Events, int64(cycles*stages*(2*2+8*w)), "events at %d workers", w)
	}
}
