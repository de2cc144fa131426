package scheduler

import (
	"reflect"
	"runtime/debug"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wsched/wsched/deque"
	"github.com/wsched/wsched/trace"
)

// Worker is one worker goroutine of a Scheduler. A packet receives its
// worker in Run; the *Worker is valid only inside that call, on that
// goroutine: Spawn and SpawnOrRun on a *Worker kept past it panic.
type Worker struct {
	_ [64]byte
	// Set by New and never written again; read by other workers (a thief
	// reads its victim's local and id), so they sit on a cache line of
	// their own: sharing one with the owner's per-packet fields below made
	// every packet the owner ran invalidate the line that searching
	// workers read. (On the 2-vCPU EPYC, in the shape of
	// BenchmarkSpawnOrRunWide under SpawnOrRun's first rule, 16,383
	// children inline while the other worker searched: medians 24.1–24.8
	// → 20.3–22.5 ns per child over two runs; the spawn and fan-out
	// benchmarks moved within their noise.)
	s     *Scheduler
	id    int
	local *deque.Deque[task]
	_     [64 - 24]byte

	// Owner-only fields: read and written by the worker's goroutine alone
	// (set up by New before the goroutine starts).
	//
	// priv is the private stack (the LIFO slot of Tokio and the Go
	// runtime, grown to privCap packets): the packets Spawn added and
	// nobody else has been offered, a ring of [privHead, privTail), run
	// newest first without touching the deque's atomics. Invisible to
	// thieves; Spawn and every packet boundary hand all but the newest to
	// the deque while workers are idle (offerAll). Unused (nil) when
	// LocalFIFO or NoLIFOSlot.
	priv               *[privCap]task
	privHead, privTail uint32
	instrument         bool // copy of s.instrument
	// inlineDepth is how many SpawnOrRun runs are nested on the stack
	// now (0 between packets; SpawnOrRun restores it on a panic, burst
	// resets it when a Goexit unwinds inline runs).
	inlineDepth int
	// streak is how many more children SpawnOrRun spawns without asking
	// whether a worker is idle (a hand-off in progress; see handoff).
	streak     int
	cur        task // the running packet (Stage, panics)
	searching  bool // counted in s.nSearching
	rng        uint64
	tb         *trace.WorkerBuf
	flowSeq    uint64        // trace flow IDs: id+1 in the top bits, then this
	flow       uint64        // flow ID for the next PacketBegin (a stolen packet)
	from       int32         // the origin (fromWorker0+id) stamped on packets this worker spawns (tracing)
	inPacket   bool          // a traced packet began and has not ended
	clock      time.Duration // PacketTiming: end of the last packet of this burst
	clockOK    bool          // clock is valid (false at the start of a burst)
	labelStage StageID
	dropped    uint64 // packets discarded by this worker, not yet in s.dropped
	// Packet-type stats: a one-entry cache in front of the registry.
	lastType unsafe.Pointer // typeWord of the last non-Namer packet
	// lastRun counts packets of lastType run since the last fold into
	// types[lastIdx].count (countPacket): a run of one type costs a
	// compare and an increment per packet. foldRun folds it.
	lastRun   uint64
	lastNamer unsafe.Pointer // typeWord of the last Namer packet
	lastIdx   int
	lastName  string
	lastNIdx  int
	hasName   bool
	types     []typeStat // index = registry stats index
	hot       hotStats
	unflush   uint32 // packets since the last flush
	// held is the rest of the last full bucket take or stolen batch,
	// [heldLo, heldHi), kept private (invisible to thieves) and run
	// oldest first: taking one back is a plain load, where a deque Pop
	// costs a locked instruction. While a worker is parked or searching
	// and the deque holds fewer packets than there are such workers, the
	// next packet boundary or Spawn moves what is held into the deque for
	// them (offerHeld). Empty (heldLo == heldHi) between bursts. len(held)
	// is maxHeld (= MaxSteal); bucket takes use up to BucketBatch of it,
	// or up to four times that under TakeGuided.
	// (Last among the owner-only fields, so that it moves none of the
	// others.)
	held           []task
	heldLo, heldHi int
	_              [64]byte

	// Shared with other goroutines.
	designated chan Packet // MPSC, bounded (designatedCap); any goroutine sends
	// nDesignated hints at len(designated) without a call to
	// runtime.chanlen on the per-packet path: the sender adds 1 after its
	// send, a receiver subtracts 1 after its receive. The exact checks (P4,
	// advance) use len(designated).
	nDesignated atomic.Int32
	wake        chan struct{} // capacity 1: the park token (wake.go)
	// gid is the ID of the goroutine running w (goid), stored when it
	// starts; Close loads it to refuse to run on a worker.
	gid atomic.Uint64
	pub published // stats snapshot, flushed by the owner

	// Guarded by s.mu.
	parked  bool
	idleIdx int
	mon     monStats
}

