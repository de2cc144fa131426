package gcmark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wsched/wsched/examples/stagetime"
	"github.com/wsched/wsched/scheduler"
)

// Stage names, in order. Prepare clears the mark bits and scans the roots,
// Closure traces from them, Release sweeps.
var Stages = []string{"Prepare", "Closure", "Release"}

// The stages' IDs: Stages[i] is StageID i+1 (0 is Unconstrained).
const (
	stagePrepare scheduler.StageID = 1
	stageClosure scheduler.StageID = 2
	stageRelease scheduler.StageID = 3
)

// CodeCachePlacement says how the heavy code-cache root packet is queued.
type CodeCachePlacement uint8

const (
	// CodeCachePriority queues it in Prepare's priority lane, so a worker
	// starts it before any mutator stack: the longest packet runs first.
	CodeCachePriority CodeCachePlacement = iota
	// CodeCacheLast queues it after the stacks in one bulk add, as MMTk
	// does; it may start late and decide the stage's makespan.
	CodeCacheLast
	// CodeCacheSplit scans it as packets of at most ChunkSlots slots.
	CodeCacheSplit
)

var codeCacheNames = []string{"priority", "last", "split"}

// String returns the placement's name: priority, last or split.
func (c CodeCachePlacement) String() string {
	if int(c) < len(codeCacheNames) {
		return codeCacheNames[c]
	}
	return fmt.Sprintf("CodeCachePlacement(%d)", uint8(c))
}

// MarshalText implements encoding.TextMarshaler.
func (c CodeCachePlacement) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: priority, last or
// split.
func (c *CodeCachePlacement) UnmarshalText(b []byte) error {
	for i, n := range codeCacheNames {
		if n == string(b) {
			*c = CodeCachePlacement(i)
			return nil
		}
	}
	return fmt.Errorf("gcmark: unknown code-cache placement %q (want priority, last or split)", b)
}

// Options configures a Marker.
type Options struct {
	// Scheduler configures the scheduler the marker creates. Stages is
	// ignored (the marker's are Stages); all other fields are used as given.
	Scheduler scheduler.Config
	// CodeCache says how the code-cache roots are queued.
	CodeCache CodeCachePlacement
	// Trace chooses the Closure stage's design.
	Trace Tracing
	// SplitEvery is how many objects a depth-first packet scans between
	// two calls of Worker.ShouldSplit (0: DefaultSplitEvery). With one
	// worker a packet never asks: nobody could take work.
	SplitEvery int
	// SplitShare is the share of its mark stack, the oldest entries, that
	// a depth-first packet gives away when ShouldSplit reports an idle
	// worker (0: DefaultSplitShare).
	SplitShare float64
	// Batch is how many objects a depth-first packet pops off its stack
	// at once: it loads their headers, whose cache misses then overlap,
	// before it scans any of them (0: DefaultBatch; at most MaxBatch).
	Batch int
	// KeepRest makes a depth-first packet that splits go on with the
	// rest of its stack. By default it spawns the rest as a packet too,
	// which this worker runs next, and returns: under the default
	// Config.Local (scheduler.LocalPrivate) the lone spawn of the part
	// given away would otherwise stay in the worker's private stack,
	// unseen by thieves, until the packet spawned again or returned.
	KeepRest bool
	// RootSlotWork is the work spent per root slot before its referent is
	// traced, in rounds of a 64-bit xorshift (about 1.8 ns each on the
	// 2-vCPU AMD EPYC KVM guest, six dependent instructions): the
	// synthetic heap has no stack maps or relocation records to decode,
	// so this stands in for them. 0 means DefaultRootSlotWork;
	// negative means none.
	RootSlotWork int
	// Partitions is how many ranges of objects TracePartitioned cuts the
	// heap into (0: one with one worker, else DefaultPartitionsPerWorker
	// per worker). Each range is a whole number of lines of the mark
	// bitmap (512 objects), all but the last of one size, so there may be
	// fewer than asked for: at most one per 512 objects.
	Partitions int
}

