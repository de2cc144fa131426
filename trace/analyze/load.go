package analyze

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/internal/wsfile"
	"github.com/wsched/wsched/trace/perfetto"
)

// The model read back from a file: slices and samples per track, with
// interned strings resolved. Everything in it is linear in the events the
// file holds: a worker takes room only once its track is described,
// however many workers the process track claims.

type slice struct {
	Start, End int64
	Name       int32  // index into model.strs
	Stage      int32  // packet slices: index into model.strs of the category; -1 otherwise
	Flow       uint64 // the steal arrow that ends here; 0 = not stolen
}

type instant struct {
	T      int64
	Kind   uint8 // instSteal, instWake
	Arg    int64 // victim / target
	Moved  int64
	Worker int // emitting track: worker index, -1 control
}

const (
	instSteal = iota + 1
	instWake
)

type wokenAt struct {
	T       int64
	Blocked bool
}

type stealSource struct {
	Victim int
	T      int64
}

type sample struct {
	T     int64
	Value int64
}

type counterTrack struct {
	Kind    trace.CounterKind
	Index   int
	Samples []sample
}

type cycleSlice struct {
	Start, End int64
	Number     uint64
}

type stageSlice struct {
	Start, End int64
	Stage      int
	Name       string
}

type trackRole uint8

const (
	roleOther trackRole = iota
	roleProcess
	roleControl
	roleStages
	roleWorker
	roleCounter
)

type trackInfo struct {
	role    trackRole
	worker  int
	counter int // index into model.counters
	stack   []openSlice
}

type openSlice struct {
	start int64
	name  int32
	stage int32
	flow  uint64
	park  bool
	cycle uint64
	stIdx int
	seq   uint32
}

// worker is what the file holds for one worker whose track it describes.
type worker struct {
	ID      int
	Packets []slice // by start
	Parks   []slice // by start
	// Woken holds the worker's wake-ups received, by time, from traces
	// that say whether the worker had blocked (older ones do not).
	Woken []wokenAt
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
	Workers int // as claimed by the process track
	Size    int // of the file, bytes
	Strs    []string
	strIdx  map[string]int32
	ws      []*worker // the workers with a track, by id
	byID    map[int]*worker
	marks   []mark // by time
	// busyAt and parkedAt count the workers in a packet, and parked
	// outside a packet, at any time.
	busyAt, parkedAt coverage
	// listAll: every window lists every worker (see analyzeWith).
	listAll bool
	// seen and stamp find the distinct workers of a window (present).
	seen     []uint32
	stamp    uint32
	Instants []instant
	Counters []*counterTrack
	// Flows maps a steal arrow's flow id to where it starts: the worker
	// that spawned the packet and when (or, for an unstamped steal, the
	// victim and the time of the steal).
	Flows   map[uint64]stealSource
	Cycles  []cycleSlice
	Stages  []stageSlice
	Dropped uint64
	total   int // packets, all workers
	First   int64
	Last    int64
	seenAny bool
}

// worker returns worker id's data, nil if the file has no track for it.
func (m *model) worker(id int) *worker {
	return m.byID[id]
}

func (m *model) str(s string) int32 {
	if i, ok := m.strIdx[s]; ok {
		return i
	}
	i := int32(len(m.Strs))
	m.Strs = append(m.Strs, s)
	m.strIdx[s] = i
	return i
}

// ErrNotWsched reports a valid Perfetto trace that wsched did not write.
var ErrNotWsched = errors.New("not a wsched trace (no \"" + perfetto.DescProcess + "\" process track); analyze reads the Perfetto files wsched writes")

