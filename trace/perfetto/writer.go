package perfetto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wsched/wsched/trace"
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
)

// Names of the slices and instants the writer adds besides packet types and
// stages. trace/analyze depends on them.
const (
	NameCycle     = "cycle"
	NamePark      = "parked"
	NameSteal     = "steal"
	NameWake      = "wake"
	NameWoken     = "woken"
	NameFull      = "trace buffer full"
	NameWrapped   = "trace buffer wrapped"
	NameDropped   = "wsched: trace events dropped"
	CatUnconstr   = "Unconstrained"
	AnnCycle      = "cycle"
	AnnStage      = "stage"
	AnnVictim     = "victim"
	AnnMoved      = "moved"
	AnnTarget     = "target"
	AnnDropped    = "dropped"
	AnnPolicy     = "policy"
	AnnDroppedEnd = "until_ns"
)

// Options configure Write.
type Options struct {
	// Pid is the process id written on the tracks; 0 means os.Getpid().
	// Worker i's thread id is Pid+1+i, the control thread's is Pid.
	Pid int32
	// ProcessName names the process track; "" means "wsched".
	ProcessName string
}

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

// sliceKind is what an open slice on a track is.
type sliceKind uint8

const (
	slicePacket sliceKind = iota + 1
	slicePark
	sliceCycle
	sliceStage
)

type openSlice struct {
	kind  sliceKind
	seq   *sequence
	stage int // sliceStage only
}

// track is the writer's state of one slice track.
type track struct {
	uuid  uint64
	stack []openSlice
}

// sequence is the writer's state of one trusted packet sequence: which
// iids it has defined (incremental state) and whether it has started.
type sequence struct {
	id       uint32
	started  bool
	names    []bool // event-name iid defined on this sequence
	cats     []bool
	annots   []bool
	markDrop bool // the next packet sets previous_packet_dropped
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

type counterKey struct {
	kind  trace.CounterKind
	index int
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

	pkt, te, sub, in, frame []byte // scratch

	control *sequence
	workers []*sequence

	ctlTrack   track
	stageTrack track
	wtracks    []track

	names, cats, annots iidTable
	nameIID             []uint64 // trace.NameID → event-name iid, 0 = not yet looked up
	stageNames          map[int]string
	stageCat            map[int]uint64
	flows               map[uint64]uint8 // flow id → flowSource|flowDest seen
	counters            map[counterKey]uint64
	nextUUID            uint64

	stats Stats
}

const (
	flowSource = 1
	flowDest   = 2
)

// Write streams s to out as a Perfetto protobuf trace and returns what it
// wrote. It obeys the rules in the package doc. out gets the bytes through a
// 64 KiB buffer; Write flushes it and returns the first write error.
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
		cw:         cw,
		bw:         bufio.NewWriterSize(cw, 64<<10),
		s:          s,
		pid:        pid,
		nameIID:    make([]uint64, len(s.Names)),
		stageNames: make(map[int]string),
		stageCat:   make(map[int]uint64),
		flows:      make(map[uint64]uint8),
		counters:   make(map[counterKey]uint64),
		nextUUID:   uuidWorker0 + uint64(s.Workers()),
	}
	w.stats.Dropped = s.Dropped()
	w.prescan()
	w.header(opts.ProcessName)
	w.events()
	w.trailer()
	if err := w.bw.Flush(); err != nil {
		return w.stats, fmt.Errorf("perfetto: %w", err)
	}
	w.stats.Bytes = cw.n
	return w.stats, nil
}

