package analyze

import (
	"cmp"
	"container/heap"
	"slices"
	"sort"

	"github.com/wsched/wsched/trace"
)

// interval is [s, e).
type interval struct{ s, e int64 }

// queues knows, for each worker w, when work was queued where w could take
// it but did not own it: Q_w(t) = the depth of every open stage's bucket +
// the local deque lengths of the other workers. A bucket counts while its
// stage is open: from the stage's opening to the end of the cycle (the
// scheduler keeps it open that long); stage 0 (Unconstrained) is always
// open.
//
// The values come from the counter tracks, so Q is as fine-grained as the
// scheduler's counter samples: a bucket's depth when its stage opens and
// after every take, a deque's length after its owner took a bucket batch
// or stole, and the victim's after each steal. A value holds until the next sample, so two
// facts the trace implies are added as samples of 0, lest a stale value
// count as queued work for the rest of the run:
//
//  1. a worker that parks has an empty deque (it parks after its own deque
//     came up empty, and only the owner fills it): local length 0 at the
//     start of each of its "parked" slices;
//  2. a stage closes only when every open bucket is empty (the scheduler's
//     last-parked decision): bucket depth 0 for stages 0..s at the end of
//     stage s's slice, unless that end is the end of the trace (a slice
//     closed by the writer, not by the scheduler).
//
// Q_w(t) > 0 unless all the work queued at t sits in w's own deque, so at
// any time one of three things holds: no worker has work queued elsewhere,
// every worker has, or every worker but one (the owner of the only
// non-empty deque) has. The sweep records just that, as segments, however
// many workers the trace claims: memory and time are linear in the
// samples, parks and stages.
type queues struct {
	segs []qseg     // by time, disjoint
	runs []interval // the time segs cover, touching segments joined
	pre  []int64    // pre[i] is the summed length of runs[:i]
	long []int32    // long[i] counts the runs[:i] at least GapThresholdNs long
	tree maxTree    // run lengths, for the longest run in a range
}

// qseg is a stretch of time during which work was queued for every
// worker (excl = -1) or, all of it in worker excl's deque, for every
// worker but excl.
type qseg struct {
	s, e int64
	excl int
}

type qchange struct {
	t     int64
	kind  uint8 // chValue ... chClose; at equal times the higher kind first
	arg   int   // counter (chValue, chResetLocal), stage (chOpen, chClose, chResetBuckets)
	value int64
}

// Change kinds, in the order they apply at equal times: a bucket's stage
// closes, then opens, then the implied zeros, then the recorded samples
// (which win over an implied zero at the same time).
const (
	chValue = iota
	chResetLocal
	chResetBuckets
	chOpen
	chClose
)

