package perfetto

import (
	"bytes"
	"io"
	"testing"

	"github.com/wsched/wsched/trace/internal/synth"
)

// benchTrace is a synthetic run: 4 workers, 10 cycles, about 15,000
// packets and 60,000 events.
func benchTrace(b *testing.B) *synth.Result {
	b.Helper()
	return synth.Generate(synth.Config{Workers: 4, Cycles: 10, Packets: 500, Seed: 11, MaxBytes: 32 << 20})
}

func events(r *synth.Result) int {
	n := 0
	for _, buf := range r.Snapshot.Buffers {
		n += len(buf.Events)
	}
	return n
}

// BenchmarkWrite: export cost per recorded event, and the file size per
// packet slice.
//
//	go test -run XXX -bench 'Write|Check' -benchtime 20x ./trace/perfetto/
func BenchmarkWrite(b *testing.B) {
	res := benchTrace(b)
	n := events(res)
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
	b.ReportMetric(float64(st.Bytes)/float64(st.Slices), "file_bytes/slice")
}

// BenchmarkCheck: validation cost per packet.
func BenchmarkCheck(b *testing.B) {
	res := benchTrace(b)
	var buf bytes.Buffer
	st, err := Write(&buf, res.Snapshot, Options{Pid: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(buf.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*st.Packets), "ns/packet")
}
