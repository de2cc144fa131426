package simulate

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/internal/wsfile"
	"github.com/wsched/wsched/trace/perfetto"
)

// Workload is what a trace says about its cycles' packets, as a replay
// needs it: each packet's cost, stage and name, and how it was queued.
// Load builds it from a Perfetto file; everything in it is linear in the
// packets and add calls the file holds.
type Workload struct {
	// Workers is the number of workers the trace's process track claims.
	// Load holds it to WorkerTracks: every worker of a wsched run records
	// its first park on its own track before it starts, so a claim above
	// the worker tracks that hold events is not a recording's (and would
	// make the replay's cost follow the claim: ErrClaimedWorkers).
	Workers int
	// WorkerTracks is the number of workers whose tracks hold events.
	WorkerTracks int
	// Config is the recorded scheduler's configuration, when the trace
	// says (HasConfig); else the defaults.
	Config    Config
	HasConfig bool
	// Stages names the stages by StageID (0 is Unconstrained).
	Stages []string
	// Names are the packet names, by Packet.Name.
	Names  []string
	Cycles []Cycle
	// Orphans counts the packets whose queuing the trace does not say
	// (outside an Overwrite recorder's window, or a parent or add it
	// lost): they are replayed as added into their stage's bucket before
	// their cycle.
	Orphans int
	// Skipped counts the cycles not replayed: their stage slices do not
	// record every stage they opened.
	Skipped int
}

// Cycle is one recorded cycle.
type Cycle struct {
	Number     uint64
	Start, End int64 // recorded, ns
	// Gap is how long the workers had been parked when the cycle began
	// (since the previous cycle's end; -1 for the first).
	Gap int64
	// Stages is the number of user stages the cycle opened (1..Stages).
	Stages  int
	Packets []Packet
	Adds    []Add
	// acts[actLo[i]:actLo[i+1]] are packet i's spawns and adds, in the
	// order it made them.
	acts  []act
	actLo []int32
	// pre are the adds made before the cycle began, outside its outside
	// adds during it (from no packet), sentinels its sentinels by stage.
	pre, outside []int32
	sentinels    [][]int32
	// Recorded holds the recorded figures of stages 1..Stages, in order.
	Recorded []Stage
	names    []string // Workload.Names
	base     int64    // where stage figures count from (stageFigures)
	skip     bool     // not all its stages are recorded: not replayed
	addedBy  []int32  // per packet: the add (Add, AddAll) that queued it, or -1
}

// Packet is one recorded packet.
type Packet struct {
	Name   int32 // index into Workload.Names
	Stage  int32
	Cost   int64 // ns, as recorded
	Worker int32 // recorded
	Begin  int64 // recorded
	// Queued is when the recording queued it: its spawn's or add's stamp.
	Queued int64
}

// Add is one recorded add call.
type Add struct {
	How    trace.AddHow
	Single bool        // a one-packet Add (the one-packet wake rule)
	Stage  int32       // the stage; for AddDesignated, the target worker
	Wake   policy.Kind // the call's wake option; Default: the scheduler's rule
	Born   int64       // the stamp of its first packet
	// Packets are the packets it queued, in the order the bucket serves
	// them.
	Packets []int32
	// By is the packet that made the add (-1: none), At how far into its
	// run (0..1); an add from no packet was made Offset ns after the
	// cycle began (≤ 0: before).
	By     int32
	At     float64
	Offset int64
}

// act is a spawn or an add made by a running packet.
type act struct {
	at  float64 // fraction of the packet's run
	add bool
	ref int32 // the spawned packet, or the add
}

// ErrNoOrigins reports a trace that does not say how its packets were
// queued.
var ErrNoOrigins = errors.New("the trace does not say how its packets were queued: it was written without perfetto.Options.Origins, or by a wsched that did not record it (wsched demo records it); simulate cannot replay it")

// ErrClaimedWorkers reports a trace whose process track claims more
// workers than it holds worker tracks with events for (Workload.Workers).
var ErrClaimedWorkers = errors.New("the trace claims more workers than its worker tracks record")

// MaxWorkers is the most workers simulate replays (the scheduler's own
// bound, Config.Workers).
const MaxWorkers = policy.MaxWorkers

// maxStage is the largest StageID a scheduler has.
const maxStage = policy.MaxStage

// recorded packet slice, before it is placed in a cycle.
type slice struct {
	worker     int32
	begin, end int64
	name       int32
	stage      string
	code       uint64 // where it was queued (perfetto.Queued*); 0 = not said
	queued     int64  // from the annotation; valid when code != 0
	stolen     bool
	cycle      int32
	idx        int32 // in its cycle
}

