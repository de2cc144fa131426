package scheduler

import (
	"context"
	"runtime"
	"runtime/pprof"
	rtrace "runtime/trace"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/wsched/wsched/bucket"
	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
)

// Scheduler runs packets on a fixed set of worker goroutines, one cycle per
// Run call, stage by stage. Make one with New; the zero Scheduler is not
// usable (its methods panic saying so). The package documentation has the
// model.
//
// Callers: any goroutine may call Add, AddAll, AddDesignated, SetSentinel,
// Stats and Workers, including packets running on the workers. One
// goroutine at a time calls Run (a second gets ErrCycleRunning). Close may
// be called from any goroutine but the scheduler's own packets.
//
// A Scheduler that becomes unreachable without Close is closed by the
// garbage collector (runtime.AddCleanup): its workers exit. Close it
// explicitly to release them at a known time.
type Scheduler struct {
	s *sched // the workers reference s, never the Scheduler
}

// sched is a Scheduler's state, referenced by its workers.
type sched struct {
	// Immutable after New.
	cfg        Config
	n          int
	nStages    int // user stages; buckets has nStages+1 entries
	workers    []*Worker
	buckets    []*bucket.Bucket[task] // index = StageID
	stageNames []string               // index = StageID
	stageTrace []trace.NameID         // index = StageID
	stageLabel []context.Context      // PprofLabels: label context per StageID
	// spanSrcs holds, per StageID, the sources of the bucket's spans
	// (lent slices), indexed by span slot; allocated on a stage's first
	// lent slice and written only under that bucket's span lock.
	spanSrcs   []*[bucket.MaxSpans]sliceSource
	ctl        *tracebuf.Buf  // control trace buffer; written under mu
	reg        registry       // packet names
	epoch      time.Time      // clock origin for PacketTiming
	instrument bool           // timing, tracing, runtime/trace or labels on
	bounded    bool           // cfg.MaxQueued > 0
	wg         sync.WaitGroup // one per worker goroutine
	handle     weak.Pointer[Scheduler]

	_ [64]byte
	// Shared words read on the hot and search paths. Each atomic's role:
	//
	// nParked mirrors parked (stored under mu, loaded anywhere): a waker
	// that loads 0 after publishing work needs no lock (wake.go, step W2).
	nParked atomic.Int32
	// nSearching counts workers in the steal/spin loop plus workers woken
	// and not yet searching (Add/Add(-1) by any worker; loaded by wakers).
	nSearching atomic.Int32
	// The two counters above change whenever a worker parks, wakes or
	// starts and stops searching; the words below change only at stage
	// and cycle boundaries but are loaded per packet (abort) or per search
	// round (cur). A line of their own keeps a searching worker's counter
	// updates from invalidating what every busy worker reads between
	// packets.
	_ [64 - 8]byte
	// cur is the highest open stage: buckets 0..cur are open. Stored under
	// mu; loaded by searching workers.
	cur atomic.Int32
	// abort is set (under mu) when the cycle is being aborted; workers load
	// it between packets and stop.
	abort atomic.Bool
	// cycleActive is true from Run's start to the cycle's end (stored under
	// mu); wakers and parking workers load it.
	cycleActive atomic.Bool
	// closed is set by Close (under mu); loaded by adds and by woken
	// workers.
	closed atomic.Bool
	// cctx is the running cycle's context, made on the first
	// Worker.Context call of a cycle (under mu) and cancelled when the
	// cycle ends.
	cctx atomic.Pointer[cycleCtx]
	_    [64]byte

	// nQueued counts the packets Add and AddAll queued and no worker has
	// taken yet, when Config.MaxQueued bounds them (backpressure). Added to
	// by adds, subtracted from by bucket takes and drains.
	nQueued atomic.Int64
	// waiters counts adds waiting for room (Block); room is closed and
	// replaced, under roomMu, when a take makes room while some wait.
	waiters atomic.Int32
	roomMu  sync.Mutex
	room    chan struct{}
	_       [64]byte

	// mu is the monitor (MMTk's WorkerMonitor): park registration, wake-ups,
	// stage transitions and cycle state. Never held while a packet runs.
	mu      sync.Mutex
	idle    []*Worker // parked workers, a stack (most recently parked on top)
	parked  int       // len(idle); the last worker to make it n decides
	running bool      // a Run call is in progress
	cycle   uint64    // cycles started
	cause   *CycleError
	result  error  // the error of the cycle that just ended
	dropped uint64 // packets discarded in the current cycle so far
	// unreported counts the packets Close dropped that no Run has
	// reported yet: the next Run returns them in its CycleError.
	unreported uint64
	done       chan struct{}
	runCtx     context.Context // Run's context during a cycle
	// traceCtx is the context of the current cycle's runtime/trace task.
	traceCtx   context.Context
	cycleStart time.Time
	stages     []stageRecord // index = StageID
	totals     schedTotals
	closeOnce  sync.Once
}

