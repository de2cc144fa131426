package scheduler

import (
	"context"
	"fmt"
	"runtime/pprof"
	rtrace "runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsched/wsched/bucket"
	"github.com/wsched/wsched/trace"
)

// Scheduler runs packets on a fixed set of worker goroutines, one cycle per
// Run call, stage by stage. See the package documentation for the model
// and wake.go for the parking protocol.
//
// Callers: any goroutine may call Add*, SetSentinel, Stage, Stats and
// Workers, including packets running on the workers. One goroutine at a time
// calls Run (a second gets ErrCycleRunning). Close may be called from any
// goroutine except a packet's (it waits for the workers).
type Scheduler struct {
	// Immutable after New.
	cfg        Config
	n          int
	nStages    int // user stages; buckets has nStages+1 entries
	workers    []*Worker
	buckets    []*bucket.Bucket[task] // index = StageID
	stageNames []string               // index = StageID
	stageIDs   map[string]StageID
	stageTrace []trace.NameID    // index = StageID
	stageLabel []context.Context // PprofLabels: label context per StageID
	// spanSrcs holds, per StageID, the sources of the bucket's spans
	// (AddSlice), indexed by span slot; allocated on a stage's first
	// AddSlice and written only under that bucket's span lock.
	spanSrcs   []*[bucket.MaxSpans]sliceSource
	ctl        *trace.WorkerBuf // control trace buffer; written under mu
	reg        registry         // packet names
	epoch      time.Time        // clock origin for PacketTiming
	instrument bool             // timing, tracing, runtime/trace or labels on
	wg         sync.WaitGroup   // one per worker goroutine

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
	// closed is set by Close (under mu); loaded by Add* and by woken workers.
	closed atomic.Bool
	_      [64]byte

	// mu is the monitor (MMTk's WorkerMonitor): park registration, wake-ups,
	// stage transitions and cycle state. Never held while a packet runs.
	mu      sync.Mutex
	idle    []*Worker // parked workers, a stack (most recently parked on top)
	parked  int       // len(idle); the last worker to make it n decides
	running bool      // a Run call is in progress
	cycle   uint64    // cycles started
	cause   error     // why the current cycle is being aborted, nil if not
	result  error     // the error of the cycle that just ended
	dropped uint64    // packets discarded in the current cycle so far
	done    chan struct{}
	// cycleCtx is the context of the current cycle (runtime/trace task).
	cycleCtx   context.Context
	cycleStart time.Time
	stages     []stageRecord // index = StageID
	totals     schedTotals
	closeOnce  sync.Once
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
// ErrInvalidConfig that names the field; New never panics on a Config.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if cfg.Tracer != nil && !cfg.Tracer.Claim() {
		return nil, configError("Tracer already records another Scheduler (a Recorder records one)")
	}
	s := &Scheduler{
		cfg:      cfg,
		n:        cfg.Workers,
		nStages:  len(cfg.Stages),
		stageIDs: make(map[string]StageID, len(cfg.Stages)+1),
		ctl:      cfg.Tracer.Control(),
		epoch:    time.Now(),
		done:     make(chan struct{}, 1),
		cycleCtx: context.Background(),
	}
	s.reg.tracer = cfg.Tracer
	s.instrument = cfg.PacketTiming || cfg.Tracer != nil || cfg.RuntimeTrace || cfg.PprofLabels
	s.stageNames = append([]string{unconstrainedName}, cfg.Stages...)
	s.stages = make([]stageRecord, len(s.stageNames))
	for i, name := range s.stageNames {
		s.stageIDs[name] = StageID(i)
		s.buckets = append(s.buckets, bucket.New[task]())
		s.spanSrcs = append(s.spanSrcs, nil)
		s.stageTrace = append(s.stageTrace, cfg.Tracer.Intern(name))
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
	return s, nil
}

// Workers returns the number of workers.
func (s *Scheduler) Workers() int { return s.n }

