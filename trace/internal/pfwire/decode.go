package pfwire

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Packet is one decoded TracePacket: the fields of wsched's subset
// (perfettopb/perfetto.proto); other fields are skipped. Decode reuses one
// Packet for every record, so it is valid only during the callback.
type Packet struct {
	Index  int // position in the file, from 0
	Offset int // byte offset of the record's 0x0A tag

	// Timestamp is the packet's time in nanoseconds on the trace clock
	// (BOOTTIME): RawTimestamp resolved through the clock it is on, as
	// Perfetto's trace processor resolves it (see "Reading timestamps" in
	// the package doc). It equals RawTimestamp for a packet on the trace
	// clock, for an Unresolved one and for one that holds a ClockSnapshot
	// (Perfetto reads nothing else of such a packet).
	Timestamp    uint64
	HasTimestamp bool
	RawTimestamp uint64 // timestamp as written
	// Clock is the clock RawTimestamp is on: timestamp_clock_id if the
	// packet sets it, else the sequence's default (TracePacketDefaults),
	// else 0, the trace clock.
	Clock uint32
	// Delta: RawTimestamp was a delta on an incremental clock.
	Delta bool
	// Unresolved: Clock is neither the trace clock nor BOOTTIME and no
	// earlier ClockSnapshot relates it to BOOTTIME (a sequence-scoped
	// clock, ids 64-127: on this packet's sequence), or its snapshots
	// went backwards. Perfetto would delay or drop such a packet.
	Unresolved bool

	ClockID     uint32 // timestamp_clock_id as written
	HasClockID  bool
	Seq         uint32 // trusted_packet_sequence_id
	Flags       uint32 // sequence_flags
	PrevDropped bool   // previous_packet_dropped

	ClockSnapshot bool    // has a clock_snapshot
	Clocks        []Clock // its clocks
	// ClockProblem says why the snapshot was not used ("" if it was):
	// Perfetto's trace processor rejects the same snapshots.
	ClockProblem string

	HasDefaults bool // has trace_packet_defaults
	Defaults    Defaults

	HasEvent bool
	Event    TrackEvent
	HasTrack bool
	Track    TrackDesc
	Interned Interned

	// Packed lists repeated scalar fields that were encoded packed (legal
	// protobuf, but Perfetto needs them unpacked); e.g. "TrackEvent.flow_ids".
	Packed []string
}

// Clock is one reading of a ClockSnapshot.
type Clock struct {
	ID          uint32
	Timestamp   uint64 // in units of Unit ns
	Incremental bool
	Unit        uint64 // unit_multiplier_ns as written; 0 means 1
}

// Defaults are a sequence's TracePacketDefaults: they hold for its later
// packets until its incremental state is cleared.
type Defaults struct {
	ClockID      uint32 // timestamp_clock_id
	HasClockID   bool
	TrackUUID    uint64 // track_event_defaults.track_uuid
	HasTrackUUID bool
	// ExtraCounterTrackUUIDs is track_event_defaults.
	// extra_counter_track_uuids: the counter tracks of an event's
	// ExtraCounterValues when it names none.
	ExtraCounterTrackUUIDs []uint64
}

// TrackEvent is a decoded TrackEvent.
type TrackEvent struct {
	Type int32
	// TrackUUID is the event's track: its track_uuid or, if it has none,
	// its sequence's default track (DefaultTrack). HasTrackUUID says
	// whether it has either.
	TrackUUID          uint64
	HasTrackUUID       bool
	DefaultTrack       bool
	NameIID            uint64
	Name               string
	HasName            bool // name (field 23) present
	CategoryIIDs       []uint64
	Categories         []string
	CounterValue       int64
	HasCounterValue    bool
	DoubleCounterValue float64
	HasDoubleCounter   bool
	// ExtraCounterValues are values for counter tracks at the event's
	// time, ExtraCounterValues[i] for ExtraCounterTrackUUIDs[i]: the
	// event's extra_counter_track_uuids or, if it names none, its
	// sequence's defaults' (DefaultExtraTracks).
	ExtraCounterValues     []int64
	ExtraCounterTrackUUIDs []uint64
	DefaultExtraTracks     bool
	Annotations            []Annotation
	FlowIDs                []uint64
	TerminatingFlowIDs     []uint64
	// Other counts the fields present besides type and track_uuid.
	Other int
}

// AnnotationKind says which value an Annotation holds.
type AnnotationKind uint8

// Annotation value kinds.
const (
	AnnotNone AnnotationKind = iota
	AnnotBool
	AnnotUint
	AnnotInt
	AnnotDouble
	AnnotString
)