func newWorker(s *Scheduler, id int) *Worker {
	w := &Worker{
		s:          s,
		id:         id,
		instrument: s.instrument,
		rng:        uint64(id)*0x9E3779B97F4A7C15 + 1,
		tb:         s.cfg.Tracer.Worker(id),
		from:       fromWorker0 + int32(id),
		labelStage: -1,
		lastIdx:    -1,
		designated: make(chan Packet, designatedCap),
		wake:       make(chan struct{}, 1),
		idleIdx:    -1,
	}
	w.held = make([]task, maxHeld)
	switch {
	case !s.cfg.LocalFIFO && !s.cfg.NoLIFOSlot:
		// LIFO through the private stack; the deque holds what the
		// worker offers to thieves, who take from its old end, and what
		// it steals. FIFO, so that a thief claims half of it with one
		// CAS: in a LIFO Chase–Lev deque the owner pops without one, so
		// a thief must claim item by item.
		w.priv = new([privCap]task)
		w.local = deque.NewFIFO[task]()
	case s.cfg.LocalFIFO:
		w.local = deque.NewFIFO[task]()
	default:
		w.local = deque.New[task]()
	}
	return w
}

// ID returns the worker's index in [0, Workers()).
func (w *Worker) ID() int { return w.id }

// Scheduler returns the worker's scheduler.
func (w *Worker) Scheduler() *Scheduler { return w.s }

// Stage returns the stage of the running packet (Unconstrained for
// designated packets).
func (w *Worker) Stage() StageID { return w.cur.stage() }

// Spawn queues p on this worker, in the running packet's stage. Only the
// packet running on w may call it. It costs a few nanoseconds and wakes
// nobody while every other worker is busy: p goes onto the worker's
// private stack, where only this worker sees it (plain stores, no
// atomics), and the worker runs it, newest first, after the running
// packet. While some worker is parked or searching and the deque holds
// fewer packets than there are such workers, Spawn hands every private
// packet but the newest (and any bucket batch the worker holds) to the
// deque, where thieves take the oldest, and wakes one parked worker if
// nobody searches (the surplus rule), so spare
// work never waits for a busy worker; the newest stays private, as in the
// LIFO slot of Tokio and the Go runtime. A worker that becomes idle while
// this packet computes without spawning waits until the packet returns
// (or spawns again) for what it spawned: spawn before a long computation
// only what the worker itself should run next, or set Config.NoLIFOSlot,
// which sends every Spawn to the deque. The stack holds 256 packets; the
// older half of a full one goes to the deque. Spawn(nil) panics.
func (w *Worker) Spawn(p Packet) {
	if p == nil || w.cur.p == nil {
		w.badSpawn(p, "Spawn")
	}
	t := mkTask(p, w.cur.stage())
	if w.tb != nil {
		// The running packet's newest event (its begin, or later): no
		// clock reading per spawn (≈ 10 ns here). Its steal arrow starts
		// inside the spawning packet's slice.
		t.stamp(w.tb.Last(), w.from)
	}
	if w.priv != nil {
		n := w.privTail - w.privHead
		if n == privCap {
			w.spillPriv()
		}
		w.priv[w.privTail%privCap] = t // a fixed array: no bounds check
		w.privTail++
		// Something to offer (two or more private packets, or a held
		// batch), if anyone is idle. (The idle test is offerAll's first,
		// made here to spare the call while every worker is busy.)
		if (n != 0 || w.heldLo != w.heldHi) && w.s.nIdle() != 0 {
			w.offerAll()
		}
		return
	}
	w.local.Push(t)
	w.surplus()
}

