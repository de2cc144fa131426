package wsfile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/origin"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/perfetto"
)

// File is a wsched Perfetto file decoded once: the model that trace/analyze
// (its report, verdicts and SVG timeline) and trace/simulate (its
// workload) read. Everything in it is linear in the events the file holds:
// a worker takes room only once its track is described, however many
// workers the process track claims.
type File struct {
	Size    int // of the file, bytes
	Workers int // as the process track claims (workers=N)
	// Strs holds the names and categories of the workers' slices; a
	// Slice's Name and Stage index it.
	Strs []string
	// W holds the workers whose tracks the file describes, by id.
	W []*Worker
	// Cycles are the control track's cycle slices and Stages the stage
	// track's slices, each by start, one after another.
	Cycles []Cycle
	Stages []StageSlice
	// Instants are the steals and wakes, by time.
	Instants []Instant
	// Flows maps a steal arrow's flow id to where it starts: the worker
	// that spawned the packet and when (or, for an unstamped steal, the
	// victim and the time of the steal).
	Flows map[uint64]FlowStart
	// Adds are the control track's add instants, in file order, and
	// AddsErr the first that cannot be read (an add of no known kind,
	// stage or wake policy), with its packet and byte: only the replay
	// reads the adds, so it is simulate's error, not Load's.
	Adds    []Add
	AddsErr error
	// Config holds the string arguments of the process track's config
	// instants (HasConfig), in file order; ConfigAt says where the last
	// is, for a reader's error.
	Config    []KV
	HasConfig bool
	ConfigAt  string
	Counters  []*Counter
	// Dropped is the process track's count of events the recorder lost.
	Dropped uint64
	// First and Last are the earliest and latest event times (0 without
	// events).
	First, Last int64
	// HasOrigins: some packet slice says how its packet was queued.
	HasOrigins bool

	strIdx map[string]int32
	byID   map[int]*Worker
}

// Worker is what the file holds for one worker whose track it describes.
type Worker struct {
	ID int
	// Used: its track holds events.
	Used bool
	// Packets and Parks are its packet and park slices, by start (then
	// end).
	Packets []Slice
	Parks   []Slice
	// Woken holds the wake-ups it received, by time, from traces that say
	// whether the worker had blocked (older ones do not).
	Woken []Woken
	// Marks are the times of the events it recorded itself on its track,
	// sorted: not a thief's marks on it ("queued", "stolen", "wrapped").
	// A spawn stamp is the spawning worker's own newest event, so a spawn
	// happened before the first of them after its stamp.
	Marks []int64
}

// Slice is a packet or park slice on a worker's track.
type Slice struct {
	Start, End int64
	Name       int32 // index into File.Strs
	// Stage indexes File.Strs for a packet slice's category (its stage);
	// -1 for a park.
	Stage int32
	// Flow is the steal arrow that ends here (0: none); Stolen says that
	// one does.
	Flow   uint64
	Stolen bool
	// Code says how the packet was queued (trace/internal/origin: 0 not
	// said, origin.None designated, Add, Priority, Worker0+i spawned on
	// worker i) and Queued when (valid when Code is not 0).
	Code   uint32
	Queued int64
}

// Woken is a wake-up a worker received.
type Woken struct {
	T       int64
	Blocked bool
}

// FlowStart is where a steal arrow starts.
type FlowStart struct {
	Victim int
	T      int64
}

// Instant is a steal or a wake.
type Instant struct {
	T    int64
	Kind uint8 // InstSteal, InstWake
	// Arg is a steal's victim or a wake's target (-1: not said), Moved a
	// steal's packet count.
	Arg, Moved int64
	Worker     int // the emitting track: worker index, -1 control
}

// Instant kinds.
const (
	InstSteal = iota + 1
	InstWake
)

// Sample is one counter value.
type Sample struct {
	T, Value int64
}

// Counter is one counter's samples, by time.
type Counter struct {
	Kind    trace.CounterKind
	Index   int
	Samples []Sample
}

// Cycle is a cycle slice.
type Cycle struct {
	Start, End int64
	Number     uint64
}

// StageSlice is a slice on the stage track: stage Stage open.
type StageSlice struct {
	Start, End int64
	Stage      int
	Name       string
}

// Add is one add call as the control track records it.
type Add struct {
	T      int64
	How    trace.AddHow
	Single bool  // a one-packet Add
	Stage  int32 // the stage; for AddDesignated, the target worker
	Born   int64 // the stamp of its first packet
	// Wake is the call's wake option (Default: the scheduler's rule).
	Wake policy.Kind
}

