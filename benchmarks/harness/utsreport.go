package harness

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// The tree searches' report (uts.go): per tree, every target's time per
// node at each worker count, its overhead per node over the sequential
// baselines at one worker, its efficiency T_seq ÷ (W·T_par) at W workers,
// and its allocations per node; then the targets of the tree-search item.

// T_seq is the median of Sequential at one worker (GOMAXPROCS 1) when the
// set has it, else at the group's own worker count.

// UTS targets: efficiency at 2 workers, overhead per node at 1 worker.
const (
	UTSTargetEfficiency = 0.95
	UTSTargetOverheadNs = 25
)

// utsTable is one tree's groups by worker count.
type utsTable struct {
	bench   string
	workers []int
	groups  map[int]*Group
	labels  []string // every target, in first-seen order
}

func utsTables(s *Set) []*utsTable {
	var out []*utsTable
	idx := map[string]*utsTable{}
	for _, g := range s.Groups() {
		if !strings.HasPrefix(g.Bench, "UTS") {
			continue
		}
		t, ok := idx[g.Bench]
		if !ok {
			t = &utsTable{bench: g.Bench, groups: map[int]*Group{}}
			idx[g.Bench] = t
			out = append(out, t)
		}
		t.workers = append(t.workers, g.Workers)
		t.groups[g.Workers] = g
		for _, l := range g.Labels {
			if !contains(t.labels, l) {
				t.labels = append(t.labels, l)
			}
		}
	}
	for _, t := range out {
		sort.Ints(t.workers)
		sort.SliceStable(t.labels, func(i, j int) bool { return utsRank(t.labels[i]) < utsRank(t.labels[j]) })
	}
	return out
}

// utsRank orders the report: the baseline, wsched, the cutoff peers, the
// pools.
func utsRank(label string) int {
	switch {
	case label == Sequential:
		return 0
	case label == SequentialRec:
		return 1
	case strings.HasPrefix(label, "wsched/"):
		return 2
	case label == "waitgroup" || label == "errgroup":
		return 3
	}
	return 4
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// name returns the benchmark name of label at workers, or "".
func (t *utsTable) name(label string, workers int) string {
	g := t.groups[workers]
	if g == nil {
		return ""
	}
	for i, l := range g.Labels {
		if l == label {
			return g.Names[i]
		}
	}
	return ""
}

// perNode is the median and 95% interval of name's ns per node, and its
// allocations and bytes per node (medians).
type perNode struct {
	ok                   bool
	n                    int       // samples
	ops                  []float64 // their ns/op
	ns, lo, hi           float64
	allocs, bytes        float64
	nodes                float64
	nsOp, nsOpLo, nsOpHi float64
}

// utsNodes is the node count of the tree a benchmark name searches, when
// its base names one of the known trees (UTSGeo, UTSBinSmallG2, …).
func utsNodes(name string) (float64, bool) {
	base, _ := nameParts(name)
	base = strings.TrimRightFunc(base, func(r rune) bool { return r >= '0' && r <= '9' })
	base = strings.TrimSuffix(base, "G")
	n, ok := map[string]float64{"UTSGeo": 4130071, "UTSBin": 4112897, "UTSGeoSmall": 63914, "UTSBinSmall": 94577}[base]
	return n, ok
}

func nodeFigures(s *Set, name string) perNode {
	if name == "" {
		return perNode{}
	}
	return nodeFiguresOf(s, name, s.Values(name, UnitNsOp))
}

// nodeFiguresOf is nodeFigures of the samples ops of name's ns/op.
func nodeFiguresOf(s *Set, name string, ops []float64) perNode {
	op := Summarize(ops)
	task := s.Values(name, UnitNsTask)
	if len(ops) == 0 || len(task) == 0 || op.Center <= 0 {
		return perNode{}
	}
	nodes := math.Round(op.Center / Summarize(task).Center)
	if n, ok := utsNodes(name); ok {
		nodes = n // ns/task has three decimals: the ratio is off by a few nodes
	}
	if nodes <= 0 {
		return perNode{}
	}
	p := perNode{ok: true, n: len(ops), ops: ops, nodes: nodes, nsOp: op.Center, nsOpLo: op.Lo, nsOpHi: op.Hi,
		ns: op.Center / nodes, lo: op.Lo / nodes, hi: op.Hi / nodes}
	if v := s.Values(name, UnitAllocsOp); len(v) > 0 {
		p.allocs = Summarize(v).Center / nodes
	}
	if v := s.Values(name, UnitBytesOp); len(v) > 0 {
		p.bytes = Summarize(v).Center / nodes
	}
	return p
}

// coreSamples returns the ns/op samples of name, measured at workers
// workers, in which the process ran on at least workers − 0.8 cores (CPU
// time over wall time): at 2 workers, the samples without another
// process holding one of the two cores. On the shared 2-vCPU machine
// such a process made every target, the goroutines with a cutoff too,
// run on one core in whole rounds of a matrix; a sample of wsched's
// whose workers were idle still counts its polling and searching as CPU
// time, and one of the goroutines' whose goroutines were idle does not,
// so the rule keeps the goroutines' unbalanced searches (1.4 cores on
// UTS T3) and drops only the rounds without a second core. nil when name
// has no CPU times.
func coreSamples(s *Set, name string, workers int) []float64 {
	op, cpu := s.Values(name, UnitNsOp), s.Values(name, UnitCPUOp)
	if name == "" || len(op) == 0 || len(op) != len(cpu) {
		return nil
	}
	var out []float64
	for i := range op {
		if cpu[i]/op[i] >= float64(workers)-0.8 {
			out = append(out, op[i])
		}
	}
	return out
}

// seqAt returns the baseline's figures for workers: Sequential at one
// worker if measured, else at workers.
func (t *utsTable) seqAt(s *Set, workers int) perNode {
	if p := nodeFigures(s, t.name(Sequential, 1)); p.ok {
		return p
	}
	return nodeFigures(s, t.name(Sequential, workers))
}

// interval formats [lo, hi] with format f, or "[n/a]" when too few
// samples gave an end (an order-statistic interval needs six).
func interval(lo, hi float64, f string) string {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		return "[n/a]"
	}
	return fmt.Sprintf("["+f+", "+f+"]", lo, hi)
}