type addRec struct {
	Add
	time  int64
	cycle int32
	have  bool // matched a packet
}

// Load reads a Perfetto trace written by wsched with perfetto.Options.Origins
// (wsched demo writes it) and returns its workload. It fails with
// ErrNoOrigins for a trace that does not say how its packets were queued,
// with ErrClaimedWorkers for one whose process track claims more workers
// than hold events on their tracks (Workload.Workers), and with an error,
// never a panic, for input it cannot read (the same rules and messages as
// trace/analyze: both decode through trace/internal/wsfile). Time and
// memory are O(n log n) and O(n) in the packets, add calls and stages the
// file holds.
func Load(data []byte) (*Workload, error) {
	f, err := wsfile.Load(data)
	if err != nil {
		return nil, err
	}
	return FromFile(f)
}

// FromFile builds the workload of a file already decoded: trace/analyze
// decodes a file once and replays it from its own decoding. Other callers
// use Load.
func FromFile(f *wsfile.File) (*Workload, error) {
	wl := &Workload{Config: DefaultConfig(), Workers: f.Workers}
	if f.HasConfig {
		for _, kv := range f.Config {
			if err := wl.Config.set(kv.Key, kv.Value); err != nil {
				return nil, fmt.Errorf("%s: %v", f.ConfigAt, err)
			}
		}
		wl.HasConfig = true
	}
	if !f.HasOrigins {
		return nil, ErrNoOrigins
	}
	if f.AddsErr != nil {
		return nil, f.AddsErr
	}
	nameIdx := map[string]int32{}
	intern := func(s string) int32 {
		if i, ok := nameIdx[s]; ok {
			return i
		}
		i := int32(len(wl.Names))
		wl.Names = append(wl.Names, s)
		nameIdx[s] = i
		return i
	}
	var ss []slice
	marks := make(map[int32][]int64, len(f.W))
	for _, w := range f.W {
		if !w.Used {
			continue
		}
		wl.WorkerTracks++
		id := int32(w.ID)
		marks[id] = w.Marks
		for _, p := range w.Packets {
			ss = append(ss, slice{worker: id, begin: p.Start, end: p.End, name: intern(f.Strs[p.Name]), stage: f.Strs[p.Stage],
				code: uint64(p.Code), queued: p.Queued, stolen: p.Stolen, cycle: -1})
		}
	}
	if wl.Workers > wl.WorkerTracks {
		return nil, fmt.Errorf("%w: it claims %d workers (the process track's workers=%d) and holds events on %d worker track(s); every worker of a wsched run records its first park on its own track",
			ErrClaimedWorkers, wl.Workers, wl.Workers, wl.WorkerTracks)
	}
	var stages []wsfile.StageSlice
	for _, s := range f.Stages {
		if s.Stage >= 0 && s.Stage <= maxStage {
			stages = append(stages, s)
		}
	}
	adds := make([]addRec, len(f.Adds))
	for i, a := range f.Adds {
		adds[i] = addRec{Add: Add{How: a.How, Single: a.Single, Stage: a.Stage, Wake: a.Wake, Born: a.Born}, time: a.T, cycle: -1}
	}
	if err := wl.build(ss, f.Cycles, stages, adds, marks); err != nil {
		return nil, err
	}
	return wl, nil
}

