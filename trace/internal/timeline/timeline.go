package timeline

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
)

// Slice and instant names the exporters write and trace/analyze reads.
const (
	NameCycle  = "cycle"
	NamePark   = "parked"
	NameSteal  = "steal"
	NameQueued = "queued" // a steal arrow's source: where the stolen packet was queued
	// NameStolen is the source of a steal arrow whose packet's origin was
	// not recorded (an unstamped steal): an instant on the victim's track
	// at the steal.
	NameStolen  = "stolen"
	NameWake    = "wake"
	NameWoken   = "woken"
	NameFull    = "trace buffer full"
	NameWrapped = "trace buffer wrapped"
	NameDropped = "wsched: trace events dropped"
	// NameAdd is an add call (trace.KindAdd), on the control track.
	NameAdd = "add"
	// NameConfig is the scheduler's configuration (Snapshot.Config), an
	// instant on the process track before everything else, one string
	// argument per "key=value" pair.
	NameConfig = "wsched config"
	// CatUnconstrained is the category (stage name) of stage 0 packets.
	CatUnconstrained = "Unconstrained"

	ArgCycle     = "cycle"
	ArgStage     = "stage"
	ArgVictim    = "victim"
	ArgThief     = "thief"
	ArgMoved     = "moved"
	ArgTarget    = "target"
	ArgBlocked   = "blocked" // on "woken": 1 if the worker had blocked, 0 if it polled or found its token at once
	ArgDropped   = "dropped"
	ArgPolicy    = "policy"
	ArgDropUntil = "until_ns"
	// Arguments of an add: how ("add", "priority", "lend", "sentinel",
	// "designated"), stage (or target, for "designated"), packets, wake
	// (a policy name, only when the call chose one), born_ns (the stamp
	// of its first packet: a packet slice's queued time names its add).
	ArgHow     = "how"
	ArgCall    = "call" // "Add" (one packet, the one-packet wake rule) or "AddAll"
	ArgPackets = "packets"
	ArgWake    = "wake"
	ArgBornNs  = "born_ns"
)

// TrackKind says which track an Op is drawn on.
type TrackKind uint8

// Tracks: one process track, the control thread, a stage track, one thread
// per worker, and counter tracks.
const (
	TrackProcess TrackKind = iota + 1
	TrackControl
	TrackStages
	TrackWorker  // Track.Index = worker
	TrackCounter // Track.Counter, Track.Index
)

// Track identifies a track.
type Track struct {
	Kind    TrackKind
	Index   int               // worker (TrackWorker) or counter index (TrackCounter)
	Counter trace.CounterKind // TrackCounter only
}

// OpKind is what an Op draws.
type OpKind uint8

// Op kinds.
const (
	Begin OpKind = iota + 1
	End
	Instant
	Counter
)

// SliceKind is what a slice represents.
type SliceKind uint8

// Slice kinds.
const (
	SlicePacket SliceKind = iota + 1
	SlicePark
	SliceCycle
	SliceStage
)

// ArgKind is an Arg's value type.
type ArgKind uint8

// Arg kinds.
const (
	ArgInt ArgKind = iota + 1
	ArgUint
	ArgString
)

// Arg is one named argument (a Perfetto debug annotation, a JSON arg).
type Arg struct {
	Key  string
	Kind ArgKind
	Int  int64
	Uint uint64
	Str  string
}

// Op is one drawing operation. Walk reuses the Op it passes; copy what you
// keep.
type Op struct {
	Kind  OpKind
	Time  int64
	Track Track
	// Buffer is the recording buffer the op belongs to (its Perfetto
	// sequence): a worker index, or -1 for the control buffer. An End
	// belongs to the buffer that recorded its Begin.
	Buffer int
	// Slice is what a Begin opens (and an End closes).
	Slice SliceKind
	// Name is the slice or instant name; NameID is its recorder id when it
	// comes from the recorder (packet types, stages), else 0.
	Name   string
	NameID trace.NameID
	// Category is the stage name of a packet slice ("" otherwise), Stage its
	// index.
	Category string
	Stage    int
	Args     []Arg
	// FlowIn ends a flow arrow at this op, FlowOut starts one; 0 = none.
	// Walk keeps only flows whose both ends are in the snapshot.
	FlowIn, FlowOut uint64
	// Value is a Counter's sample.
	Value int64
	// Dropped marks the first op of Buffer after events of that buffer were
	// lost (Perfetto's previous_packet_dropped).
	Dropped bool
	// For a packet slice's Begin: how its packet was queued (see
	// trace.Event.From): QueuedFrom is a worker index (a spawn), or
	// trace.FromAdd, trace.FromNone or trace.FromUnknown (nothing known:
	// Queued and Priority mean nothing); Queued is when (in op time; for
	// FromNone, the begin's time); Priority that it came from a priority
	// lane. A stolen packet's comes from its steal's origin.
	QueuedFrom int
	Queued     int64
	Priority   bool
}

