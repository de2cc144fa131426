package analyze

import (
	"cmp"
	"slices"

	"github.com/wsched/wsched/trace/internal/wsfile"
)

// The model is trace/internal/wsfile's File, the one decoding of a wsched
// file that simulate reads too, with what analyze derives from it: each
// worker's busy and parked time, the marks a window finds workers by, and
// the coverage counts.

type (
	slice        = wsfile.Slice
	instant      = wsfile.Instant
	wokenAt      = wsfile.Woken
	stealSource  = wsfile.FlowStart
	sample       = wsfile.Sample
	counterTrack = wsfile.Counter
	cycleSlice   = wsfile.Cycle
	stageSlice   = wsfile.StageSlice
)

const (
	instSteal = wsfile.InstSteal
	instWake  = wsfile.InstWake
)

// worker is what the file holds for one worker whose track it describes.
type worker struct {
	*wsfile.Worker
	// busy is the union of its packets and parked the union of its parks
	// less busy: disjoint, by time, touching pieces joined.
	busy, parked []interval
}

// mark is the start or end of a packet or park slice: where a window finds
// the workers that something happened to.
type mark struct {
	t int64
	w int32 // index into model.ws
}

type model struct {
	*wsfile.File
	ws    []*worker // the workers with a track, by id
	byID  map[int]*worker
	marks []mark // by time
	// busyAt and parkedAt count the workers in a packet, and parked
	// outside a packet, at any time.
	busyAt, parkedAt coverage
	// listAll: every window lists every worker (see analyzeWith).
	listAll bool
	// seen and stamp find the distinct workers of a window (present).
	seen  []uint32
	stamp uint32
	total int // packets, all workers
}

// worker returns worker id's data, nil if the file has no track for it.
func (m *model) worker(id int) *worker {
	return m.byID[id]
}

// ErrNotWsched reports a valid Perfetto trace that wsched did not write.
var ErrNotWsched = wsfile.ErrNotWsched

// load decodes a Perfetto file and derives analyze's model from it.
func load(data []byte) (*model, error) {
	f, err := wsfile.Load(data)
	if err != nil {
		return nil, err
	}
	return derive(f), nil
}

// derive adds to f what analyze's sweeps need.
func derive(f *wsfile.File) *model {
	m := &model{File: f, byID: make(map[int]*worker, len(f.W))}
	var busy, parked []interval
	for i, w := range f.W {
		wd := &worker{Worker: w}
		m.ws = append(m.ws, wd)
		m.byID[w.ID] = wd
		m.total += len(w.Packets)
		wd.busy = union(w.Packets)
		wd.parked = subtract(union(w.Parks), wd.busy)
		busy, parked = append(busy, wd.busy...), append(parked, wd.parked...)
		for _, ss := range [][]slice{w.Packets, w.Parks} {
			for _, s := range ss {
				m.marks = append(m.marks, mark{s.Start, int32(i)}, mark{s.End, int32(i)})
			}
		}
	}
	slices.SortFunc(m.marks, func(a, b mark) int { return cmp.Compare(a.t, b.t) })
	m.busyAt, m.parkedAt = newCoverage(busy), newCoverage(parked)
	return m
}

// union returns the time covered by ss (sorted by start) as disjoint
// intervals, touching ones joined; empty slices cover nothing.
func union(ss []slice) []interval {
	var out []interval
	for _, s := range ss {
		if s.End <= s.Start {
			continue
		}
		if n := len(out); n > 0 && s.Start <= out[n-1].e {
			out[n-1].e = max(out[n-1].e, s.End)
			continue
		}
		out = append(out, interval{s.Start, s.End})
	}
	return out
}

// subtract returns a less b (both disjoint and sorted).
func subtract(a, b []interval) []interval {
	var out []interval
	j := 0
	for _, iv := range a {
		s := iv.s
		for j < len(b) && b[j].e <= s {
			j++
		}
		for k := j; k < len(b) && b[k].s < iv.e; k++ {
			if b[k].s > s {
				out = append(out, interval{s, b[k].s})
			}
			s = max(s, b[k].e)
		}
		if iv.e > s {
			out = append(out, interval{s, iv.e})
		}
	}
	return out
}

// coverage counts, at any time, the intervals that cover it: [s, e) each.
type coverage struct {
	t []int64 // distinct change times
	n []int32 // n[i] holds from t[i] to t[i+1]
}

func newCoverage(ivs []interval) coverage {
	type change struct {
		t int64
		d int32
	}
	ch := make([]change, 0, 2*len(ivs))
	for _, iv := range ivs {
		ch = append(ch, change{iv.s, 1}, change{iv.e, -1})
	}
	slices.SortFunc(ch, func(a, b change) int { return cmp.Compare(a.t, b.t) })
	var c coverage
	var n int32
	for i, x := range ch {
		n += x.d
		if i+1 < len(ch) && ch[i+1].t == x.t {
			continue
		}
		c.t, c.n = append(c.t, x.t), append(c.n, n)
	}
	return c
}

// at returns how many intervals cover t.
func (c *coverage) at(t int64) int {
	i, found := slices.BinarySearch(c.t, t)
	if found {
		return int(c.n[i])
	}
	if i == 0 {
		return 0
	}
	return int(c.n[i-1])
}

// covers reports whether the disjoint, sorted ivs cover t (as [s, e)).
func covers(ivs []interval, t int64) bool {
	i := endingAfter(ivs, t)
	return i < len(ivs) && ivs[i].s <= t
}

// endingAfter returns the index of the first of ivs (disjoint, sorted)
// that ends after t.
func endingAfter(ivs []interval, t int64) int {
	i, _ := slices.BinarySearchFunc(ivs, t, func(iv interval, t int64) int {
		if iv.e <= t {
			return -1
		}
		return 1
	})
	return i
}