// Annotation is a decoded DebugAnnotation.
type Annotation struct {
	NameIID uint64
	Name    string
	Kind    AnnotationKind
	Bool    bool
	Uint    uint64
	Int     int64
	Double  float64
	String  string
}

// TrackDesc is a decoded TrackDescriptor.
type TrackDesc struct {
	UUID        uint64
	HasUUID     bool
	ParentUUID  uint64
	Name        string
	Description string

	HasProcess  bool
	ProcessPid  int64 // as decoded (may be out of int32 range)
	HasProcPid  bool
	ProcessName string

	HasThread  bool
	ThreadPid  int64
	HasThrPid  bool
	Tid        int64
	HasTid     bool
	ThreadName string

	Counter bool // has a CounterDescriptor
}

// InternedString is one interned entry (EventName, EventCategory,
// DebugAnnotationName).
type InternedString struct {
	IID  uint64
	Name string
}

// Interned is decoded InternedData.
type Interned struct {
	Present         bool
	Names           []InternedString
	Categories      []InternedString
	AnnotationNames []InternedString
}

// DecodeError reports malformed input.
type DecodeError struct {
	Offset int // byte offset in the file
	Msg    string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("perfetto: malformed trace at byte %d: %s", e.Offset, e.Msg)
}

// Decode parses data as a Perfetto trace (a run of `0x0A <len> <packet>`
// records) and calls fn for each packet, stopping at the first error from
// fn or at malformed input (a *DecodeError). It resolves each packet's
// timestamp and default track through the ClockSnapshots and
// TracePacketDefaults before it, as Perfetto's trace processor does (see
// "Reading timestamps" in the package doc). It never allocates in
// proportion to a length read from the input: every length is checked
// against the bytes that remain, so memory is bounded by len(data).
func Decode(data []byte, fn func(*Packet) error) error {
	var p Packet
	var d resolver
	for off, idx := 0, 0; off < len(data); idx++ {
		num, typ, n := protowire.ConsumeTag(data[off:])
		if n < 0 {
			return &DecodeError{off, "bad record tag: " + protowire.ParseError(n).Error()}
		}
		if num != FTracePacket || typ != protowire.BytesType {
			return &DecodeError{off, fmt.Sprintf("not a trace packet record (field %d, wire type %d; want field 1, bytes)", num, typ)}
		}
		body, m := protowire.ConsumeBytes(data[off+n:])
		if m < 0 {
			return &DecodeError{off, "bad packet length: " + protowire.ParseError(m).Error()}
		}
		p.reset(idx, off)
		if err := p.decode(body, off+n+m-len(body)); err != nil {
			return err
		}
		d.resolve(&p)
		if err := fn(&p); err != nil {
			return err
		}
		off += n + m
	}
	return nil
}

func (p *Packet) reset(idx, off int) {
	ev, intern, packed, clocks := p.Event, p.Interned, p.Packed[:0], p.Clocks[:0]
	*p = Packet{Index: idx, Offset: off, Packed: packed, Clocks: clocks}
	ev.reset()
	p.Event = ev
	p.Defaults = Defaults{ExtraCounterTrackUUIDs: p.Defaults.ExtraCounterTrackUUIDs[:0]}
	p.Interned = Interned{
		Names:           intern.Names[:0],
		Categories:      intern.Categories[:0],
		AnnotationNames: intern.AnnotationNames[:0],
	}
}

func (e *TrackEvent) reset() {
	*e = TrackEvent{
		CategoryIIDs:           e.CategoryIIDs[:0],
		Categories:             e.Categories[:0],
		Annotations:            e.Annotations[:0],
		ExtraCounterValues:     e.ExtraCounterValues[:0],
		ExtraCounterTrackUUIDs: e.ExtraCounterTrackUUIDs[:0],
		FlowIDs:                e.FlowIDs[:0],
		TerminatingFlowIDs:     e.TerminatingFlowIDs[:0],
	}
}

// fields iterates the fields of one message, checking wire types. base is
// the message's offset in the file, for errors.
type fieldIter struct {
	b    []byte
	base int
	off  int
	num  protowire.Number
	typ  protowire.Type
	val  []byte // BytesType payload
	u    uint64 // varint, fixed32 or fixed64 value
	err  error
}