// DefaultRootSlotWork makes a root slot cost about 100 ns, so that the
// code-cache packet (CodeCacheSlots slots) runs for about 2.7 ms: the
// longest packet of the Prepare stage by far, as in the luindex case.
// (Measured in place on the 2-vCPU AMD EPYC KVM guest: the code-cache
// packet runs for 2.56–2.76 ms, 95–103 ns per slot.)
const DefaultRootSlotWork = 56

// Tracing is a design of the Closure stage.
type Tracing uint8

const (
	// TraceAuto, the default, chooses the design from the heap, once, in
	// NewMarker: with one worker TraceDepthFirst (plain bits, no
	// forwarding, two clock reads a packet); with more, it samples the
	// heap's references (SampleCrossing) and takes TracePartitioned if at
	// most AutoCrossingLimit of them cross between its ranges, else
	// TraceWorklist (the package doc's "Closure on the library's
	// Worklist" has the figures). Marker.Tracing says which.
	TraceAuto Tracing = iota
	// TracePartitioned cuts the objects into
	// Options.Partitions ranges of whole bitmap lines and marks each
	// depth-first, with plain bits, from one packet at a time; a referent
	// in another range is forwarded to that range's packet (partition.go).
	// No line of the bitmap is written from two CPUs at once, and no bit
	// needs a CAS.
	TracePartitioned
	// TraceDepthFirst marks depth-first: each packet is a mark stack it
	// works through newest first, splitting its oldest part off for a
	// worker that is idle (Worker.ShouldSplit), so that a worker reads
	// the heap in the order it was built. The workers share the bitmap:
	// bits are set by CAS (plainly with one worker).
	TraceDepthFirst
	// TraceEdgeBuffers is MMTk's design: a packet is a buffer of up to
	// ChunkSlots references (ProcessEdges); it marks them and gathers the
	// slots of the objects it marked into new buffers, spawned as packets
	// when full: the heap is read breadth-first, ChunkSlots at a time.
	TraceEdgeBuffers
	// TraceWorklist marks with a scheduler.Worklist of objects, the
	// library's depth-first loop (worklist.go): the body takes a batch of
	// objects off the stack (Feeder.Take), scans them and feeds the
	// referents it marks (by CAS; plainly with one worker). Each body
	// call counts as one Closure packet in Result.Stages.
	TraceWorklist
)