// Stats describe a walk.
type Stats struct {
	Orphans int // END-type events without a matching BEGIN, not drawn
}

// StageName returns the display name of stage index st, given the names
// recorded in StageOpen events.
func StageName(names map[int]string, st int) string {
	if n, ok := names[st]; ok && n != "" {
		return n
	}
	if st == 0 {
		return CatUnconstrained
	}
	return "stage " + strconv.Itoa(st)
}

// CounterName is the display name of a counter track.
func CounterName(stageNames map[int]string, k trace.CounterKind, index int) string {
	switch k {
	case trace.CounterBucketDepth:
		return "bucket: " + StageName(stageNames, index)
	case trace.CounterParked:
		return "parked workers"
	case trace.CounterLocalLen:
		return "local deque: worker " + strconv.Itoa(index)
	}
	return k.String() + " " + strconv.Itoa(index)
}

type open struct {
	kind   SliceKind
	buffer int
	stage  int
}

type walker struct {
	s          *trace.Snapshot
	fn         func(*Op)
	op         Op
	args       [8]Arg
	stageNames map[int]string
	flows      map[uint64]uint8
	ctl        []open
	stages     []open
	workers    [][]open
	pending    map[int]bool     // buffer → its next op carries Dropped
	counters   map[Track]string // counter track → name, built once
	stats      Stats
	base       int64 // subtracted from every time (see Walk)
	// births are the sources of stamped steals' arrows, by time; next is
	// the first not yet drawn. born holds their flow ids.
	births []birth
	next   int
	born   map[uint64]bool
	// stealFlow is, per buffer, the flow of its last steal, and origin
	// the queuing of the packet it stole (its KindStealOrigin), for that
	// packet's begin.
	stealFlow map[int]uint64
	origin    map[int]stolenOrigin
	config    bool // the config instant is drawn
}

// stolenOrigin is a stolen packet's queuing, from its steal's origin.
type stolenOrigin struct {
	flow uint64
	from int
	born int64
}

// birth is where a stolen packet was queued: the source of its steal's
// flow arrow.
type birth struct {
	t             int64 // snapshot time
	from          int   // worker that spawned it, -1 = added from outside (control track)
	thief, victim int
	flow          uint64
}

const (
	flowSource = 1
	flowDest   = 2
)

// StageNames collects the stage names recorded by StageOpen events.
func StageNames(s *trace.Snapshot) map[int]string {
	m := make(map[int]string)
	for i := range s.Buffers {
		for _, e := range s.Buffers[i].Events {
			if e.Kind() == trace.KindStageOpen {
				if _, ok := m[e.Stage()]; !ok {
					m[e.Stage()] = s.Name(e.Name())
				}
			}
		}
	}
	return m
}

