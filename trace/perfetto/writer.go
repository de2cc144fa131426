package perfetto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/atomicfile"
	"github.com/wsched/wsched/trace/internal/origin"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/timeline"
)

// Track uuids and sequence ids. Small numbers keep the per-event varints to
// one byte: worker i's track is uuidWorker0+i (one byte up to 111 workers)
// and counter tracks follow the workers.
const (
	uuidProcess = 1
	uuidControl = 2
	uuidStages  = 3
	uuidWorker0 = 16

	seqControl = 1 // worker i writes on sequence seqWorker0+i
	seqWorker0 = 2
)

// Descriptions that mark the tracks of a wsched trace; trace/analyze reads
// them to recognise its input.
const (
	// DescProcess starts the process track's description.
	DescProcess = "wsched trace v1"
	// DescControl, DescStages, DescWorker and DescCounter describe the other
	// tracks; DescWorker is followed by the worker index, DescCounter by
	// "<kind>:<index>".
	DescControl = "wsched:control"
	DescStages  = "wsched:stages"
	DescWorker  = "wsched:worker:"
	DescCounter = "wsched:counter:"
	// DescOrigins, followed by "I/N", describes the counter track of
	// worker I's origins (Options.Origins) in a trace of N workers: N
	// sets their codes (trace/internal/origin), whatever the process
	// track claims.
	DescOrigins = "wsched:origins:"
)

// Names of the slices, instants and annotations the writer adds besides
// packet types and stages (trace/analyze reads them).
const (
	NameCycle   = timeline.NameCycle
	NamePark    = timeline.NamePark
	NameSteal   = timeline.NameSteal
	NameStolen  = timeline.NameStolen
	NameQueued  = timeline.NameQueued
	NameWake    = timeline.NameWake
	NameWoken   = timeline.NameWoken
	NameFull    = timeline.NameFull
	NameWrapped = timeline.NameWrapped
	NameDropped = timeline.NameDropped
	ArgCycle    = timeline.ArgCycle
	ArgStage    = timeline.ArgStage
	ArgVictim   = timeline.ArgVictim
	ArgThief    = timeline.ArgThief
	ArgMoved    = timeline.ArgMoved
	ArgTarget   = timeline.ArgTarget
	ArgDropped  = timeline.ArgDropped
)

// Options configure Write.
type Options struct {
	// Pid is the process id written on the tracks; 0 means os.Getpid().
	// Worker i's thread id is Pid+1+i, the control thread's is Pid.
	Pid int32
	// ProcessName names the process track; "" means "wsched".
	ProcessName string
	// Origins writes how each packet was queued, for `wsched simulate`:
	// a value on its worker's "queued from" counter track at each packet
	// slice's begin (see Origins in the package doc), about 3 more bytes
	// a packet slice.
	Origins bool
}

// ArgQueued is the annotation by which files of the format before
// DescOrigins said how a packet slice's packet was queued: code + (workers
// + 4) × (ns from when the packet was queued to its begin), with the
// codes below. trace/simulate still reads it.
const ArgQueued = "queued"

// Codes of where a packet was queued, in ArgQueued and in the values of
// the origins tracks: 1 for a packet queued without a stamp (designated),
// 2 for an add, 3 for an add taken from a priority lane, 4 + i for a spawn
// on worker i.
const (
	QueuedNone     = origin.None
	QueuedAdd      = origin.Add
	QueuedPriority = origin.Priority
	QueuedWorker0  = origin.Worker0
)

// Stats describe what Write wrote.
type Stats struct {
	Bytes   int64 // file size
	Packets int   // TracePackets
	// Slices counts packet slices (one per PacketBegin); SliceBytes counts
	// the bytes of their BEGIN and END packets, framing and the interning
	// they carried included.
	Slices     int
	SliceBytes int64
	// Orphans counts END-type events with no matching BEGIN (after an
	// overwrite, or hooks called out of order); they are not written.
	Orphans int
	// Dropped is the number of events the recorder dropped.
	Dropped uint64
}

