package scheduler

import (
	"context"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/wsched/wsched/internal/deque"
	"github.com/wsched/wsched/internal/tracebuf"
)

// Worker is one worker goroutine of a Scheduler. A packet receives its
// worker in Run; the *Worker is valid only inside that call, on that
// goroutine. Kept past it: Spawn, SpawnOrRun, Join and Context on it
// panic while no packet runs on that worker (between cycles, after
// Close, or from another scheduler's packet that runs meanwhile); inside
// a later packet on the same worker it is that packet's own *Worker (one
// per worker for the scheduler's life) and acts as that packet's, which
// cannot be told from a valid call and does what one would; from another
// goroutine while its worker runs a packet it is a data race, which the
// race detector reports.
type Worker struct {
	_ [64]byte
	// Set by New and never written again; read by other workers (a thief
	// reads its victim's local and id), so they sit on a cache line of
	// their own: on one line with the owner's per-packet fields below,
	// every packet the owner ran would invalidate the line that searching
	// workers read (BenchmarkSpawnOrRunWide, children run inline while the
	// other worker searches, measures that cost).
	s     *sched
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
	// the deque while workers are idle (offerAll). Unused (nil) under
	// LocalLIFO and LocalFIFO.
	priv               *[privCap]task
	privHead, privTail uint32
	instrument         bool // copy of s.instrument
	// inlineDepth is how many SpawnOrRun runs are nested on the stack
	// now (0 between packets; SpawnOrRun restores it on a panic, burst
	// resets it when a Goexit unwinds inline runs).
	inlineDepth int
	// fireInline is set while SpawnOrRun settles the joins of an inline
	// child: a continuation that becomes ready then runs inline too
	// (frame.fire), when SpawnOrRun would run a child inline.
	fireInline bool
	// goexitName names the inline child (SpawnOrRun) that called
	// runtime.Goexit, for burst to report: set by the innermost inline
	// run's deferred function as the Goexit unwinds it.
	goexitName string
	// goexitItem is that child's description (CycleError.Item).
	goexitItem string
	// item describes the worklist item whose body failed or panicked on
	// w, for the failing packet's CycleError (set by the drain).
	item string
	// streak is how many more children SpawnOrRun spawns without asking
	// whether a worker is idle (a hand-off in progress; see handoff).
	streak     int
	cur        task // the running packet (its stage, errors); zero between bursts
	js         joinState
	searching  bool // counted in s.nSearching
	rng        uint64
	tb         *tracebuf.Buf
	flowSeq    uint64        // trace flow IDs: id+1 in the top bits, then this
	flow       uint64        // flow ID for the next PacketBegin (a stolen packet)
	prio       bool          // the next PacketBegin's packet came from a priority lane (tracing)
	lastStamp  int64         // the last spawn stamp (spawnStamp)
	from       int32         // the origin (fromWorker0+id) stamped on packets this worker spawns (tracing)
	inPacket   bool          // a traced packet began and has not ended
	clock      time.Duration // PacketTiming: end of the last packet of this burst
	clockOK    bool          // clock is valid (false at the start of a burst)
	labelStage StageID
	dropped    uint64 // packets discarded by this worker, not yet in s.dropped
	// Packet-type stats: a one-entry cache in front of the registry.
	lastType unsafe.Pointer // typeWord of the last non-Namer packet
	// directKey is the slot key (slotKey) of the last pointer or
	// interface packet type spawned: Spawn and SpawnOrRun queue such a
	// packet as it is, outside joins, without looking up its arena.
	directKey unsafe.Pointer
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
	// LearnHeavy's records of the running cycle (heavy.go): per stats
	// index in the type's latest stage, those of its earlier stages, and
	// the run time per stage.
	learn     []learnRec
	learnDone []learnRec
	learnWork []time.Duration
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
	// arenas is a direct-mapped cache of the value packets' arenas
	// (value.go), in front of arenaMap; arenaList holds them all, for
	// the reset after an aborted cycle.
	arenas    [arenaWays]arenaEntry
	arenaMap  map[unsafe.Pointer]unsafe.Pointer
	arenaList []resetter
	_         [64]byte

	// Shared with other goroutines.
	designated chan Packet // MPSC, bounded (designatedCap); any goroutine sends
	// nDesignated hints at len(designated) without a call to
	// runtime.chanlen on the per-packet path: the sender adds 1 after its
	// send, a receiver subtracts 1 after its receive. The exact checks (P4,
	// advance) use len(designated).
	nDesignated atomic.Int32
	wake        chan struct{} // capacity 1: the park token (wake.go)
	// waits counts w's entries into P6 (waitToken), past the re-check of
	// P4 and P5: tests that must wake w while it polls or blocks
	// (TestParkSpinWake) wait for it to move. One uncontended atomic add
	// per park, beside the monitor lock and the flush a park takes anyway;
	// nothing in the scheduler reads it.
	waits atomic.Uint32
	// gid is the ID of the goroutine running w (goid), stored when it
	// starts; Close loads it to refuse to run on a worker.
	gid atomic.Uint64
	pub published // stats snapshot, flushed by the owner

	// Guarded by s.mu.
	parked  bool
	idleIdx int
	mon     monStats
}