// badSpawn panics for a Spawn or SpawnOrRun (op) of p on w that cannot be
// honoured: p is nil, or no packet is running on w, so the *Worker was
// kept past its packet's Run (between cycles, after Close, or passed to
// another scheduler's packet). Queued there, the packet would run in the
// next cycle before its stage opened, or never, without being counted.
// (A *Worker used by another goroutine while its own packet runs is a
// data race, which the race detector reports.)
//
//go:noinline
func (w *Worker) badSpawn(p Packet, op string) {
	if p == nil {
		panic("scheduler: " + op + "(nil)")
	}
	panic("scheduler: " + op + " on worker " + strconv.Itoa(w.id) +
		" outside its packet: a *Worker is valid only inside the Run call that received it")
}

// privCap is the private stack's size: 256 packets (6 KiB), the Go
// runtime's local run queue's.
const privCap = 256

// offerAll makes w's private packets available to idle workers: if some
// worker is parked or searching and w's deque holds fewer packets than
// there are such workers (wantsWork), it moves every private packet but
// the newest to the deque, then the held batch if the deque still holds
// too few (a chain of single spawns, each run next, would otherwise keep
// the batch behind it from idle workers for the whole chain), and applies
// the surplus rule if anything moved. Owner. (Its callers in Spawn and
// burst test for something to offer and for idle workers first, so that
// while every worker is busy a spawn or packet boundary costs two loads
// and no call.)
func (w *Worker) offerAll() {
	if !w.wantsWork() {
		return
	}
	moved := false
	if w.privTail-w.privHead >= 2 {
		w.movePriv(w.privTail - 1)
		moved = true
	}
	if w.heldLo != w.heldHi && (!moved || w.wantsWork()) {
		w.exposeHeld()
		moved = true
	}
	if moved {
		w.surplus()
	}
}

// wantsWork reports whether some worker is parked or searching and w's
// deque holds fewer packets than there are such workers: the rule by
// which SpawnOrRun spawns and w offers what it keeps private. Owner.
func (w *Worker) wantsWork() bool {
	idle := w.s.nIdle()
	return idle != 0 && w.local.Len() < idle
}

// spillPriv moves the older half of a full private stack to the deque
// (the Go runtime's runqput moves half of a full run queue to the global
// one) and applies the surplus rule. Owner.
func (w *Worker) spillPriv() {
	w.movePriv(w.privHead + privCap/2)
	w.surplus()
}

// movePriv moves the private packets [privHead, end) to the deque, oldest
// first (thieves take them in that order). Owner.
func (w *Worker) movePriv(end uint32) {
	for w.privHead != end {
		lo := w.privHead % privCap
		n := min(end-w.privHead, privCap-lo) // up to the ring's end
		run := w.priv[lo : lo+n]
		w.local.PushBatch(run)
		clear(run)
		w.privHead += n
	}
	w.traceLocalLen()
}

// popPriv takes the newest private packet. Owner; the stack is not empty.
func (w *Worker) popPriv() task {
	w.privTail--
	i := w.privTail % privCap
	t := w.priv[i]
	w.priv[i] = task{} // drop the reference for the GC
	return t
}