// Stage returns the StageID of the stage named name ("Unconstrained" is 0).
func (s *Scheduler) Stage(name string) (StageID, error) {
	if id, ok := s.stageIDs[name]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownStage, name)
}

// StageName returns the name of stage st, or "" if there is none.
func (s *Scheduler) StageName(st StageID) string {
	if st < 0 || int(st) >= len(s.stageNames) {
		return ""
	}
	return s.stageNames[st]
}

// Stages returns the number of user stages (StageIDs 1..Stages()).
func (s *Scheduler) Stages() int { return s.nStages }

func (s *Scheduler) bucketOf(st StageID) (*bucket.Bucket[task], error) {
	if st < 0 || int(st) >= len(s.buckets) {
		return nil, fmt.Errorf("%w: StageID %d (have 0..%d)", ErrUnknownStage, st, s.nStages)
	}
	return s.buckets[st], nil
}

// addTarget is the bucket that Add* on stage st queues into: ErrUnknownStage
// for a bad st, ErrClosed after Close.
func (s *Scheduler) addTarget(st StageID) (*bucket.Bucket[task], error) {
	b, err := s.bucketOf(st)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return b, nil
}

// addOptions collects AddOptions.
type addOptions struct {
	wake WakePolicy
}

// AddOption modifies one BulkAdd or BulkAddPriority call.
type AddOption interface {
	// apply returns a with the option applied (by value: a pointer passed
	// through the interface would make every bulk add into an open stage
	// allocate the options).
	apply(a addOptions) addOptions
}

type wakeOption WakePolicy

func (o wakeOption) apply(a addOptions) addOptions { a.wake = WakePolicy(o); return a }

// WithWake overrides the scheduler's wake policy for one call.
// WakeDefault leaves it unchanged.
func WithWake(p WakePolicy) AddOption { return wakeOption(p) }

// addOpts applies opts to the scheduler's defaults. An unknown wake
// policy is an error, as it is in Config.Wake (WakeDefault keeps the
// scheduler's).
func (s *Scheduler) addOpts(opts []AddOption) (addOptions, error) {
	a := addOptions{wake: s.cfg.Wake}
	for _, o := range opts {
		if o != nil {
			a = o.apply(a)
		}
	}
	switch {
	case a.wake >= wakeEnd:
		return a, fmt.Errorf("%w: WithWake(%d): unknown wake policy", ErrInvalidConfig, uint8(a.wake))
	case a.wake == WakeDefault:
		a.wake = s.cfg.Wake
	}
	return a, nil
}

// Add queues p in stage st's bucket. Any goroutine, at any time: before Run
// (the packet waits for its stage), during a cycle (from packets too), to
// an open or a later stage. If st is open and a worker is parked, Add wakes
// one (under WakeSearcher: only if no worker is searching already).
func (s *Scheduler) Add(st StageID, p Packet) error { return s.addOne(st, p, false) }

// AddPriority queues p in stage st's priority lane: the next worker to look
// at the bucket takes it before any normal packet, and takes it alone,
// never in a batch with others. For known-heavy packets (MMTk's
// ScanCodeCacheRoots in the luindex case, mmtk-core #1200). Wakes like Add.
func (s *Scheduler) AddPriority(st StageID, p Packet) error { return s.addOne(st, p, true) }

func (s *Scheduler) addOne(st StageID, p Packet, priority bool) error {
	if p == nil {
		return ErrNilPacket
	}
	b, err := s.addTarget(st)
	if err != nil {
		return err
	}
	var n int
	if priority {
		n, err = b.AddPriority(s.queued(p, st))
	} else {
		n, err = b.Add(s.queued(p, st))
	}
	if err != nil {
		return ErrClosed
	}
	if n > 0 {
		s.wakeForAdd(1, s.singleWake(), -1)
	}
	return nil
}

