package prepare

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPrepare runs one cycle of the default model per op under each
// configuration, on GOMAXPROCS workers. Metrics: the Prepare and Closure
// stages' makespan ÷ lower bound and the Prepare makespan (medians over the
// ops: one cycle whose worker the OS deschedules would swing a mean), and
// steals and wake-ups per op. The targets are on Prepare-ratio: within
// 1.15 for (c), (d) and (e), 1.10 for a+learn, b+learn and e+learn (the
// warm-up cycle is the one they learn from).
//
//	go test -run XXX -bench Prepare -benchtime 50x -count 5 ./examples/prepare/
func BenchmarkPrepare(b *testing.B) {
	for _, c := range Configurations() {
		b.Run(c.Name, func(b *testing.B) {
			r, err := NewRunner(c, Options{})
			require.NoError(b, err)
			defer r.Close()
			_, err = r.Cycle(context.Background()) // warm-up
			require.NoError(b, err)
			var prep, clos, prepNs []float64
			var steals, wakes uint64
			b.ReportAllocs()
			for b.Loop() {
				cy, err := r.Cycle(context.Background())
				require.NoError(b, err)
				prep = append(prep, cy.Prepare.Ratio())
				clos = append(clos, cy.Closure.Ratio())
				prepNs = append(prepNs, float64(cy.Prepare.Makespan))
				steals += cy.Stats.Steals
				wakes += cy.Stats.Wakes
			}
			n := float64(b.N)
			b.ReportMetric(median(prep), "Prepare-ratio")
			b.ReportMetric(median(clos), "Closure-ratio")
			b.ReportMetric(median(prepNs), "Prepare-ns")
			b.ReportMetric(float64(steals)/n, "steals/op")
			b.ReportMetric(float64(wakes)/n, "wakes/op")
		})
	}
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
