package harness

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// A Group is the set of benchmark names that share a workload and a worker
// count: the targets that are compared with each other.
type Group struct {
	Bench   string
	Workers int
	Names   []string // in first-seen order
	Labels  []string // target label per name
}

// Key is "Fanout workers=2".
func (g *Group) Key() string { return fmt.Sprintf("%s workers=%d", g.Bench, g.Workers) }

// Baseline is the index of the group's baseline: the target labelled
// prefer if present, else the first wsched target, else the first target.
func (g *Group) Baseline(prefer string) int {
	for i, l := range g.Labels {
		if prefer != "" && l == prefer {
			return i
		}
	}
	for i, l := range g.Labels {
		if strings.HasPrefix(l, "wsched/") {
			return i
		}
	}
	return 0
}

// Groups partitions the set's names by workload and worker count, in
// first-seen order.
func (s *Set) Groups() []*Group {
	var out []*Group
	idx := map[string]*Group{}
	for _, n := range s.Names {
		base, kv := nameParts(n)
		w, _ := strconv.Atoi(kv["workers"])
		key := base + "\x00" + kv["workers"]
		g, ok := idx[key]
		if !ok {
			g = &Group{Bench: base, Workers: w}
			idx[key] = g
			out = append(out, g)
		}
		g.Names = append(g.Names, n)
		g.Labels = append(g.Labels, targetLabel(kv))
	}
	return out
}

// FormatNs renders nanoseconds with a unit: "312.4µs".
func FormatNs(ns float64) string {
	switch a := math.Abs(ns); {
	case a >= 1e9:
		return strconv.FormatFloat(ns/1e9, 'f', 3, 64) + "s"
	case a >= 1e6:
		return strconv.FormatFloat(ns/1e6, 'f', 2, 64) + "ms"
	case a >= 1e3:
		return strconv.FormatFloat(ns/1e3, 'f', 1, 64) + "µs"
	default:
		return strconv.FormatFloat(ns, 'f', 1, 64) + "ns"
	}
}

func formatNum(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e9 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	if math.Abs(x) >= 100 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// WriteSummary writes the human summary of a set: per group, every target's
// median time with its 95% confidence interval, time per task, CPU time,
// allocations and GC cycles per operation, then the baseline's verdict
// against every other target.
func WriteSummary(w io.Writer, s *Set) { WriteSummaryBase(w, s, "") }

// WriteSummaryBase is WriteSummary with the target labelled base as the
// baseline of every group that has it.
func WriteSummaryBase(w io.Writer, s *Set, base string) {
	for _, g := range s.Groups() {
		fmt.Fprintf(w, "## %s\n\n", g.Key())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "target\tmedian ns/op\t95% CI\tns/task\tcpu-ns/op\tallocs/op\tB/op\tGCs/op\thost probe\tn\t")
		var warn []string
		for i, n := range g.Names {
			sum := Summarize(s.Values(n, UnitNsOp))
			warn = append(warn, warnings(sum.Warnings)...)
			ci := "n/a"
			if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) {
				ci = fmt.Sprintf("[%s, %s] %s", FormatNs(sum.Lo), FormatNs(sum.Hi), sum.PctRangeString())
			}
			med := func(unit string) string {
				v := s.Values(n, unit)
				if len(v) == 0 {
					return "-"
				}
				return formatNum(Summarize(v).Center)
			}
			cpu := "-"
			if v := s.Values(n, UnitCPUOp); len(v) > 0 {
				cpu = FormatNs(Summarize(v).Center)
			}
			probe := "-"
			if v := s.Values(n, UnitProbeNs); len(v) > 0 {
				probe = FormatNs(Summarize(v).Center)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", g.Labels[i], FormatNs(sum.Center), ci,
				med(UnitNsTask), cpu, med(UnitAllocsOp), med(UnitBytesOp), med(UnitGCsOp), probe, len(s.Values(n, UnitNsOp)))
		}
		tw.Flush()
		b := g.Baseline(base)
		if len(g.Names) > 1 {
			fmt.Fprintf(w, "\n%s against each (ns/op; Mann–Whitney U, α=%.2f):\n", g.Labels[b], 1-Confidence)
			for i, n := range g.Names {
				if i == b {
					continue
				}
				v := Judge(s.Values(g.Names[b], UnitNsOp), s.Values(n, UnitNsOp))
				warn = append(warn, warnings(v.Cmp.Warnings)...)
				flag := ""
				if d, shifted := probeShift(s.Values(g.Names[b], UnitProbeNs), s.Values(n, UnitProbeNs)); shifted {
					flag = fmt.Sprintf("  [host probe %+.1f%% on this side: the machine's speed differed]", 100*d)
				}
				fmt.Fprintf(w, "  vs %-22s %s%s\n", g.Labels[i]+":", v.Text(), flag)
			}
		}
		for _, wn := range dedupe(warn) {
			fmt.Fprintf(w, "  note: %s\n", wn)
		}
		fmt.Fprintln(w)
	}
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// A TargetCheck is one line of the targets report.
type TargetCheck struct {
	What string
	Met  bool
	Note string
}

