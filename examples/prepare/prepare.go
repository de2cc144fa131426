package prepare

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wsched/wsched/examples/stagetime"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace"
)

// Stages are the model's stages. StopMutators runs in Unconstrained.
var Stages = []string{"Prepare", "Closure"}

// The stages' IDs: Stages[i] is StageID i+1.
const (
	stagePrepare scheduler.StageID = 1
	stageClosure scheduler.StageID = 2
)

// Heavy says where the code-cache packet goes.
type Heavy uint8

const (
	// HeavyInBulk queues it last among the Prepare packets, as MMTk does.
	HeavyInBulk Heavy = iota
	// HeavyPriority queues it in the priority lane.
	HeavyPriority
	// HeavySplit queues it as packets of at most Model.SplitSlots slots.
	HeavySplit
)

// Configuration is one way of queuing the Prepare stage and waking workers
// for it. All share MMTk's worker behaviour: a FIFO local deque, batches of
// 32 from a bucket, and one packet per steal from another worker.
type Configuration struct {
	Name  string // "a" … "e"
	Title string // one line
	// PerPacket queues each Prepare packet with its own Add (each wakes
	// per Wake's single-packet rule); otherwise one AddAll.
	PerPacket bool
	// Wake is the scheduler's wake policy (Config.Wake); BulkWake, a wake
	// policy, overrides it for the AddAll (the zero WakePolicy: no override).
	Wake     scheduler.WakePolicy
	BulkWake scheduler.WakePolicy
	Heavy    Heavy
	// Learn sets scheduler.Config.LearnHeavy: from the second cycle on the
	// scheduler queues the packet types it measured as bounding their
	// stage (here ScanCodeCacheRoots) in the priority lane, with no hint.
	Learn bool
}

// SchedulerConfig returns the scheduler configuration for c with the given
// number of workers and tracer.
func (c Configuration) SchedulerConfig(workers int, tr *trace.Recorder) scheduler.Config {
	return scheduler.Config{
		Workers:     workers,
		Stages:      Stages,
		Wake:        c.Wake,
		Steal:       scheduler.StealOne,  // MMTk steals one packet at a time
		BucketBatch: 32,                  // MMTk: steal_batch_and_pop, 32 + the popped one
		Take:        scheduler.TakeFixed, // MMTk takes the whole batch whatever the bucket's depth
		Local:       scheduler.LocalFIFO, // MMTk's local deque is FIFO
		Tracer:      tr,
	}
}

// Configurations returns the five configurations of the luindex case
// (mmtk-core #1200), then (a), (b) and (e) again with Learn, named
// "a+learn", "b+learn" and "e+learn".
func Configurations() []Configuration {
	cs := baseConfigurations()
	for _, c := range cs {
		if c.Heavy == HeavyInBulk {
			c.Name += "+learn"
			c.Title = "(" + c.Name[:1] + "), the scheduler learns its heavy packets (LearnHeavy)"
			c.Learn = true
			cs = append(cs, c)
		}
	}
	return cs
}

func baseConfigurations() []Configuration {
	return []Configuration{
		{Name: "a", Title: "one Add per packet, wake one (MMTk before #1182)",
			PerPacket: true, Wake: scheduler.WakeOne, Heavy: HeavyInBulk},
		{Name: "b", Title: "one AddAll, wake all, batch takes (MMTk after #1182)",
			Wake: scheduler.WakeAll, Heavy: HeavyInBulk},
		{Name: "c", Title: "(b) + code cache in the priority lane",
			Wake: scheduler.WakeAll, Heavy: HeavyPriority},
		{Name: "d", Title: "(b) + code cache split into 4096-slot packets",
			Wake: scheduler.WakeAll, Heavy: HeavySplit},
		{Name: "e", Title: "(b) with wake-N: wake min(packets, parked)",
			Wake: scheduler.WakeAll, BulkWake: scheduler.WakeN, Heavy: HeavyInBulk},
	}
}

// Lookup returns the configuration named name ("a" … "e", "a+learn",
// "b+learn", "e+learn").
func Lookup(name string) (Configuration, bool) {
	i := slices.IndexFunc(Configurations(), func(c Configuration) bool { return c.Name == name })
	if i < 0 {
		return Configuration{}, false
	}
	return Configurations()[i], true
}

