package perfetto

import (
	"fmt"
	"math"
	"slices"

	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/problems"
)

// CheckStats summarise a trace that Check accepted (or partly read).
type CheckStats struct {
	Packets     int
	Sequences   int
	Tracks      int
	Slices      int // BEGIN events
	Instants    int
	Counters    int // COUNTER events
	Flows       int // distinct flow ids
	PrevDropped int // packets with previous_packet_dropped
}

// CheckError lists the rule violations Check found (the first
// problems.Max of them, and how many there were).
type CheckError struct {
	Problems []string
	Total    int
}

func (e *CheckError) Error() string { return problems.Format("perfetto", e.Total, e.Problems) }

// Check validates a Perfetto trace file against the rules Perfetto's trace
// processor enforces (the rules in the package documentation), whoever wrote it:
//
//  1. the file is only `0x0A <len> <TracePacket>` records (else an error
//     that gives the packet and byte where it is not);
//  2. every TrackEvent packet has a non-zero trusted_packet_sequence_id and
//     a timestamp;
//  3. each sequence's first packet sets SEQ_INCREMENTAL_STATE_CLEARED;
//  4. every packet that defines or uses an interned id sets
//     SEQ_NEEDS_INCREMENTAL_STATE, and every iid (event name, category,
//     debug annotation name) is defined earlier on its sequence, since the
//     sequence's last clear;
//  5. repeated scalars are unpacked; flow_ids and terminating_flow_ids are
//     fixed64 (a varint there is such an error);
//  6. every event names a track (its track_uuid, or its sequence's default
//     track) that has a descriptor in the file; uuids are described once;
//     thread tracks have pid and a tid in int32 range, unique per pid;
//     process tracks have a pid;
//  7. per track, sorted by timestamp (file order at equal times), BEGIN and
//     END balance: no END without an open slice, none left open; an END
//     carries only type and track_uuid;
//  8. COUNTER events go to counter tracks and carry a value; slices and
//     instants do not go to counter tracks;
//  9. every flow id occurs on at least two events, and every terminating
//     flow id has a source (flow_ids) somewhere;
//  10. timestamp_clock_id is set only if the file has a ClockSnapshot, and
//     every timestamp resolves to the trace clock (through the snapshots,
//     as "Reading timestamps" says); Perfetto would accept every
//     ClockSnapshot (a clock read once in it, sequence-scoped where
//     incremental, its unit unchanged, none reading less than before); a
//     packet with a ClockSnapshot holds no track event or descriptor
//     (Perfetto reads nothing else of it);
//  11. after a packet sets TracePacketDefaults, every later packet of its
//     sequence sets SEQ_NEEDS_INCREMENTAL_STATE until the sequence is
//     cleared again;
//  12. a packet that needs incremental state does not follow a
//     previous_packet_dropped on its sequence without a clear in between:
//     Perfetto skips such packets;
//  13. an event's extra_counter_values have as many counter tracks or
//     more (its extra_counter_track_uuids, else its sequence's defaults'),
//     and each track a value is for is a counter track with a descriptor
//     in the file; a value on the defaults' tracks sets
//     SEQ_NEEDS_INCREMENTAL_STATE.
//
// Timestamps are compared as the package doc's "Reading timestamps" resolves them. It returns a
// *CheckError listing violations. Memory is O(events).
func Check(data []byte) (CheckStats, error) {
	c := checker{
		seqs:   make(map[uint32]*seqCheck),
		tracks: make(map[uint64]*trackCheck),
		tids:   make(map[[2]int64]uint64),
		flows:  make(map[uint64]*flowCheck),
	}
	err := pfwire.Decode(data, c.packet)
	if err != nil {
		return c.stats, err
	}
	c.finish()
	c.stats.Sequences = len(c.seqs)
	c.stats.Tracks = len(c.tracks)
	c.stats.Flows = len(c.flows)
	if c.probs.Total > 0 {
		return c.stats, &CheckError{Problems: c.probs.Msgs, Total: c.probs.Total}
	}
	return c.stats, nil
}

type seqCheck struct {
	names, cats, annots map[uint64]bool
	// defaults: the sequence has TracePacketDefaults (since its last
	// clear); lost: the index+1 of a previous_packet_dropped packet with
	// no clear since (0 = none), reported once.
	defaults bool
	lost     int
}