// SpawnOrRun runs p at once, on this worker and inside the running packet,
// unless workers are idle (parked or searching) and this worker's deque
// holds fewer packets than there are idle workers: then it spawns p and
// up to handoff-1 more children (16 in all) without asking again, onto
// the private stack, moving all but the newest to the deque as the streak
// goes (see handoff), where the surplus rule wakes a parked worker for
// them and a thief steals half of them in one go. So while every
// worker is busy, or the idle ones already have this worker's queued
// surplus to take, children run inline instead of waiting in the queue:
// errgroup's TryGo with a fallback to running inline, for fine-grained
// recursive work whose children cost less than a trip through the deque
// (BenchmarkSpawnOrRunTree). It trades away the chance that a worker frees
// up and steals p while this packet still runs; spawn children that take
// long with Spawn. (BenchmarkSpawnOrRunWideCost, 2 workers on the 2-vCPU
// EPYC, a flat loop of children against the same loop calling them on one
// goroutine: 0.1, 0.5, 4 and 31 µs children 1.05–1.23×, 1.67–1.84×,
// 1.86–1.92× and 1.95–2.39× faster; before the streak, when each hand-off
// was one child and the spawner asked on every call, 0.5–1.05×,
// 1.17–1.47×, 1.41–1.61× and 1.50–1.57×. Trivial children still run
// about ten times slower than that loop on 2 workers: a thief's trips
// cost more than they carry.)
//
// p runs in the running packet's stage and is counted as a packet of its
// own (Stats.Packets, WorkerStats.Packets and .Inlined). If p panics, the
// panic does not reach the running packet: the cycle ends with a
// PanicError that names p, as if p had been spawned, and SpawnOrRun
// returns (the running packet goes on; what it spawns next is dropped
// with the aborting cycle). runtime.Goexit in p ends the running packet
// too. As with any inline execution, p must not wait for something the
// running packet holds (a lock, a channel it has yet to send on), and
// designated work for this worker waits until the whole inline run is
// done.
//
// It always spawns when the cycle is aborting, when inline runs are
// nested maxInline deep (so recursion is bounded), and when the scheduler
// records per-packet timing, tracing, runtime/trace regions or pprof
// labels, so that every packet keeps its own slice, region and time. Only
// the packet running on w may call it. SpawnOrRun(nil) panics.
func (w *Worker) SpawnOrRun(p Packet) {
	if p == nil || w.cur.p == nil {
		w.badSpawn(p, "SpawnOrRun")
	}
	s := w.s
	if w.instrument || w.inlineDepth >= maxInline || s.abort.Load() {
		w.Spawn(p)
		return
	}
	if w.streak > 0 || w.wantsWork() {
		w.handOff(p)
		return
	}
	// Inline. A panic in p (or in its PacketName) is recovered below and
	// reported as p's, so that the running packet cannot swallow it, and
	// the worker's state (w.cur, inlineDepth) is restored whatever
	// happens. (The deferred call is registered only on this path.)
	//
	// The child runs in the parent's stage: only the packet changes in
	// w.cur (the rest of the task is the stage and trace stamps, unused
	// without tracing).
	parent := w.cur.p
	w.cur.p = p
	w.inlineDepth++
	restored := false
	defer func() {
		if !restored { // runtime.Goexit: burst reports it, naming p (w.cur.p)
			w.inlineDepth--
		}
	}()
	v, stack, panicked := w.runInline(p)
	restored = true
	w.inlineDepth--
	if panicked {
		w.packetPanicked(v, stack) // names w.cur.p: p
	} else {
		w.hot.inlined++
		w.tick()
	}
	w.cur.p = parent
}

// runInline runs p inline for SpawnOrRun and reports a recovered panic's
// value and stack (as runBurst: a flag set on return tells a panic, even
// panic(nil) under GODEBUG panicnil=1, from a normal return; under
// runtime.Goexit it does not return).
func (w *Worker) runInline(p Packet) (v any, stack []byte, panicked bool) {
	done := false
	defer func() {
		if !done {
			v, stack, panicked = recover(), debug.Stack(), true
		}
	}()
	p.Run(w)
	w.countPacket(p) // may call PacketName, which may panic too
	done = true
	return nil, nil, false
}