// Options configures a Runner.
type Options struct {
	Workers int             // 0 means GOMAXPROCS
	Model   Model           // zero means DefaultModel(1, 1)
	Tracer  *trace.Recorder // nil: no trace; else made for Workers workers
}

// Runner runs one configuration, a cycle per Cycle call, on a scheduler it
// owns. Not safe for concurrent use.
type Runner struct {
	cfg     Configuration
	model   Model
	sched   *scheduler.Scheduler
	clock   *stagetime.Clock
	workers []workerState
}

type workerState struct {
	sink uint64 // keeps the burned work from being optimised away
	_    [56]byte
}

// NewRunner starts a scheduler for configuration c.
func NewRunner(c Configuration, opts Options) (*Runner, error) {
	if opts.Model.CodeCacheSlots == 0 {
		opts.Model = DefaultModel(1, 1)
	}
	cfg := c.SchedulerConfig(opts.Workers, opts.Tracer)
	cfg.LearnHeavy = c.Learn
	s, err := scheduler.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &Runner{
		cfg:     c,
		model:   opts.Model,
		sched:   s,
		clock:   stagetime.New(s.Workers(), append([]string{"Unconstrained"}, Stages...)),
		workers: make([]workerState, s.Workers()),
	}, nil
}

// Close stops the scheduler.
func (r *Runner) Close() error { return r.sched.Close() }

// Scheduler returns the runner's scheduler.
func (r *Runner) Scheduler() *scheduler.Scheduler { return r.sched }

// Cycle is one cycle's figures.
type Cycle struct {
	Elapsed time.Duration
	Prepare stagetime.Stage // from StopMutators queuing the work to the last Prepare packet
	Closure stagetime.Stage
	Stop    stagetime.Stage // the StopMutators packet (Unconstrained)
	Stats   stagetime.Counters
}

// Cycle runs one GC cycle: StopMutators (Unconstrained) queues the Prepare
// work, then Prepare and Closure run.
func (r *Runner) Cycle(ctx context.Context) (Cycle, error) {
	before := r.sched.Stats()
	r.clock.Start()
	if err := r.sched.Add(&stopMutators{r: r}, scheduler.Unconstrained); err != nil {
		return Cycle{}, fmt.Errorf("prepare: %w", err)
	}
	t0 := time.Now()
	if err := r.sched.Run(ctx); err != nil {
		return Cycle{}, fmt.Errorf("prepare: %w", err)
	}
	c := Cycle{Elapsed: time.Since(t0), Stats: stagetime.Delta(r.sched.Stats(), before)}
	for _, s := range r.clock.Stages() {
		switch s.Name {
		case "Unconstrained":
			c.Stop = s
		case "Prepare":
			c.Prepare = s
		case "Closure":
			c.Closure = s
		}
	}
	return c, nil
}

// Result is a configuration's cycles.
type Result struct {
	Config  Configuration
	Workers int
	Cycles  []Cycle
}

// Median returns the cycle with the median Prepare makespan; under a
// Learn configuration, of the cycles from the second on (the first is the
// one the scheduler learns from), when there are two or more.
func (r Result) Median() Cycle {
	cs := slices.Clone(r.Cycles)
	if r.Config.Learn && len(cs) > 1 {
		cs = cs[1:]
	}
	slices.SortFunc(cs, func(a, b Cycle) int { return int(a.Prepare.Makespan - b.Prepare.Makespan) })
	return cs[len(cs)/2]
}

// Run runs cycles cycles of configuration c on a new scheduler.
func Run(ctx context.Context, c Configuration, opts Options, cycles int) (Result, error) {
	r, err := NewRunner(c, opts)
	if err != nil {
		return Result{}, err
	}
	defer r.Close()
	res := Result{Config: c, Workers: r.sched.Workers()}
	for range max(cycles, 1) {
		cy, err := r.Cycle(ctx)
		if err != nil {
			return res, err
		}
		res.Cycles = append(res.Cycles, cy)
	}
	return res, nil
}

// stopMutators waits for the mutators to stop, then queues the Prepare
// stage's work the configuration's way. An add fails only if the scheduler
// was closed under the cycle; the error then ends the cycle.
type stopMutators struct{ r *Runner }

// PacketName names the packet as MMTk does.
func (p *stopMutators) PacketName() string { return "StopMutators" }