// KV is a string argument.
type KV struct{ Key, Value string }

// Worker returns worker id's data, nil if the file has no track for it.
func (f *File) Worker(id int) *Worker { return f.byID[id] }

// Index returns the index of s in Strs.
func (f *File) Index(s string) (int32, bool) {
	i, ok := f.strIdx[s]
	return i, ok
}

func (f *File) str(s string) int32 {
	if i, ok := f.strIdx[s]; ok {
		return i
	}
	i := int32(len(f.Strs))
	f.Strs = append(f.Strs, s)
	f.strIdx[s] = i
	return i
}

// ErrNotWsched reports a valid Perfetto trace that wsched did not write.
var ErrNotWsched = errors.New("not a wsched trace (no \"" + perfetto.DescProcess + "\" process track); analyze and simulate read the Perfetto files wsched writes")

// Load decodes a Perfetto file that wsched wrote. It fails, never panics,
// on input it cannot read: a file that is not Perfetto, not wsched's
// (ErrNotWsched), or breaks the rules wsched's writer keeps (events on a
// track described before them, slices that nest and close, cycles and
// stage slices one after another); the error names the packet and byte.
// Time is O(n log n) and memory O(n) in the events the file holds.
func Load(data []byte) (*File, error) {
	if len(data) == 0 {
		return nil, errors.New("empty file")
	}
	f := &File{Size: len(data), strIdx: make(map[string]int32), Flows: make(map[uint64]FlowStart), byID: make(map[int]*Worker)}
	type open struct {
		start  int64
		name   int32
		stage  int32
		flow   uint64
		stolen bool
		code   uint64 // an origin, or ArgQueued's value (legacy)
		queued int64
		origin bool // code and queued are an origin's
		park   bool
		arg    int64 // control: the cycle; stages: the stage
	}
	type track struct {
		role    Role
		worker  *Worker
		counter int // index into f.Counters
		stack   []open
	}
	tracks := Tracks[track]{}
	var decls Decls
	type counterKey struct {
		kind  trace.CounterKind
		index int
	}
	counterIdx := make(map[counterKey]int)
	fail := func(p *pfwire.Packet, format string, args ...any) error {
		return fmt.Errorf("packet %d (byte %d): %s", p.Index, p.Offset, fmt.Sprintf(format, args...))
	}
	seen := false
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		tr, isTrack, err := decls.Packet(p)
		if err != nil {
			return fail(p, "%v", err)
		}
		if isTrack {
			d := &p.Track
			ti := &track{role: tr.Role}
			switch tr.Role {
			case RoleProcess:
				f.Workers = decls.Workers
			case RoleWorker:
				n := tr.Worker
				if f.byID[n] == nil {
					w := &Worker{ID: n}
					f.byID[n] = w
					f.W = append(f.W, w)
				}
				ti.worker = f.byID[n]
			case RoleCounter:
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
					c = len(f.Counters)
					counterIdx[key] = c
					f.Counters = append(f.Counters, &Counter{Kind: kind, Index: index})
				}
				ti.counter = c
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
		if !seen {
			f.First, seen = t, true
		}
		f.First, f.Last = min(f.First, t), max(f.Last, t)
		name, ok := decls.EventName(e)
		if !ok {
			return fail(p, "event name iid %d not defined on sequence %d", e.NameIID, p.Seq)
		}
		wk := ti.worker
		if wk != nil {
			wk.Used = true
			if !othersMark(e.Type, name) {
				wk.Marks = append(wk.Marks, t)
			}
		}
		num := func(key string) (int64, bool) { return decls.ArgInt(e, key) }
		str := func(key string) string {
			if a, ok := decls.Arg(e, key); ok && a.Kind == pfwire.AnnotString {
				return a.String
			}
			return ""
		}
		switch e.Type {
		case 1: // BEGIN
			o := open{start: t, name: f.str(name), stage: -1}
			switch ti.role {
			case RoleWorker:
				if len(e.CategoryIIDs) > 0 {
					c, ok := decls.Category(e.CategoryIIDs[0])
					if !ok {
						return fail(p, "category iid %d not defined", e.CategoryIIDs[0])
					}
					o.stage = f.str(c)
					if code, stamp, ok := decls.Origin(e, t); ok {
						o.code, o.queued, o.origin = code, stamp, true
					} else if a, ok := decls.Arg(e, perfetto.ArgQueued); ok && a.Kind == pfwire.AnnotUint {
						o.code = a.Uint // a file of the format before the origins tracks
					}
				} else if name == timeline.NamePark {
					o.park = true
				}
				if len(e.TerminatingFlowIDs) > 0 {
					o.flow, o.stolen = e.TerminatingFlowIDs[0], true
				}
			case RoleControl:
				o.arg, _ = num(timeline.ArgCycle)
			case RoleStages:
				o.arg, _ = num(timeline.ArgStage)
			case RoleCounter, RoleOrigins:
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
			case RoleWorker:
				s := Slice{Start: o.start, End: t, Name: o.name, Stage: o.stage, Flow: o.flow, Stolen: o.stolen}
				switch {
				case o.park:
					wk.Parks = append(wk.Parks, s)
				case o.stage >= 0:
					s.Code, s.Queued = queuedAt(o.code, o.queued, o.origin, o.start, f.Workers)
					f.HasOrigins = f.HasOrigins || s.Code != 0
					wk.Packets = append(wk.Packets, s)
				}
			case RoleControl:
				if f.Strs[o.name] == timeline.NameCycle {
					f.Cycles = append(f.Cycles, Cycle{Start: o.start, End: t, Number: uint64(o.arg)})
				}
			case RoleStages:
				f.Stages = append(f.Stages, StageSlice{Start: o.start, End: t, Stage: int(o.arg), Name: f.Strs[o.name]})
			}
		case 3: // INSTANT
			worker := -1
			if wk != nil {
				worker = wk.ID
			}
			switch {
			case name == timeline.NameSteal:
				v, _ := num(timeline.ArgVictim)
				mv, _ := num(timeline.ArgMoved)
				f.Instants = append(f.Instants, Instant{T: t, Kind: InstSteal, Arg: v, Moved: mv, Worker: worker})
				for _, id := range e.FlowIDs { // an arrow without a victim track
					f.Flows[id] = FlowStart{Victim: int(v), T: t}
				}
			case name == timeline.NameQueued || name == timeline.NameStolen:
				// A stamped steal's arrow starts where its packet was
				// queued (the spawner's track, or the control track for
				// an add from outside: no worker to step back to); an
				// unstamped one's ("stolen") on the victim at the steal.
				for _, id := range e.FlowIDs {
					if worker >= 0 {
						f.Flows[id] = FlowStart{Victim: worker, T: t}
					}
				}
			case name == timeline.NameWake:
				v, ok := num(timeline.ArgTarget)
				if !ok {
					v = -1
				}
				f.Instants = append(f.Instants, Instant{T: t, Kind: InstWake, Arg: v, Worker: worker})
			case name == timeline.NameWoken:
				// Only whether the worker had blocked is kept; its
				// latency is measured to its next packet.
				if b, ok := num(timeline.ArgBlocked); ok && wk != nil {
					wk.Woken = append(wk.Woken, Woken{T: t, Blocked: b != 0})
				}
			case name == timeline.NameDropped && ti.role == RoleProcess:
				d, _ := num(timeline.ArgDropped)
				f.Dropped = uint64(d)
			case name == timeline.NameConfig && ti.role == RoleProcess:
				for _, a := range e.Annotations {
					k := a.Name
					if a.NameIID != 0 {
						k, _ = decls.Annotation(a.NameIID)
					}
					if a.Kind == pfwire.AnnotString {
						f.Config = append(f.Config, KV{k, a.String})
					}
				}
				f.HasConfig, f.ConfigAt = true, fmt.Sprintf("packet %d (byte %d)", p.Index, p.Offset)
			case name == timeline.NameAdd && ti.role == RoleControl:
				a, err := readAdd(t, num, str)
				if err != nil {
					if f.AddsErr == nil {
						f.AddsErr = fail(p, "%v", err)
					}
					break
				}
				f.Adds = append(f.Adds, a)
			}
		case 4: // COUNTER
			if ti.role != RoleCounter {
				return fail(p, "counter event on non-counter track %d", e.TrackUUID)
			}
			c := f.Counters[ti.counter]
			c.Samples = append(c.Samples, Sample{T: t, Value: e.CounterValue})
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
	if f.Workers == 0 {
		return nil, errors.New("wsched process track does not say how many workers")
	}
	// The lowest track with open slices, so that one file gives one
	// message.
	nOpen, openUUID := 0, uint64(0)
	for uuid, ti := range tracks {
		if len(ti.stack) > 0 && (nOpen == 0 || uuid < openUUID) {
			nOpen, openUUID = len(ti.stack), uuid
		}
	}
	if nOpen > 0 {
		return nil, fmt.Errorf("track %d ends with %d open slice(s): truncated file?", openUUID, nOpen)
	}
	return f, f.sort()
}

// sort puts what Load read in the orders File promises (wsched writes in
// time order; a hand-made file need not), and checks that cycles and
// stage slices come one after another.
func (f *File) sort() error {
	byStart := func(a, b Slice) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) }
	slices.SortFunc(f.W, func(a, b *Worker) int { return cmp.Compare(a.ID, b.ID) })
	for _, w := range f.W {
		slices.SortStableFunc(w.Packets, byStart)
		slices.SortStableFunc(w.Parks, byStart)
		slices.SortStableFunc(w.Woken, func(a, b Woken) int { return cmp.Compare(a.T, b.T) })
		slices.Sort(w.Marks)
	}
	slices.SortStableFunc(f.Instants, func(a, b Instant) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(f.Cycles, func(a, b Cycle) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) })
	slices.SortFunc(f.Stages, func(a, b StageSlice) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) })
	for _, c := range f.Counters {
		slices.SortStableFunc(c.Samples, func(a, b Sample) int { return cmp.Compare(a.T, b.T) })
	}
	// wsched draws cycles one after another and stages one after another
	// (trace/internal/timeline closes the open one before it opens the
	// next): slices that overlap come from elsewhere.
	for i := 1; i < len(f.Cycles); i++ {
		if a, b := f.Cycles[i-1], f.Cycles[i]; b.Start < a.End {
			return fmt.Errorf("cycle %d (%d-%d ns) overlaps cycle %d (%d-%d ns): wsched writes one cycle after another", b.Number, b.Start, b.End, a.Number, a.Start, a.End)
		}
	}
	for i := 1; i < len(f.Stages); i++ {
		if a, b := f.Stages[i-1], f.Stages[i]; b.Start < a.End {
			return fmt.Errorf("stage slice %q (%d-%d ns) overlaps stage slice %q (%d-%d ns): wsched writes one stage slice after another", b.Name, b.Start, b.End, a.Name, a.Start, a.End)
		}
	}
	return nil
}

