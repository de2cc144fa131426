// Package rawtrace writes Perfetto files packet by packet, with the tracks
// and names of a wsched trace but none of the writer's guarantees, and
// builds the shapes that tests of trace/analyze need: files that claim far
// more than they hold.
package rawtrace

import (
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

// File is a file being written. It claims any number of workers without
// describing their tracks, and draws slices and samples wherever it is told
// (nested cycles, any number of counter samples): inputs that wsched's
// writer never produces. Everything goes on one packet sequence; event and
// annotation names are written inline, packet categories interned.
type File struct {
	buf      []byte
	workers  map[int]uint64
	counters map[counterKey]uint64
	cats     map[string]uint64
	next     uint64
}

type counterKey struct {
	kind  trace.CounterKind
	index int
}

// Track uuids of the tracks every file has.
const (
	Control uint64 = 2 // the control thread: cycles
	Stages  uint64 = 3 // the stage track
)

const seq = 1

// New starts a file whose process track claims workers workers, with the
// control and stage tracks described.
func New(workers int) *File {
	r := &File{workers: map[int]uint64{}, counters: map[counterKey]uint64{}, cats: map[string]uint64{}, next: 16}
	r.packet(&perfettopb.TracePacket{
		SequenceFlags: proto.Uint32(1), // incremental state cleared
		TrackDescriptor: &perfettopb.TrackDescriptor{
			Uuid:        proto.Uint64(1),
			Process:     &perfettopb.ProcessDescriptor{Pid: proto.Int32(1), ProcessName: proto.String("raw")},
			Description: proto.String(perfetto.DescProcess + " workers=" + strconv.Itoa(workers)),
		},
	})
	r.describe(&perfettopb.TrackDescriptor{Uuid: proto.Uint64(Control), ParentUuid: proto.Uint64(1), Description: proto.String(perfetto.DescControl)})
	r.describe(&perfettopb.TrackDescriptor{Uuid: proto.Uint64(Stages), ParentUuid: proto.Uint64(1), Description: proto.String(perfetto.DescStages)})
	return r
}

// Worker returns the uuid of worker i's track, describing it on first use.
func (r *File) Worker(i int) uint64 {
	if u, ok := r.workers[i]; ok {
		return u
	}
	u := r.uuid()
	r.workers[i] = u
	r.describe(&perfettopb.TrackDescriptor{Uuid: proto.Uint64(u), ParentUuid: proto.Uint64(1), Description: proto.String(perfetto.DescWorker + strconv.Itoa(i))})
	return u
}

// Counter returns the uuid of a counter track, describing it on first use.
func (r *File) Counter(kind trace.CounterKind, index int) uint64 {
	k := counterKey{kind, index}
	if u, ok := r.counters[k]; ok {
		return u
	}
	u := r.uuid()
	r.counters[k] = u
	r.describe(&perfettopb.TrackDescriptor{
		Uuid:        proto.Uint64(u),
		ParentUuid:  proto.Uint64(1),
		Counter:     &perfettopb.CounterDescriptor{},
		Description: proto.String(perfetto.DescCounter + kind.String() + ":" + strconv.Itoa(index)),
	})
	return u
}

// Cycle opens cycle n on the control track at t.
func (r *File) Cycle(t int64, n uint64) {
	r.event(t, Control, perfettopb.TrackEvent_TYPE_SLICE_BEGIN, timeline.NameCycle, nil, timeline.ArgCycle, int64(n))
}

// Stage opens stage st, named name, on the stage track at t.
func (r *File) Stage(t int64, st int, name string) {
	r.event(t, Stages, perfettopb.TrackEvent_TYPE_SLICE_BEGIN, name, nil, timeline.ArgStage, int64(st))
}

// End closes the innermost open slice of track at t.
func (r *File) End(t int64, track uint64) {
	r.event(t, track, perfettopb.TrackEvent_TYPE_SLICE_END, "", nil, "", 0)
}

// Packet draws a packet slice of type name, in the stage named stage, on
// worker w from start to end.
func (r *File) Packet(w int, start, end int64, name, stage string) {
	u := r.Worker(w)
	iid, ok := r.cats[stage]
	var in *perfettopb.InternedData
	if !ok {
		iid = uint64(len(r.cats) + 1)
		r.cats[stage] = iid
		in = &perfettopb.InternedData{EventCategories: []*perfettopb.EventCategory{{Iid: proto.Uint64(iid), Name: proto.String(stage)}}}
	}
	r.event(start, u, perfettopb.TrackEvent_TYPE_SLICE_BEGIN, name, in, "", 0, iid)
	r.End(end, u)
}

// Park draws a "parked" slice on worker w from start to end.
func (r *File) Park(w int, start, end int64) {
	u := r.Worker(w)
	r.event(start, u, perfettopb.TrackEvent_TYPE_SLICE_BEGIN, timeline.NamePark, nil, "", 0)
	r.End(end, u)
}

// Wake draws a "wake" instant aimed at worker target on the control track.
func (r *File) Wake(t int64, target int) {
	r.event(t, Control, perfettopb.TrackEvent_TYPE_INSTANT, timeline.NameWake, nil, timeline.ArgTarget, int64(target))
}

// Sample writes a counter sample on the counter track (kind, index).
func (r *File) Sample(t int64, kind trace.CounterKind, index int, v int64) {
	u := r.Counter(kind, index)
	r.packet(&perfettopb.TracePacket{
		Timestamp:               proto.Uint64(uint64(t)),
		TrustedPacketSequenceId: proto.Uint32(seq),
		TrackEvent: &perfettopb.TrackEvent{
			Type:         perfettopb.TrackEvent_TYPE_COUNTER.Enum(),
			TrackUuid:    proto.Uint64(u),
			CounterValue: proto.Int64(v),
		},
	})
}

// Bytes returns the file so far.
func (r *File) Bytes() []byte { return r.buf }

func (r *File) uuid() uint64 {
	r.next++
	return r.next - 1
}

func (r *File) describe(td *perfettopb.TrackDescriptor) {
	r.packet(&perfettopb.TracePacket{TrustedPacketSequenceId: proto.Uint32(seq), TrackDescriptor: td})
}

// event writes a track event; an annotation if key is not empty, a
// category if cats has one.
func (r *File) event(t int64, track uint64, typ perfettopb.TrackEvent_Type, name string, in *perfettopb.InternedData, key string, v int64, cats ...uint64) {
	te := &perfettopb.TrackEvent{Type: typ.Enum(), TrackUuid: proto.Uint64(track), CategoryIids: cats}
	if name != "" {
		te.Name = proto.String(name)
	}
	if key != "" {
		te.DebugAnnotations = []*perfettopb.DebugAnnotation{{Name: proto.String(key), IntValue: proto.Int64(v)}}
	}
	p := &perfettopb.TracePacket{
		Timestamp:               proto.Uint64(uint64(t)),
		TrustedPacketSequenceId: proto.Uint32(seq),
		TrackEvent:              te,
		InternedData:            in,
	}
	if in != nil || len(cats) > 0 {
		p.SequenceFlags = proto.Uint32(2) // needs incremental state
	}
	r.packet(p)
}

func (r *File) packet(p *perfettopb.TracePacket) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		panic(err) // every message here is valid
	}
	r.buf = protowire.AppendTag(r.buf, 1, protowire.BytesType)
	r.buf = protowire.AppendBytes(r.buf, b)
}