// queued returns the task for p in stage st. While tracing it is stamped
// with the control buffer's clock: Add* cannot tell which goroutine calls
// it (a running packet or another goroutine), so a packet it queues is
// drawn as born on the control track. Any goroutine.
func (s *Scheduler) queued(p Packet, st StageID) task {
	if s.ctl != nil {
		return s.stamped(p, st)
	}
	return mkTask(p, st)
}

// stamped is queued while tracing (out of line: queued stays inlinable).
//
//go:noinline
func (s *Scheduler) stamped(p Packet, st StageID) task {
	t := mkTask(p, st)
	t.stamp(s.ctl.Stamp(), fromControl)
	return t
}

// singleWake is the policy of a one-packet Add: one worker, throttled when
// the scheduler's policy is WakeSearcher.
func (s *Scheduler) singleWake() WakePolicy {
	if s.cfg.Wake == WakeSearcher {
		return WakeSearcher
	}
	return WakeOne
}

// BulkAdd queues ps in stage st's bucket, in order, and wakes workers by
// the scheduler's wake policy or the WithWake option. A nil element
// rejects the whole slice with ErrNilPacket (nothing is queued).
func (s *Scheduler) BulkAdd(st StageID, ps []Packet, opts ...AddOption) error {
	return s.copyAdd(st, ps, false, false, opts)
}

// BulkAddPriority queues ps in stage st's priority lane (see AddPriority),
// waking as BulkAdd does.
func (s *Scheduler) BulkAddPriority(st StageID, ps []Packet, opts ...AddOption) error {
	return s.copyAdd(st, ps, true, false, opts)
}

// copyAdd is BulkAdd (or BulkAddPriority if prio), and AddSlice's copy
// when its bucket has no span slot left (lent: nil elements are queued as
// nilElement packets, as the span would have produced them, instead of
// rejecting the slice).
func (s *Scheduler) copyAdd(st StageID, ps []Packet, prio, lent bool, opts []AddOption) error {
	if !lent {
		for _, p := range ps {
			if p == nil {
				return ErrNilPacket
			}
		}
	}
	b, err := s.addTarget(st)
	if err != nil {
		return err
	}
	o, err := s.addOpts(opts)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return nil
	}
	t := s.queued(nil, st) // one stamp for the whole slice
	bk, err := b.StartBulk(prio)
	if err != nil {
		return ErrClosed
	}
	// Runs of 64 tasks built on the stack in a tight loop, each pushed
	// with one call (bucket.Bulk): no call per packet, no allocation.
	var chunk [64]task
	for i := 0; i < len(ps); {
		src := ps[i:min(len(ps), i+len(chunk))]
		for j, p := range src {
			if p == nil { // lent only: BulkAdd rejected nil above
				p = nilElement{i + j}
			}
			u := t
			u.p = p
			chunk[j] = u
		}
		bk.Push(chunk[:len(src)])
		i += len(src)
	}
	clear(chunk[:]) // drop the references the stack copy holds
	n := bk.End()
	if n > 0 {
		s.wakeForAdd(n, o.wake, -1)
	}
	return nil
}

// AddDesignated queues p for worker worker only (MMTk's designated work,
// e.g. a per-worker prepare step). The worker runs designated packets before
// anything else, as stage Unconstrained, and is woken for them if it is
// parked during a cycle (MMTk queues them without a wake-up: #1160). The
// queue is bounded (64): ErrDesignatedFull when full.
func (s *Scheduler) AddDesignated(worker int, p Packet) error {
	if p == nil {
		return ErrNilPacket
	}
	if worker < 0 || worker >= s.n {
		return fmt.Errorf("%w: %d (have 0..%d)", ErrUnknownWorker, worker, s.n-1)
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
		return ErrDesignatedFull
	}
	if s.cycleActive.Load() && w.parked {
		s.wakeWorker(w, -1)
	}
	return nil
}