// load builds the model from a Perfetto file.
func load(data []byte) (*model, error) {
	if len(data) == 0 {
		return nil, errors.New("empty file")
	}
	m := &model{Size: len(data), strIdx: make(map[string]int32), Flows: make(map[uint64]stealSource), byID: make(map[int]*worker)}
	tracks := wsfile.Tracks[trackInfo]{}
	var decls wsfile.Decls
	type counterKey struct {
		kind  trace.CounterKind
		index int
	}
	counterIdx := make(map[counterKey]int)
	fail := func(p *pfwire.Packet, format string, args ...any) error {
		return fmt.Errorf("packet %d (byte %d): %s", p.Index, p.Offset, fmt.Sprintf(format, args...))
	}
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		tr, isTrack, err := decls.Packet(p)
		if err != nil {
			return fail(p, "%v", err)
		}
		if isTrack {
			d := &p.Track
			ti := &trackInfo{}
			switch tr.Role {
			case wsfile.Process:
				ti.role = roleProcess
				m.Workers = decls.Workers
			case wsfile.Control:
				ti.role = roleControl
			case wsfile.Stages:
				ti.role = roleStages
			case wsfile.Worker:
				n := tr.Worker
				ti.role, ti.worker = roleWorker, n
				if m.byID[n] == nil {
					wd := &worker{ID: n}
					m.byID[n] = wd
					m.ws = append(m.ws, wd)
				}
			case wsfile.Counter:
				kindName, idx, ok := strings.Cut(tr.Counter, ":")
				index, err := strconv.Atoi(idx)
				if !ok || err != nil {
					return fail(p, "bad counter track %q", d.Description)
				}
				kind := trace.CounterKind(255)
				for k := trace.CounterBucketDepth; k <= trace.CounterLocalLen; k++ {
					if k.String() == kindName {
						kind = k
					}
				}
				// Tracks that describe the same counter (only in a
				// hand-made file) share its samples.
				key := counterKey{kind, index}
				c, ok := counterIdx[key]
				if !ok {
					c = len(m.Counters)
					counterIdx[key] = c
					m.Counters = append(m.Counters, &counterTrack{Kind: kind, Index: index})
				}
				ti.role, ti.counter = roleCounter, c
			}
			if err := tracks.Describe(d.UUID, ti); err != nil {
				return fail(p, "%v", err)
			}
		}
		if !p.HasEvent {
			return nil
		}
		if !decls.Wsched {
			return ErrNotWsched
		}
		e := &p.Event
		ti, t, err := tracks.Event(p)
		if err != nil {
			return fail(p, "%v", err)
		}
		if !m.seenAny {
			m.First, m.seenAny = t, true
		}
		m.First, m.Last = min(m.First, t), max(m.Last, t)
		name, ok := decls.EventName(e)
		if !ok {
			return fail(p, "event name iid %d not defined on sequence %d", e.NameIID, p.Seq)
		}
		annot := func(key string) (int64, bool) { return decls.ArgInt(e, key) }
		switch e.Type {
		case 1: // BEGIN
			o := openSlice{start: t, name: m.str(name), stage: -1, seq: p.Seq}
			switch ti.role {
			case roleWorker:
				if len(e.CategoryIIDs) > 0 {
					c, ok := decls.Category(e.CategoryIIDs[0])
					if !ok {
						return fail(p, "category iid %d not defined", e.CategoryIIDs[0])
					}
					o.stage = m.str(c)
				} else if name == timeline.NamePark {
					o.park = true
				}
				if len(e.TerminatingFlowIDs) > 0 {
					o.flow = e.TerminatingFlowIDs[0]
				}
			case roleControl:
				c, _ := annot(timeline.ArgCycle)
				o.cycle = uint64(c)
			case roleStages:
				s, _ := annot(timeline.ArgStage)
				o.stIdx = int(s)
			case roleCounter:
				return fail(p, "slice on counter track %d", e.TrackUUID)
			}
			if len(ti.stack) >= 1<<16 {
				return fail(p, "slices nested too deep on track %d", e.TrackUUID)
			}
			ti.stack = append(ti.stack, o)
		case 2: // END
			if len(ti.stack) == 0 {
				return fail(p, "slice END on track %d without a BEGIN", e.TrackUUID)
			}
			o := ti.stack[len(ti.stack)-1]
			ti.stack = ti.stack[:len(ti.stack)-1]
			if t < o.start {
				return fail(p, "slice on track %d ends before it begins", e.TrackUUID)
			}
			switch ti.role {
			case roleWorker:
				s := slice{Start: o.start, End: t, Name: o.name, Stage: o.stage, Flow: o.flow}
				wd := m.byID[ti.worker]
				if o.park {
					wd.Parks = append(wd.Parks, s)
				} else if o.stage >= 0 {
					wd.Packets = append(wd.Packets, s)
				}
			case roleControl:
				if m.Strs[o.name] == timeline.NameCycle {
					m.Cycles = append(m.Cycles, cycleSlice{Start: o.start, End: t, Number: o.cycle})
				}
			case roleStages:
				m.Stages = append(m.Stages, stageSlice{Start: o.start, End: t, Stage: o.stIdx, Name: m.Strs[o.name]})
			}
		case 3: // INSTANT
			worker := -1
			if ti.role == roleWorker {
				worker = ti.worker
			}
			switch name {
			case timeline.NameSteal:
				v, _ := annot(timeline.ArgVictim)
				mv, _ := annot(timeline.ArgMoved)
				m.Instants = append(m.Instants, instant{T: t, Kind: instSteal, Arg: v, Moved: mv, Worker: worker})
				for _, id := range e.FlowIDs { // an arrow without a victim track
					m.Flows[id] = stealSource{Victim: int(v), T: t}
				}
			case timeline.NameQueued, timeline.NameStolen:
				// A stamped steal's arrow starts where its packet was
				// queued (the spawner's track, or the control track for
				// an add from outside: no worker to step back to); an
				// unstamped one's ("stolen") on the victim at the steal.
				for _, id := range e.FlowIDs {
					if worker >= 0 {
						m.Flows[id] = stealSource{Victim: worker, T: t}
					}
				}
			case timeline.NameWake:
				v, ok := annot(timeline.ArgTarget)
				if !ok {
					v = -1
				}
				m.Instants = append(m.Instants, instant{T: t, Kind: instWake, Arg: v, Worker: worker})
			case timeline.NameWoken:
				// Only whether the worker had blocked is used (woken);
				// its latency is measured to its next packet.
				if b, ok := annot(timeline.ArgBlocked); ok && worker >= 0 {
					wd := m.byID[worker]
					wd.Woken = append(wd.Woken, wokenAt{T: t, Blocked: b != 0})
				}
			case timeline.NameDropped:
				if ti.role == roleProcess {
					d, _ := annot(timeline.ArgDropped)
					m.Dropped = uint64(d)
				}
			}
		case 4: // COUNTER
			if ti.role != roleCounter {
				return fail(p, "counter event on non-counter track %d", e.TrackUUID)
			}
			c := m.Counters[ti.counter]
			c.Samples = append(c.Samples, sample{T: t, Value: e.CounterValue})
		}
		return nil
	})
	if err != nil {
		var de *pfwire.DecodeError
		if errors.As(err, &de) {
			return nil, fmt.Errorf("not a valid Perfetto trace: %w", err)
		}
		return nil, err
	}
	if !decls.Wsched {
		return nil, ErrNotWsched
	}
	if m.Workers == 0 {
		return nil, errors.New("wsched process track does not say how many workers")
	}
	for uuid, ti := range tracks {
		if len(ti.stack) > 0 {
			return nil, fmt.Errorf("track %d ends with %d open slice(s): truncated file?", uuid, len(ti.stack))
		}
	}
	// Our writer emits in time order; sort anyway so that hand-made files
	// cannot break the sweeps below.
	slices.SortFunc(m.ws, func(a, b *worker) int { return cmp.Compare(a.ID, b.ID) })
	var busy, parked []interval
	for i, wd := range m.ws {
		m.total += len(wd.Packets)
		byStart := func(a, b slice) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) }
		slices.SortStableFunc(wd.Packets, byStart)
		slices.SortStableFunc(wd.Parks, byStart)
		slices.SortStableFunc(wd.Woken, func(a, b wokenAt) int { return cmp.Compare(a.T, b.T) })
		wd.busy = union(wd.Packets)
		wd.parked = subtract(union(wd.Parks), wd.busy)
		busy, parked = append(busy, wd.busy...), append(parked, wd.parked...)
		for _, ss := range [][]slice{wd.Packets, wd.Parks} {
			for _, s := range ss {
				m.marks = append(m.marks, mark{s.Start, int32(i)}, mark{s.End, int32(i)})
			}
		}
	}
	slices.SortFunc(m.marks, func(a, b mark) int { return cmp.Compare(a.t, b.t) })
	m.busyAt, m.parkedAt = newCoverage(busy), newCoverage(parked)
	slices.SortStableFunc(m.Instants, func(a, b instant) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(m.Cycles, func(a, b cycleSlice) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) })
	slices.SortFunc(m.Stages, func(a, b stageSlice) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) })
	for _, c := range m.Counters {
		slices.SortStableFunc(c.Samples, func(a, b sample) int { return cmp.Compare(a.T, b.T) })
	}
	// wsched draws cycles one after another and stages one after another
	// (trace/internal/timeline closes the open one before it opens the
	// next): slices that overlap come from elsewhere, and would make a
	// window of every cycle they nest in.
	for i := 1; i < len(m.Cycles); i++ {
		if a, b := m.Cycles[i-1], m.Cycles[i]; b.Start < a.End {
			return nil, fmt.Errorf("cycle %d (%d-%d ns) overlaps cycle %d (%d-%d ns): wsched writes one cycle after another", b.Number, b.Start, b.End, a.Number, a.Start, a.End)
		}
	}
	for i := 1; i < len(m.Stages); i++ {
		if a, b := m.Stages[i-1], m.Stages[i]; b.Start < a.End {
			return nil, fmt.Errorf("stage slice %q (%d-%d ns) overlaps stage slice %q (%d-%d ns): wsched writes one stage slice after another", b.Name, b.Start, b.End, a.Name, a.Start, a.End)
		}
	}
	return m, nil
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
