package analyze

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/wsched/wsched/trace"
)

// interval is [s, e).
type interval struct{ s, e int64 }

// queues knows, per worker w, the intervals during which work was queued
// where w could take it but did not own it: Q_w(t) = the depth of every
// open stage's bucket + the local deque lengths of the other workers. A
// bucket counts while its stage is open: from the stage's opening to the end
// of the cycle (the scheduler keeps it open that long); stage 0
// (Unconstrained) is always open.
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
type queues struct {
	queued [][]interval // per worker
}

type qchange struct {
	t     int64
	kind  uint8 // chValue ... chClose; at equal times the higher kind first
	arg   int   // counter (chValue), stage (chOpen, chClose, chResetBuckets), worker (chResetLocal)
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
// or three per stage slice, whatever the number of counter tracks.
func newQueues(m *model) *queues {
	q := &queues{queued: make([][]interval, m.workers)}
	bucketOf := map[int]int{}         // stage → its bucket counter
	localOf := make([]int, m.workers) // worker → its deque counter, -1 = none
	for w := range localOf {
		localOf[w] = -1
	}
	var ch []qchange
	for i, c := range m.counters {
		switch c.kind {
		case trace.CounterBucketDepth:
			bucketOf[c.index] = i
		case trace.CounterLocalLen:
			if c.index < 0 || c.index >= m.workers {
				continue
			}
			localOf[c.index] = i
		default:
			continue
		}
		for _, s := range c.samples {
			ch = append(ch, qchange{t: s.t, kind: chValue, arg: i, value: s.value})
		}
	}
	for w, parks := range m.parks {
		if localOf[w] >= 0 {
			for _, p := range parks {
				ch = append(ch, qchange{t: p.start, kind: chResetLocal, arg: w})
			}
		}
	}
	for _, s := range m.stages {
		// A bucket counts from its stage's opening to the end of the cycle.
		end := m.last
		i, _ := slices.BinarySearchFunc(m.cycles, s.start, func(c cycleSlice, t int64) int { return cmp.Compare(c.start, t+1) })
		if i > 0 && s.start <= m.cycles[i-1].end {
			end = m.cycles[i-1].end
		}
		ch = append(ch, qchange{t: s.start, kind: chOpen, arg: s.stage}, qchange{t: end, kind: chClose, arg: s.stage})
		if s.end < m.last {
			ch = append(ch, qchange{t: s.end, kind: chResetBuckets, arg: s.stage})
		}
	}
	slices.SortStableFunc(ch, func(a, b qchange) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(b.kind, a.kind)
	})

	value := make([]int64, len(m.counters))
	opens := map[int]int{} // stage → stage slices open (stage 0 is always open)
	isOpen := func(stage int) bool { return stage == 0 || opens[stage] > 0 }
	eff := func(c int) int64 {
		ct := m.counters[c]
		if value[c] > 0 && (ct.kind == trace.CounterLocalLen || isOpen(ct.index)) {
			return value[c]
		}
		return 0
	}
	var total int64                 // Σ effective values
	own := make([]int64, m.workers) // each worker's own deque length
	var nonzero stageHeap           // stages whose bucket may hold packets
	set := func(c int, v int64) {
		before := eff(c)
		value[c] = v
		after := eff(c)
		total += after - before
		switch ct := m.counters[c]; ct.kind {
		case trace.CounterLocalLen:
			own[ct.index] = after
		case trace.CounterBucketDepth:
			if v > 0 {
				heap.Push(&nonzero, ct.index)
			}
		}
	}
	since := make([]int64, m.workers)
	isQueued := make([]bool, m.workers)
	for k := 0; k < len(ch); {
		t := ch[k].t
		for ; k < len(ch) && ch[k].t == t; k++ {
			c := ch[k]
			switch c.kind {
			case chValue:
				set(c.arg, c.value)
			case chResetLocal:
				set(localOf[c.arg], 0)
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
					total += eff(b) - before
				}
			}
		}
		for w := range q.queued {
			now := total-own[w] > 0
			switch {
			case now && !isQueued[w]:
				isQueued[w], since[w] = true, t
			case !now && isQueued[w]:
				isQueued[w] = false
				if t > since[w] {
					q.queued[w] = append(q.queued[w], interval{since[w], t})
				}
			}
		}
	}
	for w := range q.queued {
		if isQueued[w] && m.last > since[w] {
			q.queued[w] = append(q.queued[w], interval{since[w], m.last})
		}
	}
	return q
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

// idle fills the idle-while-queued figures of w for [start, end].
func (q *queues) idle(m *model, w *Window, start, end int64) {
	for wk := range m.workers {
		// Idle intervals: the window minus wk's packet slices.
		var idle []interval
		at := start
		ps := m.packets[wk]
		for _, p := range ps[m.firstEndingAfter(wk, start):] {
			if p.start >= end {
				break
			}
			if p.start > at {
				idle = append(idle, interval{at, p.start})
			}
			at = max(at, p.end)
		}
		if end > at {
			idle = append(idle, interval{at, end})
		}
		// Intersect with the queued intervals (both sorted, disjoint).
		qs := q.queued[wk]
		j, _ := slices.BinarySearchFunc(qs, start, func(iv interval, t int64) int { return cmp.Compare(iv.e, t) })
		var gapStart, gapEnd int64 = -1, -1
		flush := func() {
			if gapStart >= 0 {
				if d := gapEnd - gapStart; d >= GapThresholdNs {
					w.Gaps++
					if d > w.LongestGapNs {
						w.LongestGapNs, w.LongestGapWork = d, wk
					}
				}
			}
			gapStart = -1
		}
		parks := m.parks[wk]
		k := 0 // parks[k:] may overlap what comes next (pieces are in order)
		for _, iv := range idle {
			for ; j < len(qs) && qs[j].s < iv.e; j++ {
				s, e := max(iv.s, qs[j].s), min(iv.e, qs[j].e)
				if e > s {
					w.IdleQueuedNs[wk] += e - s
					var parked int64
					parked, k = overlap(parks, k, s, e)
					w.IdleQueuedParkedNs[wk] += parked
					if gapStart >= 0 && s == gapEnd {
						gapEnd = e
					} else {
						flush()
						gapStart, gapEnd = s, e
					}
				}
				if qs[j].e > iv.e {
					break // this queued interval continues into the next idle one
				}
			}
		}
		flush()
	}
}

// overlap returns how much of [s, e) the slices ps[k:] cover (they are
// sorted by start and disjoint, as a worker's parks are), and the index
// from which a later interval, starting at or after e, must look.
func overlap(ps []slice, k int, s, e int64) (int64, int) {
	for k < len(ps) && ps[k].end <= s {
		k++
	}
	var n int64
	for i := k; i < len(ps) && ps[i].start < e; i++ {
		if d := min(e, ps[i].end) - max(s, ps[i].start); d > 0 {
			n += d
		}
	}
	return n, k
}
