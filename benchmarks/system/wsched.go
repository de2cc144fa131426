package system

import (
	"context"
	"fmt"

	"github.com/wsched/wsched/scheduler"
)

// Config turns the policy into a scheduler configuration for the given
// number of workers and stages.
func (p Policy) Config(workers int, stages ...string) (scheduler.Config, error) {
	cfg := scheduler.Config{Workers: workers, Stages: stages}
	if p.Wake != "" {
		w, err := scheduler.ParseWakePolicy(p.Wake)
		if err != nil {
			return cfg, err
		}
		cfg.Wake = w
	}
	if p.Steal != "" {
		s, err := scheduler.ParseStealPolicy(p.Steal)
		if err != nil {
			return cfg, err
		}
		cfg.Steal = s
	}
	cfg.BucketBatch = p.Batch
	if p.Spins >= 0 {
		cfg.Spins = p.Spins
	}
	cfg.ParkSpin = p.ParkSpin
	if p.LocalFIFO != nil {
		cfg.LocalFIFO = *p.LocalFIFO
	}
	if p.Take != "" {
		t, err := scheduler.ParseTakePolicy(p.Take)
		if err != nil {
			return cfg, err
		}
		cfg.Take = t
	}
	return cfg, nil
}

func init() {
	register(&Kind{Name: WSched, Nested: true,
		Doc: "wsched scheduler (default policy): roots by BulkAdd to one stage, then Run; spawns by Worker.Spawn",
		New: func(workers, n int, nested bool, body Body) (Exec, error) {
			return NewWSched(DefaultPolicy, workers, n, nested, body)
		}})
}

// wsPacket is task i of a wsched executor. Packets are built once per
// executor and reused by every run, so a run allocates nothing of ours.
type wsPacket struct {
	e *wsExec
	i int32
}

func (p *wsPacket) Run(w *scheduler.Worker) { p.e.body(p.e.spawners[w.ID()], p.i) }

// wsSpawner is worker w's Spawner: Spawn pushes onto w's local deque. One
// per worker, built once, so handing it to a task allocates nothing.
type wsSpawner struct {
	e *wsExec
	w *scheduler.Worker
}

func (s *wsSpawner) Spawn(i int32) { s.w.Spawn(&s.e.pkts[i]) }

// lendMin is the shortest list of children SpawnAll lends to the stage's
// bucket (AddSlice) instead of spawning one by one: 256, what the
// worker's private stack holds before it spills half to the deque
// anyway. Shorter lists go to the private stack, where the worker's own
// next packets come from without an atomic, depth first. (At 64, the
// irregular tree, whose nodes have up to 64 children, lent its widest
// lists, and on one worker ran 2.5% and 13.6% slower than spawning them,
// proven in two runs.)
const lendMin = 256

// SpawnAll spawns the children ids. A long list of adjacent ids (a task
// tree's siblings are numbered in a row) is lent whole: AddSlice of the
// executor's prebuilt packet pointers, so that the spawning packet writes
// nothing per child and idle workers claim runs of it from the bucket;
// policy add=copy spawns one by one instead.
func (s *wsSpawner) SpawnAll(ids []int32) {
	e := s.e
	if n := len(ids); n >= lendMin && !e.copyAdd && int(ids[n-1]-ids[0]) == n-1 {
		if err := e.s.AddSlice(e.stage, e.ptrs[ids[0]:int(ids[0])+n]); err != nil {
			panic(err) // the stage exists and the scheduler is open while it runs
		}
		return
	}
	for _, i := range ids {
		s.w.Spawn(&e.pkts[i])
	}
}

type wsExec struct {
	s        *scheduler.Scheduler
	stage    scheduler.StageID
	body     Body
	pkts     []wsPacket
	ptrs     []scheduler.Packet // &pkts[i]: roots and SpawnAll's lent lists
	spawners []Spawner          // index = worker ID; filled lazily by a prepare packet
	roots    []scheduler.Packet
	rootIDs  []int32 // the caller's slice that roots was built from
	inline   bool    // spawners use SpawnOrRun
	copyAdd  bool    // roots by BulkAdd, not AddSlice
}

// NewWSched builds a wsched executor with policy p: one stage, roots queued
// with BulkAdd before Run, spawns pushed to the running worker's deque.
func NewWSched(p Policy, workers, n int, nested bool, body Body) (Exec, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	cfg, err := p.Config(workers, "run")
	if err != nil {
		return nil, err
	}
	s, err := scheduler.New(cfg)
	if err != nil {
		return nil, err
	}
	st, err := s.Stage("run")
	if err != nil {
		s.Close()
		return nil, err
	}
	e := &wsExec{s: s, stage: st, body: body, pkts: make([]wsPacket, n), inline: p.Inline, copyAdd: p.CopyAdd}
	e.ptrs = make([]scheduler.Packet, n)
	for i := range e.pkts {
		e.pkts[i] = wsPacket{e: e, i: int32(i)}
		e.ptrs[i] = &e.pkts[i]
	}
	// Each worker's Spawner wraps its *Worker, which is only handed to
	// packets: learn them with one designated packet per worker.
	e.spawners = make([]Spawner, s.Workers())
	for w := range s.Workers() {
		if err := s.AddDesignated(w, learnWorker{e}); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.Run(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	for w, sp := range e.spawners {
		if sp == nil {
			s.Close()
			return nil, fmt.Errorf("system: wsched worker %d ran no designated packet", w)
		}
	}
	return e, nil
}

type learnWorker struct{ e *wsExec }

func (l learnWorker) Run(w *scheduler.Worker) {
	if l.e.inline {
		l.e.spawners[w.ID()] = &wsInlineSpawner{e: l.e, w: w}
		return
	}
	l.e.spawners[w.ID()] = &wsSpawner{e: l.e, w: w}
}

// wsInlineSpawner is wsSpawner with Worker.SpawnOrRun (policy spawn=inline).
type wsInlineSpawner struct {
	e *wsExec
	w *scheduler.Worker
}

func (s *wsInlineSpawner) Spawn(i int32) { s.w.SpawnOrRun(&s.e.pkts[i]) }

func (s *wsInlineSpawner) SpawnAll(ids []int32) {
	for _, i := range ids {
		s.w.SpawnOrRun(&s.e.pkts[i])
	}
}

func (e *wsExec) Run(roots []int32) error {
	// Workloads pass the same immutable roots slice on every run: build the
	// packet slice once, and again only if the caller's slice changes.
	if !sameSlice(e.rootIDs, roots) {
		e.rootIDs = roots
		e.roots = e.roots[:0]
		for _, r := range roots {
			e.roots = append(e.roots, e.ptrs[r])
		}
	}
	add := e.s.AddSlice
	if e.copyAdd {
		add = e.s.BulkAdd
	}
	if err := add(e.stage, e.roots); err != nil {
		return err
	}
	return e.s.Run(context.Background())
}

func sameSlice(a, b []int32) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

func (e *wsExec) Close() error { return e.s.Close() }

// Scheduler exposes the underlying scheduler (stats in reports).
func (e *wsExec) Scheduler() *scheduler.Scheduler { return e.s }