// BytesPerSlice is the average size of a packet slice (BEGIN + END).
func (s Stats) BytesPerSlice() float64 {
	if s.Slices == 0 {
		return 0
	}
	return float64(s.SliceBytes) / float64(s.Slices)
}

// sequence is the writer's state of one trusted packet sequence: its
// default track, where its incremental clock stands, and which iids it has
// defined since its incremental state was last cleared.
type sequence struct {
	id    uint32
	track uint64 // TrackEventDefaults.track_uuid: events on it omit track_uuid
	// originTrack (Options.Origins, a worker's sequence) is the counter
	// track of the origins, in TrackEventDefaults.extra_counter_track_uuids;
	// org encodes them.
	originTrack uint64
	org         origin.Codec
	started     bool
	last        int64  // time of the sequence's last packet on clockIncremental
	names       []bool // event-name iid defined on this sequence
	cats        []bool
	annots      []bool
}

// iidTable assigns trace-global iids (from 1) to strings.
type iidTable struct {
	ids  map[string]uint64
	strs []string // strs[iid]
}

func (t *iidTable) id(s string) uint64 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = make(map[string]uint64)
		t.strs = []string{""}
	}
	id := uint64(len(t.strs))
	t.strs = append(t.strs, s)
	t.ids[s] = id
	return id
}

// countingWriter counts bytes and keeps the first error.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

type writer struct {
	cw  *countingWriter
	bw  *bufio.Writer
	s   *trace.Snapshot
	pid int32

	pkt, te, sub, in, frame []byte    // scratch
	clr                     [4][]byte // clear's scratch

	control *sequence
	workers []*sequence

	names, cats, annots iidTable
	nameIID             []uint64 // trace.NameID → event-name iid, 0 = not yet looked up
	stageCat            map[int]uint64
	counters            map[timeline.Track]uint64
	nextUUID            uint64
	origins             bool

	stats Stats
}

// Write streams s to out as a Perfetto protobuf trace and returns what it
// wrote; see the package doc for the layout and the rules it obeys. Bytes go
// through a 64 KiB buffer; Write flushes it and returns the first write
// error.
func Write(out io.Writer, s *trace.Snapshot, opts Options) (Stats, error) {
	if s == nil {
		return Stats{}, errors.New("perfetto: nil snapshot")
	}
	pid := opts.Pid
	if pid == 0 {
		pid = int32(os.Getpid())
	}
	if int64(pid)+1+int64(s.Workers()) > math.MaxInt32 || pid < 0 {
		pid = 1
	}
	if opts.ProcessName == "" {
		opts.ProcessName = "wsched"
	}
	cw := &countingWriter{w: out}
	w := &writer{
		cw:       cw,
		bw:       bufio.NewWriterSize(cw, 64<<10),
		s:        s,
		pid:      pid,
		nameIID:  make([]uint64, len(s.Names)),
		stageCat: make(map[int]uint64),
		counters: make(map[timeline.Track]uint64),
		nextUUID: uuidWorker0 + uint64(s.Workers()),
		origins:  opts.Origins,
	}
	w.stats.Dropped = s.Dropped()
	w.header(opts.ProcessName)
	ws := timeline.Walk(s, w.op)
	w.stats.Orphans = ws.Orphans
	if err := w.bw.Flush(); err != nil {
		return w.stats, fmt.Errorf("perfetto: %w", err)
	}
	w.stats.Bytes = cw.n
	return w.stats, nil
}

// WriteFile writes s to path atomically: into a temporary file in the same
// directory, synced, then renamed over path, with mode 0644. On error path
// is untouched and the temporary file removed.
func WriteFile(path string, s *trace.Snapshot, opts Options) (Stats, error) {
	return atomicfile.Produce(path, "perfetto", func(w io.Writer) (Stats, error) { return Write(w, s, opts) })
}