type trackCheck struct {
	described bool
	counter   bool
	events    []trackEv
	extraAt   int // index+1 of the first packet with an extra counter value for it; 0 = none
}

type trackEv struct {
	ts    uint64
	index int
	typ   int32
}

type flowCheck struct {
	sources, terms, plain int // events with the id in flow_ids / terminating / (unused)
	firstPacket           int
}

type checker struct {
	seqs     map[uint32]*seqCheck
	tracks   map[uint64]*trackCheck
	tids     map[[2]int64]uint64
	flows    map[uint64]*flowCheck
	clockIDs int // packets with timestamp_clock_id
	clockSn  bool
	stats    CheckStats
	probs    problems.List
}

func (c *checker) bad(p *pfwire.Packet, format string, args ...any) {
	where := fmt.Sprintf("packet %d (byte %d): ", p.Index, p.Offset)
	if p.Offset < 0 {
		where = fmt.Sprintf("packet %d: ", p.Index)
	}
	c.probs.Add("%s"+format, append([]any{where}, args...)...)
}

func (c *checker) track(uuid uint64) *trackCheck {
	t := c.tracks[uuid]
	if t == nil {
		t = &trackCheck{}
		c.tracks[uuid] = t
	}
	return t
}

func (c *checker) packet(p *pfwire.Packet) error {
	c.stats.Packets++
	if p.PrevDropped {
		c.stats.PrevDropped++
	}
	if p.HasClockID {
		c.clockIDs++
	}
	if p.ClockSnapshot {
		c.clockSn = true
	}
	for _, f := range p.Packed {
		c.bad(p, "%s is packed; Perfetto needs repeated scalars unpacked", f)
	}

	// Sequences and incremental state.
	var seq *seqCheck
	if p.Seq != 0 {
		seq = c.seqs[p.Seq]
		if seq == nil {
			seq = &seqCheck{}
			c.seqs[p.Seq] = seq
			if p.Flags&pfwire.SeqIncrementalStateCleared == 0 {
				c.bad(p, "first packet of sequence %d does not set SEQ_INCREMENTAL_STATE_CLEARED", p.Seq)
			}
		}
		cleared := p.Flags&pfwire.SeqIncrementalStateCleared != 0
		if cleared {
			seq.names = make(map[uint64]bool)
			seq.cats = make(map[uint64]bool)
			seq.annots = make(map[uint64]bool)
			seq.defaults, seq.lost = false, 0
		} else if p.Flags&pfwire.SeqNeedsIncrementalState == 0 && seq.defaults {
			c.bad(p, "sequence %d has TracePacketDefaults but this packet does not set SEQ_NEEDS_INCREMENTAL_STATE", p.Seq)
		}
		if p.PrevDropped && !cleared && seq.lost == 0 {
			seq.lost = p.Index + 1
		}
		if p.Flags&pfwire.SeqNeedsIncrementalState != 0 && seq.lost > 0 {
			c.bad(p, "needs incremental state, but packet %d of sequence %d set previous_packet_dropped and the sequence was not cleared since: Perfetto skips this packet and the sequence's later ones until a clear",
				seq.lost-1, p.Seq)
			seq.lost = -1 // reported
		}
		if p.HasDefaults {
			seq.defaults = true
		}
	} else if p.HasEvent {
		c.bad(p, "track event without trusted_packet_sequence_id")
	}
	if p.ClockProblem != "" {
		c.bad(p, "ClockSnapshot that Perfetto rejects: %s", p.ClockProblem)
	}
	if p.ClockSnapshot && (p.HasEvent || p.HasTrack) {
		c.bad(p, "a packet with a ClockSnapshot also holds a track event or descriptor, which Perfetto does not read")
	}
	if p.Unresolved {
		if p.Clock >= pfwire.ClockSequenceFirst && p.Clock < pfwire.ClockSequenceEnd {
			c.bad(p, "timestamp on clock %d, which no earlier ClockSnapshot on sequence %d relates to BOOTTIME", p.Clock, p.Seq)
		} else {
			c.bad(p, "timestamp on clock %d, which no earlier ClockSnapshot relates to BOOTTIME", p.Clock)
		}
	}
	if p.Interned.Present {
		if p.Flags&pfwire.SeqNeedsIncrementalState == 0 {
			c.bad(p, "defines interned data without SEQ_NEEDS_INCREMENTAL_STATE")
		}
		if seq == nil {
			c.bad(p, "interned data outside a sequence")
		} else if seq.names != nil {
			define(c, p, seq.names, p.Interned.Names, "event name")
			define(c, p, seq.cats, p.Interned.Categories, "category")
			define(c, p, seq.annots, p.Interned.AnnotationNames, "debug annotation name")
		}
	}

	if p.HasTrack {
		c.descriptor(p)
	}
	if p.HasEvent {
		c.event(p, seq)
	}
	return nil
}