// cycleCtx is a cycle's context and its cancel function.
type cycleCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// schedTotals are scheduler-wide counters, guarded by mu.
type schedTotals struct {
	cycles        uint64
	aborted       uint64
	dropped       uint64
	externalWakes uint64
}

// stageRecord is one stage's timing, guarded by mu.
type stageRecord struct {
	opens         uint64
	openedAt      time.Time
	lastOpenAt    time.Duration // from the start of its cycle
	lastMakespan  time.Duration
	totalMakespan time.Duration
}

// New validates cfg, starts cfg.Workers worker goroutines (parked until Run)
// and returns the scheduler. A bad Config yields an error wrapping
// ErrInvalid that names the field; New never panics on a Config.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	// The recorder's write side: trace.Recorder is a tracebuf.Recorder.
	rec := (*tracebuf.Recorder)(cfg.Tracer)
	if cfg.Tracer != nil && !rec.Claim() {
		return nil, configError("Tracer: the Recorder already records another Scheduler (a Recorder records one)")
	}
	s := &sched{
		cfg:      cfg,
		n:        cfg.Workers,
		nStages:  len(cfg.Stages),
		ctl:      rec.Control(),
		epoch:    time.Now(),
		done:     make(chan struct{}, 1),
		traceCtx: context.Background(),
		room:     make(chan struct{}),
	}
	rec.SetControlLock(&s.mu) // the control buffer is written under mu
	s.reg.intern = rec.Intern
	s.instrument = cfg.PacketTiming || cfg.Tracer != nil || cfg.RuntimeTrace || cfg.PprofLabels
	s.bounded = cfg.MaxQueued > 0
	s.stageNames = append([]string{unconstrainedName}, cfg.Stages...)
	s.stages = make([]stageRecord, len(s.stageNames))
	for _, name := range s.stageNames {
		s.buckets = append(s.buckets, bucket.New[task]())
		s.spanSrcs = append(s.spanSrcs, nil)
		s.stageTrace = append(s.stageTrace, rec.Intern(name))
		if cfg.PprofLabels {
			s.stageLabel = append(s.stageLabel, pprof.WithLabels(context.Background(), pprof.Labels("wsched_stage", name)))
		}
	}
	s.buckets[Unconstrained].Open()
	s.workers = make([]*Worker, s.n)
	for i := range s.workers {
		s.workers[i] = newWorker(s, i)
	}
	// Every worker starts parked (registered in idle before its goroutine
	// runs), so the first Run finds all n parked, as every later one does.
	for _, w := range s.workers {
		s.pushIdle(w)
		w.tb.Park() // here, before the goroutine starts: its first event
	}
	s.wg.Add(s.n)
	for _, w := range s.workers {
		go w.main(true)
	}
	rec.SetConfig(cfg.traceConfig())
	h := &Scheduler{s: s}
	s.handle = weak.Make(h)
	runtime.AddCleanup(h, (*sched).close, s)
	return h, nil
}

// sched returns h's state; a zero Scheduler panics.
func (h *Scheduler) sched() *sched {
	if h == nil || h.s == nil {
		panic("scheduler: a zero Scheduler: make one with scheduler.New")
	}
	return h.s
}

// Workers returns the number of workers.
func (h *Scheduler) Workers() int { return h.sched().n }

// Option modifies one Add or AddAll call. Options are a StageID (the stage
// to queue into; stage 1 by default), Priority, Lend, Block and a wake
// Policy (WakeOne, WakeAll, WakeN, WakeSearcher: whom this call wakes,
// instead of Config.Wake; the zero Policy changes nothing). An option that
// does not apply to the call is an error wrapping ErrInvalid.
type Option interface {
	// apply returns a with the option applied (by value: a pointer
	// passed through the interface would make every add allocate its
	// options).
	apply(a addOptions) addOptions
}

