package tracebuf

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxBytes is trace.DefaultMaxBytes (documented there).
const DefaultMaxBytes = 32 << 20

// eventSize is the size of one Event record in a buffer.
const eventSize = 24

// controlShareDiv: the control buffer gets MaxBytes/controlShareDiv, the
// workers split the rest evenly. The control goroutine records a handful of
// events per cycle and stage (cycle and stage boundaries), so 1/16 leaves it
// room for tens of thousands of cycles while the workers, which record every
// packet, get the rest.
const controlShareDiv = 16

// Options are trace.Options, documented there: package trace converts one
// into the other, so the two structs must keep the same fields in the same
// order (a difference fails to compile there).
type Options struct {
	// MaxBytes caps the memory of all buffers together; 0 means
	// DefaultMaxBytes. It is allocated up front and split as described at
	// controlShareDiv.
	MaxBytes int
	// LazyPages leaves the buffers' pages untouched until events are
	// written to them (newBuf, touchPages).
	LazyPages bool
	// Overwrite selects the full-buffer policy: false stops recording on
	// a full buffer, true overwrites its oldest events (Buf.full).
	Overwrite bool
	// Clock, if not nil, replaces the CPU clock (monotonic nanoseconds
	// since the recorder started, callable from every goroutine that
	// writes a buffer); it costs an indirect call per event.
	Clock func() int64
}

// Recorder records scheduler events into one append-only buffer per worker
// plus one for the control goroutine. A nil *Recorder is valid and records
// nothing: its Worker and Control return nil buffers, whose hooks are no-ops.
//
// Package trace declares its public Recorder as this type (type Recorder
// tracebuf.Recorder), with only the methods a user needs (Snapshot, Workers,
// Dropped). The scheduler gets the write side from its Config.Tracer by a
// conversion, (*tracebuf.Recorder)(cfg.Tracer): free, nil-preserving and
// checked by the compiler. Nothing outside this module can name this
// package, so nothing outside it can make that conversion.
//
// Roles: see the package documentation. Intern, Now, Claim and Dropped may
// be called from any goroutine at any time; Snapshot must not run while a
// worker buffer's hook runs, and takes the control buffer's lock
// (SetControlLock) while it copies that buffer.
type Recorder struct {
	workers []*Buf
	control *Buf
	opts    Options
	start   time.Time
	tick0   int64

	// claimed is set by the first Claim: a recorder records one writer
	// (one scheduler) for its whole life.
	claimed atomic.Bool
	// controlMu is the lock the writer holds around every control-buffer
	// hook (SetControlLock; the scheduler's monitor), which Snapshot takes
	// while it copies the control buffer: the writer may record an add on
	// it between cycles, while a Snapshot runs. nil: none set.
	controlMu atomic.Pointer[sync.Mutex]

	mu     sync.Mutex
	ids    map[string]NameID
	names  []string // names[id]; names[0] = ""
	config string   // SetConfig
}

// SetConfig records a description of the writer's configuration
// ("key=value" pairs separated by spaces: the scheduler's policies and
// limits), which Snapshot.Config returns and exporters write once. Any
// goroutine; a nil recorder ignores it.
func (r *Recorder) SetConfig(config string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.config = config
	r.mu.Unlock()
}

// Claim makes the caller the recorder's only writer (a scheduler claims its
// Config.Tracer when it is made) and reports whether it succeeded: false if
// a writer claimed it before. Two schedulers writing one recorder would
// write the same worker buffers from two goroutines and interleave two
// cycle sequences in one trace. Any goroutine; false for a nil recorder.
func (r *Recorder) Claim() bool {
	return r != nil && r.claimed.CompareAndSwap(false, true)
}

// SetControlLock names the mutex that the writer holds around every hook
// on the control buffer; Snapshot takes it while it copies the control
// buffer, so that a snapshot taken between cycles may race the writer's
// adds (which record on the control buffer at any time). The writer calls
// it once, after Claim and before it records anything. A nil recorder
// ignores it.
func (r *Recorder) SetControlLock(mu *sync.Mutex) {
	if r != nil {
		r.controlMu.Store(mu)
	}
}

