package simulate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

var workersClaim = regexp.MustCompile(`workers=[0-9]+`)

// claimWorkers rewrites the process track's "workers=N" of a wsched trace
// to workers and leaves every other byte's meaning as it was: a recording
// of a few workers that claims many.
func claimWorkers(t testing.TB, data []byte, workers int) []byte {
	t.Helper()
	var tr perfettopb.Trace
	require.NoError(t, proto.Unmarshal(data, &tr))
	done := false
	for _, p := range tr.Packet {
		td := p.GetTrackDescriptor()
		if td == nil || td.Process == nil {
			continue
		}
		d := workersClaim.ReplaceAllString(td.GetDescription(), "workers="+strconv.Itoa(workers))
		td.Description = &d
		done = true
	}
	require.True(t, done, "no process track")
	out, err := proto.Marshal(&tr)
	require.NoError(t, err)
	return out
}

// tick is a packet that runs for about n iterations of a counter.
type tick struct{ n int }

func (p tick) Run(*scheduler.Worker) error {
	for range p.n {
		sink++
	}
	return nil
}

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