// addOptions collects Options.
type addOptions struct {
	stage StageID
	wake  Policy
	woken bool // wake came from an option, not Config.Wake
	prio  bool
	lend  bool
	block context.Context
	err   error
}

func (st StageID) apply(a addOptions) addOptions { a.stage = st; return a }

func (p Policy) apply(a addOptions) addOptions {
	if p == 0 {
		return a // the zero Policy: no override
	}
	if policy.Kind(p).Family() != policy.FamilyWake {
		if a.err == nil {
			a.err = invalid("%s is not a wake policy; only wake policies are options", p)
		}
		return a
	}
	a.wake, a.woken = p, true
	return a
}

type flagOption uint8

const (
	optPriority flagOption = iota
	optLend
)

func (o flagOption) apply(a addOptions) addOptions {
	if o == optPriority {
		a.prio = true
	} else {
		a.lend = true
	}
	return a
}

type blockOption struct{ ctx context.Context }

func (o blockOption) apply(a addOptions) addOptions { a.block = o.ctx; return a }

// Priority queues into the stage's priority lane: the next worker to look
// at the bucket takes each priority packet before any normal one, and
// takes it alone, never in a batch. For known-heavy packets (MMTk's
// ScanCodeCacheRoots in the luindex case, mmtk-core #1200), so that the
// worker that takes one is not also holding a batch of others.
var Priority Option = optPriority

// Lend makes AddAll lend its slice instead of copying it: the caller's
// cost is O(1) whatever its length, and workers read it in place, each
// take claiming the next run of it with one atomic add. The caller must
// not modify the slice's elements until every packet of it has been
// taken, which it knows for certain once the Run that drains the stage
// has returned (or Close has); reading it meanwhile is fine. Elements are
// not looked at when the slice is lent: a nil element is found when a
// worker takes it and ends the cycle like a failing packet (named "nil
// lent element", wrapping ErrInvalid, with its index). A stage keeps up
// to 64 lent slices per cycle; past that AddAll copies. The bucket serves
// copied packets before lent ones. Not with Priority.
var Lend Option = optLend

// Block makes Add and AddAll wait, until ctx is done, for room under
// Config.MaxQueued instead of failing with ErrQueueFull. From a packet it
// never waits (the workers could all be waiting): a full queue is then
// ErrQueueFull.
func Block(ctx context.Context) Option { return blockOption{ctx} }

// options applies opts over the scheduler's defaults. Caller: an add.
func (s *sched) options(opts []Option) addOptions {
	a := addOptions{stage: 1, wake: s.cfg.Wake}
	for _, o := range opts {
		if o != nil {
			a = o.apply(a)
		}
	}
	if a.err == nil && (a.stage < 0 || int(a.stage) > s.nStages) {
		a.err = invalid("StageID %d: unknown stage (have 0..%d)", a.stage, s.nStages)
	}
	return a
}

// addTarget is the bucket that an add on stage st queues into: ErrClosed
// after Close.
func (s *sched) addTarget(st StageID) (*bucket.Bucket[task], error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.buckets[st], nil
}

// Add queues p in a stage's bucket: stage 1 unless a StageID option says
// otherwise. Any goroutine, at any time: before Run (the packet waits for
// its stage), during a cycle (from packets too), to an open or a later
// stage. If the stage is open and a worker is parked, Add wakes one (under
// WakeSearcher: only if no worker is searching already). Options: a
// StageID, Priority, a wake Policy, Block.
//
// Add returns ErrClosed after Close, ErrQueueFull when Config.MaxQueued is
// reached, and an error wrapping ErrInvalid for a nil p or a bad option;
// nothing is queued then.
func (h *Scheduler) Add(p Packet, opts ...Option) error {
	s := h.sched()
	a := s.options(opts)
	switch {
	case a.err != nil:
		return a.err
	case p == nil:
		return invalid("nil Packet")
	case a.lend:
		return invalid("Lend applies to AddAll")
	}
	b, err := s.addTarget(a.stage)
	if err != nil {
		return err
	}
	if s.bounded {
		if err := s.admit(1, a.block); err != nil {
			return err
		}
	}
	one := [1]task{s.queued(p, a.stage)}
	n, err := b.Add(one[:], a.prio)
	if err != nil {
		s.unqueue(1)
		return ErrClosed
	}
	if s.ctl != nil {
		s.recordAdd(one[0], true, 1, a)
	}
	if n > 0 {
		wake := a.wake
		if !a.woken {
			wake = Policy(policy.SingleWake(policy.Kind(wake)))
		}
		s.wakeForAdd(1, wake, -1)
	}
	return nil
}