// NewRecorder returns a recorder for workers worker buffers and one control
// buffer. It panics if workers < 1 or opts.MaxBytes < 0.
func NewRecorder(workers int, opts Options) *Recorder {
	if workers < 1 {
		panic(fmt.Sprintf("trace: NewRecorder with %d workers", workers))
	}
	if opts.MaxBytes < 0 {
		panic(fmt.Sprintf("trace: negative Options.MaxBytes %d", opts.MaxBytes))
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	r := &Recorder{
		opts:  opts,
		ids:   make(map[string]NameID),
		names: []string{""},
	}
	ctlBytes := opts.MaxBytes / controlShareDiv
	perWorker := (opts.MaxBytes - ctlBytes) / workers
	r.workers = make([]*Buf, workers)
	for i := range r.workers {
		r.workers[i] = newBuf(i, perWorker/eventSize, opts)
	}
	r.control = newBuf(-1, ctlBytes/eventSize, opts)
	if opts.Clock != nil {
		r.start = time.Now()
		r.tick0 = 0
	} else {
		r.start, r.tick0 = startClock()
	}
	return r
}

// Workers returns the number of worker buffers (0 for a nil recorder).
func (r *Recorder) Workers() int {
	if r == nil {
		return 0
	}
	return len(r.workers)
}

// Worker returns worker i's buffer, nil if r is nil. It panics if i is out
// of range. Only worker i's goroutine may call the buffer's hooks.
func (r *Recorder) Worker(i int) *Buf {
	if r == nil {
		return nil
	}
	if i < 0 || i >= len(r.workers) {
		panic(fmt.Sprintf("trace: Worker(%d) out of range [0,%d)", i, len(r.workers)))
	}
	return r.workers[i]
}

// Control returns the buffer for the goroutine that runs cycles (the caller
// of Scheduler.Run): cycle and stage events. nil if r is nil.
func (r *Recorder) Control() *Buf {
	if r == nil {
		return nil
	}
	return r.control
}

// Intern returns the NameID for name, assigning the next one on first use.
// Any goroutine; takes a mutex, so callers intern once (per packet type, per
// stage) and keep the ID. After 16 Mi distinct names it returns an overflow
// ID that reads back as "(too many names)". A nil recorder returns 0.
func (r *Recorder) Intern(name string) NameID {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.ids[name]; ok {
		return id
	}
	if len(r.names) >= int(nameIDOverflow) {
		return nameIDOverflow
	}
	id := NameID(len(r.names))
	r.names = append(r.names, name)
	r.ids[name] = id
	return id
}

// Now returns monotonic nanoseconds since the recorder started, on the same
// scale as Snapshot event times. Any goroutine. 0 for a nil recorder.
func (r *Recorder) Now() int64 {
	if r == nil {
		return 0
	}
	if r.opts.Clock != nil {
		return r.opts.Clock()
	}
	return int64(time.Since(r.start))
}

// Dropped returns the number of events lost so far over all buffers. Any
// goroutine. In Overwrite mode it counts whole overwritten laps only (a
// lower bound); Snapshot reports the exact figure.
func (r *Recorder) Dropped() uint64 {
	if r == nil {
		return 0
	}
	n := r.control.dropped.Load()
	for _, w := range r.workers {
		n += w.dropped.Load()
	}
	return n
}

// cacheLinePad keeps one buffer's hot fields off its neighbours' cache
// lines (buffers are written by different goroutines on different cores).
type cacheLinePad [64]byte

// Buf is one goroutine's append-only event buffer. All hook methods
// are safe on a nil *Buf and then cost one branch.
//
// Caller: the goroutine the buffer was handed to, or goroutines that
// serialise their calls with a lock of their own. Hooks take no lock,
// touch no shared atomic and allocate nothing: they read the clock and store
// one 24-byte Event (StealStamped: two).
type Buf struct {
	_ cacheLinePad
	// Owner-only fields (no synchronisation; Snapshot runs only when the
	// owner is quiescent).
	buf       []Event      // fixed capacity; len(buf) = capacity
	pos       int          // next slot to write
	laps      uint64       // Overwrite: how many times pos wrapped to 0
	clock     func() int64 // Options.Clock; nil = cputicks
	overwrite bool
	worker    int   // worker index, -1 for control
	dropFirst int64 // stop mode: ticks of the first dropped event
	dropLast  int64 // stop mode: ticks of the last dropped event
	// dropped is written by the owner on the slow (buffer-full) path only,
	// and read by Recorder.Dropped from any goroutine.
	dropped atomic.Uint64
	_       cacheLinePad
}

func newBuf(worker, capEvents int, opts Options) *Buf {
	buf := make([]Event, capEvents)
	if !opts.LazyPages {
		touchPages(buf)
	}
	return &Buf{
		buf:       buf,
		clock:     opts.Clock,
		overwrite: opts.Overwrite,
		worker:    worker,
	}
}

// touchPages writes to every memory page of buf, so that the kernel maps
// them now rather than at the first event recorded in each (see
// Options.LazyPages). The stores write zeros over zeros: the content does
// not change.
func touchPages(buf []Event) {
	step := max(os.Getpagesize()/eventSize, 1)
	for i := 0; i < len(buf); i += step {
		buf[i] = Event{}
	}
	// The stride is a little under a page (170 events are 4080 bytes), so
	// the tail after the last store may start a page of its own.
	if len(buf) > 0 {
		buf[len(buf)-1] = Event{}
	}
}

// put appends one event. Owner only. The hooks are small enough to inline
// into their callers (the nil check, then a call of put); the full-buffer
// case is out of line.
func (w *Buf) put(kindArg uint32, arg int32, val uint64) {
	var t int64
	if w.clock == nil {
		t = cputicks()
	} else {
		t = w.clock()
	}
	if i := w.pos; uint(i) < uint(len(w.buf)) {
		w.buf[i] = Event{Time: t, val: val, arg: arg, kindArg: kindArg}
		w.pos = i + 1
		return
	}
	w.full(Event{Time: t, val: val, arg: arg, kindArg: kindArg})
}

// putSteal appends a KindSteal event and its KindStealOrigin with one
// clock reading. Owner only. An event that finds the buffer full goes to
// full, so in stop mode the steal may be kept and its origin dropped.
func (w *Buf) putSteal(victim uint32, moved int32, flow uint64, from int32, born int64) {
	t := w.now()
	// born may carry only the low StampBits bits of the stamp: rebuild
	// the time nearest t with those bits. A wait of up to 2^(StampBits-1)
	// ticks comes back exact; a stamp a little after t (another core's
	// clock running ahead) comes back after t, and Snapshot clamps it.
	born = nearest(t, born)
	steal := Event{Time: t, val: flow, arg: moved, kindArg: makeKindArg(KindSteal, victim)}
	origin := Event{Time: t, val: uint64(born), arg: from, kindArg: uint32(KindStealOrigin)}
	if i := w.pos; uint(i+1) < uint(len(w.buf)) {
		w.buf[i], w.buf[i+1] = steal, origin
		w.pos = i + 2
		return
	}
	for _, e := range [2]Event{steal, origin} {
		if i := w.pos; uint(i) < uint(len(w.buf)) {
			w.buf[i] = e
			w.pos = i + 1
		} else {
			w.full(e)
		}
	}
}

// now reads the buffer's clock: raw ticks, or Options.Clock's value.
// Not inlined (Stamp's body is the nil check and this call).
func (w *Buf) now() int64 {
	if w.clock == nil {
		return cputicks()
	}
	return w.clock()
}

// full handles an append to a full buffer. Owner only.
//
// Stop policy (default): the event is dropped and counted; the first and
// last drop times are kept so exporters can mark where recording stopped.
// Overwrite policy: pos wraps to 0 and the oldest event is replaced; a lap's
// worth of drops is counted when the ring wraps for the second time and
// after.
//
//go:noinline
func (w *Buf) full(e Event) {
	if !w.overwrite || len(w.buf) == 0 {
		if w.dropped.Load() == 0 {
			w.dropFirst = e.Time
		}
		w.dropLast = e.Time
		w.dropped.Add(1) // publishes the count to Recorder.Dropped
		return
	}
	if w.laps > 0 {
		w.dropped.Add(uint64(len(w.buf))) // the lap that just ended overwrote a full buffer
	}
	w.laps++
	w.buf[0] = e
	w.pos = 1
}

// CycleBegin records the start of cycle cycle (control buffer).
func (w *Buf) CycleBegin(cycle uint64) {
	if w == nil {
		return
	}
	w.put(uint32(KindCycleBegin), 0, cycle)
}

// CycleEnd records the end of cycle cycle (control buffer).
func (w *Buf) CycleEnd(cycle uint64) {
	if w == nil {
		return
	}
	w.put(uint32(KindCycleEnd), 0, cycle)
}

// StageOpen records that stage stage, named name, opened. Exporters draw
// one slice per stage on a stage track, from its opening to the next
// stage's opening (or its close, or the cycle's end).
func (w *Buf) StageOpen(stage int, name NameID) {
	if w == nil {
		return
	}
	w.put(makeKindArg(KindStageOpen, uint32(name)), int32(stage), 0)
}

// StageClose records that stage stage closed.
func (w *Buf) StageClose(stage int) {
	if w == nil {
		return
	}
	w.put(uint32(KindStageClose), int32(stage), 0)
}

// PacketBegin records that the calling worker starts a packet of type name
// from stage stage (below 2^13), not saying how it was queued (see
// PacketBeginQueued). flow != 0 ends a flow arrow here: the packet was
// moved by a steal that recorded the same flow id.
func (w *Buf) PacketBegin(name NameID, stage int, flow uint64) {
	if w == nil {
		return
	}
	w.put(makeKindArg(KindPacketBegin, uint32(name)), int32(stage), flow)
}

// PacketBeginQueued is PacketBegin for a packet whose queuing was stamped
// (see Stamp and Last): from is the buffer whose clock stamped born (a
// worker that spawned it, or -1 for an add, which the control buffer's
// Stamp stamped), or -2 for a packet queued without a stamp (a designated
// one); born is the stamp, or only its low StampBits bits; priority says
// that it was taken from a bucket's priority lane. A stolen packet
// (flow != 0) keeps flow, and its queuing is the KindStealOrigin that
// followed the steal: from and born are then not recorded. The stage must
// be at most MaxBeginStage and a worker index below 2^19 − 3. No clock
// reading beyond PacketBegin's, no extra event.
func (w *Buf) PacketBeginQueued(name NameID, stage int, flow uint64, from int, born int64, priority bool) {
	if w == nil {
		return
	}
	arg := uint32(stage)&beginStageMask | uint32(from+beginFromWorker)<<beginFromShift
	val := flow
	if flow == 0 {
		arg |= beginBornBit
		val = uint64(born) & (1<<StampBits - 1)
	}
	if priority {
		arg |= beginPrioBit
	}
	w.put(makeKindArg(KindPacketBegin, uint32(name)), int32(arg), val)
}

// Add records one add call: how it queued its packets, whether it was a
// one-packet Add (single) rather than an AddAll, into which stage (for
// AddDesignated: for which worker), how many (capped at
// MaxAddPackets), under which wake policy (internal/policy's Kind; 0 for
// the scheduler's own), and stamp, the Stamp its first packet carries
// (its Born), or only its low StampBits bits. The control buffer's callers serialise their calls; a worker
// may record on its own buffer.
func (w *Buf) Add(how AddHow, single bool, stage int, packets int, wake uint8, stamp int64) {
	if w == nil {
		return
	}
	arg := uint32(how)&addHowMask | uint32(wake&0xF)<<addWakeShift | uint32(stage)<<addTargetShift
	if single {
		arg |= addSingleBit
	}
	w.put(makeKindArg(KindAdd, uint32(min(max(packets, 0), MaxAddPackets))), int32(arg), uint64(stamp))
}

// PacketEnd records that the packet begun last on this buffer ended.
func (w *Buf) PacketEnd() {
	if w == nil {
		return
	}
	w.put(uint32(KindPacketEnd), 0, 0)
}

// Steal records, on the thief's buffer, a steal from worker victim that
// moved moved packets (victim < 2^24, moved < 2^31: a worker index and a
// deque's worth). flow != 0 starts a flow arrow that the stolen packet's
// PacketBegin ends; as nothing says where that packet was queued, the
// arrow starts at the victim at the time of the steal (see StealStamped).
func (w *Buf) Steal(victim int, moved int, flow uint64) {
	if w == nil {
		return
	}
	w.put(makeKindArg(KindSteal, uint32(victim)), int32(moved), flow)
}

// StampBits is how many low bits of a [Buf.Stamp] value
// StealStamped needs: a scheduler may keep only those (wsched packs them
// beside a queued packet's stage). 2^39 ticks of the CPU's cycle counter
// are a few minutes (3.7 at 2.45 GHz); a packet stolen later than that
// after its queuing gets an arrow that starts at the wrong time.
const StampBits = 40

// StealStamped is Steal for a stolen packet whose queuing was stamped: born
// is the value [Buf.Stamp] returned when the packet was spawned or
// added (or its low StampBits bits), on the buffer of worker from (-1: the control buffer, for a
// packet added from outside any worker). Exporters then draw the steal's
// flow arrow from that moment on that buffer's track (the control track
// for -1) to the stolen packet's slice. It records two events, KindSteal
// and KindStealOrigin, with one clock reading.
func (w *Buf) StealStamped(victim, moved int, flow uint64, born int64, from int) {
	if w == nil {
		return
	}
	w.putSteal(uint32(victim), int32(moved), flow, int32(from), born)
}

// Last returns the time of the newest event this buffer holds (0 if
// none), as a stamp for StealStamped that costs no clock reading: a worker
// spawning from inside a packet stamps its spawns with it, which places
// their arrows' start inside the spawning packet's slice, at or after its
// begin (the begin itself if the packet recorded nothing since). Owner
// only. In stop mode, once the buffer is full, it is the last event kept.
func (w *Buf) Last() int64 {
	if w == nil {
		return 0
	}
	i := w.pos - 1
	if i < 0 {
		if w.laps == 0 {
			return 0
		}
		i = len(w.buf) - 1
	}
	return w.buf[i].Time
}

// Stamp reads the buffer's clock without recording anything, for a later
// StealStamped's born argument: a scheduler stamps each packet it queues
// while tracing. Unlike the hooks, any goroutine may call it on any buffer
// (it reads only the clock). A nil buffer returns 0.
func (w *Buf) Stamp() int64 {
	if w == nil {
		return 0
	}
	return w.now()
}

// Park records that the calling worker parks (blocks waiting for work).
func (w *Buf) Park() {
	if w == nil {
		return
	}
	w.put(uint32(KindPark), 0, 0)
}

// Unpark records that the calling worker resumed after Park.
func (w *Buf) Unpark() {
	if w == nil {
		return
	}
	w.put(uint32(KindUnpark), 0, 0)
}

// WakeSent records that the calling goroutine woke worker target (-1 =
// unknown, e.g. a broadcast).
func (w *Buf) WakeSent(target int) {
	if w == nil {
		return
	}
	w.put(uint32(KindWakeSent), int32(target), 0)
}

// WakeReceived records that the calling worker was woken. blocked says
// that it had been waiting in a blocking receive (its OS thread may have
// slept), rather than finding its token while it polled (Config.ParkSpin
// in package scheduler) or at once.
func (w *Buf) WakeReceived(blocked bool) {
	if w == nil {
		return
	}
	var b int32
	if blocked {
		b = 1
	}
	w.put(uint32(KindWakeReceived), b, 0)
}

// Counter records a sample of counter kind at index (see CounterKind).
func (w *Buf) Counter(kind CounterKind, index int, value int64) {
	if w == nil {
		return
	}
	w.put(makeKindArg(KindCounter, uint32(kind)), int32(index), uint64(value))
}