// header writes the track descriptors: process, control thread and stage
// track on the control sequence, each worker's thread track on its own
// sequence, each after the packet that starts its sequence (see clear).
func (w *writer) header(processName string) {
	w.control = &sequence{id: seqControl, track: uuidControl}
	nw := w.s.Workers()

	td := w.sub[:0]
	td = appendVarintField(td, pfwire.FTDUUID, uuidProcess)
	pd := appendInt32Field(nil, pfwire.FPDPid, w.pid)
	pd = appendStringField(pd, pfwire.FPDName, processName)
	td = appendBytesField(td, pfwire.FTDProcess, pd)
	td = appendStringField(td, pfwire.FTDDescription, DescProcess+" workers="+strconv.Itoa(nw))
	w.sub = td
	w.emit(w.control, 0, nil, td, nil)

	w.emit(w.control, 0, nil, w.threadTrack(uuidControl, w.pid, "control", DescControl), nil)

	td = w.sub[:0]
	td = appendVarintField(td, pfwire.FTDUUID, uuidStages)
	td = appendStringField(td, pfwire.FTDName, "stages")
	td = appendVarintField(td, pfwire.FTDParentUUID, uuidProcess)
	td = appendStringField(td, pfwire.FTDDescription, DescStages)
	w.sub = td
	w.emit(w.control, 0, nil, td, nil)

	w.workers = make([]*sequence, nw)
	for i := range nw {
		seq := &sequence{id: uint32(seqWorker0 + i), track: uuidWorker0 + uint64(i)}
		w.workers[i] = seq
		if w.origins {
			seq.originTrack, seq.org = w.nextUUID, origin.New(nw)
			w.nextUUID++
		}
		td := w.threadTrack(uuidWorker0+uint64(i), w.pid+1+int32(i), "worker "+strconv.Itoa(i), DescWorker+strconv.Itoa(i))
		w.emit(seq, 0, nil, td, nil)
		if w.origins {
			td := w.sub[:0]
			td = appendVarintField(td, pfwire.FTDUUID, seq.originTrack)
			td = appendStringField(td, pfwire.FTDName, "queued from (wsched simulate)")
			td = appendVarintField(td, pfwire.FTDParentUUID, seq.track)
			td = appendBytesField(td, pfwire.FTDCounter, appendVarintField(w.frame[:0], pfwire.FCDUnit, pfwire.UnitCount))
			td = appendStringField(td, pfwire.FTDDescription, DescOrigins+strconv.Itoa(i)+"/"+strconv.Itoa(nw))
			w.sub = td
			w.emit(seq, 0, nil, td, nil)
		}
	}
}

func (w *writer) threadTrack(uuid uint64, tid int32, name, desc string) []byte {
	td := w.sub[:0]
	td = appendVarintField(td, pfwire.FTDUUID, uuid)
	th := appendInt32Field(w.frame[:0], pfwire.FThDPid, w.pid)
	th = appendInt32Field(th, pfwire.FThDTid, tid)
	th = appendStringField(th, pfwire.FThDName, name)
	w.frame = th
	td = appendBytesField(td, pfwire.FTDThread, th)
	td = appendStringField(td, pfwire.FTDDescription, desc)
	w.sub = td
	return td
}

func (w *writer) seq(buffer int) *sequence {
	if buffer < 0 || buffer >= len(w.workers) {
		return w.control
	}
	return w.workers[buffer]
}

// uuid returns the uuid of a timeline track, writing a counter track's
// descriptor on first use (on seq, at time t).
func (w *writer) uuid(t timeline.Track, seq *sequence, at int64, name string) uint64 {
	switch t.Kind {
	case timeline.TrackProcess:
		return uuidProcess
	case timeline.TrackControl:
		return uuidControl
	case timeline.TrackStages:
		return uuidStages
	case timeline.TrackWorker:
		return uuidWorker0 + uint64(t.Index)
	}
	if uuid, ok := w.counters[t]; ok {
		return uuid
	}
	uuid := w.nextUUID
	w.nextUUID++
	w.counters[t] = uuid
	parent := uint64(uuidProcess)
	if t.Counter == trace.CounterLocalLen && t.Index >= 0 && t.Index < len(w.workers) {
		parent = uuidWorker0 + uint64(t.Index)
	}
	td := w.sub[:0]
	td = appendVarintField(td, pfwire.FTDUUID, uuid)
	td = appendStringField(td, pfwire.FTDName, name)
	td = appendVarintField(td, pfwire.FTDParentUUID, parent)
	td = appendBytesField(td, pfwire.FTDCounter, appendVarintField(w.frame[:0], pfwire.FCDUnit, pfwire.UnitCount))
	td = appendStringField(td, pfwire.FTDDescription, DescCounter+t.Counter.String()+":"+strconv.Itoa(t.Index))
	w.sub = td
	w.emit(seq, at, nil, td, nil)
	return uuid
}