// AddAll queues ps in a stage's bucket, in order: stage 1 unless a StageID
// option says otherwise, and wakes workers by Config.Wake or a wake Policy
// option. It copies ps (about 3-4 ns a packet), unless Lend lends it. A
// nil element rejects the whole slice (nothing is queued), except with
// Lend, which does not look. Options: a StageID, Priority, Lend, a wake
// Policy, Block. Errors as for Add, and under Config.MaxQueued an error
// wrapping ErrInvalid for more packets than the bound; an AddAll that
// races Close may have queued some of ps before it returns ErrClosed:
// Close drops those and counts them in Stats.Dropped.
func (h *Scheduler) AddAll(ps []Packet, opts ...Option) error {
	s := h.sched()
	a := s.options(opts)
	if a.err != nil {
		return a.err
	}
	if a.lend && a.prio {
		return invalid("Lend with Priority: priority packets are taken one at a time, there is no copy to save")
	}
	if !a.lend {
		for i, p := range ps {
			if p == nil {
				return invalid("nil Packet at index %d", i)
			}
		}
	}
	if _, err := s.addTarget(a.stage); err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	if s.bounded {
		if err := s.admit(len(ps), a.block); err != nil {
			return err
		}
	}
	if a.lend {
		return s.lend(ps, a)
	}
	return s.copyAdd(ps, a)
}

// queued returns the task for p in stage st. While tracing it is stamped
// with the control buffer's clock: an add cannot tell which goroutine
// calls it (a running packet or another goroutine), so a packet it queues
// is drawn as born on the control track. Any goroutine.
func (s *sched) queued(p Packet, st StageID) task {
	if s.ctl != nil {
		return s.stamped(p, st)
	}
	return mkTask(p, st)
}

// stamped is queued while tracing (out of line: queued stays inlinable).
//
//go:noinline
func (s *sched) stamped(p Packet, st StageID) task {
	t := mkTask(p, st)
	t.stamp(s.ctl.Stamp(), fromControl)
	return t
}

// recordAdd records an add call on the control buffer while tracing: how
// it queued n packets into a.stage and whom it wakes (a wake option, or
// the scheduler's rule), with the stamp of its first packet t. The
// replay of `wsched simulate` reads it; the control buffer is written
// under mu. single: a one-packet Add. Any goroutine, not holding mu.
//
//go:noinline
func (s *sched) recordAdd(t task, single bool, n int, a addOptions) {
	how := tracebuf.AddNormal
	switch {
	case a.prio:
		how = tracebuf.AddPriority
	case a.lend:
		how = tracebuf.AddLend
	}
	var wake uint8
	if a.woken {
		wake = uint8(a.wake)
	}
	s.mu.Lock()
	s.ctl.Add(how, single, int(a.stage), n, wake, t.born())
	s.mu.Unlock()
}