// The shapes below claim or nest far more than they hold. Each is small;
// trace/analyze must answer in time and memory proportional to it.

// ManyWorkersEmptyCycles claims workers workers and holds cycles empty
// cycles, one after the other, and nothing else.
func ManyWorkersEmptyCycles(workers, cycles int) []byte {
	r := New(workers)
	for c := range cycles {
		t := int64(c) * 1000
		r.Cycle(t, uint64(c+1))
		r.End(t+500, Control)
	}
	return r.Bytes()
}

// ManyWorkersSamples claims workers workers and holds one cycle with one
// stage whose bucket depth is sampled samples times, alternating between
// 1 and 0, and one packet on worker 0.
func ManyWorkersSamples(workers, samples int) []byte {
	r := New(workers)
	end := int64(samples+2) * 100
	r.Cycle(0, 1)
	r.Stage(0, 1, "S")
	r.Packet(0, 50, end-50, "P", "S")
	for i := range samples {
		r.Sample(int64(i+1)*100, trace.CounterBucketDepth, 1, int64(1-i%2))
	}
	r.End(end, Stages)
	r.End(end, Control)
	return r.Bytes()
}

// NestedCycles holds cycles cycle slices, each opened inside the previous
// one, around stages stages, the first of which holds a packet on worker 0
// (of 2).
func NestedCycles(cycles, stages int) []byte {
	r := New(2)
	for c := range cycles {
		r.Cycle(int64(c), uint64(c+1))
	}
	t := int64(cycles)
	for s := range stages {
		r.Stage(t, s+1, "S"+strconv.Itoa(s+1))
		if s == 0 {
			r.Packet(0, t, t+10, "P", "S1")
		}
		t += 10
		r.End(t, Stages)
	}
	for range cycles {
		t++
		r.End(t, Control)
	}
	return r.Bytes()
}

