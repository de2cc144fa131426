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
// recursion at one worker, its efficiency T_seq ÷ (W·T_par) at W workers,
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
	case strings.HasPrefix(label, "wsched/"):
		return 1
	case label == "waitgroup" || label == "errgroup":
		return 2
	}
	return 3
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
	op := Summarize(s.Values(name, UnitNsOp))
	task := s.Values(name, UnitNsTask)
	if len(task) == 0 || op.Center <= 0 {
		return perNode{}
	}
	nodes := math.Round(op.Center / Summarize(task).Center)
	if n, ok := utsNodes(name); ok {
		nodes = n // ns/task has three decimals: the ratio is off by a few nodes
	}
	if nodes <= 0 {
		return perNode{}
	}
	p := perNode{ok: true, nodes: nodes, nsOp: op.Center, nsOpLo: op.Lo, nsOpHi: op.Hi,
		ns: op.Center / nodes, lo: op.Lo / nodes, hi: op.Hi / nodes}
	if v := s.Values(name, UnitAllocsOp); len(v) > 0 {
		p.allocs = Summarize(v).Center / nodes
	}
	if v := s.Values(name, UnitBytesOp); len(v) > 0 {
		p.bytes = Summarize(v).Center / nodes
	}
	return p
}

// seqAt returns the baseline's figures for workers: Sequential at one
// worker if measured, else at workers.
func (t *utsTable) seqAt(s *Set, workers int) perNode {
	if p := nodeFigures(s, t.name(Sequential, 1)); p.ok {
		return p
	}
	return nodeFigures(s, t.name(Sequential, workers))
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
	return seq.ns / (w * par.ns), seq.lo / (w * par.hi), seq.hi / (w * par.lo)
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
	fmt.Fprintln(w, "overhead is the target's median ns per node at 1 worker minus T_seq's, its interval likewise;")
	fmt.Fprintln(w, "self speed-up is the target's own median at 1 worker over its median at W; cores used is the")
	fmt.Fprintln(w, "process's CPU time over the wall time, median of the samples: near 1 for every target at W = 2,")
	fmt.Fprintln(w, "the sequential one's included, when another process held a core (then no efficiency is measured).")
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
		hdr = append(hdr, "over seq w1 (ns/node)")
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
				row = append(row, fmt.Sprintf("%.1f [%.1f, %.1f]", p.ns, p.lo, p.hi))
			}
			seq1 := nodeFigures(s, t.name(Sequential, 1))
			if p := nodeFigures(s, t.name(l, 1)); p.ok && seq1.ok && l != Sequential {
				row = append(row, fmt.Sprintf("%+.1f [%+.1f, %+.1f]", p.ns-seq1.ns, p.lo-seq1.hi, p.hi-seq1.lo))
			} else {
				row = append(row, "-")
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
				row = append(row, fmt.Sprintf("%.3f [%.3f, %.3f]", e, lo, hi))
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
	}
	return true
}

// CheckUTSTargets evaluates the tree-search targets for every wsched
// target of s: at 2 workers, efficiency ≥ UTSTargetEfficiency and proven
// faster than the goroutines with a depth cutoff (waitgroup); at 1
// worker, at most UTSTargetOverheadNs per node above the sequential
// recursion (medians).
func CheckUTSTargets(s *Set) []TargetCheck {
	var out []TargetCheck
	for _, t := range utsTables(s) {
		for _, l := range t.labels {
			if !strings.HasPrefix(l, "wsched/") {
				continue
			}
			if p, seq := nodeFigures(s, t.name(l, 2)), t.seqAt(s, 2); p.ok && seq.ok {
				e, lo, hi := utsEfficiency(seq, p, 2)
				out = append(out, TargetCheck{
					What: fmt.Sprintf("%s workers=2: %s efficiency T_seq/(2·T_par) ≥ %.2f", t.bench, l, UTSTargetEfficiency),
					Met:  e >= UTSTargetEfficiency,
					Note: fmt.Sprintf("%.3f [%.3f, %.3f]", e, lo, hi),
				})
			}
			if wg := t.name("waitgroup", 2); wg != "" && t.name(l, 2) != "" {
				v := Judge(s.Values(t.name(l, 2), UnitNsOp), s.Values(wg, UnitNsOp))
				out = append(out, TargetCheck{
					What: fmt.Sprintf("%s workers=2: %s faster than goroutines with a depth cutoff (waitgroup)", t.bench, l),
					Met:  v.BaseFaster(),
					Note: v.Text(),
				})
			}
			if p, seq := nodeFigures(s, t.name(l, 1)), nodeFigures(s, t.name(Sequential, 1)); p.ok && seq.ok {
				d := p.ns - seq.ns
				out = append(out, TargetCheck{
					What: fmt.Sprintf("%s workers=1: %s ≤ %d ns per node over %s", t.bench, l, UTSTargetOverheadNs, Sequential),
					Met:  d <= UTSTargetOverheadNs,
					Note: fmt.Sprintf("%+.1f ns [%+.1f, %+.1f] (%.1f against %.1f)", d, p.lo-seq.hi, p.hi-seq.lo, p.ns, seq.ns),
				})
			}
		}
	}
	return out
}