// copyAdd queues a copy of ps (a.prio: in the priority lane), and is the
// copy of a lent slice when its bucket has no span slot left (lent: nil
// elements are queued as nilElement packets, as the span would have
// produced them). Packets admitted and then refused (Close) leave the
// queued count here.
func (s *sched) copyAdd(ps []Packet, a addOptions) error {
	b := s.buckets[a.stage]
	t := s.queued(nil, a.stage) // one stamp for the whole slice
	// While tracing, each packet's stamp is spawnStampStep ticks after
	// the previous one's, so that a trace gives their order in the slice
	// (the order a bucket serves them in).
	var step uint64
	if s.ctl != nil {
		step = spawnStampStep << bornShift
	}
	// Runs of 64 tasks built on the stack in a tight loop, each pushed
	// with one call: no call per packet, no allocation.
	var chunk [64]task
	n := 0
	u := t
	for i := 0; i < len(ps); {
		src := ps[i:min(len(ps), i+len(chunk))]
		for j, p := range src {
			if p == nil { // lent only: copies reject nil above
				p = nilElement{i + j}
			}
			u.p = p
			chunk[j] = u
			u.meta += step
		}
		k, err := b.Add(chunk[:len(src)], a.prio)
		if err != nil {
			clear(chunk[:])
			// Closed (Close came before this run, maybe between two):
			// the runs already queued are Close's to drop, count in
			// Stats.Dropped and take off the queued count; the rest is
			// refused here.
			s.unqueue(len(ps) - i)
			return ErrClosed
		}
		n += k
		i += len(src)
	}
	clear(chunk[:]) // drop the references the stack copy holds
	u.p = nil
	if s.ctl != nil {
		a.lend = false // copied
		s.recordAdd(t, false, len(ps), a)
	}
	if n > 0 {
		s.wakeForAdd(n, a.wake, -1)
	}
	return nil
}

// admit counts k packets about to be queued against Config.MaxQueued: they
// are admitted, all or none, while the queue holds at most MaxQueued-k,
// so the bound holds for an AddAll too; otherwise ErrQueueFull, or with
// Block it waits for room until ctx is done. A call of more than
// MaxQueued packets could never be admitted: an error wrapping
// ErrInvalid.
func (s *sched) admit(k int, block context.Context) error {
	limit := int64(s.cfg.MaxQueued)
	if int64(k) > limit {
		return invalid("%d packets in one call, more than Config.MaxQueued (%d) lets queue at once: add them in smaller slices", k, limit)
	}
	room := limit - int64(k) // admitted while at most room are queued
	for {
		q := s.nQueued.Load()
		if q <= room {
			if s.nQueued.CompareAndSwap(q, q+int64(k)) {
				return nil
			}
			continue
		}
		if s.closed.Load() {
			return ErrClosed
		}
		if block == nil || s.onWorker() {
			return ErrQueueFull
		}
		s.roomMu.Lock()
		s.waiters.Add(1)
		ch := s.room
		s.roomMu.Unlock()
		if s.nQueued.Load() > room { // a take may have made room meanwhile
			select {
			case <-ch:
			case <-block.Done():
				s.waiters.Add(-1)
				return context.Cause(block)
			}
		}
		s.waiters.Add(-1)
	}
}

// unqueue records that k packets counted by admit left the queue (taken
// by a worker, dropped, or never queued), and wakes waiting adds if that
// made room. Any goroutine; only when s.bounded.
func (s *sched) unqueue(k int) {
	if s.bounded {
		s.unqueueSlow(k)
	}
}

func (s *sched) unqueueSlow(k int) {
	// Wake the waiting adds whenever room grew: each looks at whether its
	// own call fits now.
	if s.nQueued.Add(-int64(k)); s.waiters.Load() != 0 {
		s.roomMu.Lock()
		close(s.room)
		s.room = make(chan struct{})
		s.roomMu.Unlock()
	}
}

// AddDesignated queues p for one worker only (MMTk's designated work, e.g.
// a per-worker prepare step). The worker runs designated packets before
// anything else, as stage Unconstrained, and is woken for them if it is
// parked during a cycle (MMTk queues them without a wake-up: #1160). The
// queue is bounded (64 packets): ErrQueueFull when full. An unknown worker
// or a nil p is an error wrapping ErrInvalid; ErrClosed after Close.
func (h *Scheduler) AddDesignated(worker int, p Packet) error {
	s := h.sched()
	if p == nil {
		return invalid("nil Packet")
	}
	if worker < 0 || worker >= s.n {
		return invalid("worker %d: unknown worker (have 0..%d)", worker, s.n-1)
	}
	w := s.workers[worker]
	// Send under the monitor, which Close takes to set closed: either the
	// send comes first and Close's drain counts the packet as dropped, or
	// we see closed and queue nothing. (The lock also orders the send
	// before the worker's re-check, wake.go step P4.) Designated work is
	// rare; the lock costs nothing that matters.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	select {
	case w.designated <- p:
		w.nDesignated.Add(1)
	default:
		return ErrQueueFull
	}
	// While tracing, the add (the packet itself carries no stamp: it
	// goes through the channel as it is).
	s.ctl.Add(tracebuf.AddDesignated, true, worker, 1, 0, s.ctl.Stamp())
	if s.cycleActive.Load() && w.parked {
		s.wakeWorker(w, -1)
	}
	return nil
}