func (p *stopMutators) Run(w *scheduler.Worker) error {
	r := p.r
	t := r.clock.Now()
	m := r.model
	// Wait for the mutators: the GC thread polls until they have stopped.
	for deadline := t + int64(m.StopMicros)*1000; r.clock.Now() < deadline; {
		r.workers[w.ID()].sink += burn(uint64(t), 64)
	}
	s := r.sched
	r.clock.Open(int(stagePrepare), r.clock.Now())
	for i := range s.Workers() {
		if err := s.AddDesignated(i, &prepareCollector{r: r, slots: m.CollectorSlots}); err != nil {
			return err
		}
	}
	var ps []scheduler.Packet
	for _, n := range m.StackSlots {
		ps = append(ps, &scanRoots{r: r, slots: n, name: "ScanMutatorRoots"})
	}
	code := &scanRoots{r: r, slots: m.CodeCacheSlots, name: "ScanCodeCacheRoots"}
	switch r.cfg.Heavy {
	case HeavyInBulk:
		ps = append(ps, code)
	case HeavySplit:
		for lo := 0; lo < m.CodeCacheSlots; lo += m.SplitSlots {
			ps = append(ps, &scanRoots{r: r, slots: min(m.SplitSlots, m.CodeCacheSlots-lo), name: "ScanCodeCacheRoots"})
		}
	case HeavyPriority:
		if err := s.Add(code, stagePrepare, scheduler.Priority); err != nil {
			return err
		}
	}
	if r.cfg.PerPacket {
		for _, p := range ps {
			if err := s.Add(p, stagePrepare); err != nil {
				return err
			}
		}
	} else {
		opts := []scheduler.Option{stagePrepare}
		if r.cfg.BulkWake != 0 {
			opts = append(opts, r.cfg.BulkWake)
		}
		if err := s.AddAll(ps, opts...); err != nil {
			return err
		}
	}
	r.clock.Done(w.ID(), int(scheduler.Unconstrained), t)
	return nil
}

// scanSlots does the work of scanning n slots on w: SlotWork each.
func (r *Runner) scanSlots(w *scheduler.Worker, n int) {
	ws := &r.workers[w.ID()]
	for i := range n {
		ws.sink += burn(uint64(i), r.model.SlotWork)
	}
}

// prepareCollector is a worker's designated Prepare packet (MMTk's
// PrepareCollector).
type prepareCollector struct {
	r     *Runner
	slots int
}

// PacketName names the packet as MMTk does.
func (p *prepareCollector) PacketName() string { return "PrepareCollector" }

func (p *prepareCollector) Run(w *scheduler.Worker) error {
	r := p.r
	t := r.clock.Now()
	r.scanSlots(w, p.slots)
	r.clock.Done(w.ID(), int(stagePrepare), t)
	return nil
}

// scanRoots scans a root set of slots and queues the Closure work it
// finds: one packet per SplitSlots slots.
type scanRoots struct {
	r     *Runner
	slots int
	name  string
}

// PacketName returns ScanMutatorRoots or ScanCodeCacheRoots.
func (p *scanRoots) PacketName() string { return p.name }

func (p *scanRoots) Run(w *scheduler.Worker) error {
	r := p.r
	t := r.clock.Now()
	r.scanSlots(w, p.slots)
	for lo := 0; lo < p.slots; lo += r.model.SplitSlots {
		// Closure is closed while Prepare runs: this wakes nobody.
		if err := r.sched.Add(&traceEdges{r: r, slots: min(r.model.SplitSlots, p.slots-lo)}, stageClosure); err != nil {
			return err
		}
	}
	r.clock.Done(w.ID(), int(stagePrepare), t)
	return nil
}

// traceEdges is a Closure packet: it traces its slots and spawns two
// children until the model's depth.
type traceEdges struct {
	r     *Runner
	slots int
	depth int
}

// PacketName names the packet as MMTk does.
func (p *traceEdges) PacketName() string { return "ProcessEdges" }

func (p *traceEdges) Run(w *scheduler.Worker) error {
	r := p.r
	t := r.clock.Now()
	r.scanSlots(w, p.slots)
	if p.depth < r.model.ClosureDepth {
		scheduler.Spawn(w, &traceEdges{r: r, slots: p.slots, depth: p.depth + 1})
		scheduler.Spawn(w, &traceEdges{r: r, slots: p.slots, depth: p.depth + 1})
	}
	r.clock.Done(w.ID(), int(stageClosure), t)
	return nil
}