// build places the recorded packets and adds in their cycles and links
// each packet to what queued it; marks are the event times on each
// worker's track, sorted.
func (wl *Workload) build(ss []slice, cycles []wsfile.Cycle, stages []wsfile.StageSlice, adds []addRec, marks map[int32][]int64) error {
	// cycles come by start, one after another (wsfile.Load).
	if len(cycles) == 0 {
		return errors.New("the trace holds no cycle")
	}
	// Stage names by StageID.
	stageOf := map[string]int32{timeline.CatUnconstrained: 0}
	wl.Stages = []string{timeline.CatUnconstrained}
	for _, s := range stages {
		if s.Stage == 0 {
			continue
		}
		for len(wl.Stages) <= s.Stage {
			wl.Stages = append(wl.Stages, "stage "+strconv.Itoa(len(wl.Stages)))
		}
		wl.Stages[s.Stage] = s.Name
		stageOf[s.Name] = int32(s.Stage)
	}
	cycleOf := func(t int64) int32 {
		i, _ := slices.BinarySearchFunc(cycles, t, func(c wsfile.Cycle, t int64) int {
			if c.End < t {
				return -1
			}
			return 1
		})
		if i < len(cycles) && cycles[i].Start <= t {
			return int32(i)
		}
		return -1
	}
	wl.Cycles = make([]Cycle, len(cycles))
	for i, c := range cycles {
		cy := &wl.Cycles[i]
		cy.Number, cy.Start, cy.End, cy.Gap = c.Number, c.Start, c.End, -1
		cy.base = c.Start
		if i > 0 {
			cy.Gap = c.Start - cycles[i-1].End
		}
	}
	// A cycle's stages are those its stage slices record: wsched opens
	// stages 1..n in every cycle and draws a slice for each. A cycle
	// whose slices do not cover 1..n (lost to an Overwrite recorder, or a
	// hand-made file) is skipped: the replay could not tell when its
	// stages opened, and must not cost more than the file holds.
	seen := make([]map[int]bool, len(cycles))
	for _, s := range stages {
		if ci := cycleOf(s.Start); ci >= 0 && s.Stage >= 1 {
			if seen[ci] == nil {
				seen[ci] = map[int]bool{}
			}
			seen[ci][s.Stage] = true
			wl.Cycles[ci].Stages = max(wl.Cycles[ci].Stages, s.Stage)
		}
	}
	for ci := range wl.Cycles {
		if cy := &wl.Cycles[ci]; len(seen[ci]) != cy.Stages {
			cy.skip = true
		}
	}
	// Packets into their cycles, by begin.
	slices.SortFunc(ss, func(a, b slice) int { return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.worker, b.worker)) })
	for i := range ss {
		s := &ss[i]
		st, ok := stageOf[s.stage]
		if !ok {
			return fmt.Errorf("a packet slice's category %q is no stage of the trace", s.stage)
		}
		ci := cycleOf(s.begin)
		if ci < 0 || wl.Cycles[ci].skip || int(st) > wl.Cycles[ci].Stages {
			continue // outside every replayed cycle, or in a stage it did not open
		}
		cy := &wl.Cycles[ci]
		s.cycle, s.idx = ci, int32(len(cy.Packets))
		cy.Packets = append(cy.Packets, Packet{Name: s.name, Stage: st, Cost: s.end - s.begin, Worker: s.worker, Begin: s.begin, Queued: s.queued})
	}
	for i := range wl.Cycles {
		cy := &wl.Cycles[i]
		cy.sentinels = make([][]int32, cy.Stages+1)
	}
	// Per worker, its slices by begin: the spawner of a packet is the
	// slice on its worker whose span holds the packet's stamp.
	byWorker := map[int32][]int32{}
	for i := range ss {
		if ss[i].cycle >= 0 {
			byWorker[ss[i].worker] = append(byWorker[ss[i].worker], int32(i))
		}
	}
	// Adds: by (lane, stage), by stamp, to match packets to; designated
	// ones by target, in time order.
	slices.SortStableFunc(adds, func(a, b addRec) int { return cmp.Compare(a.Born, b.Born) })
	type laneKey struct {
		prio  bool
		stage int32
	}
	lanes := map[laneKey][]int32{}
	designated := map[int32][]int32{}
	for i := range adds {
		a := &adds[i]
		switch a.How {
		case trace.AddDesignated:
			designated[a.Stage] = append(designated[a.Stage], int32(i))
		default:
			k := laneKey{a.How == trace.AddPriority, a.Stage}
			lanes[k] = append(lanes[k], int32(i))
		}
	}
	for _, ds := range designated {
		slices.SortStableFunc(ds, func(x, y int32) int { return cmp.Compare(adds[x].time, adds[y].time) })
	}
	nextDesignated := map[int32]int{}
	// What queued each packet: a parent slice (spawn), an add, or neither.
	parent := make([]int32, len(ss)) // index into ss, -1
	addOf := make([]int32, len(ss))  // index into adds, -1
	for i := range ss {
		parent[i], addOf[i] = -1, -1
		s := &ss[i]
		if s.cycle < 0 || s.code == 0 {
			continue
		}
		switch code := s.code; {
		case code == perfetto.QueuedNone:
			ds := designated[s.worker]
			if j := nextDesignated[s.worker]; j < len(ds) {
				addOf[i] = ds[j]
				nextDesignated[s.worker] = j + 1
			}
		case code == perfetto.QueuedAdd || code == perfetto.QueuedPriority:
			st := wl.Cycles[s.cycle].Packets[s.idx].Stage
			l := lanes[laneKey{code == perfetto.QueuedPriority, st}]
			j, _ := slices.BinarySearchFunc(l, s.queued, func(a int32, t int64) int {
				if adds[a].Born <= t {
					return -1
				}
				return 1
			})
			if j > 0 {
				addOf[i] = l[j-1]
			}
		default:
			w := int32(code - perfetto.QueuedWorker0)
			l := byWorker[w]
			j, _ := slices.BinarySearchFunc(l, s.queued, func(x int32, t int64) int {
				if ss[x].begin <= t {
					return -1
				}
				return 1
			})
			if j > 0 {
				if p := l[j-1]; ss[p].end >= s.queued && ss[p].cycle == s.cycle && p != int32(i) {
					parent[i] = p
				}
			}
		}
	}
	// Adds into their cycles: the cycle of their first packet.
	for i := range ss {
		if a := addOf[i]; a >= 0 && ss[i].cycle >= 0 {
			ar := &adds[a]
			if !ar.have {
				ar.have, ar.cycle = true, ss[i].cycle
			}
			if ss[i].cycle == ar.cycle {
				ar.Packets = append(ar.Packets, ss[i].idx)
			} else {
				addOf[i] = -1 // an add's packets run in one cycle
			}
		}
	}
	// Where each add was made: in the packet running at its stamp, the
	// most recently begun one if several run (a sweep over begins and
	// ends); else from outside, before or during its cycle.
	running := &beginHeap{}
	order := make([]int32, 0, len(adds))
	for i := range adds {
		if adds[i].have {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(adds[x].Born, adds[y].Born) })
	next := 0
	for _, ai := range order {
		a := &adds[ai]
		for next < len(ss) && ss[next].begin <= a.Born {
			if ss[next].cycle >= 0 {
				heap.Push(running, beginItem{ss[next].begin, ss[next].end, int32(next)})
			}
			next++
		}
		by := int32(-1)
		for running.Len() > 0 {
			top := (*running)[0]
			if top.end < a.Born {
				heap.Pop(running) // ended: never again
				continue
			}
			by = top.idx
			break
		}
		cy := &wl.Cycles[a.cycle]
		a.By = -1
		switch {
		case a.How == trace.AddSentinel:
		case by >= 0 && ss[by].cycle == a.cycle:
			a.By = ss[by].idx
			p := &cy.Packets[a.By]
			a.At = fraction(a.Born-p.Begin, p.Cost)
		default:
			a.Offset = a.Born - cy.Start
		}
	}
	// Each cycle's adds, packets in queue order, and acts.
	cyAdd := make([]int32, len(adds))
	for _, ai := range order {
		a := &adds[ai]
		cy := &wl.Cycles[a.cycle]
		pk := cy.Packets
		slices.SortStableFunc(a.Packets, func(x, y int32) int {
			return cmp.Or(cmp.Compare(pk[x].Queued, pk[y].Queued), cmp.Compare(pk[x].Begin, pk[y].Begin))
		})
		cyAdd[ai] = int32(len(cy.Adds))
		idx := cyAdd[ai]
		cy.Adds = append(cy.Adds, a.Add)
		switch {
		case a.How == trace.AddSentinel:
			if int(a.Stage) < len(cy.sentinels) {
				cy.sentinels[a.Stage] = append(cy.sentinels[a.Stage], idx)
			}
		case a.By >= 0:
		case a.Offset <= 0:
			cy.pre = append(cy.pre, idx)
		default:
			cy.outside = append(cy.outside, idx)
		}
	}
	// Orphans: packets whose queuing is unknown become one add each,
	// before their cycle, into their stage's bucket.
	type actRec struct {
		pkt int32
		a   act
		key int64
	}
	perCycle := make([][]actRec, len(wl.Cycles))
	for i := range ss {
		s := &ss[i]
		if s.cycle < 0 {
			continue
		}
		cy := &wl.Cycles[s.cycle]
		switch {
		case parent[i] >= 0:
			par := &ss[parent[i]]
			pp := &cy.Packets[par.idx]
			// Spawned at or after its stamp, and at the latest when its
			// parent ended, when it began elsewhere, or when the parent's
			// worker recorded its next event after the stamp (the stamp is
			// that worker's newest event at the spawn): the latest is
			// taken.
			u := min(par.end, s.begin)
			if ms := marks[par.worker]; len(ms) > 0 {
				if j, _ := slices.BinarySearch(ms, s.queued+1); j < len(ms) {
					u = max(min(u, ms[j]), s.queued)
				}
			}
			perCycle[s.cycle] = append(perCycle[s.cycle], actRec{par.idx, act{at: fraction(u-pp.Begin, pp.Cost), ref: s.idx}, s.queued})
		case addOf[i] >= 0:
		default:
			wl.Orphans++
			cy.Packets[s.idx].Queued = cy.Start
			st := cy.Packets[s.idx].Stage
			a := Add{How: trace.AddNormal, Stage: st, Born: cy.Start, By: -1, Packets: []int32{s.idx}}
			if s.code == perfetto.QueuedNone {
				a.How, a.Stage = trace.AddDesignated, s.worker
			}
			cy.pre = append(cy.pre, int32(len(cy.Adds)))
			cy.Adds = append(cy.Adds, a)
		}
	}
	for ai := range adds {
		a := &adds[ai]
		if !a.have || a.By < 0 || a.How == trace.AddSentinel {
			continue
		}
		perCycle[a.cycle] = append(perCycle[a.cycle], actRec{a.By, act{at: a.At, add: true, ref: cyAdd[ai]}, a.Born})
	}
	for ci := range wl.Cycles {
		cy := &wl.Cycles[ci]
		cy.addedBy = make([]int32, len(cy.Packets))
		for i := range cy.addedBy {
			cy.addedBy[i] = -1
		}
		for ai, a := range cy.Adds {
			if a.How != trace.AddDesignated && a.How != trace.AddSentinel {
				for _, p := range a.Packets {
					cy.addedBy[p] = int32(ai)
				}
			}
		}
		as := perCycle[ci]
		slices.SortStableFunc(as, func(x, y actRec) int {
			return cmp.Or(cmp.Compare(x.pkt, y.pkt), cmp.Compare(x.a.at, y.a.at), cmp.Compare(x.key, y.key))
		})
		cy.actLo = make([]int32, len(cy.Packets)+1)
		cy.acts = make([]act, 0, len(as))
		j := 0
		for p := range cy.Packets {
			cy.actLo[p] = int32(len(cy.acts))
			for j < len(as) && as[j].pkt == int32(p) {
				cy.acts = append(cy.acts, as[j].a)
				j++
			}
		}
		cy.actLo[len(cy.Packets)] = int32(len(cy.acts))
		cy.Recorded = wl.recorded(cy, stages)
	}
	kept := wl.Cycles[:0]
	for _, cy := range wl.Cycles {
		if cy.skip {
			wl.Skipped++
			continue
		}
		kept = append(kept, cy)
	}
	wl.Cycles = kept
	if len(wl.Cycles) == 0 {
		return errors.New("no cycle of the trace records all its stages")
	}
	return nil
}