// SetSentinel sets stage st's sentinel: a packet queued into st's own
// bucket when every worker is idle and st is otherwise drained, before any
// later stage opens. It is one-shot (taken when queued); a sentinel packet
// that calls SetSentinel again, and adds work to st, makes the stage loop.
// A stage has at most one pending; setting a second, or one for
// Unconstrained or an unknown stage, or a nil p, is an error wrapping
// ErrInvalid. ErrClosed after Close.
func (h *Scheduler) SetSentinel(st StageID, p Packet) error {
	s := h.sched()
	switch {
	case p == nil:
		return invalid("nil Packet")
	case st == Unconstrained:
		return invalid("Unconstrained has no sentinel")
	case st < 0 || int(st) > s.nStages:
		return invalid("StageID %d: unknown stage (have 1..%d)", st, s.nStages)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.buckets[st].SetSentinel(mkTask(p, st)) { // stamped when queued (advance)
		return invalid("stage %d already has a sentinel", st)
	}
	return nil
}

// Run runs one cycle: it opens stage 1 (the Unconstrained bucket is open
// throughout), lets the workers drain the stages in order, and returns
// when the last stage is done and every worker is idle. Packets queued
// before Run take part.
//
// It returns nil, or a *CycleError if the cycle ended early: a packet
// failed or panicked (the error names it and wraps its error), ctx was
// cancelled (it wraps context.Cause(ctx) and ctx.Err()), or the scheduler
// was closed (it wraps ErrClosed). Either way the other workers stopped
// after their running packet, the remaining packets were discarded and
// counted, and the next Run starts clean. A ctx cancelled before Run runs
// no packet. ErrCycleRunning during another Run. After Close (or racing
// it and coming second) Run runs nothing: the first such Run waits for
// Close to drop what was queued and, if it dropped packets that no cycle
// reported, returns a *CycleError wrapping ErrClosed that counts them in
// Dropped; otherwise, and for every later Run, ErrClosed. So every packet
// queued either runs or is counted in one Run's error (and in
// Stats().Dropped), unless no Run comes after Close.
//
// The calling goroutine only waits (for the cycle's end or ctx); it runs
// no packets.
func (h *Scheduler) Run(ctx context.Context) error {
	s := h.sched()
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return s.runClosed()
	}
	if s.running {
		s.mu.Unlock()
		return ErrCycleRunning
	}
	s.running = true
	s.runCtx = ctx
	var task *rtrace.Task
	if s.cfg.RuntimeTrace {
		s.traceCtx, task = rtrace.NewTask(ctx, "wsched.cycle")
	}
	s.beginCycle()
	if ctx.Err() != nil {
		// Cancelled already: end the cycle before any worker wakes, so no
		// packet runs (every worker is parked: abortCycle finishes it).
		s.abortCycle(ctxCause(ctx))
	} else {
		s.advance(nil)
	}
	s.mu.Unlock()

	select {
	case <-s.done:
	case <-ctx.Done():
		s.mu.Lock()
		s.abortCycle(ctxCause(ctx))
		s.mu.Unlock()
		<-s.done
	}

	s.mu.Lock()
	err := s.result
	s.result = nil
	s.running = false
	s.runCtx = nil
	s.mu.Unlock()
	if task != nil {
		task.End()
	}
	runtime.KeepAlive(h)
	return err
}

// runClosed is Run on a closed scheduler: it waits for Close to have
// dropped what was queued and reports those packets, which no cycle has
// reported, in a *CycleError wrapping ErrClosed; with none, or from a
// packet (which cannot wait for the workers), ErrClosed. Not holding mu.
func (s *sched) runClosed() error {
	if s.onWorker() {
		return ErrClosed
	}
	s.wg.Wait()
	s.closeOnce.Do(s.dropClosed)
	s.mu.Lock()
	n := s.unreported
	s.unreported = 0
	cycle := s.cycle + 1
	s.mu.Unlock()
	if n == 0 {
		return ErrClosed
	}
	return &CycleError{Cycle: cycle, Err: ErrClosed, Worker: -1, Dropped: n}
}

