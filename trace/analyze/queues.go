package analyze

import (
	"cmp"
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
// scheduler's counter samples, which are sparse: a bucket's depth is
// sampled when its stage opens and after a batch take, a deque's length by
// its owner after a steal. A value holds until the next sample, so two
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
	track int   // index into m.counters
	kind  uint8 // chValue, chOpen, chClose
	value int64
}

const (
	chValue = iota
	chOpen
	chClose
)

func newQueues(m *model) *queues {
	q := &queues{queued: make([][]interval, m.workers)}
	var ch []qchange
	bucketTracks := map[int][]int{} // stage → counter track indexes
	localTracks := make([][]int, m.workers)
	for i, c := range m.counters {
		switch c.kind {
		case trace.CounterBucketDepth:
			bucketTracks[c.index] = append(bucketTracks[c.index], i)
		case trace.CounterLocalLen:
			if c.index >= 0 && c.index < m.workers {
				localTracks[c.index] = append(localTracks[c.index], i)
			}
		}
	}
	// The implied zeros first: at equal times a recorded sample, added
	// after them, wins (the sort below is stable).
	for w, parks := range m.parks {
		for _, tr := range localTracks[w] {
			for _, p := range parks {
				ch = append(ch, qchange{t: p.start, track: tr, kind: chValue})
			}
		}
	}
	for _, s := range m.stages {
		if s.end >= m.last {
			continue
		}
		for st, trs := range bucketTracks {
			if st <= s.stage {
				for _, tr := range trs {
					ch = append(ch, qchange{t: s.end, track: tr, kind: chValue})
				}
			}
		}
	}
	for i, c := range m.counters {
		switch c.kind {
		case trace.CounterBucketDepth:
		case trace.CounterLocalLen:
			if c.index < 0 || c.index >= m.workers {
				continue
			}
		default:
			continue
		}
		for _, s := range c.samples {
			ch = append(ch, qchange{t: s.t, track: i, kind: chValue, value: s.value})
		}
	}
	for _, s := range m.stages {
		end := m.last
		for _, c := range m.cycles {
			if s.start >= c.start && s.start <= c.end {
				end = c.end
				break
			}
		}
		for _, tr := range bucketTracks[s.stage] {
			ch = append(ch, qchange{t: s.start, track: tr, kind: chOpen}, qchange{t: end, track: tr, kind: chClose})
		}
	}
	// At equal times apply closes, then opens, then values.
	slices.SortStableFunc(ch, func(a, b qchange) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(b.kind, a.kind)
	})

	type state struct {
		value int64
		open  bool
	}
	st := make([]state, len(m.counters))
	for i, c := range m.counters {
		st[i].open = c.kind == trace.CounterLocalLen || c.index == 0
	}
	eff := func(i int) int64 {
		if st[i].open && st[i].value > 0 {
			return st[i].value
		}
		return 0
	}
	var total int64                 // Σ effective values
	own := make([]int64, m.workers) // each worker's own local deque length
	since := make([]int64, m.workers)
	isQueued := make([]bool, m.workers)
	for k := 0; k < len(ch); {
		t := ch[k].t
		for ; k < len(ch) && ch[k].t == t; k++ {
			c := ch[k]
			before := eff(c.track)
			switch c.kind {
			case chValue:
				st[c.track].value = c.value
			case chOpen:
				st[c.track].open = true
			case chClose:
				st[c.track].open = false
			}
			after := eff(c.track)
			total += after - before
			if ct := m.counters[c.track]; ct.kind == trace.CounterLocalLen {
				own[ct.index] = after
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

// idle fills the idle-while-queued figures of w for [start, end].
func (q *queues) idle(m *model, w *Window, start, end int64) {
	for wk := range m.workers {
		// Idle intervals: the window minus wk's packet slices.
		var idle []interval
		at := start
		for _, p := range m.packets[wk] {
			if p.end <= start {
				continue
			}
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
		for _, iv := range idle {
			for ; j < len(qs) && qs[j].s < iv.e; j++ {
				s, e := max(iv.s, qs[j].s), min(iv.e, qs[j].e)
				if e > s {
					w.IdleQueuedNs[wk] += e - s
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