// handoff is how many children in a row SpawnOrRun spawns once it sees an
// idle worker short of queued work: the first and the next handoff-1,
// pushed onto the private stack and moved to the deque (all but the
// newest) after the 2nd, 4th, 8th and 16th, the streak ending there if no
// worker is idle any more: the first child goes out at once, a parent
// that spawns a few and then computes has all but one out, and a thief
// that comes back finds several and steals half of them in one go. One child at a time, the
// spawner asked on every child (two shared counters and its deque's top,
// lines the searching thief keeps writing) and the thief came back for
// every child.
const handoff = 16

// handOff spawns p as part of a hand-off streak (SpawnOrRun). Owner.
func (w *Worker) handOff(p Packet) {
	if w.streak == 0 {
		w.streak = handoff
	}
	w.streak--
	if w.priv == nil { // NoLIFOSlot or LocalFIFO: straight to the deque
		w.Spawn(p)
		return
	}
	if w.privTail-w.privHead == privCap {
		w.spillPriv()
	}
	w.priv[w.privTail%privCap] = mkTask(p, w.cur.stage())
	w.privTail++
	if k := handoff - w.streak; k >= 2 && k&(k-1) == 0 { // 2, 4, 8, 16
		w.movePriv(w.privTail - 1)
		if w.s.nIdle() == 0 {
			w.streak = 0 // nobody to hand to: back to asking per child
			return
		}
		w.surplus()
	}
}

// maxInline bounds the nesting of SpawnOrRun's inline runs: deeper, it
// spawns. 64 levels of a binary fork-join tree is far more than a worker
// can keep busy; the bound is there for stack depth, not for speed.
const maxInline = 64

// nIdle returns how many workers are parked or searching (two loads).
// Any goroutine.
func (s *Scheduler) nIdle() int { return int(s.nParked.Load()) + int(s.nSearching.Load()) }

// surplus applies the surplus rule after w's deque gained packets, or w
// stole from a deque that still holds some: wake one parked worker if
// nobody is searching (W2, then W3 in wakeOneIdle). Owner.
func (w *Worker) surplus() {
	s := w.s
	if s.nParked.Load() != 0 && s.nSearching.Load() == 0 {
		s.wakeOneIdle(w.id)
	}
}

// main is the worker goroutine. sleepFirst: w is registered as parked and
// waits for its first token.
func (w *Worker) main(sleepFirst bool) {
	s := w.s
	defer s.wg.Done()
	w.gid.Store(goid())
	if sleepFirst {
		w.waitToken() // parked since New: idle, as in park's P6
	}
	for {
		if s.closed.Load() && !s.cycleActive.Load() {
			return
		}
		if t, ok := w.find(); ok {
			w.burst(t)
			continue
		}
		w.park()
	}
}

// burst runs t and then, without searching, the packets w has at hand:
// designated, private stack, held batch, deque. It returns when they run
// out or the cycle is aborting. One deferred recover covers the whole
// burst (runBurst), so panics cost nothing per packet.
//
// A packet leaves in one of three ways, told apart without trusting
// recover's value (nil both for runtime.Goexit and, under GODEBUG
// panicnil=1, for panic(nil)): runBurst returns normally (ok), or its
// deferred function recovers a panic and runBurst returns its value, or
// the goroutine is exiting (Goexit), so runBurst never returns and only
// burst's deferred function runs: it reports the Goexit and starts a new
// goroutine for w while this one exits.
func (w *Worker) burst(t task) {
	returned := false
	defer func() {
		if returned {
			return
		}
		// Goexit: this goroutine is ending. Report it like a panic and hand
		// the worker to a fresh goroutine, so the scheduler keeps n workers.
		// (An inline run's Goexit unwound its parents too.)
		w.inlineDepth = 0
		w.packetPanicked("runtime.Goexit called by the packet", debug.Stack())
		w.cur = task{}
		w.s.wg.Add(1)
		go w.main(false)
	}()
	v, stack, panicked := w.runBurst(t)
	returned = true
	if panicked {
		w.packetPanicked(v, stack)
	}
	w.cur = task{} // no packet runs: Spawn on w now panics (checkRunning)
}