func (it *fieldIter) next() bool {
	if it.err != nil || it.off >= len(it.b) {
		return false
	}
	b := it.b[it.off:]
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		it.fail("bad tag: " + protowire.ParseError(n).Error())
		return false
	}
	it.num, it.typ = num, typ
	var m int
	switch typ {
	case protowire.VarintType:
		it.u, m = protowire.ConsumeVarint(b[n:])
	case protowire.Fixed64Type:
		it.u, m = protowire.ConsumeFixed64(b[n:])
	case protowire.Fixed32Type:
		var v uint32
		v, m = protowire.ConsumeFixed32(b[n:])
		it.u = uint64(v)
	case protowire.BytesType:
		it.val, m = protowire.ConsumeBytes(b[n:])
	default:
		m = protowire.ConsumeFieldValue(num, typ, b[n:])
	}
	if m < 0 {
		it.fail(fmt.Sprintf("field %d: %v", num, protowire.ParseError(m)))
		return false
	}
	it.off += n + m
	return true
}

func (it *fieldIter) fail(msg string) {
	if it.err == nil {
		it.err = &DecodeError{it.base + it.off, msg}
	}
}

// want checks the current field's wire type.
func (it *fieldIter) want(msg string, typ protowire.Type) bool {
	if it.typ != typ {
		it.fail(fmt.Sprintf("%s.%d has wire type %d, want %d", msg, it.num, it.typ, typ))
		return false
	}
	return true
}

// sub returns an iterator over the current BytesType field's payload.
func (it *fieldIter) sub() *fieldIter {
	return &fieldIter{b: it.val, base: it.base + it.off - len(it.val)}
}

func (p *Packet) decode(b []byte, base int) error {
	it := fieldIter{b: b, base: base}
	for it.next() {
		switch it.num {
		case FTimestamp:
			if it.want("TracePacket", protowire.VarintType) {
				p.RawTimestamp, p.HasTimestamp = it.u, true
			}
		case FTimestampClockID:
			if it.want("TracePacket", protowire.VarintType) {
				p.ClockID, p.HasClockID = uint32(it.u), true
			}
		case FSequenceID:
			if it.want("TracePacket", protowire.VarintType) {
				p.Seq = uint32(it.u)
			}
		case FSequenceFlags:
			if it.want("TracePacket", protowire.VarintType) {
				p.Flags = uint32(it.u)
			}
		case FPreviousDropped:
			if it.want("TracePacket", protowire.VarintType) {
				p.PrevDropped = it.u != 0
			}
		case FClockSnapshot:
			if it.want("TracePacket", protowire.BytesType) {
				p.ClockSnapshot = true
				p.decodeClocks(it.sub(), &it)
			}
		case FPacketDefaults:
			if it.want("TracePacket", protowire.BytesType) {
				p.HasDefaults = true
				decodeDefaults(&p.Defaults, it.sub(), &it)
			}
		case FTrackEvent:
			if it.want("TracePacket", protowire.BytesType) {
				p.HasEvent = true
				p.decodeEvent(it.sub(), &it)
			}
		case FTrackDescriptor:
			if it.want("TracePacket", protowire.BytesType) {
				p.HasTrack = true
				decodeTrack(&p.Track, it.sub(), &it)
			}
		case FInternedData:
			if it.want("TracePacket", protowire.BytesType) {
				p.Interned.Present = true
				decodeInterned(&p.Interned, it.sub(), &it)
			}
		}
	}
	return it.err
}

// propagate copies a sub-iterator's error to its parent.
func propagate(sub, parent *fieldIter) {
	if sub.err != nil && parent.err == nil {
		parent.err = sub.err
	}
}