// Walk draws s, calling fn for each Op in time order, and returns stats.
//
// Op times are the snapshot's (ns since the recorder started), except when
// a recorder in Overwrite mode lost its oldest events: then they count from
// the oldest event kept, so that a flight recorder that has run for an hour
// does not write hour-sized timestamps (a varint byte more per event for
// each 7 bits).
func Walk(s *trace.Snapshot, fn func(*Op)) Stats {
	w := &walker{
		s:          s,
		fn:         fn,
		stageNames: StageNames(s),
		flows:      make(map[uint64]uint8),
		workers:    make([][]open, s.Workers()),
		counters:   make(map[Track]string),
	}
	if s.Overwrite && s.Dropped() > 0 {
		w.base = s.End
		for i := range s.Buffers {
			if ev := s.Buffers[i].Events; len(ev) > 0 {
				w.base = min(w.base, ev[0].Time)
			}
		}
	}
	w.born = make(map[uint64]bool)
	w.stealFlow = make(map[int]uint64)
	w.origin = make(map[int]stolenOrigin)
	for i := range s.Buffers {
		ev := s.Buffers[i].Events
		for j, e := range ev {
			switch e.Kind() {
			case trace.KindSteal:
				if e.Flow() == 0 {
					break
				}
				w.flows[e.Flow()] |= flowSource
				// A stamped steal: its origin follows it. A birth before
				// the kept window (Overwrite) is not drawn; the arrow
				// then starts at the steal, as for an unstamped one.
				if j+1 < len(ev) && ev[j+1].Kind() == trace.KindStealOrigin {
					o := ev[j+1]
					if o.From() >= -1 && o.From() < len(w.workers) && o.Born() >= w.base && !w.born[e.Flow()] {
						w.births = append(w.births, birth{t: o.Born(), from: o.From(),
							thief: s.Buffers[i].Worker, victim: e.Victim(), flow: e.Flow()})
						w.born[e.Flow()] = true
					}
				}
			case trace.KindPacketBegin:
				if e.Flow() != 0 {
					w.flows[e.Flow()] |= flowDest
				}
			}
		}
	}
	slices.SortStableFunc(w.births, func(a, b birth) int { return cmp.Compare(a.t, b.t) })
	w.run()
	return w.stats
}

func (w *walker) stageName(st int) string { return StageName(w.stageNames, st) }

func (w *walker) own(buffer int) (Track, *[]open) {
	if buffer < 0 || buffer >= len(w.workers) {
		return Track{Kind: TrackControl}, &w.ctl
	}
	return Track{Kind: TrackWorker, Index: buffer}, &w.workers[buffer]
}

func (w *walker) stack(t Track) *[]open {
	switch t.Kind {
	case TrackControl:
		return &w.ctl
	case TrackStages:
		return &w.stages
	case TrackWorker:
		return &w.workers[t.Index]
	}
	return nil
}

// reset prepares the shared Op.
func (w *walker) reset(kind OpKind, t int64, tr Track, buffer int) *Op {
	w.op = Op{Kind: kind, Time: t - w.base, Track: tr, Buffer: buffer, Args: w.args[:0], QueuedFrom: trace.FromUnknown}
	return &w.op
}

// drawConfig draws the scheduler's configuration at t, once, before
// anything else: an instant on the process track with a string argument
// per "key=value" pair of Snapshot.Config.
func (w *walker) drawConfig(t int64) {
	if w.config {
		return
	}
	w.config = true
	if w.s.Config == "" {
		return
	}
	op := w.reset(Instant, t, Track{Kind: TrackProcess}, -1)
	op.Name = NameConfig
	for _, kv := range strings.Fields(w.s.Config) {
		k, v, _ := strings.Cut(kv, "=")
		op.Args = append(op.Args, Arg{Key: k, Kind: ArgString, Str: v})
	}
	w.emit()
}

// emit passes the op on, attaching a pending drop mark of its buffer.
func (w *walker) emit() {
	if w.pending[w.op.Buffer] {
		delete(w.pending, w.op.Buffer)
		w.op.Dropped = true
	}
	w.fn(&w.op)
}

func (w *walker) run() {
	type stopMark struct {
		buffer int
		b      *trace.Buffer
	}
	var marks []stopMark
	wrapped := make(map[int]*trace.Buffer)
	w.pending = make(map[int]bool)
	for i := range w.s.Buffers {
		b := &w.s.Buffers[i]
		if b.Dropped == 0 {
			continue
		}
		if w.s.Overwrite {
			wrapped[b.Worker] = b
		} else {
			marks = append(marks, stopMark{b.Worker, b})
		}
	}
	// catchUp draws, in time order, the stop marks and arrow sources
	// (births) due at or before t.
	catchUp := func(t int64) {
		for {
			m := -1
			for j := range marks {
				if d := marks[j].b.DropStart; d <= t && (m < 0 || d < marks[m].b.DropStart) {
					m = j
				}
			}
			if w.next < len(w.births) && w.births[w.next].t <= t &&
				(m < 0 || w.births[w.next].t < marks[m].b.DropStart) {
				w.birth(w.births[w.next], wrapped)
				w.next++
				continue
			}
			if m < 0 {
				return
			}
			w.stopMark(marks[m].buffer, marks[m].b)
			marks = append(marks[:m], marks[m+1:]...)
		}
	}
	for buffer, e := range w.s.All() {
		w.drawConfig(e.Time)
		catchUp(e.Time)
		if b, ok := wrapped[buffer]; ok {
			delete(wrapped, buffer)
			w.wrapMark(buffer, b, e.Time)
		}
		w.event(buffer, e)
	}
	catchUp(w.s.End)
	for _, m := range marks { // a drop time past End: not expected
		w.stopMark(m.buffer, m.b)
	}
	w.trailer()
}

