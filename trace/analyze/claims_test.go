package analyze

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/simulate"
)

// claimWorkers is synth.ClaimWorkers, failing t on an error.
func claimWorkers(t testing.TB, data []byte, workers int) []byte {
	t.Helper()
	out, err := synth.ClaimWorkers(data, workers)
	require.NoError(t, err)
	return out
}

var sink atomic.Uint64

// stagedRun records cycles of a real run on 2 workers under wake-all:
// each cycle adds 8 short packets to each of 4 stages, and waits at each
// stage's opening for workers to wake.
func stagedRun(t testing.TB, cycles int) []byte {
	t.Helper()
	rec := trace.NewRecorder(2, trace.Options{MaxBytes: 8 << 20})
	s, err := scheduler.New(scheduler.Config{Workers: 2, Stages: []string{"A", "B", "C", "D"}, Wake: scheduler.WakeAll, Tracer: rec})
	require.NoError(t, err)
	short := scheduler.Func("Short", func(*scheduler.Worker) error {
		var x uint64
		for range 20_000 {
			x++
		}
		sink.Add(x) // one shared write a packet: packets run on two workers
		return nil
	})
	for range cycles {
		for st := 1; st <= 4; st++ {
			require.NoError(t, s.AddAll([]scheduler.Packet{short, short, short, short, short, short, short, short}, scheduler.StageID(st)))
		}
		require.NoError(t, s.Run(context.Background()))
	}
	require.NoError(t, s.Close())
	var buf bytes.Buffer
	_, err = perfetto.Write(&buf, rec.Snapshot(), perfetto.Options{Origins: true})
	require.NoError(t, err)
	return buf.Bytes()
}

// TestClaimedWorkersReplayBudget: a real 2-worker recording is replayed
// for its verdicts; the same recording claiming 4,094 workers keeps the
// budget (the events its replays simulate among it) and gets no
// predictions, saying why, rather than replays at the claim, in which
// every stage opening wakes 4,094 virtual workers.
func TestClaimedWorkersReplayBudget(t *testing.T) {
	data := stagedRun(t, 20)
	r, err := withinBudget(t, data)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Workers)
	if r.PredictionNote == "" && len(r.Verdicts) > 0 {
		assert.Positive(t, r.replayed, "the recording as it is is replayed")
	}

	r, err = withinBudget(t, claimWorkers(t, data, simulate.MaxWorkers))
	require.NoError(t, err)
	assert.Equal(t, simulate.MaxWorkers, r.Workers)
	assert.Zero(t, r.replayed)
	assert.Contains(t, r.PredictionNote, "claims 4094 workers")
	for _, c := range r.Cycles {
		assert.Len(t, c.Window.Workers, 2, "cycle %d lists the workers with tracks", c.Cycle)
	}
}