func newWorker(s *sched, id int) *Worker {
	w := &Worker{
		s:          s,
		id:         id,
		instrument: s.instrument,
		rng:        uint64(id)*0x9E3779B97F4A7C15 + 1,
		tb:         (*tracebuf.Recorder)(s.cfg.Tracer).Worker(id),
		from:       fromWorker0 + int32(id),
		labelStage: -1,
		lastIdx:    -1,
		designated: make(chan Packet, designatedCap),
		wake:       make(chan struct{}, 1),
		idleIdx:    -1,
	}
	w.held = make([]task, maxHeld)
	if s.cfg.LearnHeavy {
		w.learnWork = make([]time.Duration, s.nStages+1)
	}
	switch s.cfg.Local {
	case LocalPrivate:
		// LIFO through the private stack; the deque holds what the
		// worker offers to thieves, who take from its old end, and what
		// it steals. FIFO, so that a thief claims half of it with one
		// CAS: in a LIFO Chase–Lev deque the owner pops without one, so
		// a thief must claim item by item.
		w.priv = new([privCap]task)
		w.local = deque.NewFIFO[task]()
	case LocalFIFO:
		w.local = deque.NewFIFO[task]()
	default: // LocalLIFO
		w.local = deque.New[task]()
	}
	return w
}

// ID returns the worker's index in [0, Workers()): the index of per-worker
// state a packet may keep (pad it to a cache line, 64 bytes, so that two
// workers' entries do not share one).
func (w *Worker) ID() int { return w.id }

// Scheduler returns the worker's scheduler, through which a packet adds
// to other stages.
func (w *Worker) Scheduler() *Scheduler { return w.s.handle.Value() }

// Context returns the running cycle's context: it carries Run's context's
// values and is cancelled, with the cycle's cause (context.Cause), as soon
// as the cycle ends early: a packet failed or panicked, Run's context was
// cancelled (its cause, which for a deadline wraps
// context.DeadlineExceeded; Err is context.Canceled either way), or the
// scheduler closed. The abort is flagged first and the context cancelled
// right after; each worker looks at the flag after it has found a packet
// and right before it starts it, so once a worker has seen the abort it
// starts no packet of the cycle (what it found or holds is dropped and
// counted). A packet whose start raced the abort may still begin, within
// nanoseconds of it. A packet that runs long, or waits, should watch the
// context. It is done once the cycle has ended. Only the packet running
// on w may call it.
func (w *Worker) Context() context.Context {
	if w.cur.p == nil {
		w.badUse(false, "Context")
	}
	return w.s.cycleContext()
}

// ShouldSplit reports whether splitting work off now would feed an idle
// worker: some worker is parked or searching and w's deque holds fewer
// packets than there are such workers (the rule by which SpawnOrRun hands
// children off). It costs two atomic loads and the deque's length. Only
// the packet running on w may call it.
//
// A queue of items that the packet's own loop pops and feeds (a mark
// stack, a search's stack) is what a Worklist runs for it: the Worklist
// asks after every item and splits off the oldest half, as packets that a
// thief takes at once. A packet that keeps its own queue asks every few
// items and, when this reports true, spawns the oldest part of the queue
// as two packets or more and goes on with the rest: under LocalPrivate
// (the default) the newest packet a worker spawns stays its own, the one
// it runs next, until it spawns another or its packet returns, so a
// single spawned packet reaches the idle worker only then
// (ExampleWorker_ShouldSplit).
func (w *Worker) ShouldSplit() bool { return w.wantsWork() }