// op writes one timeline op as one TracePacket.
func (w *writer) op(op *timeline.Op) {
	seq := w.seq(op.Buffer)
	if op.Dropped {
		// Events of this buffer were lost before op: restart the
		// sequence's incremental state, marking the loss on that packet.
		w.clear(seq, op.Time, true)
	}
	uuid := w.uuid(op.Track, seq, op.Time, op.Name)
	switch op.Kind {
	case timeline.End:
		// An END carries only its type and track (rule 6 in doc.go).
		n := w.emit(seq, op.Time, w.beginTE(seq, pfwire.TypeSliceEnd, uuid), nil, nil)
		if op.Slice == timeline.SlicePacket {
			w.stats.SliceBytes += int64(n)
		}
		return
	case timeline.Counter:
		te := w.beginTE(seq, pfwire.TypeCounter, uuid)
		te = appendVarintField(te, pfwire.FTECounterValue, uint64(op.Value))
		w.emit(seq, op.Time, te, nil, nil)
		return
	}
	typ := uint64(pfwire.TypeSliceBegin)
	if op.Kind == timeline.Instant {
		typ = pfwire.TypeInstant
	}
	te := w.beginTE(seq, typ, uuid)
	if op.NameID != 0 {
		te = w.nameField(seq, te, w.packetIID(op.NameID))
	} else {
		te = w.nameField(seq, te, w.names.id(op.Name))
	}
	if op.Slice == timeline.SlicePacket {
		te = w.categoryField(seq, te, op.Stage, op.Category)
	}
	if op.Slice == timeline.SlicePacket && seq.originTrack != 0 {
		if v, ok := w.origin(seq, op); ok {
			te = appendVarintField(te, pfwire.FTEExtraValues, v)
		}
	}
	for _, a := range op.Args {
		switch a.Kind {
		case timeline.ArgInt:
			te = w.annotInt(seq, te, a.Key, a.Int)
		case timeline.ArgUint:
			te = w.annotUint(seq, te, a.Key, a.Uint)
		case timeline.ArgString:
			te = w.annotString(seq, te, a.Key, a.Str)
		}
	}
	if op.FlowOut != 0 {
		te = appendFixed64Field(te, pfwire.FTEFlowIDs, op.FlowOut)
	}
	if op.FlowIn != 0 {
		te = appendFixed64Field(te, pfwire.FTETermFlowIDs, op.FlowIn)
	}
	w.te = te
	n := w.emit(seq, op.Time, te, nil, w.in)
	if op.Slice == timeline.SlicePacket {
		w.stats.Slices++
		w.stats.SliceBytes += int64(n)
	}
}

func (w *writer) packetIID(id trace.NameID) uint64 {
	if int(id) < len(w.nameIID) {
		if iid := w.nameIID[id]; iid != 0 {
			return iid
		}
		iid := w.names.id(w.s.Name(id))
		w.nameIID[id] = iid
		return iid
	}
	return w.names.id(w.s.Name(id))
}

// beginTE starts a TrackEvent of type typ on track uuid; the track_uuid is
// left out when it is the sequence's default track.
func (w *writer) beginTE(seq *sequence, typ uint64, uuid uint64) []byte {
	w.in = w.in[:0]
	te := w.te[:0]
	te = appendVarintField(te, pfwire.FTEType, typ)
	if uuid != seq.track {
		te = appendVarintField(te, pfwire.FTETrackUUID, uuid)
	}
	return te
}

