package analyze

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/examples/prepare"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/rawtrace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
)

// BenchmarkAnalyze: analysis cost per byte of file (ns/byte, B/byte
// allocated) on the traces `wsched demo` writes (recorded here the same
// way: 2 workers, scale 0.05, 3 cycles), on simulated ones with a few long
// cycles and with many short ones, and on the shapes that claim or nest far
// more than they hold (rawtrace); NestedCycles is rejected, and its figure
// is the cost of finding out.
//
//	go test -run XXX -bench Analyze -benchtime 10x ./trace/analyze/
func BenchmarkAnalyze(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				_, err := Bytes(in.data)
				require.Equal(b, in.rejected, err != nil, "%v", err)
			}
			runtime.ReadMemStats(&after)
			n := float64(b.N) * float64(len(in.data))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/byte")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/byte")
		})
	}
}

type benchInput struct {
	name     string
	data     []byte
	rejected bool
}

func benchInputs(b *testing.B) []benchInput {
	ins := []benchInput{
		{name: "demo/prepare-b", data: demoPrepare(b, "b")},
		{name: "demo/gcmark-n-half", data: demoMark(b, "n", "half")},
	}
	for _, s := range []struct {
		name string
		cfg  synth.Config
	}{
		{"synth/10Cycles", synth.Config{Workers: 4, Cycles: 10, Packets: 500, Seed: 11, MaxBytes: 32 << 20}},
		{"synth/500Cycles", synth.Config{Workers: 4, Cycles: 500, Packets: 10, Seed: 11, MaxBytes: 32 << 20}},
	} {
		ins = append(ins, benchInput{name: s.name, data: encode(b, synth.Generate(s.cfg).Snapshot)})
	}
	return append(ins,
		benchInput{name: "claims/65536Workers100EmptyCycles", data: rawtrace.ManyWorkersEmptyCycles(1<<16, 100)},
		benchInput{name: "claims/65536Workers300EmptyCycles", data: rawtrace.ManyWorkersEmptyCycles(1<<16, 300)},
		benchInput{name: "claims/65536Workers3000Samples", data: rawtrace.ManyWorkersSamples(1<<16, 3000)},
		benchInput{name: "claims/65536Workers10000Samples", data: rawtrace.ManyWorkersSamples(1<<16, 10000)},
		benchInput{name: "claims/1000CyclesNestedAround1000Stages", data: rawtrace.NestedCycles(1000, 1000), rejected: true},
	)
}

// demoPrepare records what `wsched demo -workers 2 -scale 0.05 -cycles 3`
// records for prepare's configuration name.
func demoPrepare(b *testing.B, name string) []byte {
	cfg, ok := prepare.Lookup(name)
	require.True(b, ok, "no prepare configuration %q", name)
	rec := trace.NewRecorder(2, trace.Options{Overwrite: true})
	_, err := prepare.Run(context.Background(), cfg, prepare.Options{Workers: 2, Model: prepare.DefaultModel(0.05, 1), Tracer: rec}, 3)
	require.NoError(b, err)
	return writeDemo(b, rec)
}

// demoMark records what `wsched demo -workers 2 -scale 0.05 -cycles 3`
// records for gcmark's policy wake/steal.
func demoMark(b *testing.B, wake, steal string) []byte {
	var w scheduler.WakePolicy
	var s scheduler.StealPolicy
	require.NoError(b, w.UnmarshalText([]byte("wake-"+wake)))
	require.NoError(b, s.UnmarshalText([]byte("steal-"+steal)))
	rec := trace.NewRecorder(2, trace.Options{Overwrite: true})
	h := gcmark.NewHeap(gcmark.DefaultHeapConfig(0.05, 1))
	m, err := gcmark.NewMarker(h, gcmark.Options{Scheduler: scheduler.Config{Workers: 2, Wake: w, Steal: s, Tracer: rec}})
	require.NoError(b, err)
	defer m.Close()
	for range 3 {
		_, err := m.Mark(context.Background())
		require.NoError(b, err)
	}
	return writeDemo(b, rec)
}

func writeDemo(b *testing.B, rec *trace.Recorder) []byte {
	var buf bytes.Buffer
	_, err := perfetto.Write(&buf, rec.Snapshot(), perfetto.Options{ProcessName: "demo"})
	require.NoError(b, err)
	return buf.Bytes()
}