// badUse panics for a Spawn, SpawnOrRun, Join or Context (op) on w that
// cannot be honoured: the value is a nil Packet, or no packet is running
// on w, so the *Worker was kept past its packet's Run (between cycles,
// after Close, or passed to another scheduler's packet). Queued there, the
// packet would run in the next cycle before its stage opened, or never,
// without being counted. (A *Worker used by another goroutine while its
// own packet runs is a data race, which the race detector reports.)
//
//go:noinline
func (w *Worker) badUse(nilValue bool, op string) {
	if nilValue {
		panic("scheduler: " + op + " of a nil Packet")
	}
	panic("scheduler: " + op + " on worker " + strconv.Itoa(w.id) +
		" outside its packet: a *Worker is valid only inside the Run call that received it")
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
			if foundHook != nil {
				foundHook(w)
			}
			w.burst(t)
			continue
		}
		w.park()
	}
}

// foundHook, when set, runs between a successful find and the burst that
// starts the packet found: tests set it to abort a cycle inside that gap.
// nil outside tests (one load per burst, not per packet).
var foundHook func(w *Worker)

// burst runs t and then, without searching, the packets w has at hand:
// designated, private stack, held batch, deque. It returns when they run
// out, a packet fails, or the cycle is ending. One deferred recover covers
// the whole burst (runBurst), so panics cost nothing per packet.
//
// A packet leaves in one of three ways, told apart without trusting
// recover's value (nil both for runtime.Goexit and, under GODEBUG
// panicnil=1, for panic(nil)): runBurst returns normally (ok, or with the
// packet's error), or its deferred function recovers a panic and runBurst
// returns its value, or the goroutine is exiting (Goexit), so runBurst
// never returns and only burst's deferred function runs: it reports the
// Goexit and starts a new goroutine for w while this one exits.
func (w *Worker) burst(t task) {
	returned := false
	defer func() {
		if returned {
			return
		}
		// Goexit: this goroutine is ending. Report it like a panic and hand
		// the worker to a fresh goroutine, so the scheduler keeps n workers.
		// (An inline run's Goexit unwound its parents too; it is the
		// inline child that is named.)
		w.inlineDepth = 0
		w.fireInline = false
		name, item := w.goexitName, w.goexitItem
		if name == "" {
			name, item = safeName(w.cur.p), w.failedItem(w.cur.p)
		}
		w.goexitName, w.goexitItem = "", ""
		w.packetPanicked(name, item, goexitValue, debug.Stack())
		w.js = joinState{}
		w.cur = task{}
		w.s.wg.Add(1)
		go w.main(false)
	}()
	err, v, stack, panicked := w.runBurst(t)
	returned = true
	w.clockOK = false // the next burst's first packet starts its own clock
	switch {
	case panicked:
		w.packetPanicked(safeName(w.cur.p), w.failedItem(w.cur.p), v, stack)
	case err != nil:
		w.packetFailed(safeName(w.cur.p), w.failedItem(w.cur.p), err)
	}
	w.js = joinState{}
	w.cur = task{} // no packet runs: Spawn on w now panics (badUse)
}

// runBurst is burst's loop. It returns the error of a packet that failed
// (w.cur still holds it), or a recovered panic's value (nil for panic(nil)
// under GODEBUG panicnil=1) and stack; under runtime.Goexit it does not
// return.
func (w *Worker) runBurst(t task) (err error, v any, stack []byte, panicked bool) {
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
		// The abort is looked at here, after t was found and right before
		// it starts: a packet found by a search or a take that the abort
		// overtook is dropped, not run.
		if s.abort.Load() {
			w.dropFound(t)
			break
		}
		// exec, with its common case written out: one call fewer a packet.
		if w.instrument {
			err = w.execInstrumented(t)
		} else {
			w.cur = t
			if t.meta&slotBit == 0 { // a value packet counts itself
				w.countPacket(t.p)
			}
			err = t.p.Run(w)
		}
		if err != nil {
			break
		}
		if w.js.join != nil || w.js.opened != nil {
			w.endJoin()
		}
		w.tick()
		if w.nDesignated.Load() != 0 {
			if p, got := w.takeDesignated(); got {
				t = mkTask(p, Unconstrained)
				continue
			}
		}
		if n := w.privTail - w.privHead; n != 0 {
			if (n > 1 || w.heldLo != w.heldHi) && s.nIdle() != 0 {
				w.offerAll() // as in push
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
	return err, nil, nil, false
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

// dropFound discards t, a packet w found but did not start because the
// cycle is aborting: it is counted as dropped like the rest of what w
// holds (dropLocal). A value packet's slot stays unconsumed until the
// aborted cycle's end resets its arena. Owner.
func (w *Worker) dropFound(t task) {
	w.dropped++
	w.hot.dropped++
	w.cur = task{}
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