// nameField adds name_iid, defining it on seq if needed.
func (w *writer) nameField(seq *sequence, te []byte, iid uint64) []byte {
	if !defined(&seq.names, iid) {
		w.in = appendBytesField(w.in, pfwire.FIDNames, internedEntry(w.frame[:0], iid, w.names.strs[iid]))
	}
	w.te = appendVarintField(te, pfwire.FTENameIID, iid)
	return w.te
}

func (w *writer) categoryField(seq *sequence, te []byte, stage int, name string) []byte {
	iid, ok := w.stageCat[stage]
	if !ok {
		iid = w.cats.id(name)
		w.stageCat[stage] = iid
	}
	if !defined(&seq.cats, iid) {
		w.in = appendBytesField(w.in, pfwire.FIDCategories, internedEntry(w.frame[:0], iid, w.cats.strs[iid]))
	}
	w.te = appendVarintField(te, pfwire.FTECategoryIIDs, iid)
	return w.te
}

func (w *writer) annotName(seq *sequence, name string) []byte {
	iid := w.annots.id(name)
	if !defined(&seq.annots, iid) {
		w.in = appendBytesField(w.in, pfwire.FIDAnnotNames, internedEntry(w.frame[:0], iid, name))
	}
	return appendVarintField(w.sub[:0], pfwire.FDANameIID, iid)
}

func (w *writer) annotInt(seq *sequence, te []byte, name string, v int64) []byte {
	da := appendVarintField(w.annotName(seq, name), pfwire.FDAInt, uint64(v))
	w.sub = da
	w.te = appendBytesField(te, pfwire.FTEAnnotations, da)
	return w.te
}

func (w *writer) annotUint(seq *sequence, te []byte, name string, v uint64) []byte {
	da := appendVarintField(w.annotName(seq, name), pfwire.FDAUint, v)
	w.sub = da
	w.te = appendBytesField(te, pfwire.FTEAnnotations, da)
	return w.te
}

func (w *writer) annotString(seq *sequence, te []byte, name, v string) []byte {
	da := appendStringField(w.annotName(seq, name), pfwire.FDAString, v)
	w.sub = da
	w.te = appendBytesField(te, pfwire.FTEAnnotations, da)
	return w.te
}

func internedEntry(b []byte, iid uint64, name string) []byte {
	b = appendVarintField(b, pfwire.FINIID, iid)
	return appendStringField(b, pfwire.FINName, name)
}

// defined reports whether iid is already defined in set, marking it.
func defined(set *[]bool, iid uint64) bool {
	if iid < uint64(len(*set)) && (*set)[iid] {
		return true
	}
	for uint64(len(*set)) <= iid {
		*set = append(*set, false)
	}
	(*set)[iid] = true
	return false
}

// clear starts, or restarts, seq's incremental state at time at (see
// "Encoding" in doc.go): one packet that sets SEQ_INCREMENTAL_STATE_CLEARED
// and holds a ClockSnapshot (BOOTTIME and the sequence's incremental clock
// both read at) and the sequence's TracePacketDefaults (that clock, the
// sequence's own track). Interned names are defined again after it.
// dropped sets previous_packet_dropped: events were lost before at.
func (w *writer) clear(seq *sequence, at int64, dropped bool) {
	seq.started, seq.last = true, at
	seq.names, seq.cats, seq.annots = seq.names[:0], seq.cats[:0], seq.annots[:0]

	// clear may run inside emit, whose arguments are the writer's scratch
	// buffers: it builds its packet in its own.
	clk := appendVarintField(w.clr[0][:0], pfwire.FClockID, pfwire.ClockBoottime)
	clk = appendVarintField(clk, pfwire.FClockTimestamp, uint64(at))
	cs := appendBytesField(w.clr[1][:0], pfwire.FCSClocks, clk)
	clk = appendVarintField(clk[:0], pfwire.FClockID, pfwire.ClockIncremental)
	clk = appendVarintField(clk, pfwire.FClockTimestamp, uint64(at))
	clk = appendVarintField(clk, pfwire.FClockIncrement, 1)
	cs = appendBytesField(cs, pfwire.FCSClocks, clk)
	def := appendVarintField(w.clr[2][:0], pfwire.FDefClockID, pfwire.ClockIncremental)
	clk = appendVarintField(clk[:0], pfwire.FDefTrackUUID, seq.track)
	if seq.originTrack != 0 {
		clk = appendVarintField(clk, pfwire.FDefExtraUUIDs, seq.originTrack)
		seq.org.Reset()
	}
	def = appendBytesField(def, pfwire.FDefTrackEvent, clk)

	p := appendVarintField(w.clr[3][:0], pfwire.FSequenceID, uint64(seq.id))
	p = appendVarintField(p, pfwire.FSequenceFlags, pfwire.SeqIncrementalStateCleared)
	if dropped {
		p = appendVarintField(p, pfwire.FPreviousDropped, 1)
	}
	p = appendBytesField(p, pfwire.FClockSnapshot, cs)
	p = appendBytesField(p, pfwire.FPacketDefaults, def)
	w.clr = [4][]byte{clk, cs, def, p}
	w.write(p)
}