// QueuedPacket is Packet with an annotation perfetto.ArgQueued of value
// queued (how the packet was queued, as perfetto.Options.Origins writes
// it).
func (r *File) QueuedPacket(w int, start, end int64, name, stage string, queued uint64) {
	u := r.Worker(w)
	iid, ok := r.cats[stage]
	var in *perfettopb.InternedData
	if !ok {
		iid = uint64(len(r.cats) + 1)
		r.cats[stage] = iid
		in = &perfettopb.InternedData{EventCategories: []*perfettopb.EventCategory{{Iid: proto.Uint64(iid), Name: proto.String(stage)}}}
	}
	te := &perfettopb.TrackEvent{
		Type: perfettopb.TrackEvent_TYPE_SLICE_BEGIN.Enum(), TrackUuid: proto.Uint64(u), CategoryIids: []uint64{iid},
		Name:             proto.String(name),
		DebugAnnotations: []*perfettopb.DebugAnnotation{{Name: proto.String(perfetto.ArgQueued), UintValue: proto.Uint64(queued)}},
	}
	r.packet(&perfettopb.TracePacket{
		Timestamp: proto.Uint64(uint64(start)), TrustedPacketSequenceId: proto.Uint32(seq),
		TrackEvent: te, InternedData: in, SequenceFlags: proto.Uint32(2),
	})
	r.End(end, u)
}

// AddCall draws an add instant on the control track at t: how ("add",
// "priority", ...), into stage, of packets packets, whose first was
// stamped born.
func (r *File) AddCall(t int64, how string, stage int, packets uint64, born int64) {
	te := &perfettopb.TrackEvent{
		Type: perfettopb.TrackEvent_TYPE_INSTANT.Enum(), TrackUuid: proto.Uint64(Control), Name: proto.String(timeline.NameAdd),
		DebugAnnotations: []*perfettopb.DebugAnnotation{
			{Name: proto.String(timeline.ArgHow), StringValue: proto.String(how)},
			{Name: proto.String(timeline.ArgStage), IntValue: proto.Int64(int64(stage))},
			{Name: proto.String(timeline.ArgPackets), UintValue: proto.Uint64(packets)},
			{Name: proto.String(timeline.ArgBornNs), IntValue: proto.Int64(born)},
		},
	}
	r.packet(&perfettopb.TracePacket{Timestamp: proto.Uint64(uint64(t)), TrustedPacketSequenceId: proto.Uint32(seq), TrackEvent: te})
}

// ManyWorkersChain claims workers workers and holds one cycle with one
// stage: an add of one packet before the cycle, and a chain of packets
// packets on worker 0, each spawned by the one before it, with their
// queuing (perfetto.Options.Origins).
func ManyWorkersChain(workers, packets int) []byte {
	r := New(workers)
	m := uint64(workers + perfetto.QueuedWorker0)
	r.AddCall(10, "add", 1, 1, 5)
	r.Cycle(100, 1)
	r.Stage(100, 1, "S")
	t := int64(200)
	for i := range packets {
		q := perfetto.QueuedAdd + m*uint64(t-5)
		if i > 0 {
			q = perfetto.QueuedWorker0 + m*uint64(t-(t-90)) // stamped at the previous one's begin
		}
		r.QueuedPacket(0, t, t+80, "P", "S", q)
		t += 90
	}
	r.End(t, Stages)
	r.End(t+10, Control)
	return r.Bytes()
}
