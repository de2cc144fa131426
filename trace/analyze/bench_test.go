package analyze

import (
	"testing"

	"github.com/wsched/wsched/trace/internal/synth"
)

// BenchmarkAnalyze: analysis cost per packet slice of the file, for a few
// long cycles and for many short ones (each cycle and stage is a window;
// a window finds its packets by binary search, so the cost per packet
// stays flat as windows multiply).
//
//	go test -run XXX -bench Analyze -benchtime 20x ./trace/analyze/
func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  synth.Config
	}{
		{"10Cycles", synth.Config{Workers: 4, Cycles: 10, Packets: 500, Seed: 11, MaxBytes: 32 << 20}},
		{"500Cycles", synth.Config{Workers: 4, Cycles: 500, Packets: 10, Seed: 11, MaxBytes: 32 << 20}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			res := synth.Generate(bc.cfg)
			data := encode(b, res.Snapshot)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Bytes(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*res.Packets), "ns/packet")
		})
	}
}