func (w *walker) flowOK(f uint64) uint64 {
	if f != 0 && w.flows[f] == flowSource|flowDest {
		return f
	}
	return 0
}

// birth draws the source of a stamped steal's arrow: an instant "queued"
// on the track of the worker that spawned the stolen packet (the control
// track for a packet added from outside the workers), at the time it was
// queued. It is written on the thief's buffer (sequence), which recorded
// it: a track event may name any track.
func (w *walker) birth(b birth, wrapped map[int]*trace.Buffer) {
	flow := w.flowOK(b.flow)
	if flow == 0 {
		return
	}
	if wb, ok := wrapped[b.thief]; ok { // the thief's first op: mark the wrap before it
		delete(wrapped, b.thief)
		w.wrapMark(b.thief, wb, b.t)
	}
	tr := Track{Kind: TrackControl}
	if b.from >= 0 {
		tr = Track{Kind: TrackWorker, Index: b.from}
	}
	op := w.reset(Instant, b.t, tr, b.thief)
	op.Name = NameQueued
	op.Args = append(op.Args,
		Arg{Key: ArgThief, Kind: ArgInt, Int: int64(b.thief)},
		Arg{Key: ArgVictim, Kind: ArgInt, Int: int64(b.victim)})
	op.FlowOut = flow
	w.emit()
}