func (p *Packet) decodeEvent(it, parent *fieldIter) {
	defer propagate(it, parent)
	e := &p.Event
	for it.next() {
		if it.num != FTEType && it.num != FTETrackUUID {
			e.Other++
		}
		switch it.num {
		case FTEType:
			if it.want("TrackEvent", protowire.VarintType) {
				e.Type = int32(it.u)
			}
		case FTETrackUUID:
			if it.want("TrackEvent", protowire.VarintType) {
				e.TrackUUID, e.HasTrackUUID = it.u, true
			}
		case FTENameIID:
			if it.want("TrackEvent", protowire.VarintType) {
				e.NameIID = it.u
			}
		case FTEName:
			if it.want("TrackEvent", protowire.BytesType) {
				e.Name, e.HasName = string(it.val), true
			}
		case FTECategories:
			if it.want("TrackEvent", protowire.BytesType) {
				e.Categories = append(e.Categories, string(it.val))
			}
		case FTECategoryIIDs:
			e.CategoryIIDs = repeatedVarint(p, it, e.CategoryIIDs, "TrackEvent.category_iids")
		case FTECounterValue:
			if it.want("TrackEvent", protowire.VarintType) {
				e.CounterValue, e.HasCounterValue = int64(it.u), true
			}
		case FTEDoubleCounter:
			if it.want("TrackEvent", protowire.Fixed64Type) {
				e.DoubleCounterValue, e.HasDoubleCounter = math.Float64frombits(it.u), true
			}
		case FTEExtraUUIDs:
			e.ExtraCounterTrackUUIDs = repeatedVarint(p, it, e.ExtraCounterTrackUUIDs, "TrackEvent.extra_counter_track_uuids")
		case FTEExtraValues:
			e.ExtraCounterValues = repeatedVarint(p, it, e.ExtraCounterValues, "TrackEvent.extra_counter_values")
		case FTEAnnotations:
			if it.want("TrackEvent", protowire.BytesType) {
				e.Annotations = append(e.Annotations, decodeAnnotation(it.sub(), it))
			}
		case FTEFlowIDs, FTETermFlowIDs:
			dst := &e.FlowIDs
			name := "TrackEvent.flow_ids"
			if it.num == FTETermFlowIDs {
				dst, name = &e.TerminatingFlowIDs, "TrackEvent.terminating_flow_ids"
			}
			switch it.typ {
			case protowire.Fixed64Type:
				*dst = append(*dst, it.u)
			case protowire.BytesType:
				p.Packed = append(p.Packed, name)
				*dst = unpackFixed64(*dst, it)
			default:
				it.want("TrackEvent", protowire.Fixed64Type)
			}
		}
	}
}

// repeatedVarint appends to dst the repeated TrackEvent varint field that
// it holds: one value, or packed values (noted in p.Packed as name).
func repeatedVarint[T uint64 | int64](p *Packet, it *fieldIter, dst []T, name string) []T {
	switch it.typ {
	case protowire.VarintType:
		return append(dst, T(it.u))
	case protowire.BytesType:
		p.Packed = append(p.Packed, name)
		return unpackVarints(dst, it)
	}
	it.want("TrackEvent", protowire.VarintType)
	return dst
}

func unpackVarints[T uint64 | int64](dst []T, it *fieldIter) []T {
	b := it.val
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			it.fail("packed varint: " + protowire.ParseError(n).Error())
			return dst
		}
		dst = append(dst, T(v))
		b = b[n:]
	}
	return dst
}

func unpackFixed64(dst []uint64, it *fieldIter) []uint64 {
	b := it.val
	if len(b)%8 != 0 {
		it.fail("packed fixed64 length not a multiple of 8")
		return dst
	}
	for len(b) > 0 {
		v, _ := protowire.ConsumeFixed64(b)
		dst = append(dst, v)
		b = b[8:]
	}
	return dst
}

func decodeAnnotation(it, parent *fieldIter) Annotation {
	defer propagate(it, parent)
	var a Annotation
	for it.next() {
		switch it.num {
		case FDANameIID:
			if it.want("DebugAnnotation", protowire.VarintType) {
				a.NameIID = it.u
			}
		case FDAName:
			if it.want("DebugAnnotation", protowire.BytesType) {
				a.Name = string(it.val)
			}
		case FDABool:
			if it.want("DebugAnnotation", protowire.VarintType) {
				a.Kind, a.Bool = AnnotBool, it.u != 0
			}
		case FDAUint:
			if it.want("DebugAnnotation", protowire.VarintType) {
				a.Kind, a.Uint = AnnotUint, it.u
			}
		case FDAInt:
			if it.want("DebugAnnotation", protowire.VarintType) {
				a.Kind, a.Int = AnnotInt, int64(it.u)
			}
		case FDADouble:
			if it.want("DebugAnnotation", protowire.Fixed64Type) {
				a.Kind, a.Double = AnnotDouble, math.Float64frombits(it.u)
			}
		case FDAString:
			if it.want("DebugAnnotation", protowire.BytesType) {
				a.Kind, a.String = AnnotString, string(it.val)
			}
		}
	}
	return a
}

