package analyze

import (
	"testing"

	"github.com/wsched/wsched/trace/internal/synth"
)

// BenchmarkAnalyze: analysis cost per packet slice of the file.
//
//	go test -run XXX -bench Analyze -benchtime 20x ./trace/analyze/
func BenchmarkAnalyze(b *testing.B) {
	res := synth.Generate(synth.Config{Workers: 4, Cycles: 10, Packets: 500, Seed: 11, MaxBytes: 32 << 20})
	data := encode(b, res.Snapshot)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Bytes(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*res.Packets), "ns/packet")
}