func define(c *checker, p *pfwire.Packet, set map[uint64]bool, entries []pfwire.InternedString, what string) {
	for _, e := range entries {
		if e.IID == 0 {
			c.bad(p, "%s interned with iid 0", what)
		}
		set[e.IID] = true
	}
}

func (c *checker) descriptor(p *pfwire.Packet) {
	d := &p.Track
	if !d.HasUUID || d.UUID == 0 {
		c.bad(p, "track descriptor without a non-zero uuid")
		return
	}
	t := c.track(d.UUID)
	if t.described {
		c.bad(p, "track %d described twice", d.UUID)
	}
	t.described = true
	t.counter = d.Counter
	if d.HasProcess && !d.HasProcPid {
		c.bad(p, "process track %d without pid", d.UUID)
	}
	if d.HasThread {
		if !d.HasThrPid || !d.HasTid {
			c.bad(p, "thread track %d without pid and tid", d.UUID)
		}
		if d.Tid < math.MinInt32 || d.Tid > math.MaxInt32 || d.ThreadPid < math.MinInt32 || d.ThreadPid > math.MaxInt32 {
			c.bad(p, "thread track %d: pid %d / tid %d out of int32 range", d.UUID, d.ThreadPid, d.Tid)
		}
		key := [2]int64{d.ThreadPid, d.Tid}
		if other, ok := c.tids[key]; ok {
			c.bad(p, "thread tracks %d and %d share pid %d tid %d", other, d.UUID, d.ThreadPid, d.Tid)
		}
		c.tids[key] = d.UUID
	}
}

func (c *checker) event(p *pfwire.Packet, seq *seqCheck) {
	e := &p.Event
	if !p.HasTimestamp {
		c.bad(p, "track event without timestamp")
	}
	usesIID := e.NameIID != 0 || len(e.CategoryIIDs) > 0
	for _, a := range e.Annotations {
		usesIID = usesIID || a.NameIID != 0
	}
	if usesIID {
		if p.Flags&pfwire.SeqNeedsIncrementalState == 0 {
			c.bad(p, "uses interned ids without SEQ_NEEDS_INCREMENTAL_STATE")
		}
		if seq != nil {
			if e.NameIID != 0 && !seq.names[e.NameIID] {
				c.bad(p, "event name iid %d not defined earlier on sequence %d", e.NameIID, p.Seq)
			}
			for _, iid := range e.CategoryIIDs {
				if !seq.cats[iid] {
					c.bad(p, "category iid %d not defined earlier on sequence %d", iid, p.Seq)
				}
			}
			for _, a := range e.Annotations {
				if a.NameIID != 0 && !seq.annots[a.NameIID] {
					c.bad(p, "debug annotation name iid %d not defined earlier on sequence %d", a.NameIID, p.Seq)
				}
			}
		}
	}
	if !e.HasTrackUUID || e.TrackUUID == 0 {
		c.bad(p, "track event without track_uuid, and its sequence has no default track")
		return
	}
	t := c.track(e.TrackUUID)
	switch e.Type {
	case pfwire.TypeSliceBegin:
		c.stats.Slices++
	case pfwire.TypeSliceEnd:
		if e.Other != 0 {
			c.bad(p, "slice END on track %d carries %d field(s) besides type and track_uuid", e.TrackUUID, e.Other)
		}
	case pfwire.TypeInstant:
		c.stats.Instants++
	case pfwire.TypeCounter:
		c.stats.Counters++
		if !e.HasCounterValue && !e.HasDoubleCounter {
			c.bad(p, "counter event on track %d without a value", e.TrackUUID)
		}
	default:
		c.bad(p, "track event with type %d", e.Type)
	}
	if e.Type == pfwire.TypeSliceBegin || e.Type == pfwire.TypeSliceEnd || e.Type == pfwire.TypeInstant || e.Type == pfwire.TypeCounter {
		t.events = append(t.events, trackEv{ts: p.Timestamp, index: p.Index, typ: e.Type})
	}
	if n := len(e.ExtraCounterValues); n > 0 {
		if n > len(e.ExtraCounterTrackUUIDs) {
			c.bad(p, "%d extra_counter_values for %d extra counter track(s)", n, len(e.ExtraCounterTrackUUIDs))
		}
		if e.DefaultExtraTracks && p.Flags&pfwire.SeqNeedsIncrementalState == 0 {
			c.bad(p, "extra_counter_values on the defaults' tracks without SEQ_NEEDS_INCREMENTAL_STATE")
		}
		for _, u := range e.ExtraCounterTrackUUIDs[:min(n, len(e.ExtraCounterTrackUUIDs))] {
			if t := c.track(u); t.extraAt == 0 {
				t.extraAt = p.Index + 1
			}
		}
	}
	for _, id := range e.FlowIDs {
		f := c.flow(id, p.Index)
		f.sources++
	}
	for _, id := range e.TerminatingFlowIDs {
		f := c.flow(id, p.Index)
		f.terms++
	}
}