// ctxCause is the abort cause of a cancelled Run context.
func ctxCause(ctx context.Context) *CycleError {
	ce := &CycleError{Err: context.Cause(ctx), Worker: -1}
	if err := ctx.Err(); err != ce.Err {
		ce.ctxErr = err
	}
	return ce
}

// cycleContext returns the running cycle's context, making it on the first
// call of the cycle. A worker running a packet.
func (s *sched) cycleContext() context.Context {
	if c := s.cctx.Load(); c != nil {
		return c.ctx
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cctx.Load(); c != nil {
		return c.ctx
	}
	parent := s.runCtx
	if parent == nil {
		parent = context.Background()
	}
	// Run's values, but not its cancellation: when Run's context is done,
	// Run aborts the cycle first and the abort cancels this one, so a
	// packet that stops because its context is done is the last its
	// worker starts. (A child of Run's context would be done before the
	// abort, while workers go on starting queued packets.)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	if s.cause != nil {
		cancel(s.cause)
	}
	s.cctx.Store(&cycleCtx{ctx, cancel})
	return ctx
}

// abortCycle starts ending the current cycle early with cause. Only the
// first cause counts. Caller holds mu.
func (s *sched) abortCycle(cause *CycleError) {
	if !s.cycleActive.Load() || s.cause != nil {
		return
	}
	s.cause = cause
	s.abort.Store(true) // workers stop between packets
	if c := s.cctx.Load(); c != nil {
		c.cancel(cause)
	}
	if s.parked == s.n {
		// Every worker is parked in an active cycle: the state the wake
		// protocol (wake.go) never leaves outside advance. Should it ever
		// be reached, no worker would park again to finish the abort, so
		// finish it here: a cancelled Run and Close never hang (and a
		// test's watchdog can close the scheduler after its dump).
		s.finishAbort()
	}
}

// Close ends the scheduler: a running cycle is aborted (Run returns a
// *CycleError wrapping ErrClosed), the workers exit, and queued packets are
// discarded and counted in Stats().Dropped, and in the error of the next
// Run if no cycle reported them (see Run). It waits for the workers, is
// idempotent, and always returns nil. Called from one of the scheduler's
// own packets, it would wait for the worker it runs on: it panics instead
// (the cycle ends with a *CycleError naming the packet) and closes
// nothing.
func (h *Scheduler) Close() error {
	s := h.sched()
	if s.onWorker() {
		panic("scheduler: Close called from a packet of the scheduler it closes (it would wait for its own worker); close it after Run returns")
	}
	s.close()
	return nil
}

// close is Close, and the cleanup of an unreachable Scheduler.
func (s *sched) close() {
	s.mu.Lock()
	if !s.closed.Load() {
		s.closed.Store(true)
		if s.cycleActive.Load() {
			s.abortCycle(&CycleError{Err: ErrClosed, Worker: -1}) // the cycle's end releases the workers
		} else {
			s.releaseAll()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.closeOnce.Do(s.dropClosed)
}

// dropClosed discards what is still queued once the workers have exited
// (Close, once), counting it in Stats.Dropped and for the next Run to
// report (runClosed), and releases waiting adds.
func (s *sched) dropClosed() {
	var n uint64
	for _, b := range s.buckets {
		b.Disable() // adds racing with Close now fail or are drained below
		d := b.Drain(nil)
		s.unqueue(d)
		n += uint64(d)
		b.Reclaim() // the workers are gone: releases lent slices
		if _, ok := b.TakeSentinel(); ok {
			n++
		}
	}
	for _, w := range s.workers {
		n += w.drainDesignated()
	}
	s.mu.Lock()
	s.totals.dropped += n
	s.unreported += n
	s.mu.Unlock()
	s.roomMu.Lock()
	close(s.room) // waiting adds see closed
	s.room = make(chan struct{})
	s.roomMu.Unlock()
}

// onWorker reports whether the calling goroutine is one of s's workers.
func (s *sched) onWorker() bool {
	id := goid()
	if id == 0 {
		return false
	}
	for _, w := range s.workers {
		if w.gid.Load() == id {
			return true
		}
	}
	return false
}