// newQueues sweeps the counter samples and the stage and park slices in time
// order. Memory is linear in them: one change per sample, per park and two
// or three per stage slice, whatever the number of counter tracks or
// workers.
func newQueues(m *model) *queues {
	q := &queues{}
	bucketOf := map[int]int{} // stage → its bucket counter
	localOf := map[int]int{}  // worker → its deque counter
	var ch []qchange
	for i, c := range m.Counters {
		switch c.Kind {
		case trace.CounterBucketDepth:
			bucketOf[c.Index] = i
		case trace.CounterLocalLen:
			if c.Index < 0 || c.Index >= m.Workers {
				continue
			}
			localOf[c.Index] = i
		default:
			continue
		}
		for _, s := range c.Samples {
			ch = append(ch, qchange{t: s.T, kind: chValue, arg: i, value: s.Value})
		}
	}
	for _, wd := range m.ws {
		if c, ok := localOf[wd.ID]; ok {
			for _, p := range wd.Parks {
				ch = append(ch, qchange{t: p.Start, kind: chResetLocal, arg: c})
			}
		}
	}
	for _, s := range m.Stages {
		// A bucket counts from its stage's opening to the end of the cycle.
		end := m.Last
		if c := m.cycleOf(s.Start); c >= 0 {
			end = m.Cycles[c].End
		}
		ch = append(ch, qchange{t: s.Start, kind: chOpen, arg: s.Stage}, qchange{t: end, kind: chClose, arg: s.Stage})
		if s.End < m.Last {
			ch = append(ch, qchange{t: s.End, kind: chResetBuckets, arg: s.Stage})
		}
	}
	slices.SortStableFunc(ch, func(a, b qchange) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(b.kind, a.kind)
	})

	value := make([]int64, len(m.Counters))
	opens := map[int]int{} // stage → stage slices open (stage 0 is always open)
	isOpen := func(stage int) bool { return stage == 0 || opens[stage] > 0 }
	eff := func(c int) int64 {
		ct := m.Counters[c]
		if value[c] > 0 && (ct.Kind == trace.CounterLocalLen || isOpen(ct.Index)) {
			return value[c]
		}
		return 0
	}
	// The counters holding work: how many, and the sum of their indexes
	// (which names the one when there is one).
	held, sum := 0, 0
	changed := func(c int, before int64) {
		switch after := eff(c); {
		case before <= 0 && after > 0:
			held, sum = held+1, sum+c
		case before > 0 && after <= 0:
			held, sum = held-1, sum-c
		}
	}
	var nonzero stageHeap // stages whose bucket may hold packets
	set := func(c int, v int64) {
		before := eff(c)
		value[c] = v
		changed(c, before)
		if ct := m.Counters[c]; ct.Kind == trace.CounterBucketDepth && v > 0 {
			heap.Push(&nonzero, ct.Index)
		}
	}
	const none = -2
	state, since := none, int64(0)
	for k := 0; k < len(ch); {
		t := ch[k].t
		for ; k < len(ch) && ch[k].t == t; k++ {
			c := ch[k]
			switch c.kind {
			case chValue:
				set(c.arg, c.value)
			case chResetLocal:
				set(c.arg, 0)
			case chResetBuckets:
				// Every bucket of stages 0..arg is empty: pop them off the
				// heap (each entry was pushed by a sample, so this is
				// amortised over the samples).
				for len(nonzero) > 0 && nonzero[0] <= c.arg {
					st := heap.Pop(&nonzero).(int)
					if b, ok := bucketOf[st]; ok && value[b] != 0 {
						set(b, 0)
					}
				}
			case chOpen, chClose:
				b, ok := bucketOf[c.arg]
				var before int64
				if ok {
					before = eff(b)
				}
				if c.kind == chOpen {
					opens[c.arg]++
				} else if opens[c.arg] > 0 {
					opens[c.arg]--
				}
				if ok {
					changed(b, before)
				}
			}
		}
		now := none
		if held == 1 && m.Counters[sum].Kind == trace.CounterLocalLen {
			now = m.Counters[sum].Index
		} else if held > 0 {
			now = -1
		}
		if now != state {
			if state != none && t > since {
				q.segs = append(q.segs, qseg{since, t, state})
			}
			state, since = now, t
		}
	}
	if state != none && m.Last > since {
		q.segs = append(q.segs, qseg{since, m.Last, state})
	}
	q.index()
	return q
}

// index builds the runs of q.segs and what queuedIn looks them up with.
func (q *queues) index() {
	for _, sg := range q.segs {
		if n := len(q.runs); n > 0 && q.runs[n-1].e == sg.s {
			q.runs[n-1].e = sg.e
		} else {
			q.runs = append(q.runs, interval{sg.s, sg.e})
		}
	}
	q.pre = make([]int64, len(q.runs)+1)
	q.long = make([]int32, len(q.runs)+1)
	lens := make([]int64, len(q.runs))
	for i, r := range q.runs {
		lens[i] = r.e - r.s
		q.pre[i+1] = q.pre[i] + lens[i]
		q.long[i+1] = q.long[i]
		if lens[i] >= GapThresholdNs {
			q.long[i+1]++
		}
	}
	q.tree = newMaxTree(lens)
}

// cycleOf returns the index of the cycle a time belongs to: the last one
// to begin at or before t, if it has not ended before t; -1 if none.
func (m *model) cycleOf(t int64) int {
	i, _ := slices.BinarySearchFunc(m.Cycles, t, func(c cycleSlice, t int64) int {
		if c.Start <= t {
			return -1
		}
		return 1
	})
	if i > 0 && t <= m.Cycles[i-1].End {
		return i - 1
	}
	return -1
}

// span returns the runs that overlap (a, b): runs[i0:i1].
func (q *queues) span(a, b int64) (i0, i1 int) {
	i0 = endingAfter(q.runs, a)
	i1, _ = slices.BinarySearchFunc(q.runs, b, func(iv interval, t int64) int {
		if iv.s < t {
			return -1
		}
		return 1
	})
	return i0, i1
}