func decodeTrack(t *TrackDesc, it, parent *fieldIter) {
	defer propagate(it, parent)
	*t = TrackDesc{}
	for it.next() {
		switch it.num {
		case FTDUUID:
			if it.want("TrackDescriptor", protowire.VarintType) {
				t.UUID, t.HasUUID = it.u, true
			}
		case FTDParentUUID:
			if it.want("TrackDescriptor", protowire.VarintType) {
				t.ParentUUID = it.u
			}
		case FTDName:
			if it.want("TrackDescriptor", protowire.BytesType) {
				t.Name = string(it.val)
			}
		case FTDDescription:
			if it.want("TrackDescriptor", protowire.BytesType) {
				t.Description = string(it.val)
			}
		case FTDCounter:
			if it.want("TrackDescriptor", protowire.BytesType) {
				t.Counter = true
				sub := it.sub()
				for sub.next() {
				}
				propagate(sub, it)
			}
		case FTDProcess:
			if it.want("TrackDescriptor", protowire.BytesType) {
				t.HasProcess = true
				sub := it.sub()
				for sub.next() {
					switch sub.num {
					case FPDPid:
						if sub.want("ProcessDescriptor", protowire.VarintType) {
							t.ProcessPid, t.HasProcPid = int64(sub.u), true
						}
					case FPDName:
						if sub.want("ProcessDescriptor", protowire.BytesType) {
							t.ProcessName = string(sub.val)
						}
					}
				}
				propagate(sub, it)
			}
		case FTDThread:
			if it.want("TrackDescriptor", protowire.BytesType) {
				t.HasThread = true
				sub := it.sub()
				for sub.next() {
					switch sub.num {
					case FThDPid:
						if sub.want("ThreadDescriptor", protowire.VarintType) {
							t.ThreadPid, t.HasThrPid = int64(sub.u), true
						}
					case FThDTid:
						if sub.want("ThreadDescriptor", protowire.VarintType) {
							t.Tid, t.HasTid = int64(sub.u), true
						}
					case FThDName:
						if sub.want("ThreadDescriptor", protowire.BytesType) {
							t.ThreadName = string(sub.val)
						}
					}
				}
				propagate(sub, it)
			}
		}
	}
}

func (p *Packet) decodeClocks(it, parent *fieldIter) {
	defer propagate(it, parent)
	for it.next() {
		if it.num != FCSClocks {
			continue
		}
		if !it.want("ClockSnapshot", protowire.BytesType) {
			return
		}
		var c Clock
		sub := it.sub()
		for sub.next() {
			switch sub.num {
			case FClockID:
				if sub.want("ClockSnapshot.Clock", protowire.VarintType) {
					c.ID = uint32(sub.u)
				}
			case FClockTimestamp:
				if sub.want("ClockSnapshot.Clock", protowire.VarintType) {
					c.Timestamp = sub.u
				}
			case FClockIncrement:
				if sub.want("ClockSnapshot.Clock", protowire.VarintType) {
					c.Incremental = sub.u != 0
				}
			case FClockUnitFactor:
				if sub.want("ClockSnapshot.Clock", protowire.VarintType) {
					c.Unit = sub.u
				}
			}
		}
		propagate(sub, it)
		p.Clocks = append(p.Clocks, c)
	}
}

func decodeDefaults(d *Defaults, it, parent *fieldIter) {
	defer propagate(it, parent)
	for it.next() {
		switch it.num {
		case FDefClockID:
			if it.want("TracePacketDefaults", protowire.VarintType) {
				d.ClockID, d.HasClockID = uint32(it.u), true
			}
		case FDefTrackEvent:
			if !it.want("TracePacketDefaults", protowire.BytesType) {
				return
			}
			sub := it.sub()
			for sub.next() {
				switch sub.num {
				case FDefTrackUUID:
					if sub.want("TrackEventDefaults", protowire.VarintType) {
						d.TrackUUID, d.HasTrackUUID = sub.u, true
					}
				case FDefExtraUUIDs:
					if sub.want("TrackEventDefaults", protowire.VarintType) {
						d.ExtraCounterTrackUUIDs = append(d.ExtraCounterTrackUUIDs, sub.u)
					}
				}
			}
			propagate(sub, it)
		}
	}
}

func decodeInterned(in *Interned, it, parent *fieldIter) {
	defer propagate(it, parent)
	for it.next() {
		var dst *[]InternedString
		switch it.num {
		case FIDNames:
			dst = &in.Names
		case FIDCategories:
			dst = &in.Categories
		case FIDAnnotNames:
			dst = &in.AnnotationNames
		default:
			continue
		}
		if !it.want("InternedData", protowire.BytesType) {
			return
		}
		var e InternedString
		sub := it.sub()
		for sub.next() {
			switch sub.num {
			case FINIID:
				if sub.want("InternedData entry", protowire.VarintType) {
					e.IID = sub.u
				}
			case FINName:
				if sub.want("InternedData entry", protowire.BytesType) {
					e.Name = string(sub.val)
				}
			}
		}
		propagate(sub, it)
		*dst = append(*dst, e)
	}
}
