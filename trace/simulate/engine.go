package simulate

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
)

// Options configure Run.
type Options struct {
	// Costs are the scheduler's costs; the zero Costs means MeasuredCosts.
	Costs *Costs
	// Untraced predicts a run without tracing: Costs.Trace is not charged.
	// (The recorded run was traced, and its packets' times hold half of
	// the hooks' cost.)
	Untraced bool
	// Record keeps the simulated run's events: Result.Snapshot returns
	// them, for a Perfetto trace of the replay.
	Record bool
}

// Run replays every cycle of wl on cfg.Workers virtual workers under cfg
// and returns the predicted figures. It is deterministic: the same
// workload, configuration and costs give the same result. Time is
// O(e (log w + log s)) for e simulated events on w workers and s stages
// (a packet's start, its spawns and adds, its end; a wake-up; a search's
// rounds that find or give up), memory O(packets + w + s) (O(e) with
// Record).
func Run(wl *Workload, cfg Config, opts Options) (*Result, error) {
	if cfg.Workers == 0 {
		cfg.Workers = wl.Workers
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	costs := MeasuredCosts
	if opts.Costs != nil {
		costs = *opts.Costs
	}
	if opts.Untraced {
		costs.Trace = 0
	}
	s := newSim(wl, cfg, costs, opts.Record)
	res := &Result{Config: cfg, Workers: cfg.Workers}
	var t int64
	for ci := range wl.Cycles {
		cy := &wl.Cycles[ci]
		if cy.Gap > 0 {
			t += cy.Gap
		}
		cr, err := s.cycle(cy, t)
		if err != nil {
			return nil, fmt.Errorf("cycle %d: %w", cy.Number, err)
		}
		t = s.now
		res.Cycles = append(res.Cycles, cr)
		if cfg.LearnHeavy {
			s.learnHeavy(cy)
		}
	}
	res.Events, res.steps = s.events, s.steps
	res.summarize()
	if opts.Record {
		res.snap = s.rec.Snapshot()
	}
	return res, nil
}

// Worker states.
const (
	stParked  uint8 = iota // registered as parked, waiting for its token
	stWaking               // woken: counted as searching, resumes at an evResume
	stRunning              // running a packet
	stSearch               // searching: rounds until it finds or gives up
)

// Event kinds.
const (
	evAct     uint8 = iota // the running packet's next spawn or add, or its end
	evResume               // a woken worker starts searching
	evRound                // a searcher's round boundary: look, or give up
	evOutside              // an add from outside the workers (ref: the add)
	evFind                 // a worker looks for work (after a park)
	evPark                 // a searcher that gave up parks (after Costs.Park)
)

type event struct {
	t     int64
	seq   uint64
	kind  uint8
	w     int32
	epoch uint32
	ref   int32
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// queue is a FIFO of packets.
type queue struct {
	q []int32
	h int
}

func (f *queue) len() int { return len(f.q) - f.h }
func (f *queue) push(p int32) {
	if f.h > 0 && f.h == len(f.q) {
		f.q, f.h = f.q[:0], 0
	}
	f.q = append(f.q, p)
}
func (f *queue) pop() int32 {
	p := f.q[f.h]
	f.h++
	if f.h > 64 && f.h*2 > len(f.q) { // keep memory to what is queued
		f.q = append(f.q[:0], f.q[f.h:]...)
		f.h = 0
	}
	return p
}
func (f *queue) popBack() int32 {
	p := f.q[len(f.q)-1]
	f.q = f.q[:len(f.q)-1]
	return p
}
func (f *queue) reset() { f.q, f.h = f.q[:0], 0 }

// worker is one virtual worker.
type worker struct {
	id       int32
	state    uint8
	epoch    uint32
	cur      int32 // the running packet
	act      int32 // its next act
	begin    int64 // its begin
	evAt     int64 // when its pending event fires
	parkedAt int64
	// Its queues, as the scheduler's Worker has them.
	designated queue
	priv       []int32 // LocalPrivate's stack, newest last
	held       queue
	dq         queue // the deque: thieves take the oldest (front)
	searching  bool  // counted in nSearching
	searchT0   int64 // when its search rounds began
	rng        uint64
	idleIdx    int32
	// the searchers' list (searching and not yet found), by id
	sPrev, sNext int32
	inList       bool
	flow         uint64 // the flow of its next packet (a steal), recording
	flowSeq      uint64
	busy         int64  // packet time, for utilisation
	desigCycle   uint64 // the cycle it was listed in sim.desig
}

// pktState is what the replay knows of a packet.
type pktState struct {
	queuedAt int64
	queuedBy int32 // a worker (spawn), trace.FromAdd or trace.FromNone
	prio     bool
	begin    int64
	end      int64
	ran      bool
}

// bucketQ is a stage's bucket.
type bucketQ struct{ prio, normal queue }

func (b *bucketQ) len() int { return b.prio.len() + b.normal.len() }

type sim struct {
	wl     *Workload
	cfg    Config
	costs  Costs
	n      int
	prioOf map[int32]bool // packet names queued with priority (cfg.Priority)
	// heavy is the learned heavy set (cfg.LearnHeavy), keyed by packet
	// name, decided at each cycle's end from its packets' costs.
	heavy []policy.Heavy[int32]
	learn learnScratch

	h      eventHeap
	seq    uint64
	now    int64
	events int64
	steps  int64 // Result.steps

	ws         []worker
	idle       []int32 // parked workers, most recently parked last
	parked     int
	nSearching int
	sHead      int32 // the searchers' list
	sTail      int32
	allIdle    bool
	nonEmpty   fenwick // workers whose deque holds packets

	// the cycle
	cy      *Cycle
	active  bool
	cur     int // highest open stage
	buckets []bucketQ
	// queuedIn counts the packets in each stage's bucket: the lowest
	// stage with packets, and the packets in the open stages, in
	// O(log stages) rather than a pass over every open stage.
	queuedIn counts
	sentNext []int // per stage: next sentinel of cy.sentinels
	// sentLo is the lowest stage whose sentinels may not all be queued:
	// sentNext only grows, so the stages below it have none left.
	sentLo    int
	pk        []pktState
	open      []int64
	closed    []int64
	cycleEnd  int64
	remaining int // packets not yet run
	// pendingOutside counts outside adds still to come: the cycle does
	// not end before them (the recording's did not).
	pendingOutside int
	nList          int     // searchers in the list
	desig          []int32 // workers that were given designated packets this cycle
	cycleNo        uint64  // cycles begun

	rec    *tracebuf.Builder
	names  []tracebuf.NameID
	stages []tracebuf.NameID
}

func newSim(wl *Workload, cfg Config, costs Costs, record bool) *sim {
	s := &sim{wl: wl, cfg: cfg, costs: costs, n: cfg.Workers, sHead: -1, sTail: -1}
	s.prioOf = map[int32]bool{}
	for _, name := range cfg.Priority {
		for i, n := range wl.Names {
			if n == name {
				s.prioOf[int32(i)] = true
			}
		}
	}
	s.ws = make([]worker, s.n)
	s.nonEmpty = newFenwick(s.n)
	s.steps += int64(s.n)
	for i := range s.ws {
		w := &s.ws[i]
		w.id, w.cur, w.idleIdx = int32(i), -1, -1
		w.rng = (uint64(i)*0x9E3779B97F4A7C15 + 1) ^ cfg.Seed
		if w.rng == 0 {
			w.rng = 1
		}
		w.parkedAt = math.MinInt64 / 2
		s.pushIdle(w)
	}
	if record {
		s.rec = tracebuf.NewBuilder(s.n)
		s.rec.SetConfig(policy.Settings{Wake: cfg.Wake, Steal: cfg.Steal, Take: cfg.Take, Local: cfg.Local,
			StealLimit: cfg.StealLimit, BucketBatch: cfg.BucketBatch, Spins: cfg.Spins, ParkSpin: cfg.ParkSpin,
			LearnHeavy: cfg.LearnHeavy}.String())
		for _, name := range wl.Names {
			s.names = append(s.names, s.rec.Intern(name))
		}
		for _, name := range wl.Stages {
			s.stages = append(s.stages, s.rec.Intern(name))
		}
		for i := range s.ws {
			s.rec.Park(i, 0)
		}
	}
	return s
}

// schedule queues an event for worker w (replacing its pending one) or,
// with w < 0, an outside add.
func (s *sim) schedule(t int64, kind uint8, w *worker, ref int32) {
	e := event{t: max(t, s.now), seq: s.seq, kind: kind, w: -1, ref: ref}
	s.seq++
	if w != nil {
		w.epoch++
		w.evAt = e.t
		e.w, e.epoch = w.id, w.epoch
	}
	heap.Push(&s.h, e)
}

// cycle replays one cycle from time t0.
func (s *sim) cycle(cy *Cycle, t0 int64) (CycleResult, error) {
	s.cy, s.now = cy, t0
	s.steps += int64(cy.Stages + 1)
	s.buckets = make([]bucketQ, cy.Stages+1)
	s.queuedIn.reset(cy.Stages + 1)
	s.sentNext = make([]int, cy.Stages+1)
	s.sentLo = 1
	s.pk = make([]pktState, len(cy.Packets))
	s.open = make([]int64, cy.Stages+1)
	s.closed = make([]int64, cy.Stages+1)
	for i := range s.open {
		s.open[i], s.closed[i] = -1, -1
	}
	s.remaining = len(cy.Packets)
	s.desig = s.desig[:0]
	if s.cycleNo == 0 && cy.Gap >= 0 {
		// Replayed alone (Workload.Only): the workers parked when the
		// recording's previous cycle ended.
		for i := range s.ws {
			s.ws[i].parkedAt = t0 - cy.Gap
		}
	}
	s.cycleNo++
	// Every queue is empty: the previous cycle ran all its packets.
	// Run: adds made before it are queued (nobody is woken: no cycle).
	for _, a := range cy.pre {
		s.add(a, -1, true)
	}
	for _, a := range cy.outside {
		s.schedule(t0+cy.Adds[a].Offset, evOutside, nil, a)
		s.pendingOutside++
	}
	if s.rec != nil {
		s.rec.CycleBegin(t0, cy.Number)
	}
	// beginCycle: the cycle is active, stage 1 opens; advance(nil).
	s.active = true
	s.cur = 0
	s.open[0] = t0
	if cy.Stages >= 1 {
		s.openStage(1)
	}
	s.advance(nil)
	for s.active {
		if s.h.Len() == 0 {
			return CycleResult{}, fmt.Errorf("stalled with %d packets not run (the replay lost a wake-up)", s.remaining)
		}
		e := heap.Pop(&s.h).(event)
		s.steps++
		if e.w >= 0 && s.ws[e.w].epoch != e.epoch {
			continue // replaced
		}
		s.now = e.t
		s.events++
		switch e.kind {
		case evOutside:
			s.pendingOutside--
			s.add(e.ref, -1, true)
		case evAct:
			s.act(&s.ws[e.w])
		case evResume:
			s.resume(&s.ws[e.w], e.ref != 0)
		case evRound:
			s.round(&s.ws[e.w])
		case evFind:
			s.find(&s.ws[e.w])
		case evPark:
			s.park(&s.ws[e.w])
		}
	}
	if s.remaining > 0 {
		return CycleResult{}, fmt.Errorf("the cycle ended with %d packets not run", s.remaining)
	}
	// Drop what is left (events of workers that parked at the end).
	s.h = s.h[:0]
	return s.cycleResult(), nil
}

// --- queues and counters (scheduler/wake.go, worker.go) ---

func (s *sim) nIdle() int { return s.parked + s.nSearching }

func (s *sim) pushIdle(w *worker) {
	w.state = stParked
	w.idleIdx = int32(len(s.idle))
	s.idle = append(s.idle, w.id)
	s.parked++
}

func (s *sim) removeIdle(w *worker) {
	last := len(s.idle) - 1
	moved := s.idle[last]
	s.idle[w.idleIdx] = moved
	s.ws[moved].idleIdx = w.idleIdx
	s.idle = s.idle[:last]
	w.idleIdx = -1
	s.parked--
}

// idleChanged re-checks whether every worker is idle: then searchers park
// at their next round (policy.GiveUp).
func (s *sim) idleChanged() {
	all := s.nIdle() >= s.n
	if all && !s.allIdle {
		for id := s.sHead; id >= 0; id = s.ws[id].sNext {
			s.steps++
			w := &s.ws[id]
			if b := s.nextBoundary(w); b < w.evAt {
				s.schedule(b, evRound, w, 0)
			}
		}
	}
	s.allIdle = all
}

func (s *sim) listAdd(w *worker) {
	if w.inList {
		return
	}
	s.nList++
	w.inList, w.sNext, w.sPrev = true, -1, s.sTail
	if s.sTail >= 0 {
		s.ws[s.sTail].sNext = w.id
	} else {
		s.sHead = w.id
	}
	s.sTail = w.id
}

func (s *sim) listRemove(w *worker) {
	if !w.inList {
		return
	}
	s.nList--
	if w.sPrev >= 0 {
		s.ws[w.sPrev].sNext = w.sNext
	} else {
		s.sHead = w.sNext
	}
	if w.sNext >= 0 {
		s.ws[w.sNext].sPrev = w.sPrev
	} else {
		s.sTail = w.sPrev
	}
	w.inList = false
}

// publish tells up to k searchers that work became visible: each looks at
// its next round boundary, and goes to the back of the list.
func (s *sim) publish(k int) {
	for k = min(k, s.nList); k > 0; k-- {
		s.steps++
		w := &s.ws[s.sHead]
		s.listRemove(w)
		s.listAdd(w)
		if b := s.nextBoundary(w); b < w.evAt {
			s.schedule(b, evRound, w, 0)
		}
	}
}

// nextBoundary is w's next round boundary after now.
func (s *sim) nextBoundary(w *worker) int64 {
	r := max(s.costs.Round, 1)
	j := (s.now-w.searchT0)/r + 1
	return w.searchT0 + j*r
}

func (s *sim) dequeChanged(w *worker) {
	s.nonEmpty.set(int(w.id), w.dq.len() > 0)
}

// --- wake-ups (scheduler/wake.go W2, W3) ---

func (s *sim) wakeWorker(v *worker, by int32) {
	s.removeIdle(v)
	s.nSearching++
	v.state = stWaking
	lat := s.costs.WakeBlocked
	polled := policy.Polling(s.now-v.parkedAt, int64(s.cfg.ParkSpin))
	if polled {
		lat = s.costs.WakePolled
	}
	if s.rec != nil {
		s.rec.WakeSent(int(by), s.now, int(v.id))
	}
	s.schedule(s.now+lat, evResume, v, b2i(!polled))
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func (s *sim) wakeIdle(n int, by int32) int {
	woke := 0
	for ; woke < n && len(s.idle) > 0; woke++ {
		s.steps++
		s.wakeWorker(&s.ws[s.idle[len(s.idle)-1]], by)
	}
	return woke
}

func (s *sim) wakeForAdd(k int, wake policy.Kind, by int32) {
	if wake == policy.WakeSearcher && s.nSearching != 0 {
		return
	}
	if s.parked == 0 || !s.active {
		return
	}
	s.wakeIdle(policy.AddWakes(wake, k, s.parked, s.nSearching), by)
}

func (s *sim) wakeOneIdle(by int32) {
	if s.active && s.nSearching == 0 {
		s.wakeIdle(1, by)
	}
}

func (s *sim) surplus(w *worker) {
	if policy.Surplus(s.parked, s.nSearching) {
		s.wakeOneIdle(w.id)
	}
}

func (s *sim) foundWork(w *worker) {
	s.listRemove(w)
	if !w.searching {
		return
	}
	w.searching = false
	s.nSearching--
	if s.nSearching == 0 && s.cfg.Wake == policy.WakeSearcher && s.parked != 0 {
		s.wakeOneIdle(w.id)
	}
	s.idleChanged()
}

// resume: a woken worker's token arrived (scheduler's resumed, then find).
func (s *sim) resume(w *worker, blocked bool) {
	if s.rec != nil {
		s.rec.Unpark(int(w.id), s.now)
		s.rec.WakeReceived(int(w.id), s.now, blocked)
	}
	w.searching = true // counted since its wake-up
	w.state = stSearch
	s.find(w)
}

// --- adds (scheduler.go Add, AddAll, AddDesignated) ---

// add queues add a's packets, made by the packet on worker by (-1: from
// outside, or the last-parked decision queuing a sentinel); wake: apply
// the add's wake-up rule (not for a sentinel, which advance wakes for).
func (s *sim) add(ai int32, by int32, wake bool) {
	a := &s.cy.Adds[ai]
	if len(a.Packets) == 0 {
		return
	}
	if a.How == trace.AddDesignated {
		target := &s.ws[int(a.Stage)%s.n]
		if target.desigCycle != s.cycleNo {
			target.desigCycle = s.cycleNo
			s.desig = append(s.desig, target.id) // one entry per worker and cycle
		}
		for _, p := range a.Packets {
			s.queued(p, trace.FromNone, false)
			target.designated.push(p)
		}
		if s.rec != nil {
			s.rec.Add(s.now, trace.AddDesignated, true, int(target.id), len(a.Packets), 0, s.now)
		}
		if s.active && target.state == stParked {
			s.wakeWorker(target, by)
		}
		return
	}
	st := int(a.Stage)
	if st >= len(s.buckets) {
		return
	}
	b := &s.buckets[st]
	open := st <= s.cur && s.active
	// Packets named in cfg.Priority leave the call: each is an Add with
	// Priority of its own, queued first.
	rest := 0
	for _, p := range a.Packets {
		if !s.toPrio(a, p) {
			rest++
			continue
		}
		s.queued(p, trace.FromAdd, true)
		b.prio.push(p)
		s.queuedIn.add(st, 1)
		if s.rec != nil {
			s.rec.Add(s.now, trace.AddPriority, true, st, 1, 0, s.now)
		}
		if open && wake {
			s.publish(1)
			s.wakeForAdd(1, policy.SingleWake(s.cfg.Wake), by)
		}
	}
	if rest == 0 {
		return
	}
	prio := a.How == trace.AddPriority
	for _, p := range a.Packets {
		if s.toPrio(a, p) {
			continue
		}
		s.queued(p, trace.FromAdd, prio)
		if prio {
			b.prio.push(p)
		} else {
			b.normal.push(p)
		}
	}
	s.queuedIn.add(st, int32(rest))
	if s.rec != nil {
		s.rec.Add(s.now, a.How, a.Single, st, rest, uint8(a.Wake), s.now)
	}
	if !open || !wake {
		return // a closed stage: its packets wait, nobody is woken
	}
	s.publish(rest)
	k := s.cfg.Wake
	switch {
	case a.Wake != policy.Default && s.cfg.WakeCalls != policy.Default:
		k = s.cfg.WakeCalls
	case a.Wake != policy.Default:
		k = a.Wake
	case a.Single:
		k = policy.SingleWake(k)
	}
	s.wakeForAdd(rest, k, by)
}

// toPrio reports whether packet p of add a leaves the call for an add of
// its own to the priority lane: it is named in cfg.Priority, or (an Add
// or AddAll, as the scheduler's LearnHeavy looks at) learned heavy in its
// stage.
func (s *sim) toPrio(a *Add, p int32) bool {
	if a.How == trace.AddPriority {
		return false
	}
	name := s.cy.Packets[p].Name
	if s.prioOf[name] {
		return true
	}
	if a.How != trace.AddNormal {
		return false
	}
	for _, h := range s.heavy {
		if h.Key == name && h.Stage == int(a.Stage) {
			return true
		}
	}
	return false
}

// learnScratch is learnHeavy's buffers, kept from cycle to cycle.
type learnScratch struct {
	index map[[2]int32]int // (name, stage) to tt
	keys  [][2]int32
	tt    []policy.TypeTime
	pick  []int
}

// learnHeavy decides the heavy set from cycle cy's packets as the
// scheduler's learnHeavy does from its timings: a packet's run is its
// recorded cost, a type is a packet name in a stage.
func (s *sim) learnHeavy(cy *Cycle) {
	l := &s.learn
	if l.index == nil {
		l.index = map[[2]int32]int{}
	}
	clear(l.index)
	work := make([]time.Duration, cy.Stages+1) // a stage's packets' costs
	l.keys, l.tt = l.keys[:0], l.tt[:0]
	for i := range cy.Packets {
		pk := &cy.Packets[i]
		if int(pk.Stage) > cy.Stages {
			continue
		}
		d := time.Duration(pk.Cost)
		work[pk.Stage] += d
		k := [2]int32{pk.Name, pk.Stage}
		j, ok := l.index[k]
		if !ok {
			j = len(l.tt)
			l.index[k] = j
			l.keys = append(l.keys, k)
			l.tt = append(l.tt, policy.TypeTime{Stage: int(pk.Stage)})
		}
		l.tt[j].N++
		l.tt[j].Total += d
	}
	l.pick = policy.PickHeavy(l.tt, work, s.n, l.pick[:0])
	next := make([]policy.Heavy[int32], 0, policy.MaxHeavyTypes)
	for _, j := range l.pick {
		next = append(next, policy.Heavy[int32]{Key: l.keys[j][0], Stage: int(l.keys[j][1])})
	}
	s.heavy = policy.CarryHeavy(next, s.heavy)
}

// queued records when and by whom packet p was queued.
func (s *sim) queued(p int32, by int32, prio bool) {
	ps := &s.pk[p]
	ps.queuedAt, ps.queuedBy, ps.prio = s.now, by, prio
}

// --- spawns (worker.go push, offerAll) ---

// spawn queues child p on w, as Spawn does.
func (s *sim) spawn(w *worker, p int32) {
	s.queued(p, w.id, false)
	if s.cfg.Local == policy.LocalPrivate {
		n := len(w.priv)
		if n == privCap {
			s.movePriv(w, privCap/2)
			s.surplus(w)
			n = len(w.priv)
		}
		w.priv = append(w.priv, p)
		if (n != 0 || w.held.len() != 0) && s.nIdle() != 0 {
			s.offerAll(w)
		}
		return
	}
	w.dq.push(p)
	s.dequeChanged(w)
	s.publish(1)
	s.surplus(w)
}

// privCap is the scheduler's private stack size.
const privCap = policy.PrivCap

// movePriv moves w's k oldest private packets to its deque.
func (s *sim) movePriv(w *worker, k int) {
	s.steps += int64(k)
	for _, p := range w.priv[:k] {
		w.dq.push(p)
	}
	w.priv = append(w.priv[:0], w.priv[k:]...)
	s.dequeChanged(w)
	s.publish(k)
}

func (s *sim) exposeHeld(w *worker) {
	k := w.held.len()
	s.steps += int64(k)
	for w.held.len() > 0 {
		w.dq.push(w.held.pop())
	}
	w.held.reset()
	s.dequeChanged(w)
	s.publish(k)
}

func (s *sim) offerAll(w *worker) {
	movePriv, exposeHeld := policy.Offer(len(w.priv), w.held.len() != 0, s.nIdle(), w.dq.len())
	if movePriv {
		s.movePriv(w, len(w.priv)-1)
	}
	if exposeHeld {
		s.exposeHeld(w)
	}
	if movePriv || exposeHeld {
		s.surplus(w)
	}
}

// --- running packets ---

// start runs packet p on w from now: the scheduler's gap (costs) first.
func (s *sim) start(w *worker, p int32, gap int64) {
	w.state, w.cur = stRunning, p
	w.begin = s.now + gap + s.costs.Trace
	w.act = s.cy.actLo[p]
	ps := &s.pk[p]
	ps.begin, ps.ran = w.begin, true
	if s.rec != nil {
		pk := &s.cy.Packets[p]
		by := ps.queuedBy
		if by >= int32(s.n) {
			by = trace.FromAdd
		}
		s.rec.PacketBegin(int(w.id), w.begin, s.names[pk.Name], int(pk.Stage), w.flow, int(by), ps.queuedAt, ps.prio)
		w.flow = 0
	}
	s.nextAct(w)
}

// nextAct schedules w's next spawn or add, or its packet's end.
func (s *sim) nextAct(w *worker) {
	pk := &s.cy.Packets[w.cur]
	t := w.begin + pk.Cost
	if w.act < s.cy.actLo[w.cur+1] {
		t = w.begin + int64(s.cy.acts[w.act].at*float64(pk.Cost))
	}
	s.schedule(t, evAct, w, 0)
}

// act performs w's next spawn or add, or ends its packet.
func (s *sim) act(w *worker) {
	if w.act < s.cy.actLo[w.cur+1] {
		a := s.cy.acts[w.act]
		w.act++
		if a.add {
			s.add(a.ref, w.id, true)
		} else {
			s.spawn(w, a.ref)
		}
		s.nextAct(w)
		return
	}
	p := w.cur
	ps := &s.pk[p]
	ps.end = s.now
	w.busy += s.now - w.begin
	s.remaining--
	if s.rec != nil {
		s.rec.PacketEnd(int(w.id), s.now)
	}
	w.cur = -1
	s.burst(w)
}

// burst is runBurst after a packet: the next from w's own queues, in
// policy.FindOrder, else find.
func (s *sim) burst(w *worker) {
	for _, src := range policy.FindOrder {
		switch src {
		case policy.SourceDesignated:
			if w.designated.len() > 0 {
				s.start(w, w.designated.pop(), s.costs.Local)
				return
			}
		case policy.SourcePrivate:
			if n := len(w.priv); n != 0 {
				if (n > 1 || w.held.len() != 0) && s.nIdle() != 0 {
					s.offerAll(w)
				}
				s.start(w, s.popPriv(w), s.costs.Local)
				return
			}
		case policy.SourceHeld:
			if w.held.len() != 0 {
				if s.nIdle() == 0 || !s.offerHeld(w) {
					s.start(w, w.held.pop(), s.costs.Local)
					return
				}
			}
		case policy.SourceDeque:
			if p, ok := s.popDeque(w); ok {
				s.start(w, p, s.costs.Local)
				return
			}
		default: // the buckets and steals: find
			w.state = stSearch
			s.find(w)
			return
		}
	}
}

func (s *sim) popPriv(w *worker) int32 {
	p := w.priv[len(w.priv)-1]
	w.priv = w.priv[:len(w.priv)-1]
	return p
}

// offerHeld is nextHeld's offer: move the held batch to the deque if
// idle workers want work.
func (s *sim) offerHeld(w *worker) bool {
	if !policy.WantsWork(s.nIdle(), w.dq.len()) {
		return false
	}
	s.exposeHeld(w)
	s.surplus(w)
	return true
}

// popDeque is the owner's Pop: the newest under LocalLIFO, else the oldest.
func (s *sim) popDeque(w *worker) (int32, bool) {
	if w.dq.len() == 0 {
		return 0, false
	}
	var p int32
	if s.cfg.Local == policy.LocalLIFO {
		p = w.dq.popBack()
	} else {
		p = w.dq.pop()
	}
	s.dequeChanged(w)
	return p, true
}

// --- finding work (find.go) ---

// findLocal is find's step 1 and 2.
func (s *sim) findLocal(w *worker) (int32, bool) {
	if w.designated.len() > 0 {
		return w.designated.pop(), true
	}
	if len(w.priv) != 0 {
		s.offerAll(w)
		return s.popPriv(w), true
	}
	if w.held.len() != 0 {
		if !s.offerHeld(w) {
			return w.held.pop(), true
		}
	}
	return s.popDeque(w)
}

// findBuckets is find's step 3: it starts the packet it takes.
func (s *sim) findBuckets(w *worker) bool {
	s.steps++
	// The lowest open stage with packets: the first a pass from stage 0
	// up to the highest open one would take from.
	if st := s.queuedIn.first(); st >= 0 && st <= s.cur {
		b := &s.buckets[st]
		if b.prio.len() > 0 {
			p := b.prio.pop()
			s.queuedIn.add(st, -1)
			s.foundWork(w)
			s.start(w, p, s.costs.Take+s.costs.TakePer)
			return true
		}
		limit := policy.TakeLimit(s.cfg.Take, s.cfg.BucketBatch, b.len(), s.n)
		got := min(limit, b.normal.len())
		p := b.normal.pop()
		s.steps += int64(got)
		for range got - 1 {
			w.held.push(b.normal.pop())
		}
		s.queuedIn.add(st, -int32(got))
		if !policy.HoldTake(got, s.cfg.BucketBatch) {
			s.exposeHeld(w)
		}
		s.foundWork(w)
		if got > 1 {
			s.surplus(w)
		}
		s.start(w, p, s.costs.Take+s.costs.TakePer*int64(got))
		return true
	}
	return false
}

// steal is find's step 4: one pass over the other workers from a random
// one; the first with packets in its deque is robbed.
func (s *sim) steal(w *worker) bool {
	if s.n == 1 {
		return false
	}
	start := w.rand(s.n)
	v := s.nonEmpty.next(start, int(w.id))
	if v < 0 {
		return false
	}
	vw := &s.ws[v]
	limit := policy.StealLimit(s.cfg.Steal, s.cfg.StealLimit)
	got := min(policy.StealCount(vw.dq.len(), limit), vw.dq.len())
	p := vw.dq.pop()
	s.steps += int64(got)
	for range got - 1 {
		w.held.push(vw.dq.pop())
	}
	s.dequeChanged(vw)
	if got > 1 && !policy.HoldSteal(got) {
		s.exposeHeld(w)
	}
	if s.rec != nil {
		w.flowSeq++
		w.flow = uint64(w.id+1)<<40 | w.flowSeq
		ps := &s.pk[p]
		by := ps.queuedBy
		if by == trace.FromNone {
			by = trace.FromAdd
		}
		s.rec.Steal(int(w.id), s.now, v, got, w.flow, ps.queuedAt, int(by))
	}
	s.foundWork(w)
	if got > 1 || vw.dq.len() > 0 {
		s.surplus(w)
	}
	s.start(w, p, s.costs.Steal+s.costs.StealPer*int64(got))
	return true
}

// rand is the scheduler's xorshift64* (worker.go).
func (w *worker) rand(n int) int {
	x := w.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	w.rng = x
	return int((x * 0x2545F4914F6CDD1D >> 33) % uint64(n))
}

// find is find.go's find: its queues, the buckets, then search rounds.
func (s *sim) find(w *worker) {
	if p, ok := s.findLocal(w); ok {
		s.foundWork(w)
		s.start(w, p, s.costs.Local)
		return
	}
	if s.findBuckets(w) {
		return
	}
	if !w.searching {
		w.searching = true
		s.nSearching++
	}
	w.state, w.searchT0 = stSearch, s.now
	s.listAdd(w)
	s.idleChanged()
	if s.steal(w) {
		return
	}
	s.waitRound(w)
}

// waitRound schedules w's next round event: when it gives up (after
// Spins+1 rounds, or at its next boundary when nobody runs a packet).
func (s *sim) waitRound(w *worker) {
	r := max(s.costs.Round, 1)
	giveUp := w.searchT0 + int64(s.cfg.Spins+1)*r
	if s.nIdle() >= s.n {
		giveUp = min(giveUp, s.nextBoundary(w))
	}
	s.schedule(giveUp, evRound, w, 0)
}

// round is a round boundary of searcher w: the end of round j-1 (its
// queues, the buckets, the give-up rule), then round j's steal.
func (s *sim) round(w *worker) {
	r := max(s.costs.Round, 1)
	if p, ok := s.findLocal(w); ok {
		s.foundWork(w)
		s.start(w, p, s.costs.Local)
		return
	}
	if s.findBuckets(w) {
		return
	}
	spins := int((s.now - w.searchT0) / r)
	if policy.GiveUp(spins, s.cfg.Spins, s.nIdle(), s.n) {
		s.listRemove(w)
		s.schedule(s.now+s.costs.Park, evPark, w, 0)
		return
	}
	if s.steal(w) {
		return
	}
	s.waitRound(w)
}

// --- parking and the last-parked decision (wake.go, stage.go) ---

// park is P1-P6.
func (s *sim) park(w *worker) {
	s.listRemove(w)
	if w.searching {
		w.searching = false
		s.nSearching--
	}
	if s.rec != nil {
		s.rec.Park(int(w.id), s.now)
	}
	w.parkedAt = s.now
	s.pushIdle(w)
	w.epoch++ // no pending event
	if s.parked == s.n && s.active && s.advance(w) {
		s.resumeSelf(w)
		return
	}
	if s.active && s.workVisible(w) {
		if w.state != stParked { // a waker chose it: its token is there
			return
		}
		s.removeIdle(w)
		s.nSearching++
		s.resumeSelf(w)
		return
	}
	s.idleChanged()
}

// resumeSelf: w, unregistered and counted as searching, searches again.
func (s *sim) resumeSelf(w *worker) {
	if s.rec != nil {
		s.rec.Unpark(int(w.id), s.now)
	}
	w.searching, w.state = true, stSearch
	s.schedule(s.now, evFind, w, 0)
}

// workVisible is P4: work in w's designated queue, an open bucket, or
// another worker's deque.
func (s *sim) workVisible(w *worker) bool {
	s.steps++
	if w.designated.len() > 0 {
		return true
	}
	if st := s.queuedIn.first(); st >= 0 && st <= s.cur {
		return true
	}
	own := 0
	if w.dq.len() > 0 {
		own = 1
	}
	return s.nonEmpty.total() > own
}

// advance is the last-parked decision (stage.go), with every worker
// parked; self is the worker whose park made it (nil at the cycle's
// start). It reports whether self resumed.
func (s *sim) advance(self *worker) bool {
	by := int32(-1)
	if self != nil {
		by = self.id
	}
	for {
		s.steps++
		k := s.queuedIn.prefix(s.cur + 1)
		selfDesignated, others := false, 0
		for _, id := range s.desig {
			s.steps++
			v := &s.ws[id]
			if v.designated.len() == 0 {
				continue
			}
			if v == self {
				selfDesignated = true
			} else if v.state == stParked {
				s.wakeWorker(v, by)
				others++
			}
		}
		if k == 0 && !selfDesignated && others == 0 {
			for s.sentLo < min(len(s.sentNext), len(s.cy.sentinels)) && s.sentNext[s.sentLo] >= len(s.cy.sentinels[s.sentLo]) {
				s.sentLo++
				s.steps++
			}
			if st := s.sentLo; st <= s.cur && st < len(s.cy.sentinels) {
				j := s.sentNext[st]
				s.sentNext[st]++
				s.add(s.cy.sentinels[st][j], by, false) // into its own bucket
				k = s.buckets[st].len()
			}
		}
		if k > 0 || selfDesignated || others > 0 {
			resumed := false
			if self != nil && (k > 0 || selfDesignated) {
				s.removeIdle(self)
				s.nSearching++
				resumed = true
			}
			if k > 0 {
				n := policy.OpenWakes(s.cfg.Wake, k, s.n)
				if resumed {
					n--
				}
				s.wakeIdle(n, by)
			}
			s.idleChanged()
			return resumed
		}
		if s.cur >= s.cy.Stages && s.pendingOutside > 0 {
			return false // an outside add is still to come
		}
		s.closeStage(s.cur)
		if s.cur >= s.cy.Stages {
			s.endCycle()
			return false
		}
		s.openStage(s.cur + 1)
	}
}

func (s *sim) openStage(st int) {
	s.cur = st
	s.open[st] = s.now
	if s.rec != nil {
		s.rec.StageOpen(s.now, st, s.stages[min(st, len(s.stages)-1)])
	}
}

func (s *sim) closeStage(st int) {
	if st >= 1 {
		s.closed[st] = s.now
		if s.rec != nil {
			s.rec.StageClose(s.now, st)
		}
	}
}

func (s *sim) endCycle() {
	s.active = false
	s.cycleEnd = s.now
	s.cur = 0
	if s.rec != nil {
		s.rec.CycleEnd(s.now, s.cy.Number)
	}
}

// fenwick counts the workers whose deque holds packets: set, total and
// the next one from a start, in O(log n).
type fenwick struct {
	t   []int32
	has []bool
	n   int
}

func newFenwick(n int) fenwick { return fenwick{t: make([]int32, n+1), has: make([]bool, n), n: n} }

func (f *fenwick) set(i int, v bool) {
	if f.has[i] == v {
		return
	}
	f.has[i] = v
	d := int32(1)
	if !v {
		d = -1
	}
	for j := i + 1; j <= f.n; j += j & -j {
		f.t[j] += d
	}
}

// prefix counts [0, i).
func (f *fenwick) prefix(i int) int32 {
	var s int32
	for ; i > 0; i -= i & -i {
		s += f.t[i]
	}
	return s
}

func (f *fenwick) total() int { return int(f.prefix(f.n)) }

// kth returns the index of the k-th (from 1) set worker.
func (f *fenwick) kth(k int32) int {
	pos := 0
	step := 1
	for step*2 <= f.n {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if pos+step <= f.n && f.t[pos+step] < k {
			pos += step
			k -= f.t[pos]
		}
	}
	return pos // 0-based index of the k-th
}

// next returns the first set worker at or after start, cyclically,
// other than self; -1 if none.
func (f *fenwick) next(start, self int) int {
	total := f.prefix(f.n)
	if total == 0 || (total == 1 && f.has[self]) {
		return -1
	}
	before := f.prefix(start)
	k := before + 1
	if k > total {
		k = 1
	}
	i := f.kth(k)
	if i == self {
		k++
		if k > total {
			k = 1
		}
		i = f.kth(k)
	}
	return i
}

// counts holds a count per stage in a Fenwick tree: add, prefix sums and
// the first stage with a count above zero, in O(log n) each.
type counts struct {
	t []int32
	n int
}

// reset makes n zero counts, reusing the tree's memory.
func (c *counts) reset(n int) {
	if cap(c.t) < n+1 {
		c.t = make([]int32, n+1)
	}
	c.t = c.t[:n+1]
	clear(c.t)
	c.n = n
}

func (c *counts) add(i int, d int32) {
	for j := i + 1; j <= c.n; j += j & -j {
		c.t[j] += d
	}
}

// prefix sums the counts of [0, i).
func (c *counts) prefix(i int) int {
	i = min(i, c.n)
	var s int32
	for ; i > 0; i -= i & -i {
		s += c.t[i]
	}
	return int(s)
}

// first is the lowest index whose count is above zero, -1 if none.
func (c *counts) first() int {
	if c.prefix(c.n) == 0 {
		return -1
	}
	pos := 0
	step := 1
	for step*2 <= c.n {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if pos+step <= c.n && c.t[pos+step] < 1 {
			pos += step
		}
	}
	return pos
}