// event draws one recorder event.
func (w *walker) event(buffer int, e trace.Event) {
	t := e.Time
	own, st := w.own(buffer)
	switch e.Kind() {
	case trace.KindCycleBegin:
		w.closeKind(Track{Kind: TrackStages}, SliceStage, t)
		w.closeKind(Track{Kind: TrackControl}, SliceCycle, t)
		op := w.reset(Begin, t, Track{Kind: TrackControl}, buffer)
		op.Slice, op.Name = SliceCycle, NameCycle
		op.Args = append(op.Args, Arg{Key: ArgCycle, Kind: ArgUint, Uint: e.Cycle()})
		w.emit()
		w.ctl = append(w.ctl, open{kind: SliceCycle, buffer: buffer})
	case trace.KindCycleEnd:
		w.closeKind(Track{Kind: TrackStages}, SliceStage, t)
		w.closeKind(Track{Kind: TrackControl}, SliceCycle, t)
	case trace.KindStageOpen:
		w.closeKind(Track{Kind: TrackStages}, SliceStage, t)
		op := w.reset(Begin, t, Track{Kind: TrackStages}, buffer)
		op.Slice, op.Name, op.NameID, op.Stage = SliceStage, w.s.Name(e.Name()), e.Name(), e.Stage()
		op.Args = append(op.Args, Arg{Key: ArgStage, Kind: ArgInt, Int: int64(e.Stage())})
		w.emit()
		w.stages = append(w.stages, open{kind: SliceStage, buffer: buffer, stage: e.Stage()})
	case trace.KindStageClose:
		if n := len(w.stages); n > 0 && w.stages[n-1].stage == e.Stage() {
			w.end(Track{Kind: TrackStages}, t)
		}
	case trace.KindPacketBegin:
		op := w.reset(Begin, t, own, buffer)
		op.Slice, op.Name, op.NameID = SlicePacket, w.s.Name(e.Name()), e.Name()
		op.Stage, op.Category = e.Stage(), w.stageName(e.Stage())
		op.FlowIn = w.flowOK(e.Flow())
		switch {
		case e.HasBorn():
			op.QueuedFrom, op.Queued = e.From(), e.Born()-w.base
		case e.From() == trace.FromNone:
			op.QueuedFrom, op.Queued = trace.FromNone, t-w.base
		case e.From() != trace.FromUnknown && e.Flow() != 0:
			if o, ok := w.origin[buffer]; ok && o.flow == e.Flow() {
				op.QueuedFrom, op.Queued = o.from, o.born-w.base
			}
		}
		op.Priority = e.Priority()
		if op.Queued < 0 || op.QueuedFrom < trace.FromNone || op.QueuedFrom >= len(w.workers) {
			// Queued before an Overwrite recorder's window, or from a
			// buffer the snapshot does not have.
			op.QueuedFrom = trace.FromUnknown
		}
		delete(w.origin, buffer)
		w.emit()
		*st = append(*st, open{kind: SlicePacket, buffer: buffer})
	case trace.KindPacketEnd, trace.KindUnpark:
		want := SlicePacket
		if e.Kind() == trace.KindUnpark {
			want = SlicePark
		}
		if n := len(*st); n > 0 && (*st)[n-1].kind == want {
			w.end(own, t)
		} else {
			w.stats.Orphans++
		}
	case trace.KindPark:
		op := w.reset(Begin, t, own, buffer)
		op.Slice, op.Name = SlicePark, NamePark
		w.emit()
		*st = append(*st, open{kind: SlicePark, buffer: buffer})
	case trace.KindSteal:
		w.stealFlow[buffer] = e.Flow()
		// The thief's instant "steal". A stamped steal's arrow was started
		// by its birth (drawn earlier); an unstamped one's starts here: at
		// an instant "stolen" on the victim's track at the same time, where
		// the packet left the victim's deque (on the thief's buffer, like
		// a birth), or at the thief's instant if there is no victim track.
		// Either way the arrow ends at the stolen packet's slice on the
		// thief.
		flow := w.flowOK(e.Flow())
		if e.Flow() != 0 && w.born[e.Flow()] {
			flow = 0 // drawn from its birth
		}
		victim := e.Victim()
		onVictim := victim >= 0 && victim < len(w.workers) && victim != buffer
		op := w.reset(Instant, t, own, buffer)
		op.Name = NameSteal
		op.Args = append(op.Args,
			Arg{Key: ArgVictim, Kind: ArgInt, Int: int64(victim)},
			Arg{Key: ArgMoved, Kind: ArgInt, Int: int64(e.Moved())})
		if !onVictim {
			op.FlowOut = flow // no victim track to start from
		}
		w.emit()
		if onVictim && flow != 0 {
			op := w.reset(Instant, t, Track{Kind: TrackWorker, Index: victim}, buffer)
			op.Name = NameStolen
			op.Args = append(op.Args,
				Arg{Key: ArgThief, Kind: ArgInt, Int: int64(buffer)},
				Arg{Key: ArgMoved, Kind: ArgInt, Int: int64(e.Moved())})
			op.FlowOut = flow
			w.emit()
		}
	case trace.KindStealOrigin:
		w.origin[buffer] = stolenOrigin{flow: w.stealFlow[buffer], from: e.From(), born: e.Born()}
	case trace.KindAdd:
		op := w.reset(Instant, t, Track{Kind: TrackControl}, buffer)
		op.Name = NameAdd
		call := "AddAll"
		if e.Single() {
			call = "Add"
		}
		op.Args = append(op.Args, Arg{Key: ArgHow, Kind: ArgString, Str: e.How().String()},
			Arg{Key: ArgCall, Kind: ArgString, Str: call})
		if e.How() == trace.AddDesignated {
			op.Args = append(op.Args, Arg{Key: ArgTarget, Kind: ArgInt, Int: int64(e.Target())})
		} else {
			op.Args = append(op.Args, Arg{Key: ArgStage, Kind: ArgInt, Int: int64(e.Stage())})
		}
		op.Args = append(op.Args,
			Arg{Key: ArgPackets, Kind: ArgUint, Uint: uint64(e.Packets())},
			Arg{Key: ArgBornNs, Kind: ArgInt, Int: e.Born() - w.base})
		if k := policy.Kind(e.Wake()); k != policy.Default {
			op.Args = append(op.Args, Arg{Key: ArgWake, Kind: ArgString, Str: k.String()})
		}
		w.emit()
	case trace.KindWakeSent:
		op := w.reset(Instant, t, own, buffer)
		op.Name = NameWake
		op.Args = append(op.Args, Arg{Key: ArgTarget, Kind: ArgInt, Int: int64(e.Target())})
		w.emit()
	case trace.KindWakeReceived:
		op := w.reset(Instant, t, own, buffer)
		op.Name = NameWoken
		var b int64
		if e.Blocked() {
			b = 1
		}
		op.Args = append(op.Args, Arg{Key: ArgBlocked, Kind: ArgInt, Int: b})
		w.emit()
	case trace.KindCounter:
		tr := Track{Kind: TrackCounter, Counter: e.Counter(), Index: e.Index()}
		name, ok := w.counters[tr]
		if !ok {
			name = CounterName(w.stageNames, e.Counter(), e.Index())
			w.counters[tr] = name
		}
		op := w.reset(Counter, t, tr, buffer)
		op.Name = name
		op.Value = e.Value()
		w.emit()
	}
}

