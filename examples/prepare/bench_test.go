package prepare

import (
	"context"
	"testing"
)

// BenchmarkPrepare runs one cycle of the default model per op under each
// configuration, on GOMAXPROCS workers. Metrics: the Prepare and Closure
// stages' makespan ÷ lower bound (mean over ops), the Prepare makespan, and
// steals and wake-ups per op. The targets (issue 5) are on Prepare-ratio:
// within 1.15 for (c), (d) and (e).
//
//	go test -run XXX -bench Prepare -benchtime 50x -count 5 ./examples/prepare/
func BenchmarkPrepare(b *testing.B) {
	for _, c := range Configurations() {
		b.Run(c.Name, func(b *testing.B) {
			r, err := NewRunner(c, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Cycle(context.Background()); err != nil {
				b.Fatal(err)
			}
			var prep, clos, prepNs float64
			var steals, wakes uint64
			b.ReportAllocs()
			for b.Loop() {
				cy, err := r.Cycle(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				prep += cy.Prepare.Ratio()
				clos += cy.Closure.Ratio()
				prepNs += float64(cy.Prepare.Makespan)
				steals += cy.Stats.Steals
				wakes += cy.Stats.Wakes
			}
			n := float64(b.N)
			b.ReportMetric(prep/n, "Prepare-ratio")
			b.ReportMetric(clos/n, "Closure-ratio")
			b.ReportMetric(prepNs/n, "Prepare-ns")
			b.ReportMetric(float64(steals)/n, "steals/op")
			b.ReportMetric(float64(wakes)/n, "wakes/op")
		})
	}
}