// SetSentinel sets stage st's sentinel: a packet queued into st's own
// bucket when every worker is idle and st is otherwise drained, before any
// later stage opens. It is one-shot (taken when queued); a sentinel packet
// that calls SetSentinel again, and adds work to st, makes the stage loop.
// A stage has at most one: ErrSentinelSet if one is pending. Unconstrained
// has none (ErrUnknownStage).
func (s *Scheduler) SetSentinel(st StageID, p Packet) error {
	if p == nil {
		return ErrNilPacket
	}
	b, err := s.bucketOf(st)
	if err != nil {
		return err
	}
	if st == Unconstrained {
		return fmt.Errorf("%w: Unconstrained has no sentinel", ErrUnknownStage)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if !b.SetSentinel(mkTask(p, st)) { // stamped when queued (advance)
		return ErrSentinelSet
	}
	return nil
}

// Run runs one cycle: it opens stage 1 (the Unconstrained bucket is open
// throughout), lets the workers drain the stages in order, and returns
// when the last stage is done and every worker is idle. Packets queued
// before Run take part. It returns nil, a *PanicError if a packet panicked,
// or a *CycleError if ctx was cancelled (wrapping ctx.Err()) or the
// scheduler was closed during the cycle (wrapping ErrClosed); either way
// the cycle's remaining packets were discarded and counted, and the next
// Run starts clean. ErrClosed after Close, ErrCycleRunning during another
// Run.
//
// The calling goroutine only waits (for the cycle's end or ctx); it runs
// no packets.
func (s *Scheduler) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.running {
		s.mu.Unlock()
		return ErrCycleRunning
	}
	s.running = true
	var task *rtrace.Task
	if s.cfg.RuntimeTrace {
		s.cycleCtx, task = rtrace.NewTask(ctx, "wsched.cycle")
	}
	s.beginCycle()
	if err := ctx.Err(); err != nil {
		// Cancelled already: end the cycle before any worker wakes, so no
		// packet runs (every worker is parked: abortCycle finishes it).
		s.abortCycle(err)
	} else {
		s.advance(nil)
	}
	s.mu.Unlock()

	select {
	case <-s.done:
	case <-ctx.Done():
		s.mu.Lock()
		s.abortCycle(ctx.Err())
		s.mu.Unlock()
		<-s.done
	}

	s.mu.Lock()
	err := s.result
	s.result = nil
	s.running = false
	s.mu.Unlock()
	if task != nil {
		task.End()
	}
	return err
}

// abortCycle starts aborting the current cycle with cause (a *PanicError,
// or the cause of a *CycleError). Only the first cause counts. Caller holds
// mu.
func (s *Scheduler) abortCycle(cause error) {
	if !s.cycleActive.Load() || s.cause != nil {
		return
	}
	s.cause = cause
	s.abort.Store(true) // workers stop between packets
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
// discarded and counted in Stats().Dropped. It waits for the workers, is
// idempotent, and always returns nil. Called from one of the scheduler's
// own packets, it would wait for the worker it runs on: it panics instead
// (the cycle ends with a *PanicError naming the packet) and closes
// nothing.
func (s *Scheduler) Close() error {
	if s.onWorker() {
		panic("scheduler: Close called from a packet of the scheduler it closes (it would wait for its own worker); close it after Run returns")
	}
	s.mu.Lock()
	if !s.closed.Load() {
		s.closed.Store(true)
		if s.cycleActive.Load() {
			s.abortCycle(ErrClosed) // the cycle's end releases the workers
		} else {
			s.releaseAll()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.closeOnce.Do(func() {
		var n uint64
		for _, b := range s.buckets {
			b.Disable() // Adds racing with Close now fail or are drained below
			n += uint64(b.Drain(nil))
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
		s.mu.Unlock()
	})
	return nil
}

// onWorker reports whether the calling goroutine is one of s's workers.
func (s *Scheduler) onWorker() bool {
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