func (c *checker) flow(id uint64, idx int) *flowCheck {
	f := c.flows[id]
	if f == nil {
		f = &flowCheck{firstPacket: idx}
		c.flows[id] = f
	}
	return f
}

// finish runs the whole-file rules.
func (c *checker) finish() {
	at := func(index int) *pfwire.Packet { return &pfwire.Packet{Index: index, Offset: -1} }
	uuids := make([]uint64, 0, len(c.tracks))
	for u := range c.tracks {
		uuids = append(uuids, u)
	}
	slices.Sort(uuids)
	for _, u := range uuids {
		t := c.tracks[u]
		if t.extraAt > 0 && (!t.described || !t.counter) {
			c.bad(at(t.extraAt-1), "extra counter value for track %d, which is not a described counter track", u)
		}
		if len(t.events) == 0 {
			continue
		}
		if !t.described {
			c.bad(at(t.events[0].index), "track %d is used but has no descriptor", u)
			continue
		}
		slices.SortStableFunc(t.events, func(a, b trackEv) int {
			switch {
			case a.ts < b.ts:
				return -1
			case a.ts > b.ts:
				return 1
			}
			return 0
		})
		depth := 0
		for _, ev := range t.events {
			switch ev.typ {
			case pfwire.TypeCounter:
				if !t.counter {
					c.bad(at(ev.index), "counter event on non-counter track %d", u)
				}
			case pfwire.TypeSliceBegin, pfwire.TypeInstant:
				if t.counter {
					c.bad(at(ev.index), "slice event on counter track %d", u)
				}
				if ev.typ == pfwire.TypeSliceBegin {
					depth++
				}
			case pfwire.TypeSliceEnd:
				if t.counter {
					c.bad(at(ev.index), "slice event on counter track %d", u)
				}
				if depth == 0 {
					c.bad(at(ev.index), "slice END on track %d with no open slice", u)
				} else {
					depth--
				}
			}
		}
		if depth != 0 {
			c.bad(at(t.events[len(t.events)-1].index), "track %d ends with %d open slice(s)", u, depth)
		}
	}
	ids := make([]uint64, 0, len(c.flows))
	for id := range c.flows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		f := c.flows[id]
		if f.sources+f.terms < 2 {
			c.bad(at(f.firstPacket), "flow %#x has only one end", id)
		} else if f.terms > 0 && f.sources == 0 {
			c.bad(at(f.firstPacket), "terminating flow %#x has no source (flow_ids)", id)
		}
	}
	if c.clockIDs > 0 && !c.clockSn {
		c.bad(at(0), "%d packet(s) set timestamp_clock_id but the file has no ClockSnapshot", c.clockIDs)
	}
}
