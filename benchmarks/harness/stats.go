package harness

import (
	"fmt"
	"io"
	"math"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Confidence is the confidence level of every interval and verdict.
const Confidence = 0.95

// assumption: benchmark times are not normal (long right tails from
// preemption and GC), so medians, order-statistic intervals and the
// Mann–Whitney U test, as benchstat does by default.
var assumption = benchmath.AssumeNothing

// thresholds: α = 1 − Confidence = 0.05.
var thresholds = func() *benchmath.Thresholds {
	t := benchmath.DefaultThresholds
	t.CompareAlpha = 1 - Confidence
	return &t
}()

// A Set holds samples by benchmark name and unit, names in first-seen
// order.
type Set struct {
	Names  []string
	values map[string]map[string][]float64
	units  map[string][]string
	iters  map[string][]int
}

// NewSet builds a Set from results.
func NewSet(rs []*benchfmt.Result) *Set {
	s := &Set{values: map[string]map[string][]float64{}, units: map[string][]string{}, iters: map[string][]int{}}
	for _, r := range rs {
		s.add(r)
	}
	return s
}

func (s *Set) add(r *benchfmt.Result) {
	name := r.Name.String()
	m, ok := s.values[name]
	if !ok {
		m = map[string][]float64{}
		s.values[name] = m
		s.Names = append(s.Names, name)
	}
	s.iters[name] = append(s.iters[name], r.Iters)
	for _, v := range r.Values {
		// The reader tidies units (ns/op becomes sec/op); keep the units
		// as the harness wrote them.
		unit, val := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, val = v.OrigUnit, v.OrigValue
		}
		if _, seen := m[unit]; !seen {
			s.units[name] = append(s.units[name], unit)
		}
		m[unit] = append(m[unit], val)
	}
}

// ReadSet reads a file in the Go benchmark format.
func ReadSet(r io.Reader, fileName string) (*Set, error) {
	s := &Set{values: map[string]map[string][]float64{}, units: map[string][]string{}, iters: map[string][]int{}}
	rd := benchfmt.NewReader(r, fileName)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			s.add(rec)
		case *benchfmt.SyntaxError:
			return nil, rec
		}
	}
	return s, rd.Err()
}

// Iters returns the iteration counts of name's results, in order.
func (s *Set) Iters(name string) []int { return s.iters[name] }

// Values returns the sample of name in unit (nil if none).
func (s *Set) Values(name, unit string) []float64 { return s.values[name][unit] }

// Units lists the units measured for name, in file order.
func (s *Set) Units(name string) []string { return s.units[name] }

// Has reports whether name has samples.
func (s *Set) Has(name string) bool { _, ok := s.values[name]; return ok }

// Summarize returns the median of a sample and its confidence interval.
func Summarize(values []float64) benchmath.Summary {
	return assumption.Summary(benchmath.NewSample(values, thresholds), Confidence)
}

// CompareSamples tests whether two samples differ (Mann–Whitney U).
func CompareSamples(old, new []float64) benchmath.Comparison {
	return assumption.Compare(benchmath.NewSample(old, thresholds), benchmath.NewSample(new, thresholds))
}

// Significant reports whether c rejects "no difference" at Confidence.
func Significant(c benchmath.Comparison) bool { return c.P < c.Alpha }

// A Verdict is the outcome of comparing a baseline sample with another on
// a lower-is-better unit.
type Verdict struct {
	Base, Other benchmath.Summary
	Cmp         benchmath.Comparison
	// Ratio is Other's median over Base's: > 1 means the baseline is
	// faster (lower).
	Ratio float64
}

// Judge compares base with other.
func Judge(base, other []float64) Verdict {
	v := Verdict{Base: Summarize(base), Other: Summarize(other), Cmp: CompareSamples(base, other)}
	if v.Base.Center > 0 {
		v.Ratio = v.Other.Center / v.Base.Center
	} else {
		v.Ratio = math.NaN()
	}
	return v
}

// Significant reports whether the difference is proven at Confidence.
func (v Verdict) Significant() bool { return Significant(v.Cmp) }

// BaseFaster reports whether the baseline is proven faster.
func (v Verdict) BaseFaster() bool { return v.Significant() && v.Ratio > 1 }

// Text describes the verdict from the baseline's side: "36.2× faster
// (−97.2%, p=0.002 n=6+6)" or "no difference proven at 95% confidence
// (p=0.394 n=6+6)".
func (v Verdict) Text() string {
	stat := v.Cmp.String()
	if !v.Significant() {
		return fmt.Sprintf("no difference proven at %.0f%% confidence (%s)", Confidence*100, stat)
	}
	delta := (v.Base.Center/v.Other.Center - 1) * 100
	switch {
	case v.Ratio >= 1.5:
		return fmt.Sprintf("%.1f× faster (%+.1f%%, %s)", v.Ratio, delta, stat)
	case v.Ratio > 1:
		return fmt.Sprintf("%.1f%% faster (%s)", -delta, stat)
	case v.Ratio > 0 && 1/v.Ratio >= 1.5:
		return fmt.Sprintf("%.1f× slower (%+.1f%%, %s)", 1/v.Ratio, delta, stat)
	default:
		return fmt.Sprintf("%.1f%% slower (%s)", delta, stat)
	}
}

// DeltaText describes old → new for the compare mode: "+4.9% (p=0.002
// n=10+10)" or "~ no difference proven at 95% confidence (...)".
func DeltaText(old, new []float64) string {
	c := CompareSamples(old, new)
	so, sn := Summarize(old), Summarize(new)
	if !Significant(c) {
		return fmt.Sprintf("~ no difference proven at %.0f%% confidence (%s)", Confidence*100, c.String())
	}
	return fmt.Sprintf("%s (%s)", c.FormatDelta(so.Center, sn.Center), c.String())
}

// warnings gathers the distinct warnings of summaries and comparisons.
func warnings(errs ...[]error) []string {
	seen := map[string]bool{}
	var out []string
	for _, es := range errs {
		for _, e := range es {
			if s := e.Error(); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// nameParts splits "Fanout/sys=wsched/policy=default/workers=2" into the
// base "Fanout" and its key=value parts.
func nameParts(name string) (base string, kv map[string]string) {
	parts := strings.Split(name, "/")
	kv = map[string]string{}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if ok {
			kv[k] = v
		} else {
			kv[p] = ""
		}
	}
	return parts[0], kv
}

// targetLabel is the report label of a benchmark name's target:
// "wsched/default", "chanpool", with "#A" for a variant.
func targetLabel(kv map[string]string) string {
	l := kv["sys"]
	if p, ok := kv["policy"]; ok {
		l += "/" + p
	}
	if v, ok := kv["variant"]; ok {
		l += "#" + v
	}
	return l
}