// runBurst is burst's loop. It reports a recovered panic's value (nil for
// panic(nil) under GODEBUG panicnil=1) and stack; under runtime.Goexit it
// does not return.
func (w *Worker) runBurst(t task) (v any, stack []byte, panicked bool) {
	ok := false
	s := w.s
	defer func() {
		if !ok {
			// A panic, or Goexit (then nothing is recovered and burst's
			// deferred function takes over).
			v, stack, panicked = recover(), debug.Stack(), true
		}
	}()
	for {
		// exec, with its common case written out: one call fewer a packet.
		if w.instrument {
			w.exec(t)
		} else {
			w.cur = t
			t.p.Run(w)
			w.countPacket(t.p)
			w.tick()
		}
		if s.abort.Load() {
			break
		}
		if w.nDesignated.Load() != 0 {
			if p, got := w.takeDesignated(); got {
				t = mkTask(p, Unconstrained)
				continue
			}
		}
		if n := w.privTail - w.privHead; n != 0 {
			if (n > 1 || w.heldLo != w.heldHi) && s.nIdle() != 0 {
				w.offerAll() // as in Spawn
			}
			t = w.popPriv()
			continue
		}
		var got bool
		if w.heldLo != w.heldHi {
			// nextHeld's common case, inline: nobody idle, so nothing to
			// offer.
			if s.nIdle() == 0 {
				t = w.held[w.heldLo]
				w.held[w.heldLo] = task{}
				w.heldLo++
				continue
			}
			if t, got = w.nextHeld(); got {
				continue
			}
		}
		if t, got = w.local.Pop(); !got {
			break
		}
	}
	ok = true
	return nil, nil, false
}

// nextHeld takes the oldest held packet, unless workers are idle (parked
// or searching) and w's deque holds fewer packets than there are idle
// workers (SpawnOrRun's rule): then it moves everything held into the
// deque, applies the surplus rule (wake one parked worker if nobody
// searches) and reports false, and the caller pops. In a fan-out, while
// every worker is busy, a packet costs two loads of counters that nobody
// writes, not a Pop. Owner; held is not empty.
func (w *Worker) nextHeld() (task, bool) {
	if w.offerHeld() {
		return task{}, false
	}
	t := w.held[w.heldLo]
	w.held[w.heldLo] = task{} // drop the reference for the GC
	w.heldLo++
	return t, true
}

// A worker holds a bucket take privately only when it is a full batch
// (at least min(Config.BucketBatch, maxHeld) packets, not cut by the fair
// share: the bucket still had a batch for every worker, so a worker that goes idle
// finds work there) and holds at least minHeld packets beyond the one run
// at once. Other takes go to its deque at once: near the end of a stage a
// packet held behind a long one would keep an idle worker waiting for the
// whole long packet. (examples/prepare's configuration (d), the heavy packet split
// into seven 4096-slot chunks queued last, on the idle 16-vCPU Xeon with 2
// workers: with every take of 8 or more held, its Prepare stage ran
// 1.09–1.14× its bound in four rounds, against 1.035–1.055 before.)
const minHeld = 8

// maxHeld is the size of a worker's held array (24 bytes a packet): no
// bucket take moves more than one bucket block, deque.MaxTake, whatever
// BucketBatch asks, and no steal more than MaxSteal, the same number.
const maxHeld = MaxSteal