// queuedIn measures, for a worker idle throughout [a, b], the time in it
// during which work was queued elsewhere: with excl the stretches (sorted)
// during which all of the queued work was the worker's own. It returns
// that time, the number of its maximal stretches at least GapThresholdNs
// long, and the longest of those. The cost is logarithmic in the runs, plus
// the exclusions: runs left whole are counted from prefix sums and the
// longest found in a tree.
func (q *queues) queuedIn(a, b int64, excl []interval) (ns int64, gaps int, longest int64) {
	if b <= a {
		return 0, 0, 0
	}
	i0, i1 := q.span(a, b)
	if i0 >= i1 {
		return 0, 0, 0
	}
	ns = q.pre[i1] - q.pre[i0] - max(0, a-q.runs[i0].s) - max(0, q.runs[i1-1].e-b)
	piece := func(d int64) {
		if d >= GapThresholdNs {
			gaps++
			longest = max(longest, d)
		}
	}
	k := 0
	for k < len(excl) && excl[k].e <= a {
		k++
	}
	// Runs are taken whole, except the first, the last and those that an
	// exclusion cuts: those are cut here.
	for next := i0; next < i1; {
		j := i1 - 1
		if next == i0 {
			j = i0
		} else if k < len(excl) && excl[k].s < b {
			j = min(j, endingAfter(q.runs, excl[k].s))
		}
		if next < j {
			gaps += int(q.long[j] - q.long[next])
			if mx := q.tree.max(next, j); mx >= GapThresholdNs {
				longest = max(longest, mx)
			}
		}
		s, e := max(a, q.runs[j].s), min(b, q.runs[j].e)
		for k < len(excl) && excl[k].s < e {
			if xs, xe := max(excl[k].s, s), min(excl[k].e, e); xe > xs {
				ns -= xe - xs
				piece(xs - s)
				s = xe
			}
			if excl[k].e > e {
				break
			}
			k++
		}
		piece(e - s)
		next = j + 1
	}
	return ns, gaps, longest
}

// measure is queuedIn's time alone.
func (q *queues) measure(a, b int64, excl []interval) int64 {
	if b <= a {
		return 0
	}
	i0, i1 := q.span(a, b)
	if i0 >= i1 {
		return 0
	}
	ns := q.pre[i1] - q.pre[i0] - max(0, a-q.runs[i0].s) - max(0, q.runs[i1-1].e-b)
	for _, x := range excl {
		if x.s >= b {
			break
		}
		if d := min(x.e, b) - max(x.s, a); d > 0 {
			ns -= d
		}
	}
	return ns
}

// exclusions returns, for the window [start, end], the stretches of q.segs
// that exclude a worker, grouped by worker and by time within each.
func (q *queues) exclusions(start, end int64) []workerInterval {
	var out []workerInterval
	for i := sort.Search(len(q.segs), func(i int) bool { return q.segs[i].e > start }); i < len(q.segs) && q.segs[i].s < end; i++ {
		if sg := q.segs[i]; sg.excl >= 0 {
			out = append(out, workerInterval{sg.excl, interval{sg.s, sg.e}})
		}
	}
	slices.SortStableFunc(out, func(a, b workerInterval) int { return cmp.Compare(a.w, b.w) })
	return out
}

type workerInterval struct {
	w  int
	iv interval
}

// maxTree answers the largest of a range of values in logarithmic time
// (an iterative segment tree).
type maxTree struct {
	n int
	t []int64
}

func newMaxTree(v []int64) maxTree {
	n := len(v)
	t := make([]int64, 2*n)
	copy(t[n:], v)
	for i := n - 1; i > 0; i-- {
		t[i] = max(t[2*i], t[2*i+1])
	}
	return maxTree{n, t}
}

// max returns the largest of v[lo:hi], 0 if the range is empty (the values
// are lengths, never negative).
func (m maxTree) max(lo, hi int) int64 {
	var r int64
	for lo, hi = lo+m.n, hi+m.n; lo < hi; lo, hi = lo/2, hi/2 {
		if lo&1 == 1 {
			r = max(r, m.t[lo])
			lo++
		}
		if hi&1 == 1 {
			hi--
			r = max(r, m.t[hi])
		}
	}
	return r
}

// stageHeap is a min-heap of stage indexes (container/heap).
type stageHeap []int

func (h stageHeap) Len() int           { return len(h) }
func (h stageHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h stageHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *stageHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *stageHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
