package chromejson

import (
	"io"
	"testing"

	"github.com/wsched/wsched/trace/internal/synth"
)

// BenchmarkWrite: JSON export cost per recorded event and size per packet
// slice, on the same synthetic run as perfetto's BenchmarkWrite.
//
//	go test -run XXX -bench Write -benchtime 20x ./trace/chromejson/
func BenchmarkWrite(b *testing.B) {
	res := synth.Generate(synth.Config{Workers: 4, Cycles: 10, Packets: 500, Seed: 11, MaxBytes: 32 << 20})
	n := 0
	for _, buf := range res.Snapshot.Buffers {
		n += len(buf.Events)
	}
	var st Stats
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if st, err = Write(io.Discard, res.Snapshot, Options{Pid: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(st.Bytes)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	b.ReportMetric(st.BytesPerSlice(), "bytes/slice")
}