// queuedAt returns how and when a packet slice that began at begin was
// queued: from its origin (ok), or from a file of the format before the
// origins tracks, whose ArgQueued packs the code and how long before begin
// into one number that counts the claimed workers' codes.
func queuedAt(code uint64, queued int64, ok bool, begin int64, workers int) (uint32, int64) {
	if ok {
		return uint32(code), queued
	}
	if code == 0 {
		return 0, 0
	}
	m := uint64(workers) + origin.Worker0
	c, d := code%m, code/m
	if c < 1 || d > uint64(begin) {
		return 0, 0
	}
	return uint32(c), begin - int64(d)
}

// readAdd reads an add instant's arguments.
func readAdd(t int64, num func(string) (int64, bool), str func(string) string) (Add, error) {
	how, ok := trace.ParseAddHow(str(timeline.ArgHow))
	if !ok {
		return Add{}, fmt.Errorf("add with an unknown how %q", str(timeline.ArgHow))
	}
	a := Add{T: t, How: how, Single: str(timeline.ArgCall) == "Add"}
	key := timeline.ArgStage
	if how == trace.AddDesignated {
		key = timeline.ArgTarget
	}
	v, _ := num(key)
	born, _ := num(timeline.ArgBornNs)
	// born may be before the file's first event: an add made before the
	// window an Overwrite recorder kept.
	if v < 0 || v > 1<<24 || born < -(1<<50) || born > t {
		return Add{}, fmt.Errorf("bad add (stage or target %d, born %d at %d)", v, born, t)
	}
	a.Stage, a.Born = int32(v), born
	if w := str(timeline.ArgWake); w != "" {
		k, ok := policy.Parse(w)
		if !ok || k.Family() != policy.FamilyWake {
			return Add{}, fmt.Errorf("add with an unknown wake policy %q", w)
		}
		a.Wake = k
	}
	return a, nil
}

// othersMark reports whether an event on a worker's track was recorded by
// another worker: a thief marks where a packet it stole was queued and
// that it was stolen, and a wrap mark precedes a thief's first event.
func othersMark(typ int32, name string) bool {
	return typ == 3 && (name == timeline.NameQueued || name == timeline.NameStolen || name == timeline.NameWrapped)
}
