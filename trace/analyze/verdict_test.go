package analyze

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/simulate"
)

// luindex builds the luindex shape on 2 workers, as a scheduler under
// wake-all, steal-one, take-fixed batches of 32 and FIFO deques records
// it: one AddAll of 64 packets of 100 µs and a heavy one of 5 ms, last.
// Worker 0 takes the first 32, worker 1 (woken 50 µs later) the next 32;
// the heavy packet waits for worker 0's batch to end. The packets are long
// beside any wake-up cost the replay charges (simulate.MeasuredCosts), so
// that the verdict's prediction does not hang on it.
func luindex(t *testing.T) []byte { return luindexClaiming(t, 2) }

// luindexClaiming is luindex in a file whose process track claims
// workers workers (the writer describes a track for each; only workers 0
// and 1 record events).
func luindexClaiming(t *testing.T, workers int) []byte {
	b := tracebuf.NewBuilder(workers)
	b.SetConfig("wake=wake-all steal=steal-one steal_limit=1 take=take-fixed bucket_batch=32 local=local-fifo spins=64 park_spin_ns=200000 max_queued=0")
	short, heavy := b.Intern("Short"), b.Intern("Heavy")
	b.Park(0, 0)
	b.Park(1, 0)
	b.CycleBegin(1000, 1)
	b.StageOpen(1000, 1, b.Intern("Prepare"))
	b.Add(1000, tracebuf.AddNormal, false, 1, 65, 0, 1000)
	b.WakeSent(-1, 1000, 1)
	b.WakeSent(-1, 1000, 0)
	b.Unpark(0, 2000)
	b.WakeReceived(0, 2000, false)
	b.Unpark(1, 52_000)
	b.WakeReceived(1, 52_000, true)
	at := [2]int64{2000, 52_000}
	run := func(w int, name tracebuf.NameID, born, d int64) {
		b.PacketBegin(w, at[w], name, 1, 0, -1, born, false)
		at[w] += d
		b.PacketEnd(w, at[w])
		at[w] += 100
	}
	for i := range 32 {
		run(0, short, 1000+int64(i)*3, 100_000)
	}
	for i := 32; i < 64; i++ {
		run(1, short, 1000+int64(i)*3, 100_000)
	}
	run(0, heavy, 1000+64*3, 5_000_000)
	end := max(at[0], at[1])
	b.Park(1, at[1])
	b.Park(0, at[0])
	b.StageClose(end, 1)
	b.CycleEnd(end, 1)
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, b.Snapshot(), perfetto.Options{Pid: 1, Origins: true})
	require.NoError(t, err)
	return buf.Bytes()
}

// TestVerdictHeavyLate: the report leads with a verdict that names the
// heavy packet begun late, the fix (Priority for it), and the replay's
// ratio with it, below the threshold.
func TestVerdictHeavyLate(t *testing.T) {
	r, err := Bytes(luindex(t))
	require.NoError(t, err)
	require.Len(t, r.Verdicts, 1, "%+v", r.Verdicts)
	v := r.Verdicts[0]
	assert.Equal(t, "Prepare", v.Name)
	assert.True(t, v.FromWork)
	assert.Greater(t, v.Ratio, 1.3)
	assert.Equal(t, CauseHeavyLate, v.Cause)
	assert.Contains(t, v.Because, "Heavy")
	assert.Equal(t, "priority=Heavy", v.Fix)
	assert.Greater(t, v.Simulated, 1.3, "the replay as recorded")
	assert.Less(t, v.Predicted, 1.2, "the replay with the fix")
	assert.Less(t, v.Predicted, v.Simulated-0.2)
	require.Len(t, r.Summary, 1)
	assert.Equal(t, 1, r.Summary[0].Over)
	assert.Equal(t, "priority=Heavy", r.Summary[0].Fix)
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	lines := strings.Split(text.String(), "\n")
	require.Greater(t, len(lines), 4)
	assert.True(t, strings.HasPrefix(lines[2], "verdict: cycle 1 Prepare"), "the verdict leads: %q", lines[2])
	assert.Contains(t, lines[2], "priority=Heavy")
	assert.True(t, strings.HasPrefix(lines[3], "summary over the cycles: Prepare ratio"), "then the summary: %q", lines[3])
	assert.Contains(t, text.String(), "from when its work could start: makespan")
}

// TestVerdictWithoutOrigins: a trace that does not say how its packets
// were queued gets verdicts from its windows, and no prediction, saying
// why.
func TestVerdictWithoutOrigins(t *testing.T) {
	data := luindex(t)
	snapData := stripOrigins(t, data)
	r, err := Bytes(snapData)
	require.NoError(t, err)
	require.NotEmpty(t, r.Verdicts)
	assert.False(t, r.Verdicts[0].FromWork)
	assert.Zero(t, r.Verdicts[0].Predicted)
	assert.Contains(t, r.PredictionNote, "does not say how its packets were queued")
}

// TestVerdictClaimedWorkers: luindex in a file that claims 4,094 workers
// gets its verdicts from the windows and no prediction (no replay at the
// claim, whose cost would follow it: every stage opening under wake-all
// wakes every virtual worker), saying why.
func TestVerdictClaimedWorkers(t *testing.T) {
	r, err := Bytes(luindexClaiming(t, simulate.MaxWorkers))
	require.NoError(t, err)
	require.NotEmpty(t, r.Verdicts)
	assert.Zero(t, r.Verdicts[0].Predicted)
	assert.Empty(t, r.Verdicts[0].Fix)
	assert.Contains(t, r.PredictionNote, "claims 4094 workers")
	assert.Contains(t, r.PredictionNote, "holds events on 2 worker track(s)")
}

// stripOrigins rewrites a trace without perfetto.Options.Origins.
func stripOrigins(t *testing.T, data []byte) []byte {
	t.Helper()
	b := tracebuf.NewBuilder(2)
	b.SetConfig("wake=wake-all")
	n := b.Intern("P")
	b.CycleBegin(0, 1)
	b.StageOpen(0, 1, b.Intern("Prepare"))
	b.PacketBegin(0, 100, n, 1, 0, -3, 0, false)
	b.PacketEnd(0, 1000)
	b.PacketBegin(1, 2000, n, 1, 0, -3, 0, false)
	b.PacketEnd(1, 3000)
	b.StageClose(3000, 1)
	b.CycleEnd(3000, 1)
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, b.Snapshot(), perfetto.Options{Pid: 1})
	require.NoError(t, err)
	_ = trace.FromUnknown
	return buf.Bytes()
}