// CheckTargets evaluates wsched's targets against its peers on a set: wsched (its first
// policy in each group) proven faster than every peer in every group (the
// tree searches' sequential baselines are not peers), and
// on the fan-out at least 25× faster than go+WaitGroup and 3× faster than
// the channel pool (ratios of medians).
func CheckTargets(s *Set) []TargetCheck {
	var out []TargetCheck
	for _, g := range s.Groups() {
		b := g.Baseline("")
		if !strings.HasPrefix(g.Labels[b], "wsched/") {
			continue
		}
		base := s.Values(g.Names[b], UnitNsOp)
		peers := 0
		for _, l := range g.Labels {
			if !strings.HasPrefix(l, "wsched/") && !isBaseline(l) {
				peers++
			}
		}
		if peers == 0 {
			continue // no peer expresses this workload (or none was run)
		}
		var slower, unproven []string
		for i, n := range g.Names {
			if i == b || strings.HasPrefix(g.Labels[i], "wsched/") || isBaseline(g.Labels[i]) {
				continue // the sequential baseline is no competitor
			}
			v := Judge(base, s.Values(n, UnitNsOp))
			switch {
			case v.BaseFaster():
			case v.Significant():
				slower = append(slower, fmt.Sprintf("%s (%.2f×)", g.Labels[i], v.Ratio))
			default:
				unproven = append(unproven, fmt.Sprintf("%s (%.2f×, %s)", g.Labels[i], v.Ratio, v.Cmp.String()))
			}
			if g.Bench == "Fanout" {
				want := map[string]float64{"waitgroup": 25, "chanpool": 3}[g.Labels[i]]
				if want > 0 {
					out = append(out, TargetCheck{
						What: fmt.Sprintf("%s: %s ≥ %.0f× faster than %s", g.Key(), g.Labels[b], want, g.Labels[i]),
						Met:  v.Ratio >= want && v.BaseFaster(),
						Note: fmt.Sprintf("%.1f× (%s)", v.Ratio, v.Cmp.String()),
					})
				}
			}
		}
		note := "proven faster than every peer"
		if len(slower)+len(unproven) > 0 {
			var parts []string
			if len(slower) > 0 {
				parts = append(parts, "slower than "+strings.Join(slower, ", "))
			}
			if len(unproven) > 0 {
				parts = append(parts, "not proven faster than "+strings.Join(unproven, ", "))
			}
			note = strings.Join(parts, "; ")
		}
		out = append(out, TargetCheck{
			What: fmt.Sprintf("%s: %s faster than every peer", g.Key(), g.Labels[b]),
			Met:  len(slower)+len(unproven) == 0,
			Note: note,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out
}

// WriteTargets writes the target checks.
func WriteTargets(w io.Writer, checks []TargetCheck) {
	for _, c := range checks {
		mark := "MET    "
		if !c.Met {
			mark = "NOT MET"
		}
		fmt.Fprintf(w, "  [%s] %s — %s\n", mark, c.What, c.Note)
	}
}

// WriteMarkdown writes a markdown table of the set's groups: per group,
// the baseline's median time per operation (and per task), then every other
// target's median as a multiple of the baseline's ("12.3×" = 12.3 times
// slower than the baseline), marked † where the difference is not proven
// at 95% confidence; "–" where the target does not express the workload.
// Also the baseline's allocations per operation.
func WriteMarkdown(w io.Writer, s *Set, targets []string) {
	fmt.Fprint(w, "| workload | workers | wsched ns/op (per task) | allocs/op |")
	for _, t := range targets {
		fmt.Fprintf(w, " %s |", t)
	}
	fmt.Fprint(w, "\n|---|---:|---:|---:|")
	for range targets {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, g := range s.Groups() {
		b := g.Baseline("")
		base := s.Values(g.Names[b], UnitNsOp)
		bs := Summarize(base)
		per := ""
		if v := s.Values(g.Names[b], UnitNsTask); len(v) > 0 {
			per = fmt.Sprintf(" (%s)", FormatNs(Summarize(v).Center))
		}
		allocs := "-"
		if v := s.Values(g.Names[b], UnitAllocsOp); len(v) > 0 {
			allocs = formatNum(Summarize(v).Center)
		}
		fmt.Fprintf(w, "| %s | %d | %s%s | %s |", g.Bench, g.Workers, FormatNs(bs.Center), per, allocs)
		for _, t := range targets {
			cell := "–"
			for i, l := range g.Labels {
				if l != t || i == b {
					continue
				}
				v := Judge(base, s.Values(g.Names[i], UnitNsOp))
				cell = fmt.Sprintf("%.2f×", v.Ratio)
				if !v.Significant() {
					cell += " †"
				}
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintln(w)
	}
}