// coresUsed is the median over name's samples of CPU time over wall time
// per operation: how many cores the process had.
func coresUsed(s *Set, name string) string {
	op, cpu := s.Values(name, UnitNsOp), s.Values(name, UnitCPUOp)
	if name == "" || len(op) == 0 || len(op) != len(cpu) {
		return "-"
	}
	r := make([]float64, len(op))
	for i := range op {
		r[i] = cpu[i] / op[i]
	}
	return fmt.Sprintf("%.2f", Summarize(r).Center)
}

// utsEfficiency is T_seq ÷ (W·T_par) with the interval from the two
// medians' 95% intervals (T_seq's low end over T_par's high end, and the
// reverse): conservative, not a confidence interval of the ratio.
func utsEfficiency(seq, par perNode, workers int) (eff, lo, hi float64) {
	w := float64(workers)
	eff = seq.ns / (w * par.ns)
	for _, x := range []float64{seq.lo, seq.hi, par.lo, par.hi} {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return eff, math.NaN(), math.NaN() // too few samples for an interval
		}
	}
	return eff, seq.lo / (w * par.hi), seq.hi / (w * par.lo)
}

// WriteUTSTable writes the tree searches' table of s, if it has any, and
// reports whether it did.
func WriteUTSTable(w io.Writer, s *Set) bool {
	tables := utsTables(s)
	if len(tables) == 0 {
		return false
	}
	fmt.Fprintln(w, "## tree searches: ns per node, overhead and efficiency")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "T_seq is %s at 1 worker; efficiency T_seq ÷ (W·T_par), its interval from the two 95%% CIs;\n", Sequential)
	fmt.Fprintf(w, "overhead is the target's median ns per node at 1 worker minus %s's (T_seq) and %s's (the recursion), intervals likewise;\n", Sequential, SequentialRec)
	fmt.Fprintln(w, "self speed-up is the target's own median at 1 worker over its median at W; cores used is the")
	fmt.Fprintln(w, "process's CPU time over the wall time, median of the samples: near 1 for every target at W = 2,")
	fmt.Fprintln(w, "the sequential one's included, when another process held a core. The second table of each tree")
	fmt.Fprintln(w, "keeps the samples that had the cores (at least W − 0.8), for every target alike.")
	fmt.Fprintln(w)
	for _, t := range tables {
		nodes := 0.0
		for _, l := range t.labels {
			for _, wk := range t.workers {
				if p := nodeFigures(s, t.name(l, wk)); p.ok {
					nodes = p.nodes
				}
			}
		}
		fmt.Fprintf(w, "### %s (%.0f nodes)\n\n", t.bench, nodes)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		hdr := []string{"target"}
		for _, wk := range t.workers {
			hdr = append(hdr, fmt.Sprintf("ns/node w%d [95%% CI]", wk))
		}
		var bases []string // the baselines measured at one worker
		for _, b := range []string{Sequential, SequentialRec} {
			if nodeFigures(s, t.name(b, 1)).ok {
				bases = append(bases, b)
				hdr = append(hdr, fmt.Sprintf("over %s w1 (ns/node)", b))
			}
		}
		for _, wk := range t.workers {
			if wk > 1 {
				hdr = append(hdr, fmt.Sprintf("efficiency w%d", wk), fmt.Sprintf("self speed-up w1→w%d", wk))
			}
		}
		for _, wk := range t.workers {
			if wk > 1 {
				hdr = append(hdr, fmt.Sprintf("cores used w%d", wk))
			}
		}
		for _, wk := range t.workers {
			hdr = append(hdr, fmt.Sprintf("allocs/node w%d", wk))
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
		for _, l := range t.labels {
			row := []string{l}
			for _, wk := range t.workers {
				p := nodeFigures(s, t.name(l, wk))
				if !p.ok {
					row = append(row, "-")
					continue
				}
				row = append(row, fmt.Sprintf("%.1f %s", p.ns, interval(p.lo, p.hi, "%.1f")))
			}
			for _, b := range bases {
				seq1 := nodeFigures(s, t.name(b, 1))
				if p := nodeFigures(s, t.name(l, 1)); p.ok && l != b {
					row = append(row, fmt.Sprintf("%+.1f %s", p.ns-seq1.ns, interval(p.lo-seq1.hi, p.hi-seq1.lo, "%+.1f")))
				} else {
					row = append(row, "-")
				}
			}
			for _, wk := range t.workers {
				if wk == 1 {
					continue
				}
				p, seq := nodeFigures(s, t.name(l, wk)), t.seqAt(s, wk)
				if !p.ok || !seq.ok {
					row = append(row, "-", "-")
					continue
				}
				e, lo, hi := utsEfficiency(seq, p, wk)
				row = append(row, fmt.Sprintf("%.3f %s", e, interval(lo, hi, "%.3f")))
				if p1 := nodeFigures(s, t.name(l, 1)); p1.ok {
					row = append(row, fmt.Sprintf("%.2f", p1.ns/p.ns))
				} else {
					row = append(row, "-")
				}
			}
			for _, wk := range t.workers {
				if wk > 1 {
					row = append(row, coresUsed(s, t.name(l, wk)))
				}
			}
			for _, wk := range t.workers {
				p := nodeFigures(s, t.name(l, wk))
				if !p.ok {
					row = append(row, "-")
					continue
				}
				row = append(row, fmt.Sprintf("%.4g", p.allocs))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
		fmt.Fprintln(w)
		writeUTSCoreTable(w, s, t)
	}
	return true
}

// writeUTSCoreTable writes, for each worker count above 1, the targets'
// figures over their samples on (nearly) that many cores (coreSamples).
func writeUTSCoreTable(w io.Writer, s *Set, t *utsTable) {
	for _, wk := range t.workers {
		if wk == 1 {
			continue
		}
		fmt.Fprintf(w, "%s, %d workers, the samples on at least %.1f cores:\n\n", t.bench, wk, float64(wk)-0.8)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "target\tns/node w%d [95%% CI]\tsamples\tefficiency w%d\tself speed-up w1→w%d\t\n", wk, wk, wk)
		seq := t.seqAt(s, wk)
		for _, l := range t.labels {
			if isBaseline(l) {
				continue
			}
			name := t.name(l, wk)
			p := nodeFiguresOf(s, name, coreSamples(s, name, wk))
			if !p.ok || !seq.ok {
				fmt.Fprintf(tw, "%s\t-\t0 of %d\t-\t-\t\n", l, len(s.Values(name, UnitNsOp)))
				continue
			}
			e, lo, hi := utsEfficiency(seq, p, wk)
			sp := "-"
			if p1 := nodeFigures(s, t.name(l, 1)); p1.ok {
				sp = fmt.Sprintf("%.2f", p1.ns/p.ns)
			}
			fmt.Fprintf(tw, "%s\t%.1f %s\t%d of %d\t%.3f %s\t%s\t\n", l, p.ns, interval(p.lo, p.hi, "%.1f"),
				p.n, len(s.Values(name, UnitNsOp)), e, interval(lo, hi, "%.3f"), sp)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
}

// CheckUTSTargets evaluates the tree-search targets for every wsched
// target of s: at 2 workers, efficiency ≥ UTSTargetEfficiency and proven
// faster than the goroutines with a depth cutoff (waitgroup), both over
// the samples on two cores (coreSamples) when each side has three, else
// over all; at 1 worker, at most UTSTargetOverheadNs per node above the
// sequential recursion (SequentialRec) and, the stricter bound, above the
// fastest sequential search (Sequential) (medians).
func CheckUTSTargets(s *Set) []TargetCheck {
	var out []TargetCheck
	for _, t := range utsTables(s) {
		for _, l := range t.labels {
			if !strings.HasPrefix(l, "wsched/") {
				continue
			}
			if p, seq := nodeFigures(s, t.name(l, 2)), t.seqAt(s, 2); p.ok && seq.ok {
				e, lo, hi := utsEfficiency(seq, p, 2)
				note := fmt.Sprintf("all %d samples %.3f %s", p.n, e, interval(lo, hi, "%.3f"))
				met := e >= UTSTargetEfficiency
				if c := nodeFiguresOf(s, t.name(l, 2), coreSamples(s, t.name(l, 2), 2)); c.ok && c.n >= 3 {
					ce, clo, chi := utsEfficiency(seq, c, 2)
					met = ce >= UTSTargetEfficiency
					note = fmt.Sprintf("%.3f %s over the %d samples on two cores; %s", ce, interval(clo, chi, "%.3f"), c.n, note)
				}
				out = append(out, TargetCheck{
					What: fmt.Sprintf("%s workers=2: %s efficiency T_seq/(2·T_par) ≥ %.2f", t.bench, l, UTSTargetEfficiency),
					Met:  met,
					Note: note,
				})
			}
			if wg := t.name("waitgroup", 2); wg != "" && t.name(l, 2) != "" {
				a, b := coreSamples(s, t.name(l, 2), 2), coreSamples(s, wg, 2)
				which := "the samples on two cores"
				if len(a) < 3 || len(b) < 3 {
					a, b, which = s.Values(t.name(l, 2), UnitNsOp), s.Values(wg, UnitNsOp), "all samples"
				}
				v := Judge(a, b)
				out = append(out, TargetCheck{
					What: fmt.Sprintf("%s workers=2: %s faster than goroutines with a depth cutoff (waitgroup)", t.bench, l),
					Met:  v.BaseFaster(),
					Note: v.Text() + ", " + which,
				})
			}
			// The bound is stated over the sequential recursion; the
			// same bound over the fastest sequential search is the
			// stricter one.
			for _, base := range []string{SequentialRec, Sequential} {
				p, seq := nodeFigures(s, t.name(l, 1)), nodeFigures(s, t.name(base, 1))
				if !p.ok || !seq.ok {
					continue
				}
				d := p.ns - seq.ns
				out = append(out, TargetCheck{
					What: fmt.Sprintf("%s workers=1: %s ≤ %d ns per node over %s", t.bench, l, UTSTargetOverheadNs, base),
					Met:  d <= UTSTargetOverheadNs,
					Note: fmt.Sprintf("%+.1f ns %s (%.1f against %.1f)", d, interval(p.lo-seq.hi, p.hi-seq.lo, "%+.1f"), p.ns, seq.ns),
				})
			}
		}
	}
	return out
}
