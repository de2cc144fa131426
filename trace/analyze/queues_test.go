package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQueuedInMatchesStepByStep: queuedIn (prefix sums, a max tree, the
// exclusions cut out) agrees with walking time step by step, on random
// segments, windows and workers.
func TestQueuedInMatchesStepByStep(t *testing.T) {
	const unit = GapThresholdNs / 4 // a gap counts from 4 steps
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		// Segments over steps [0, 200): queued for all, for all but
		// worker 0..2, with holes and touching ends.
		var segs []qseg
		for at := int64(rng.IntN(5)); at < 200; {
			n := int64(1 + rng.IntN(12))
			segs = append(segs, qseg{at * unit, min(at+n, 200) * unit, rng.IntN(4) - 1})
			at += n + int64(rng.IntN(3))*int64(rng.IntN(2))
		}
		q := &queues{segs: segs}
		q.index()
		for range 20 {
			a := int64(rng.IntN(200))
			b := a + int64(rng.IntN(int(200-a)+1))
			w := rng.IntN(3)
			var excl []interval
			for _, sg := range segs {
				if sg.excl == w {
					excl = append(excl, interval{sg.s, sg.e})
				}
			}
			queued := func(step int64) bool {
				for _, sg := range segs {
					if sg.s <= step*unit && step*unit < sg.e && sg.excl != w {
						return true
					}
				}
				return false
			}
			var ns, longest, run int64
			gaps := 0
			flush := func() {
				if run*unit >= GapThresholdNs {
					gaps++
					longest = max(longest, run*unit)
				}
				run = 0
			}
			for step := a; step < b; step++ {
				if queued(step) {
					ns += unit
					run++
				} else {
					flush()
				}
			}
			flush()
			gotNs, gotGaps, gotLongest := q.queuedIn(a*unit, b*unit, excl)
			require.Equal(t, []int64{ns, int64(gaps), longest}, []int64{gotNs, int64(gotGaps), gotLongest},
				"round %d: worker %d over steps [%d, %d), segments %v", round, w, a, b, segs)
			require.Equal(t, ns, q.measure(a*unit, b*unit, excl))
		}
	}
}
