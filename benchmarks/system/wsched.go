package system

import (
	"context"
	"fmt"

	"github.com/wsched/wsched/scheduler"
)

// Config turns the policy into a scheduler configuration for the given
// number of workers and stages (Stages[i] is StageID i+1; none: one
// stage).
func (p Policy) Config(workers int, stages ...string) (scheduler.Config, error) {
	cfg := scheduler.Config{
		Workers:     workers,
		Stages:      stages,
		Wake:        p.Wake,
		Steal:       p.Steal,
		StealLimit:  p.StealLimit,
		BucketBatch: p.Batch,
		ParkSpin:    p.ParkSpin,
		Local:       p.Local,
		Take:        p.Take,
	}
	if p.Spins >= 0 {
		cfg.Spins = p.Spins
	}
	return cfg, nil
}

func init() {
	register(&Kind{Name: WSched, Nested: true,
		Doc: "wsched scheduler (default policy): roots lent to one stage (AddAll with Lend), then Run; spawns by scheduler.Spawn",
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

func (p *wsPacket) Run(w *scheduler.Worker) error {
	p.e.body(p.e.spawners[w.ID()], p.i)
	return nil
}

// wsSpawner is worker w's Spawner: Spawn queues on w's own queue
// (scheduler.Spawn of the prebuilt packet's pointer). One per worker,
// built once, so handing it to a task allocates nothing.
type wsSpawner struct {
	e *wsExec
	w *scheduler.Worker
}

func (s *wsSpawner) Spawn(i int32) { scheduler.Spawn(s.w, &s.e.pkts[i]) }

// lendMin is the shortest list of children SpawnAll lends to the stage's
// bucket (AddAll with Lend) instead of spawning one by one: 256, what the
// worker's private stack holds before it spills half to the deque
// anyway. Shorter lists go to the private stack, where the worker's own
// next packets come from without an atomic, depth first. (At 64, the
// irregular tree, whose nodes have up to 64 children, lent its widest
// lists, and on one worker ran 2.5% and 13.6% slower than spawning them,
// proven in two runs.)
const lendMin = 256

// SpawnAll spawns the children ids. A long list of adjacent ids (a task
// tree's siblings are numbered in a row) is lent whole: AddAll with Lend
// of the executor's prebuilt packet pointers, so that the spawning packet
// writes nothing per child and idle workers claim runs of it from the
// bucket; policy add=copy spawns one by one instead.
func (s *wsSpawner) SpawnAll(ids []int32) {
	e := s.e
	if n := len(ids); n >= lendMin && !e.copyAdd && int(ids[n-1]-ids[0]) == n-1 {
		if err := e.s.AddAll(e.ptrs[ids[0]:int(ids[0])+n], e.lend...); err != nil {
			panic(err) // the stage exists and the scheduler is open while it runs
		}
		return
	}
	for _, i := range ids {
		scheduler.Spawn(s.w, &e.pkts[i])
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
	inline   bool    // spawners use scheduler.SpawnOrRun
	copyAdd  bool    // roots copied by AddAll, not lent
	// lend and rootOpts are the options of SpawnAll's lent lists and of
	// the roots' AddAll, built once.
	lend, rootOpts []scheduler.Option
}

// NewWSched builds a wsched executor with policy p: one stage, roots queued
// with AddAll before Run (lent, or copied under add=copy), spawns queued on
// the running worker.
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
	const run scheduler.StageID = 1 // Stages[0], "run"
	e := &wsExec{s: s, stage: run, body: body, pkts: make([]wsPacket, n), inline: p.Inline, copyAdd: p.CopyAdd}
	e.lend = []scheduler.Option{run, scheduler.Lend}
	e.rootOpts = e.lend
	if p.CopyAdd {
		e.rootOpts = e.lend[:1]
	}
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

func (l learnWorker) Run(w *scheduler.Worker) error {
	if l.e.inline {
		l.e.spawners[w.ID()] = &wsInlineSpawner{e: l.e, w: w}
		return nil
	}
	l.e.spawners[w.ID()] = &wsSpawner{e: l.e, w: w}
	return nil
}

// wsInlineSpawner is wsSpawner with scheduler.SpawnOrRun (policy
// spawn=inline).
type wsInlineSpawner struct {
	e *wsExec
	w *scheduler.Worker
}

func (s *wsInlineSpawner) Spawn(i int32) { scheduler.SpawnOrRun(s.w, &s.e.pkts[i]) }

func (s *wsInlineSpawner) SpawnAll(ids []int32) {
	for _, i := range ids {
		scheduler.SpawnOrRun(s.w, &s.e.pkts[i])
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
	if err := e.s.AddAll(e.roots, e.rootOpts...); err != nil {
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