// emit frames and writes one TracePacket on seq at time ts and returns its
// size. It starts the sequence (clear) if this is its first packet. Every
// packet after that start sets SEQ_NEEDS_INCREMENTAL_STATE, as the
// sequence's defaults require: its timestamp is a delta on the sequence's
// incremental clock (ts less the time of the sequence's previous packet),
// and a track event on the sequence's own track omits its track_uuid.
// interned is the packet's InternedData fields.
func (w *writer) emit(seq *sequence, ts int64, te, td, interned []byte) int {
	if !seq.started {
		w.clear(seq, ts, false)
	}
	p := w.pkt[:0]
	if ts >= seq.last {
		p = appendVarintField(p, pfwire.FTimestamp, uint64(ts-seq.last))
		seq.last = ts
	} else {
		// Earlier than the sequence's previous packet (Walk emits in time
		// order, so only a snapshot with times out of order gets here): an
		// absolute BOOTTIME timestamp, as the Perfetto SDK writes one. It
		// leaves the incremental clock where it was.
		p = appendVarintField(p, pfwire.FTimestamp, uint64(ts))
		p = appendVarintField(p, pfwire.FTimestampClockID, pfwire.ClockBoottime)
	}
	p = appendVarintField(p, pfwire.FSequenceID, uint64(seq.id))
	if te != nil {
		p = appendBytesField(p, pfwire.FTrackEvent, te)
	}
	if len(interned) > 0 {
		p = appendBytesField(p, pfwire.FInternedData, interned)
	}
	p = appendVarintField(p, pfwire.FSequenceFlags, pfwire.SeqNeedsIncrementalState)
	if td != nil {
		p = appendBytesField(p, pfwire.FTrackDescriptor, td)
	}
	w.pkt = p
	return w.write(p)
}

// write frames packet p as a Trace.packet record and returns its size.
func (w *writer) write(p []byte) int {
	fr := protowire.AppendTag(w.frame[:0], pfwire.FTracePacket, protowire.BytesType)
	fr = protowire.AppendVarint(fr, uint64(len(p)))
	w.frame = fr
	w.bw.Write(fr)
	w.bw.Write(p)
	w.stats.Packets++
	return len(fr) + len(p)
}

// origin encodes how op's packet was queued, or steps seq's codec past a
// slice that does not say.
func (w *writer) origin(seq *sequence, op *timeline.Op) (uint64, bool) {
	var code uint64
	switch from := op.QueuedFrom; {
	case from == trace.FromUnknown:
		seq.org.Skip(op.Time)
		return 0, false
	case from == trace.FromNone:
		// Queued without a stamp: the value carries none (the slice's
		// begin stands in).
		return seq.org.Encode(QueuedNone, op.Time, op.Time)
	case from == trace.FromAdd && op.Priority:
		code = QueuedPriority
	case from == trace.FromAdd:
		code = QueuedAdd
	default:
		code = QueuedWorker0 + uint64(from)
	}
	return seq.org.Encode(code, min(op.Queued, op.Time), op.Time)
}