// fraction is d ÷ cost in [0, 1] (1 for a packet of no length).
func fraction(d, cost int64) float64 {
	if cost <= 0 {
		return 1
	}
	return min(max(float64(d)/float64(cost), 0), 1)
}

// recorded returns the recorded figures of cy's stages.
func (wl *Workload) recorded(cy *Cycle, stages []wsfile.StageSlice) []Stage {
	open := make([]int64, cy.Stages+1)
	closed := make([]int64, cy.Stages+1)
	for i := range open {
		open[i], closed[i] = -1, -1
	}
	for _, s := range stages {
		if s.Stage >= 1 && s.Stage <= cy.Stages && s.Start >= cy.Start && s.Start <= cy.End && open[s.Stage] < 0 {
			open[s.Stage], closed[s.Stage] = s.Start, s.End
		}
	}
	starts := make([]int64, len(cy.Packets))
	ends := make([]int64, len(cy.Packets))
	queued := make([]int64, len(cy.Packets))
	for i, p := range cy.Packets {
		starts[i], ends[i], queued[i] = p.Begin, p.Begin+p.Cost, p.Queued
	}
	for _, a := range cy.Adds {
		for _, p := range a.Packets {
			queued[p] = a.Born
		}
	}
	cy.names = wl.Names
	st := stageFigures(wl.Workers, cy, open, closed, starts, ends, queued)
	for i := range st {
		st[i].Name = wl.Stages[min(st[i].Stage, len(wl.Stages)-1)]
	}
	return st
}

// beginItem is a running packet in the add sweep: a max-heap by begin.
type beginItem struct {
	begin, end int64
	idx        int32
}

type beginHeap []beginItem

func (h beginHeap) Len() int           { return len(h) }
func (h beginHeap) Less(i, j int) bool { return h[i].begin > h[j].begin }
func (h beginHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *beginHeap) Push(x any)        { *h = append(*h, x.(beginItem)) }
func (h *beginHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
