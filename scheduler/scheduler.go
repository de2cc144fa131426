package scheduler

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/wsched/wsched/bucket"
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

	// nQueued[st] counts the packets Add and AddAll queued in stage st and
	// no worker has taken yet, when Config.MaxQueued bounds them
	// (backpressure). Added to by adds, subtracted from by bucket takes and
	// drains.
	nQueued []queuedCount
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
	stages     []stageRecord            // index = StageID
	holds      []*Hold                  // outstanding holds (hold.go)
	timing     bool                     // packets are timed (PacketTiming or LearnHeavy)
	heavy      atomic.Pointer[heavySet] // LearnHeavy's published set (heavy.go)
	learnBuf   learnScratch             // learnHeavy's buffers; guarded by mu
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
	s.instrument = cfg.PacketTiming || cfg.LearnHeavy || cfg.Tracer != nil || cfg.RuntimeTrace || cfg.PprofLabels
	s.timing = cfg.PacketTiming || cfg.LearnHeavy
	s.bounded = cfg.MaxQueued > 0
	s.stageNames = append([]string{unconstrainedName}, cfg.Stages...)
	s.stages = make([]stageRecord, len(s.stageNames))
	s.nQueued = make([]queuedCount, len(s.stageNames))
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

// Stage returns the StageID of the stage named name (Config.Stages, or
// "main" for a scheduler of one stage; "Unconstrained" is StageID 0), or
// an error wrapping ErrInvalid naming the stages there are. Look a stage
// up once and keep its ID: Add takes the ID.
func (h *Scheduler) Stage(name string) (StageID, error) {
	s := h.sched()
	for i, n := range s.stageNames {
		if n == name {
			return StageID(i), nil
		}
	}
	return 0, invalid("no stage %q (the stages: %s)", name, strings.Join(s.stageNames[1:], ", "))
}

// StageName returns the name of stage id, or "" for an unknown one.
func (h *Scheduler) StageName(id StageID) string {
	s := h.sched()
	if id < 0 || int(id) >= len(s.stageNames) {
		return ""
	}
	return s.stageNames[id]
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