// stopMark closes the slices left open on a buffer whose recording stopped
// (stop policy) and marks the loss with an instant.
func (w *walker) stopMark(buffer int, b *trace.Buffer) {
	own, st := w.own(buffer)
	for len(*st) > 0 {
		w.end(own, b.DropStart)
	}
	w.pending[buffer] = true
	op := w.reset(Instant, b.DropStart, own, buffer)
	op.Name = NameFull
	op.Args = append(op.Args,
		Arg{Key: ArgDropped, Kind: ArgUint, Uint: b.Dropped},
		Arg{Key: ArgDropUntil, Kind: ArgUint, Uint: uint64(b.DropEnd)})
	w.emit()
}

// wrapMark marks, before a wrapped buffer's first event, that its oldest
// events were overwritten.
func (w *walker) wrapMark(buffer int, b *trace.Buffer, t int64) {
	own, _ := w.own(buffer)
	w.pending[buffer] = true
	op := w.reset(Instant, t, own, buffer)
	op.Name = NameWrapped
	op.Args = append(op.Args, Arg{Key: ArgDropped, Kind: ArgUint, Uint: b.Dropped})
	w.emit()
}

// trailer closes every open slice at the snapshot's end and adds the drop
// summary on the process track.
func (w *walker) trailer() {
	end := w.s.End
	for len(w.stages) > 0 {
		w.end(Track{Kind: TrackStages}, end)
	}
	for len(w.ctl) > 0 {
		w.end(Track{Kind: TrackControl}, end)
	}
	for i := range w.workers {
		for len(w.workers[i]) > 0 {
			w.end(Track{Kind: TrackWorker, Index: i}, end)
		}
	}
	total := w.s.Dropped()
	if total == 0 {
		return
	}
	op := w.reset(Instant, end, Track{Kind: TrackProcess}, -1)
	op.Name = NameDropped
	policy := "stop"
	if w.s.Overwrite {
		policy = "overwrite"
	}
	op.Args = append(op.Args,
		Arg{Key: ArgDropped, Kind: ArgUint, Uint: total},
		Arg{Key: ArgPolicy, Kind: ArgString, Str: policy})
	for i := range w.s.Buffers {
		b := &w.s.Buffers[i]
		if b.Dropped == 0 {
			continue
		}
		key := "control"
		if b.Worker >= 0 {
			key = "worker " + strconv.Itoa(b.Worker)
		}
		op.Args = append(op.Args, Arg{Key: key, Kind: ArgUint, Uint: b.Dropped})
	}
	w.emit()
}

// closeKind ends slices on track t down to and including the innermost one
// of kind k, if there is one.
func (w *walker) closeKind(t Track, k SliceKind, at int64) {
	st := w.stack(t)
	for i := len(*st) - 1; i >= 0; i-- {
		if (*st)[i].kind == k {
			for len(*st) > i {
				w.end(t, at)
			}
			return
		}
	}
}

// end closes the innermost open slice of track t, on the buffer that
// opened it.
func (w *walker) end(t Track, at int64) {
	st := w.stack(t)
	top := (*st)[len(*st)-1]
	*st = (*st)[:len(*st)-1]
	op := w.reset(End, at, t, top.buffer)
	op.Slice = top.kind
	w.emit()
}