// offerHeld moves what w holds into its deque if workers are idle and
// the deque holds fewer packets than there are idle workers, then applies
// the surplus rule, and reports whether it did. Owner; held is not empty.
func (w *Worker) offerHeld() bool {
	if !w.wantsWork() {
		return false
	}
	w.exposeHeld()
	w.surplus()
	return true
}

// exposeHeld moves what w holds into its deque, where thieves can take
// it. Owner.
func (w *Worker) exposeHeld() {
	h := w.held[w.heldLo:w.heldHi]
	w.local.PushBatch(h)
	clear(h)
	w.heldLo, w.heldHi = 0, 0
	w.traceLocalLen()
}

// traceLocalLen records the deque's length (what thieves can take from
// w) for `wsched analyze`, after the deque gained packets. Owner.
func (w *Worker) traceLocalLen() {
	if w.tb != nil {
		w.tb.Counter(trace.CounterLocalLen, w.id, int64(w.local.Len()))
	}
}

// exec runs one packet and counts it.
func (w *Worker) exec(t task) {
	w.cur = t
	if w.instrument {
		w.execInstrumented(t)
		return
	}
	t.p.Run(w)
	w.countPacket(t.p)
	w.tick()
}

// execInstrumented is exec with timing, tracing, runtime/trace regions or
// pprof labels.
func (w *Worker) execInstrumented(t task) {
	s := w.s
	idx := w.statIndex(t.p)
	if s.cfg.PprofLabels && t.stage() != w.labelStage {
		pprof.SetGoroutineLabels(s.stageLabel[t.stage()])
		w.labelStage = t.stage()
	}
	if w.tb != nil {
		w.tb.PacketBegin(w.types[idx].nameID, int(t.stage()), w.flow)
		w.flow = 0
		w.inPacket = true
	}
	// PacketTiming reads the clock once per packet: in a burst, a packet's
	// end is the next one's start, so a packet's time includes the few
	// nanoseconds of scheduler work that precede it.
	var start time.Duration
	if s.cfg.PacketTiming {
		if !w.clockOK {
			w.clock, w.clockOK = time.Since(s.epoch), true
		}
		start = w.clock
	}
	if s.cfg.RuntimeTrace {
		r := rtrace.StartRegion(s.cycleCtx, w.types[idx].name)
		t.p.Run(w)
		r.End()
	} else {
		t.p.Run(w)
	}
	ts := &w.types[idx]
	if s.cfg.PacketTiming {
		w.clock = time.Since(s.epoch)
		ts.observe(w.clock - start)
	}
	ts.count++
	if w.tb != nil {
		w.tb.PacketEnd()
		w.inPacket = false
	}
	w.tick()
}

// tick counts one packet run towards the next publication of w's
// counters: every flushEvery packets (and at every park). Owner.
func (w *Worker) tick() {
	if w.unflush++; w.unflush >= flushEvery {
		w.flush()
	}
}

// countPacket counts a run of p in its type's stats: for a run of packets
// of one (non-Namer) type, a compare and an increment of lastRun, folded
// into types[lastIdx] by foldRun. Owner.
func (w *Worker) countPacket(p Packet) {
	if typeWord(p) == w.lastType {
		w.lastRun++
		return
	}
	w.countPacketSlow(p)
}

func (w *Worker) countPacketSlow(p Packet) {
	idx := w.statIndex(p) // folds the old run if it moves lastType
	if typeWord(p) == w.lastType {
		w.lastRun++
		return
	}
	w.types[idx].count++ // a Namer: counted by name
}

// foldRun adds lastRun to its type's count. Owner; before anything reads
// the counts (flush) and before lastType changes (statIndexSlow).
func (w *Worker) foldRun() {
	if w.lastRun != 0 {
		w.types[w.lastIdx].count += w.lastRun
		w.lastRun = 0
	}
}

