package simulate

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// A run counts as alone when another packet ran beside it for at most
// aloneShare of its time, and as shared when for sharedShare or more (a
// packet that waits for a lock held by another overlaps it for its wait:
// half its run when the two take as long).
const (
	aloneShare  = 0.05
	sharedShare = 0.25
)

// Contention is what a trace shows of one packet type's run times against
// how many packets ran beside it: the sign that its time is spent off the
// CPU or waiting for memory, which a replay for more workers cannot scale.
// It compares medians of runs that need not do the same work: in a stage
// whose packets vary in size, the runs alone are often its last, smaller
// ones (gcmark's ProcessEdges at 2 workers: 1.04 µs alone over 34 runs,
// 16.4 µs beside the other worker over 31,507: ×15.7; yet all its
// Closure packets together took 563 ms, against 385 ms in a 1-worker
// recording of the same job, ×1.46: `wsched demo -workers 2 -policy
// n/half`, then `wsched simulate -against` the 1-worker trace). So it
// flags a type for the reader; it is no factor to scale run times by:
// scaled by ×15.7, that 1-worker Closure would be predicted 86% short.
type Contention struct {
	Name string
	// Alone and Shared count the runs with another packet beside them
	// for at most 5% of their time, and for 25% or more; AloneNs and
	// SharedNs are the median run times of each.
	Alone, Shared     int
	AloneNs, SharedNs int64
}

// Ratio is SharedNs ÷ AloneNs.
func (c Contention) Ratio() float64 { return float64(c.SharedNs) / float64(c.AloneNs) }

// MinContentionRuns is the fewest runs of a packet type, alone and shared
// each, that Contention compares.
const MinContentionRuns = 10

// ContentionGrowth is the ratio of the median run time shared to alone
// above which a type's run times grow with concurrency.
const ContentionGrowth = 1.2

// Contention returns, for each packet type with at least
// MinContentionRuns runs alone and as many shared, its run times alone and
// beside other packets, in name order; a trace of one worker has no
// shared runs, so it returns none. Its cost is O(p log p) for p packets.
func (wl *Workload) Contention() []Contention {
	alone := make([][]int64, len(wl.Names))
	shared := make([][]int64, len(wl.Names))
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for ci := range wl.Cycles {
		ps := wl.Cycles[ci].Packets
		edges = edges[:0]
		for _, p := range ps {
			edges = append(edges, edge{p.Begin, 1}, edge{p.Begin + p.Cost, -1})
		}
		// Ends before begins at one instant: back-to-back runs do not
		// overlap.
		slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), a.delta-b.delta) })
		// busy[i]: how long, from the first edge to at[i], two packets or
		// more ran; running[i]: how many run from at[i] to at[i+1].
		at := make([]int64, len(edges))
		running := make([]int, len(edges))
		busy := make([]int64, len(edges))
		n := 0
		for i, e := range edges {
			if i > 0 {
				busy[i] = busy[i-1]
				if running[i-1] >= 2 {
					busy[i] += e.at - at[i-1]
				}
			}
			n += e.delta
			at[i], running[i] = e.at, n
		}
		busyAt := func(t int64) int64 {
			i := sort.Search(len(at), func(i int) bool { return at[i] > t }) - 1
			if i < 0 {
				return 0
			}
			b := busy[i]
			if running[i] >= 2 {
				b += t - at[i]
			}
			return b
		}
		for _, p := range ps {
			if p.Cost <= 0 || p.Name < 0 || int(p.Name) >= len(wl.Names) {
				continue
			}
			// The share of its run during which another packet ran too.
			share := float64(busyAt(p.Begin+p.Cost)-busyAt(p.Begin)) / float64(p.Cost)
			switch {
			case share <= aloneShare:
				alone[p.Name] = append(alone[p.Name], p.Cost)
			case share >= sharedShare:
				shared[p.Name] = append(shared[p.Name], p.Cost)
			}
		}
	}
	var out []Contention
	for name := range wl.Names {
		a, s := alone[name], shared[name]
		if len(a) < MinContentionRuns || len(s) < MinContentionRuns {
			continue
		}
		out = append(out, Contention{Name: wl.Names[name], Alone: len(a), Shared: len(s), AloneNs: medianNs(a), SharedNs: medianNs(s)})
	}
	slices.SortFunc(out, func(a, b Contention) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func medianNs(xs []int64) int64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