// String returns the design's name: auto, parts, dfs, edges or worklist.
func (t Tracing) String() string {
	switch t {
	case TraceAuto:
		return "auto"
	case TraceDepthFirst:
		return "dfs"
	case TraceEdgeBuffers:
		return "edges"
	case TracePartitioned:
		return "parts"
	case TraceWorklist:
		return "worklist"
	}
	return fmt.Sprintf("Tracing(%d)", uint8(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t Tracing) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: "auto", "parts",
// "dfs", "edges" or "worklist".
func (t *Tracing) UnmarshalText(b []byte) error {
	switch string(b) {
	case "auto":
		*t = TraceAuto
	case "dfs":
		*t = TraceDepthFirst
	case "edges":
		*t = TraceEdgeBuffers
	case "parts":
		*t = TracePartitioned
	case "worklist":
		*t = TraceWorklist
	default:
		return fmt.Errorf("gcmark: unknown tracing %q (want auto, parts, dfs, edges or worklist)", b)
	}
	return nil
}

// Defaults of the depth-first Closure, from the sweeps in
// benchmarks/results/epyc2/gcmark-742ff63 (see the package doc):
// batches of 32 mark the built heap 1.6–1.8 times as fast as one object
// at a time, sequentially or in the Marker, and 48 or 64 no faster; every
// split setting swept (asking every 16 to 256 objects, giving away a
// quarter to three quarters, spawning the rest or not, LocalPrivate or
// LocalLIFO) marked within the sweep's noise of the others on 2
// workers, so these are the middle values, and a split spawns the rest
// too, which makes it visible at once under LocalPrivate (see
// Options.KeepRest).
const (
	// DefaultPartitionsPerWorker is TracePartitioned's partitions per
	// worker when there are more workers than one: in the sweep in
	// benchmarks/results/epyc2/gcmark-2c579bf, 16 and 32 per worker ran
	// fastest on 2 workers (1.97× seq-dfs), 1 per worker 1.65×, 64 1.93×.
	DefaultPartitionsPerWorker = 32

	DefaultSplitEvery = 64
	DefaultSplitShare = 0.5
	DefaultBatch      = 32
	MaxBatch          = 64 // the most objects popped at once
)

// Marker marks a Heap in parallel, one GC cycle per call to Mark, on a
// scheduler it owns. It is not safe for concurrent use: one Mark at a time.
type Marker struct {
	crossing float64 // TraceAuto's sampled crossing share; -1 when not sampled
	heap     *Heap
	sched    *scheduler.Scheduler
	opts     Options
	clock    *stagetime.Clock

	// marks holds one bit per object: in the partitioned design set
	// plainly by the packet of the object's partition; in the others by
	// CAS (casMark) or, with one worker in the depth-first and worklist
	// designs, plainly (plain). Cleared by Prepare's clearMarks packets, read by
	// Release and after the cycle.
	marks Bitmap
	plain bool

	workers    []workerState // workers[w] is touched only by worker w during a cycle
	splitEvery int

	wl *scheduler.Worklist[uint32] // TraceWorklist

	parts       []partition        // TracePartitioned: each partition's inbox
	partPackets []scheduler.Packet // a *markPartition per partition, queued in Closure each cycle
	partSize    uint32             // objects per partition, a multiple of partLine
}

// workerState is one worker's private state: its free edge buffers and
// counters. Padded so that two workers' counters never share a cache line.
type workerState struct {
	free      []*processEdges
	stacks    [][]uint32 // free mark-stack buffers
	big       []uint32   // the largest free one, kept for the deepest stacks
	splits    int64      // stacks split off
	forwarded int64      // referents handed to another partition
	won       []uint32   // trace's scratch: the objects this packet marked
	slots     int64      // slots traced (non-null references loaded)
	marked    int64      // objects this worker marked
	live      int64      // live objects counted by Release
	liveBytes int64
	sink      uint64     // keeps the root-slot work from being optimised away
	far       []uint32   // TracePartitioned: referents in other partitions, from one scan
	out       [][]uint32 // TracePartitioned: referents gathered for each partition
	_         [64]byte
}

// maxFree bounds each worker's free list of edge buffers (16 KiB each).
const maxFree = 64

// NewMarker starts a scheduler for marking h. Close it when done.
func NewMarker(h *Heap, opts Options) (*Marker, error) {
	cfg := opts.Scheduler
	cfg.Stages = Stages
	s, err := scheduler.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("gcmark: %w", err)
	}
	if opts.RootSlotWork == 0 {
		opts.RootSlotWork = DefaultRootSlotWork
	}
	if opts.SplitEvery == 0 {
		opts.SplitEvery = DefaultSplitEvery
	}
	if opts.SplitShare == 0 {
		opts.SplitShare = DefaultSplitShare
	}
	if opts.Batch == 0 {
		opts.Batch = DefaultBatch
	}
	crossing := -1.0
	if opts.Trace == TraceAuto {
		opts.Trace, crossing = chooseTracing(h, s.Workers(), opts.Partitions)
	}
	if opts.Trace > TraceWorklist || opts.Partitions < 0 || opts.CodeCache > CodeCacheSplit || opts.SplitEvery < 0 || !(opts.SplitShare > 0 && opts.SplitShare < 1) || opts.Batch < 0 || opts.Batch > MaxBatch {
		s.Close()
		return nil, fmt.Errorf("gcmark: bad options: Trace %v, CodeCache %v, SplitEvery %d, SplitShare %v, Batch %d, Partitions %d",
			opts.Trace, opts.CodeCache, opts.SplitEvery, opts.SplitShare, opts.Batch, opts.Partitions)
	}
	m := &Marker{
		crossing: crossing,
		heap:     h,
		sched:    s,
		opts:     opts,
		clock:    stagetime.New(s.Workers(), append([]string{"Unconstrained"}, Stages...)),
		marks:    NewBitmap(h.Objects()),
		workers:  make([]workerState, s.Workers()),
	}
	m.splitEvery = opts.SplitEvery
	if s.Workers() == 1 {
		// Nobody to split for: a packet returns from scanRun only to
		// watch for the cycle's end, every cancelCheck objects
		// (returning every SplitEvery objects cost one worker 3-5%).
		// And nobody else marks: the bits are set by plain stores, not
		// CAS (the CAS cost one worker 4-8%).
		m.splitEvery = cancelCheck
		m.plain = opts.Trace == TraceDepthFirst || opts.Trace == TraceWorklist
	}
	if opts.Trace == TraceWorklist {
		if err := m.newMarkWorklist(); err != nil {
			s.Close()
			return nil, fmt.Errorf("gcmark: %w", err)
		}
	}
	if opts.Trace == TracePartitioned {
		parts := opts.Partitions
		if parts == 0 {
			parts = 1
			if s.Workers() > 1 {
				parts = DefaultPartitionsPerWorker * s.Workers()
			}
		}
		objs := max(h.Objects(), 1)
		parts = min(parts, (objs+partLine-1)/partLine) // at most one a line (and no overflow below)
		size := (objs + parts - 1) / parts
		size = (size + partLine - 1) / partLine * partLine
		m.partSize = uint32(size)
		m.parts = make([]partition, (objs+size-1)/size)
		for i := range m.parts {
			m.partPackets = append(m.partPackets, &markPartition{m: m, p: uint32(i)})
		}
		for i := range m.workers {
			m.workers[i].out = make([][]uint32, len(m.parts))
		}
	}
	return m, nil
}

// Close stops the scheduler's workers.
func (m *Marker) Close() error { return m.sched.Close() }

// Scheduler returns the marker's scheduler (for its Stats).
func (m *Marker) Scheduler() *scheduler.Scheduler { return m.sched }

// Result is what one cycle found and what it cost.
type Result struct {
	Marked    int64 // objects marked in Closure
	Live      int64 // objects counted live by Release (equals Marked)
	LiveBytes int64 // their size (Heap.Bytes: 4 a word)
	Slots     int64 // non-null reference slots traced
	Splits    int64 // mark stacks split off for idle workers (TraceDepthFirst)
	Forwarded int64 // referents handed to another partition's packet (TracePartitioned)
	Elapsed   time.Duration
	Stages    []stagetime.Stage  // per-stage makespan and lower bound
	Stats     stagetime.Counters // scheduler counters of this cycle
}

// Speed returns traced slots per second.
func (r Result) Speed() float64 { return float64(r.Slots) / r.Elapsed.Seconds() }

// Mark runs one GC cycle: Prepare (clear mark bits, scan roots), Closure
// (trace), Release (sweep and count).
func (m *Marker) Mark(ctx context.Context) (Result, error) {
	for i := range m.workers {
		w := &m.workers[i]
		w.slots, w.marked, w.live, w.liveBytes, w.splits, w.forwarded = 0, 0, 0, 0, 0, 0
	}
	before := m.sched.Stats()
	if err := m.queuePrepare(); err != nil {
		return Result{}, err
	}
	t0 := time.Now()
	m.clock.Start() // after t0: the stages' times then fit inside Elapsed
	err := m.sched.Run(ctx)
	elapsed := time.Since(t0)
	if err != nil {
		return Result{}, fmt.Errorf("gcmark: %w", err)
	}
	r := Result{Elapsed: elapsed, Stages: m.clock.Stages(), Stats: stagetime.Delta(m.sched.Stats(), before)}
	for i := range m.workers {
		w := &m.workers[i]
		r.Marked += w.marked
		r.Slots += w.slots
		r.Live += w.live
		r.LiveBytes += w.liveBytes
		r.Splits += w.splits
		r.Forwarded += w.forwarded
	}
	if r.Marked != r.Live {
		return r, errors.New("gcmark: Release counted a different number of live objects than Closure marked")
	}
	return r, nil
}

// Marks returns a copy of the mark bits of the last cycle.
func (m *Marker) Marks() Bitmap {
	return append(Bitmap(nil), m.marks...)
}

// markChunkWords is the mark-bitmap words one clearMarks or sweep packet
// covers: 1024 words are 64 Ki objects (8 KiB of bits), so a sweep packet
// runs for about 150 µs and scale 1 has 32 of them to balance.
const markChunkWords = 1024

// queuePrepare queues the Prepare stage's packets: clear the mark bits,
// one root packet per mutator stack, and the code-cache roots.
func (m *Marker) queuePrepare() error {
	h := m.heap
	var ps []scheduler.Packet
	for lo := 0; lo < len(m.marks); lo += markChunkWords {
		ps = append(ps, &clearMarks{m: m, lo: lo, hi: min(lo+markChunkWords, len(m.marks))})
	}
	for _, s := range h.Stacks {
		ps = append(ps, &scanStackRoots{m: m, slots: s})
	}
	switch m.opts.CodeCache {
	case CodeCacheLast:
		ps = append(ps, &scanCodeCacheRoots{m: m, slots: h.CodeCache})
	case CodeCacheSplit:
		for lo := 0; lo < len(h.CodeCache); lo += ChunkSlots {
			ps = append(ps, &scanCodeCacheRoots{m: m, slots: h.CodeCache[lo:min(lo+ChunkSlots, len(h.CodeCache))]})
		}
	case CodeCachePriority:
		if err := m.sched.Add(&scanCodeCacheRoots{m: m, slots: h.CodeCache}, stagePrepare, scheduler.Priority); err != nil {
			return fmt.Errorf("gcmark: %w", err)
		}
	}
	if err := m.sched.AddAll(ps, stagePrepare); err != nil {
		return fmt.Errorf("gcmark: %w", err)
	}
	if len(m.parts) > 0 {
		// Closure starts with a packet per partition: each marks what
		// Prepare's root packets put in its inbox.
		for i := range m.parts {
			pt := &m.parts[i]
			pt.items, pt.active = pt.items[:0], true
			pt.n.Store(0)
		}
		for i := range m.workers {
			for d := range m.workers[i].out {
				m.workers[i].out[d] = m.workers[i].out[d][:0]
			}
		}
		if err := m.sched.AddAll(m.partPackets, stageClosure); err != nil {
			return fmt.Errorf("gcmark: %w", err)
		}
	}
	// Release's packets wait in their closed bucket until Closure drains.
	ps = ps[:0]
	for lo := 0; lo < len(m.marks); lo += markChunkWords {
		ps = append(ps, &sweep{m: m, lo: lo, hi: min(lo+markChunkWords, len(m.marks))})
	}
	if err := m.sched.AddAll(ps, stageRelease); err != nil {
		return fmt.Errorf("gcmark: %w", err)
	}
	return nil
}

// clearMarks clears words [lo, hi) of the mark bitmap.
type clearMarks struct {
	m      *Marker
	lo, hi int
}

// PacketName names the packet.
func (p *clearMarks) PacketName() string { return "ClearMarks" }

func (p *clearMarks) Run(w *scheduler.Worker) error {
	t := p.m.clock.Now()
	clear(p.m.marks[p.lo:p.hi]) // published to Closure by the stage barrier
	p.m.clock.Done(w.ID(), int(stagePrepare), t)
	return nil
}

// scanStackRoots scans one mutator's stack.
type scanStackRoots struct {
	m     *Marker
	slots []uint32
}

// PacketName names the packet as MMTk does.
func (p *scanStackRoots) PacketName() string { return "ScanStackRoots" }

func (p *scanStackRoots) Run(w *scheduler.Worker) error {
	t := p.m.clock.Now()
	if err := p.m.scanRoots(w, p.slots); err != nil {
		return err
	}
	p.m.clock.Done(w.ID(), int(stagePrepare), t)
	return nil
}

// scanCodeCacheRoots scans the code-cache roots (or a chunk of them).
type scanCodeCacheRoots struct {
	m     *Marker
	slots []uint32
}

func (p *scanCodeCacheRoots) Run(w *scheduler.Worker) error {
	t := p.m.clock.Now()
	if err := p.m.scanRoots(w, p.slots); err != nil {
		return err
	}
	p.m.clock.Done(w.ID(), int(stagePrepare), t)
	return nil
}

// PacketName names the packet as MMTk's OpenJDK binding does.
func (p *scanCodeCacheRoots) PacketName() string { return "ScanCodeCacheRoots" }

// scanRoots decodes each root slot and queues its referent, in edge
// buffers of at most ChunkSlots, for the Closure stage. Closure is closed
// while Prepare runs, so these adds wake nobody. An add fails only if the
// scheduler was closed mid-cycle; the error then ends the cycle.
func (m *Marker) scanRoots(w *scheduler.Worker, slots []uint32) error {
	ws := &m.workers[w.ID()]
	switch m.opts.Trace {
	case TraceDepthFirst, TraceWorklist:
		return m.scanRootsDFS(ws, slots)
	case TracePartitioned:
		m.scanPartitionRoots(ws, slots)
		return nil
	}
	rounds := m.opts.RootSlotWork
	out := m.getBuf(ws)
	for _, v := range slots {
		if rounds > 0 {
			ws.sink += decode(v, rounds)
		}
		if v == Null {
			continue
		}
		out.slots = append(out.slots, v)
		if len(out.slots) == ChunkSlots {
			if err := m.sched.Add(out, stageClosure); err != nil {
				return err
			}
			out = m.getBuf(ws)
		}
	}
	if len(out.slots) > 0 {
		return m.sched.Add(out, stageClosure)
	}
	m.putBuf(ws, out)
	return nil
}

// scanRootsDFS is scanRoots for TraceDepthFirst and TraceWorklist: the
// buffers become markStack (or seedWorklist) packets, which claim their
// referents.
func (m *Marker) scanRootsDFS(ws *workerState, slots []uint32) error {
	rounds := m.opts.RootSlotWork
	out := m.getStack(ws)
	for _, v := range slots {
		if rounds > 0 {
			ws.sink += decode(v, rounds)
		}
		if v == Null {
			continue
		}
		out = append(out, v)
		if len(out) == ChunkSlots {
			if err := m.sched.Add(m.rootPacket(out), stageClosure); err != nil {
				return err
			}
			out = m.getStack(ws)
		}
	}
	if len(out) > 0 {
		return m.sched.Add(m.rootPacket(out), stageClosure)
	}
	m.putStack(ws, out)
	return nil
}

// rootPacket is the Closure packet of root referents objs: a mark stack,
// or for TraceWorklist a seed of the worklist.
func (m *Marker) rootPacket(objs []uint32) scheduler.Packet {
	if m.opts.Trace == TraceWorklist {
		return seedWorklist{m: m, objs: objs}
	}
	return markStack{m: m, objs: objs}
}

// decode is the stand-in for decoding a root slot: rounds of xorshift.
func decode(v uint32, rounds int) uint64 {
	x := uint64(v) | 1
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// processEdges traces a buffer of references: it marks each referent not
// yet marked and gathers the newly marked objects' slots into a new buffer,
// which becomes a packet of its own (spawned on this worker) when it holds
// ChunkSlots. This is MMTk's ProcessEdgesWork with the slots already
// loaded.
type processEdges struct {
	m     *Marker
	slots []uint32 // cap ChunkSlots
}

// PacketName names the packet as MMTk does.
func (p *processEdges) PacketName() string { return "ProcessEdges" }

func (p *processEdges) Run(w *scheduler.Worker) error {
	m := p.m
	t := m.clock.Now()
	ws := &m.workers[w.ID()]
	m.trace(w, ws, p.slots)
	m.putBuf(ws, p)
	m.clock.Done(w.ID(), int(stageClosure), t)
	return nil
}

// scanArrayChunk traces Words[lo:hi], slots of a huge reference array, in
// place.
type scanArrayChunk struct {
	m      *Marker
	lo, hi uint32
}

// PacketName names the packet.
func (p *scanArrayChunk) PacketName() string { return "ScanArrayChunk" }

func (p *scanArrayChunk) Run(w *scheduler.Worker) error {
	m := p.m
	t := m.clock.Now()
	m.trace(w, &m.workers[w.ID()], m.heap.Words[p.lo:p.hi])
	m.clock.Done(w.ID(), int(stageClosure), t)
	return nil
}

// trace marks the referents in in and scans the newly marked ones.
//
// It works in two passes: first it marks (one CAS per newly marked object),
// collecting the objects it won; then it scans them. A locked CAS orders
// every memory access around it, so interleaving CASes with the scans'
// cache misses (each object's offsets and slots are a miss) would let only
// one miss be in flight at a time; with the passes apart, the scan loop's
// misses overlap. On the default heap this makes one worker 1.4× faster.
func (m *Marker) trace(w *scheduler.Worker, ws *workerState, in []uint32) {
	off, words := m.heap.Offsets, m.heap.Words
	won := ws.won[:0]
	slots := int64(0)
	for _, o := range in {
		if o == Null {
			continue
		}
		slots++
		if m.claim(o) {
			won = append(won, o)
		}
	}
	out := m.getBuf(ws)
	buf := out.slots // a local copy: the compiler keeps it in registers
	for _, o := range won {
		lo := off[o] + 1 // past the header
		hi := lo + words[lo-1]
		if hi-lo > ChunkSlots {
			// A huge array: one packet per ChunkSlots slots, scanned in place.
			for c := lo; c < hi; c += ChunkSlots {
				scheduler.Spawn(w, &scanArrayChunk{m: m, lo: c, hi: min(c+ChunkSlots, hi)})
			}
			continue
		}
		for _, c := range words[lo:hi] {
			if c == Null {
				continue
			}
			buf = append(buf, c)
			if len(buf) == ChunkSlots {
				out.slots = buf
				scheduler.Spawn(w, out)
				out = m.getBuf(ws)
				buf = out.slots
			}
		}
	}
	out.slots = buf
	if len(buf) > 0 {
		scheduler.Spawn(w, out)
	} else {
		m.putBuf(ws, out)
	}
	ws.won = won
	ws.slots += slots
	ws.marked += int64(len(won))
}

// getBuf returns an empty edge-buffer packet from ws's free list.
func (m *Marker) getBuf(ws *workerState) *processEdges {
	if n := len(ws.free); n > 0 {
		p := ws.free[n-1]
		ws.free = ws.free[:n-1]
		return p
	}
	return &processEdges{m: m, slots: make([]uint32, 0, ChunkSlots)}
}

// putBuf returns a finished packet to ws's free list. The scheduler holds
// no reference to a packet after its Run returns.
func (m *Marker) putBuf(ws *workerState, p *processEdges) {
	if len(ws.free) < maxFree {
		p.slots = p.slots[:0]
		ws.free = append(ws.free, p)
	}
}

// sweep counts the live objects of mark words [lo, hi) and their bytes.
type sweep struct {
	m      *Marker
	lo, hi int
}

// PacketName names the packet.
func (p *sweep) PacketName() string { return "Sweep" }

func (p *sweep) Run(w *scheduler.Worker) error {
	m := p.m
	t := m.clock.Now()
	live, bytes := sweepWords(m.heap, m.marks, p.lo, p.hi)
	ws := &m.workers[w.ID()]
	ws.live += live
	ws.liveBytes += bytes
	m.clock.Done(w.ID(), int(stageRelease), t)
	return nil
}

// AutoCrossingLimit is TraceAuto's limit: the sampled share of references
// that cross between TracePartitioned's ranges at or below which it
// partitions. From the sweep in benchmarks/results/xeon2/gcmark-realheaps
// (sweep-crossing.txt: built heaps of long-range shares 0.05 to 0.45, and
// the power-law heap; 2 workers, medians of 10 rounds): the partitioned
// design marked 1.25, 1.28, 1.28, 1.21 and 1.09 times as fast as the
// depth-first one at sampled shares 0.06, 0.11, 0.15, 0.21 and 0.30, level
// at 0.40 (1.01), and slower at 0.45 (0.96); on the real heaps (shares
// 0.61 and 0.87) it took 1.5 and 1.8 times as long. Above the limit
// TraceAuto takes the worklist design. The same sweep against it on a
// 2-vCPU EPYC (benchmarks/results/epyc2/gcmark-worklist-auto/
// sweep-crossing, pass2): the partitioned design 1.07 times as fast at
// 0.21, level at 0.30 and 0.40, the worklist 1.09 times as fast at 0.45;
// so the limit stands. A first pass put the partitioned design 1.28-1.35
// times ahead at 0.06-0.30, but its worklist runs were bimodal (62-92 ms
// at 0.30; 58 steals a cycle at 0.21 against 214 in the second pass) and
// are not evidence.
const AutoCrossingLimit = 0.35

// AutoSampleObjects is how many objects SampleCrossing reads.
const AutoSampleObjects = 1 << 13

// autoSampleSlots is the most slots SampleCrossing reads of one object,
// so that a big reference array does not decide the sample alone.
const autoSampleSlots = 8

// partitionsFor is TracePartitioned's number of ranges (before the cap of
// one range per bitmap line) for the given workers and Options.Partitions.
func partitionsFor(workers, partitions int) int {
	switch {
	case partitions > 0:
		return partitions
	case workers > 1:
		return DefaultPartitionsPerWorker * workers
	}
	return 1
}

// chooseTracing is TraceAuto's choice, and the crossing share it sampled
// (-1 with one worker, which does not sample).
func chooseTracing(h *Heap, workers, partitions int) (Tracing, float64) {
	if workers == 1 {
		return TraceDepthFirst, -1
	}
	c := SampleCrossing(h, partitionsFor(workers, partitions), AutoSampleObjects)
	if c <= AutoCrossingLimit {
		return TracePartitioned, c
	}
	return TraceWorklist, c
}

// SampleCrossing reads objects evenly spaced objects over the heap's ids,
// up to 8 non-null slots of each, and returns the share of those
// references whose source and target lie in different ones of parts equal
// ranges of object ids: what the partitioned design would forward. It
// costs about two cache misses an object sampled (8,192 objects: well
// under a millisecond next to a mark of tens of milliseconds or more) and
// allocates nothing.
func SampleCrossing(h *Heap, parts, objects int) float64 {
	n := h.Objects()
	if n == 0 || parts <= 1 || objects <= 0 {
		return 0
	}
	part := func(o uint32) uint64 { return uint64(o) * uint64(parts) / uint64(n) }
	followed, cross := 0, 0
	for k := range min(objects, n) {
		o := uint32(uint64(k) * uint64(n) / uint64(min(objects, n)))
		taken := 0
		for _, c := range h.Slots(o) {
			if c == Null {
				continue
			}
			followed++
			if part(c) != part(o) {
				cross++
			}
			if taken++; taken == autoSampleSlots {
				break
			}
		}
	}
	if followed == 0 {
		return 0
	}
	return float64(cross) / float64(followed)
}

// Tracing returns the Closure design the marker uses (TraceAuto's choice
// resolved), and for TraceAuto with more than one worker the crossing
// share it sampled (else -1).
func (m *Marker) Tracing() (Tracing, float64) { return m.opts.Trace, m.crossing }