// statIndex returns the stats index of p's name. The one-entry caches make
// it a type comparison for runs of packets of one type.
func (w *Worker) statIndex(p Packet) int {
	tw := typeWord(p)
	if tw == w.lastType {
		return w.lastIdx
	}
	if tw == w.lastNamer {
		// A Namer type seen last time: its name may differ per packet,
		// but the last name is the likely one (no reflection, no map).
		if name := p.(Namer).PacketName(); w.hasName && name == w.lastName {
			return w.lastNIdx
		}
	}
	return w.statIndexSlow(p)
}

// typeWord returns the first word of p's interface value, its itab: one
// per (Packet, dynamic type) pair, so two Packets have equal type words
// exactly when their dynamic types are equal (TestTypeWord). One load and
// compare, where reflect.TypeOf(p) == last costs a load, a conversion and
// a call to compare two reflect.Type interfaces (≈ 2 ns per packet here).
func typeWord(p Packet) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&p))[0]
}

func (w *Worker) statIndexSlow(p Packet) int {
	ti := w.s.reg.typeOf(reflect.TypeOf(p), p)
	idx := ti.idx
	if ti.namer {
		w.lastNamer = typeWord(p)
		name := p.(Namer).PacketName()
		if w.hasName && name == w.lastName {
			idx = w.lastNIdx
		} else {
			idx = w.s.reg.index(name)
			w.lastName, w.lastNIdx, w.hasName = name, idx, true
		}
	} else {
		w.foldRun() // the pending run belongs to the old lastIdx
		w.lastType, w.lastIdx = typeWord(p), idx
	}
	for len(w.types) <= idx {
		e := w.s.reg.entry(len(w.types))
		w.types = append(w.types, typeStat{name: e.name, nameID: e.id})
	}
	return idx
}

// packetPanicked records the panic of the running packet and aborts the
// cycle. Owner, in burst's deferred function.
func (w *Worker) packetPanicked(v any, stack []byte) {
	s := w.s
	if w.inPacket {
		w.tb.PacketEnd()
		w.inPacket = false
	}
	pe := &PanicError{
		Packet: safeName(&s.reg, w.cur.p),
		Stage:  w.cur.stage(),
		Worker: w.id,
		Value:  v,
		Stack:  stack,
	}
	w.hot.panics++
	s.mu.Lock()
	s.abortCycle(pe)
	s.mu.Unlock()
}

// safeName is reg.nameOf, surviving a PacketName that panics too.
func safeName(reg *registry, p Packet) (name string) {
	defer func() {
		if recover() != nil {
			name = reflect.TypeOf(p).String()
		}
	}()
	return reg.nameOf(p)
}

// takeDesignated receives one designated packet without blocking. Owner.
func (w *Worker) takeDesignated() (Packet, bool) {
	select {
	case p := <-w.designated:
		w.nDesignated.Add(-1)
		return p, true
	default:
		return nil, false
	}
}

// drainDesignated discards w's designated packets and returns how many.
// Caller holds mu with w parked, or w has exited.
func (w *Worker) drainDesignated() uint64 {
	var n uint64
	for {
		select {
		case <-w.designated:
			w.nDesignated.Add(-1)
			n++
		default:
			return n
		}
	}
}

// dropLocal discards w's private stack, held packets and deque (the cycle
// is aborting). Owner.
func (w *Worker) dropLocal() {
	var n uint64
	n += uint64(w.privTail - w.privHead)
	if w.priv != nil {
		clear(w.priv[:])
	}
	w.privHead, w.privTail = 0, 0
	n += uint64(w.heldHi - w.heldLo)
	clear(w.held[w.heldLo:w.heldHi])
	w.heldLo, w.heldHi = 0, 0
	for {
		if _, ok := w.local.Pop(); !ok {
			break
		}
		n++
	}
	w.dropped += n
	w.hot.dropped += n
}

// rand returns a pseudo-random number in [0, n) (xorshift64*). Owner.
func (w *Worker) rand(n int) int {
	x := w.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	w.rng = x
	return int((x * 0x2545F4914F6CDD1D >> 33) % uint64(n))
}
