package harness

import (
	"fmt"
	"io"
	"sort"
)

// The harness tests itself: run the same configuration twice (A/A) and the
// verdict must be "no difference proven"; plant a slowdown in one of the
// two and the verdict must find it. Both with the same machinery, the same
// interleaving and the same statistics as a real comparison.

// A TrialResult is the outcome of one A/B trial.
type TrialResult struct {
	Verdict Verdict // A as baseline, B as other
}

// Trial measures c twice, as variants A and B, interleaved, o.Count
// samples each; B does plant (a fraction, 0.05 = 5%) more work per packet.
func Trial(c Config, plant float64, o RunOptions) (TrialResult, error) {
	a, b := c, c
	a.Variant, b.Variant = "A", "B"
	b.extra = plant
	rs, err := RunMatrix([]Config{a, b}, o)
	if err != nil {
		return TrialResult{}, err
	}
	s := NewSet(rs)
	return TrialResult{Verdict: Judge(s.Values(a.Name(), UnitNsOp), s.Values(b.Name(), UnitNsOp))}, nil
}

// A RateResult summarises repeated trials.
type RateResult struct {
	Trials      int
	Significant int       // trials whose verdict was significant
	Slower      int       // of those, trials where B was slower
	Ratios      []float64 // B median / A median per trial
	PValues     []float64
}

// Rate is Significant / Trials.
func (r RateResult) Rate() float64 {
	if r.Trials == 0 {
		return 0
	}
	return float64(r.Significant) / float64(r.Trials)
}

// RepeatTrials runs n trials and counts the significant verdicts: with
// plant = 0 they are false alarms (the A/A false-alarm rate, which the
// Mann–Whitney test at α = 0.05 should hold at or below 5% when samples are
// exchangeable); with plant > 0 they are detections (power).
func RepeatTrials(c Config, plant float64, n int, o RunOptions) (RateResult, error) {
	var r RateResult
	for range n {
		t, err := Trial(c, plant, o)
		if err != nil {
			return r, err
		}
		r.Trials++
		if t.Verdict.Significant() {
			r.Significant++
			if t.Verdict.Ratio > 1 {
				r.Slower++
			}
		}
		r.Ratios = append(r.Ratios, t.Verdict.Ratio)
		r.PValues = append(r.PValues, t.Verdict.Cmp.P)
	}
	return r, nil
}

// WriteRate describes a RateResult.
func WriteRate(w io.Writer, what string, r RateResult) {
	rs := append([]float64(nil), r.Ratios...)
	sort.Float64s(rs)
	med := 0.0
	if len(rs) > 0 {
		med = rs[len(rs)/2]
	}
	fmt.Fprintf(w, "%s: %d of %d trials significant at 95%% (%.1f%%; %d with B slower); median B/A ratio %.4f\n",
		what, r.Significant, r.Trials, 100*r.Rate(), r.Slower, med)
}