// WriteFile writes s to path atomically: into a temporary file in the same
// directory, synced, then renamed over path. On error path is untouched and
// the temporary file removed.
func WriteFile(path string, s *trace.Snapshot, opts Options) (st Stats, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return Stats{}, fmt.Errorf("perfetto: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if st, err = Write(f, s, opts); err != nil {
		return st, err
	}
	if err = f.Sync(); err != nil {
		return st, fmt.Errorf("perfetto: %w", err)
	}
	if err = f.Close(); err != nil {
		return st, fmt.Errorf("perfetto: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return st, fmt.Errorf("perfetto: %w", err)
	}
	return st, nil
}

// prescan collects stage names and which flow ids have both ends recorded
// (an end may have been dropped; a flow with one end is left out).
func (w *writer) prescan() {
	for i := range w.s.Buffers {
		for _, e := range w.s.Buffers[i].Events {
			switch e.Kind() {
			case trace.KindStageOpen:
				if _, ok := w.stageNames[e.Stage()]; !ok {
					w.stageNames[e.Stage()] = w.s.Name(e.Name())
				}
			case trace.KindSteal:
				if e.Flow() != 0 {
					w.flows[e.Flow()] |= flowSource
				}
			case trace.KindPacketBegin:
				if e.Flow() != 0 {
					w.flows[e.Flow()] |= flowDest
				}
			}
		}
	}
}

func (w *writer) header(processName string) {
	w.control = &sequence{id: seqControl}
	w.ctlTrack.uuid = uuidControl
	w.stageTrack.uuid = uuidStages
	nw := w.s.Workers()
	desc := DescProcess + " workers=" + strconv.Itoa(nw)

	// Process track, control thread track and stage track on the control
	// sequence; the first packet clears its incremental state.
	td := w.sub[:0]
	td = appendVarintField(td, fTDUUID, uuidProcess)
	pd := appendInt32Field(nil, fPDPid, w.pid)
	pd = appendStringField(pd, fPDName, processName)
	td = appendBytesField(td, fTDProcess, pd)
	td = appendStringField(td, fTDDescription, desc)
	w.sub = td
	w.emit(w.control, 0, 0, nil, td, nil)

	w.emit(w.control, 0, 0, nil, w.threadTrack(uuidControl, w.pid, "control", DescControl), nil)

	td = w.sub[:0]
	td = appendVarintField(td, fTDUUID, uuidStages)
	td = appendStringField(td, fTDName, "stages")
	td = appendVarintField(td, fTDParentUUID, uuidProcess)
	td = appendStringField(td, fTDDescription, DescStages)
	w.sub = td
	w.emit(w.control, 0, 0, nil, td, nil)

	w.workers = make([]*sequence, nw)
	w.wtracks = make([]track, nw)
	for i := range nw {
		w.workers[i] = &sequence{id: uint32(seqWorker0 + i)}
		w.wtracks[i].uuid = uuidWorker0 + uint64(i)
		td := w.threadTrack(uuidWorker0+uint64(i), w.pid+1+int32(i), "worker "+strconv.Itoa(i), DescWorker+strconv.Itoa(i))
		w.emit(w.workers[i], 0, 0, nil, td, nil)
	}
}

func (w *writer) threadTrack(uuid uint64, tid int32, name, desc string) []byte {
	td := w.sub[:0]
	td = appendVarintField(td, fTDUUID, uuid)
	th := appendInt32Field(w.frame[:0], fThDPid, w.pid)
	th = appendInt32Field(th, fThDTid, tid)
	th = appendStringField(th, fThDName, name)
	w.frame = th
	td = appendBytesField(td, fTDThread, th)
	td = appendStringField(td, fTDDescription, desc)
	w.sub = td
	return td
}

// seqTrack returns the sequence and own track of a buffer's worker index.
func (w *writer) seqTrack(worker int) (*sequence, *track) {
	if worker < 0 || worker >= len(w.workers) {
		return w.control, &w.ctlTrack
	}
	return w.workers[worker], &w.wtracks[worker]
}

// dropMark is a stop-mode buffer whose recording stopped at time at.
type dropMark struct {
	worker int
	buf    *trace.Buffer
}

func (w *writer) events() {
	var marks []dropMark // stop-mode drops, in buffer order; flushed by time
	wrapped := make(map[int]*trace.Buffer)
	for i := range w.s.Buffers {
		b := &w.s.Buffers[i]
		if b.Dropped == 0 {
			continue
		}
		if w.s.Overwrite {
			wrapped[b.Worker] = b
		} else {
			marks = append(marks, dropMark{b.Worker, b})
		}
	}
	for worker, e := range w.s.All() {
		for j := 0; j < len(marks); {
			if marks[j].buf.DropStart <= e.Time {
				w.stopMark(marks[j].worker, marks[j].buf)
				marks = append(marks[:j], marks[j+1:]...)
				continue
			}
			j++
		}
		if b, ok := wrapped[worker]; ok {
			delete(wrapped, worker)
			w.wrapMark(worker, b, e.Time)
		}
		w.event(worker, e)
	}
	for _, m := range marks {
		w.stopMark(m.worker, m.buf)
	}
}

// event writes one recorder event.
func (w *writer) event(worker int, e trace.Event) {
	seq, tr := w.seqTrack(worker)
	t := e.Time
	switch e.Kind() {
	case trace.KindCycleBegin:
		w.closeKind(&w.stageTrack, sliceStage, t)
		w.closeKind(&w.ctlTrack, sliceCycle, t)
		te := w.beginTE(typeSliceBegin, uuidControl)
		te = w.nameField(seq, te, w.names.id(NameCycle))
		te = w.annotUint(seq, te, AnnCycle, e.Cycle())
		w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
		w.ctlTrack.stack = append(w.ctlTrack.stack, openSlice{kind: sliceCycle, seq: seq})
	case trace.KindCycleEnd:
		w.closeKind(&w.stageTrack, sliceStage, t)
		w.closeKind(&w.ctlTrack, sliceCycle, t)
	case trace.KindStageOpen:
		w.closeKind(&w.stageTrack, sliceStage, t)
		te := w.beginTE(typeSliceBegin, uuidStages)
		te = w.nameField(seq, te, w.names.id(w.s.Name(e.Name())))
		te = w.annotInt(seq, te, AnnStage, int64(e.Stage()))
		w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
		w.stageTrack.stack = append(w.stageTrack.stack, openSlice{kind: sliceStage, seq: seq, stage: e.Stage()})
	case trace.KindStageClose:
		if st := w.stageTrack.stack; len(st) > 0 && st[len(st)-1].stage == e.Stage() {
			w.end(&w.stageTrack, t)
		}
	case trace.KindPacketBegin:
		te := w.beginTE(typeSliceBegin, tr.uuid)
		te = w.nameField(seq, te, w.packetIID(e.Name()))
		te = w.categoryField(seq, te, e.Stage())
		if f := e.Flow(); f != 0 && w.flows[f] == flowSource|flowDest {
			te = appendFixed64Field(te, fTETermFlowIDs, f)
		}
		n := w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
		tr.stack = append(tr.stack, openSlice{kind: slicePacket, seq: seq})
		w.stats.Slices++
		w.stats.SliceBytes += int64(n)
	case trace.KindPacketEnd:
		if st := tr.stack; len(st) > 0 && st[len(st)-1].kind == slicePacket {
			w.stats.SliceBytes += int64(w.end(tr, t))
		} else {
			w.stats.Orphans++
		}
	case trace.KindPark:
		te := w.beginTE(typeSliceBegin, tr.uuid)
		te = w.nameField(seq, te, w.names.id(NamePark))
		w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
		tr.stack = append(tr.stack, openSlice{kind: slicePark, seq: seq})
	case trace.KindUnpark:
		if st := tr.stack; len(st) > 0 && st[len(st)-1].kind == slicePark {
			w.end(tr, t)
		} else {
			w.stats.Orphans++
		}
	case trace.KindSteal:
		te := w.beginTE(typeInstant, tr.uuid)
		te = w.nameField(seq, te, w.names.id(NameSteal))
		te = w.annotInt(seq, te, AnnVictim, int64(e.Victim()))
		te = w.annotInt(seq, te, AnnMoved, int64(e.Moved()))
		if f := e.Flow(); f != 0 && w.flows[f] == flowSource|flowDest {
			te = appendFixed64Field(te, fTEFlowIDs, f)
		}
		w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
	case trace.KindWakeSent:
		te := w.beginTE(typeInstant, tr.uuid)
		te = w.nameField(seq, te, w.names.id(NameWake))
		te = w.annotInt(seq, te, AnnTarget, int64(e.Target()))
		w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
	case trace.KindWakeReceived:
		te := w.beginTE(typeInstant, tr.uuid)
		te = w.nameField(seq, te, w.names.id(NameWoken))
		w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
	case trace.KindCounter:
		uuid := w.counterTrack(seq, e.Counter(), e.Index(), t)
		te := w.beginTE(typeCounter, uuid)
		te = appendVarintField(te, fTECounterValue, uint64(e.Value()))
		w.emit(seq, t, 0, te, nil, nil)
	}
}

// stopMark closes the slices left open on a buffer whose recording stopped
// (stop policy) and marks the loss with an instant that sets
// previous_packet_dropped.
func (w *writer) stopMark(worker int, b *trace.Buffer) {
	seq, tr := w.seqTrack(worker)
	for len(tr.stack) > 0 {
		w.end(tr, b.DropStart)
	}
	seq.markDrop = true
	te := w.beginTE(typeInstant, tr.uuid)
	te = w.nameField(seq, te, w.names.id(NameFull))
	te = w.annotUint(seq, te, AnnDropped, b.Dropped)
	te = w.annotUint(seq, te, AnnDroppedEnd, uint64(b.DropEnd))
	w.emit(seq, b.DropStart, seqNeedsIncrementalState, te, nil, w.in)
}

// wrapMark marks, before a wrapped buffer's first event, that its oldest
// events were overwritten.
func (w *writer) wrapMark(worker int, b *trace.Buffer, t int64) {
	seq, tr := w.seqTrack(worker)
	seq.markDrop = true
	te := w.beginTE(typeInstant, tr.uuid)
	te = w.nameField(seq, te, w.names.id(NameWrapped))
	te = w.annotUint(seq, te, AnnDropped, b.Dropped)
	w.emit(seq, t, seqNeedsIncrementalState, te, nil, w.in)
}

// trailer closes every open slice at the snapshot's end and writes the
// drop summary.
func (w *writer) trailer() {
	end := w.s.End
	for len(w.stageTrack.stack) > 0 {
		w.end(&w.stageTrack, end)
	}
	for len(w.ctlTrack.stack) > 0 {
		w.end(&w.ctlTrack, end)
	}
	for i := range w.wtracks {
		for len(w.wtracks[i].stack) > 0 {
			w.end(&w.wtracks[i], end)
		}
	}
	if w.stats.Dropped == 0 {
		return
	}
	seq := w.control
	te := w.beginTE(typeInstant, uuidProcess)
	te = w.nameField(seq, te, w.names.id(NameDropped))
	te = w.annotUint(seq, te, AnnDropped, w.stats.Dropped)
	policy := "stop"
	if w.s.Overwrite {
		policy = "overwrite"
	}
	te = w.annotString(seq, te, AnnPolicy, policy)
	for i := range w.s.Buffers {
		b := &w.s.Buffers[i]
		if b.Dropped == 0 {
			continue
		}
		name := "control"
		if b.Worker >= 0 {
			name = "worker " + strconv.Itoa(b.Worker)
		}
		te = w.annotUint(seq, te, name, b.Dropped)
	}
	w.emit(seq, end, seqNeedsIncrementalState, te, nil, w.in)
}

// closeKind ends slices on tr down to and including the innermost one of
// kind k, if there is one.
func (w *writer) closeKind(tr *track, k sliceKind, t int64) {
	for i := len(tr.stack) - 1; i >= 0; i-- {
		if tr.stack[i].kind == k {
			for len(tr.stack) > i {
				w.end(tr, t)
			}
			return
		}
	}
}

// end writes the END of tr's innermost open slice, on the sequence that
// began it, and returns the packet's size. An END carries only its type and
// track (ANCHORS §5 rule 6).
func (w *writer) end(tr *track, t int64) int {
	top := tr.stack[len(tr.stack)-1]
	tr.stack = tr.stack[:len(tr.stack)-1]
	te := w.beginTE(typeSliceEnd, tr.uuid)
	return w.emit(top.seq, t, 0, te, nil, nil)
}

// counterTrack returns the uuid of a counter's track, writing its
// descriptor on first use.
func (w *writer) counterTrack(seq *sequence, kind trace.CounterKind, index int, t int64) uint64 {
	k := counterKey{kind, index}
	if uuid, ok := w.counters[k]; ok {
		return uuid
	}
	uuid := w.nextUUID
	w.nextUUID++
	w.counters[k] = uuid
	var name string
	parent := uint64(uuidProcess)
	switch kind {
	case trace.CounterBucketDepth:
		name = "bucket: " + w.stageName(index)
	case trace.CounterParked:
		name = "parked workers"
	case trace.CounterLocalLen:
		name = "local deque: worker " + strconv.Itoa(index)
		if index >= 0 && index < len(w.wtracks) {
			parent = w.wtracks[index].uuid
		}
	default:
		name = kind.String() + " " + strconv.Itoa(index)
	}
	td := w.sub[:0]
	td = appendVarintField(td, fTDUUID, uuid)
	td = appendStringField(td, fTDName, name)
	td = appendVarintField(td, fTDParentUUID, parent)
	td = appendBytesField(td, fTDCounter, appendVarintField(w.frame[:0], fCDUnit, unitCount))
	td = appendStringField(td, fTDDescription, DescCounter+kind.String()+":"+strconv.Itoa(index))
	w.sub = td
	w.emit(seq, t, 0, nil, td, nil)
	return uuid
}

func (w *writer) stageName(stage int) string {
	if n, ok := w.stageNames[stage]; ok && n != "" {
		return n
	}
	if stage == 0 {
		return CatUnconstr
	}
	return "stage " + strconv.Itoa(stage)
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

// beginTE starts a TrackEvent in w.te and resets the packet's interned
// data.
func (w *writer) beginTE(typ uint64, uuid uint64) []byte {
	w.in = w.in[:0]
	te := w.te[:0]
	te = appendVarintField(te, fTEType, typ)
	te = appendVarintField(te, fTETrackUUID, uuid)
	return te
}

// nameField adds name_iid, defining it on seq if needed.
func (w *writer) nameField(seq *sequence, te []byte, iid uint64) []byte {
	if !defined(&seq.names, iid) {
		w.in = appendBytesField(w.in, fIDNames, internedEntry(w.frame[:0], iid, w.names.strs[iid]))
	}
	w.te = appendVarintField(te, fTENameIID, iid)
	return w.te
}

func (w *writer) categoryField(seq *sequence, te []byte, stage int) []byte {
	iid, ok := w.stageCat[stage]
	if !ok {
		iid = w.cats.id(w.stageName(stage))
		w.stageCat[stage] = iid
	}
	if !defined(&seq.cats, iid) {
		w.in = appendBytesField(w.in, fIDCategories, internedEntry(w.frame[:0], iid, w.cats.strs[iid]))
	}
	w.te = appendVarintField(te, fTECategoryIIDs, iid)
	return w.te
}

func (w *writer) annotName(seq *sequence, name string) []byte {
	iid := w.annots.id(name)
	if !defined(&seq.annots, iid) {
		w.in = appendBytesField(w.in, fIDAnnotNames, internedEntry(w.frame[:0], iid, name))
	}
	return appendVarintField(w.sub[:0], fDANameIID, iid)
}

func (w *writer) annotInt(seq *sequence, te []byte, name string, v int64) []byte {
	da := appendVarintField(w.annotName(seq, name), fDAInt, uint64(v))
	w.sub = da
	w.te = appendBytesField(te, fTEAnnotations, da)
	return w.te
}

func (w *writer) annotUint(seq *sequence, te []byte, name string, v uint64) []byte {
	da := appendVarintField(w.annotName(seq, name), fDAUint, v)
	w.sub = da
	w.te = appendBytesField(te, fTEAnnotations, da)
	return w.te
}

func (w *writer) annotString(seq *sequence, te []byte, name, v string) []byte {
	da := appendStringField(w.annotName(seq, name), fDAString, v)
	w.sub = da
	w.te = appendBytesField(te, fTEAnnotations, da)
	return w.te
}

func internedEntry(b []byte, iid uint64, name string) []byte {
	b = appendVarintField(b, fINIID, iid)
	return appendStringField(b, fINName, name)
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

// emit frames and writes one TracePacket on seq and returns its size.
// flags gets SEQ_INCREMENTAL_STATE_CLEARED on the sequence's first packet;
// interned (InternedData fields) and the pending drop mark are attached.
func (w *writer) emit(seq *sequence, ts int64, flags uint32, te, td, interned []byte) int {
	if !seq.started {
		seq.started = true
		flags |= seqIncrementalStateCleared
	}
	if len(interned) > 0 {
		flags |= seqNeedsIncrementalState
	}
	p := w.pkt[:0]
	p = appendVarintField(p, fTimestamp, uint64(ts))
	p = appendVarintField(p, fSequenceID, uint64(seq.id))
	if te != nil {
		p = appendBytesField(p, fTrackEvent, te)
	}
	if len(interned) > 0 {
		p = appendBytesField(p, fInternedData, interned)
	}
	if flags != 0 {
		p = appendVarintField(p, fSequenceFlags, uint64(flags))
	}
	if seq.markDrop && te != nil {
		seq.markDrop = false
		p = appendVarintField(p, fPreviousDropped, 1)
	}
	if td != nil {
		p = appendBytesField(p, fTrackDescriptor, td)
	}
	w.pkt = p
	fr := protowire.AppendTag(w.frame[:0], fTracePacket, protowire.BytesType)
	fr = protowire.AppendVarint(fr, uint64(len(p)))
	w.frame = fr
	w.bw.Write(fr)
	w.bw.Write(p)
	w.stats.Packets++
	return len(fr) + len(p)
}
