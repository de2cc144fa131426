package scheduler

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/wsched/wsched/trace"
)

// flushEvery is how many packets a worker runs between publishing its
// counters; it also publishes whenever it parks. Copying a few counters
// every 4096 packets costs < 0.01 ns per packet, and Stats taken during a
// cycle lag by at most that many packets per worker. After Run returns they
// are exact: every worker parked, and so flushed, before the cycle ended.
const flushEvery = 4096

// hotStats are a worker's own counters: plain fields, written only by the
// worker, published by flush.
type hotStats struct {
	stealAttempts uint64
	steals        uint64
	stolen        uint64
	bucketTakes   uint64
	bucketPackets uint64
	idleNs        int64
	dropped       uint64
	panics        uint64
	failures      uint64
	inlined       uint64
	spinWakes     uint64
}

// monStats are a worker's counters kept under s.mu (parking and waking
// happen there anyway).
type monStats struct {
	parks         uint64
	wakesSent     uint64
	wakesReceived uint64
}

// typeStat is one packet type's counters on one worker. min is only
// meaningful when timed > 0 (it starts at MaxInt64, so a real minimum is
// never hidden by an initial 0, the MMTk defect).
type typeStat struct {
	name   string
	nameID trace.NameID
	count  uint64
	timed  uint64
	total  int64
	min    int64
	max    int64
	// 64 bytes in all (TestTypeStatSize): a worker's []typeStat fills whole
	// cache lines (Go's size classes for multiples of 64 are 64-aligned), so
	// two workers' counters never share one.
}

func (ts *typeStat) observe(d time.Duration) {
	n := int64(d)
	if ts.timed == 0 || n < ts.min {
		ts.min = n
	}
	if n > ts.max {
		ts.max = n
	}
	ts.timed++
	ts.total += n
}

// published is a worker's last flushed counters, read by Stats.
type published struct {
	mu    sync.Mutex
	hot   hotStats
	types []typeStat
}

// flush publishes w's counters. Owner.
func (w *Worker) flush() {
	w.foldRun()
	w.unflush = 0
	w.pub.mu.Lock()
	w.pub.hot = w.hot
	w.pub.types = append(w.pub.types[:0], w.types...)
	w.pub.mu.Unlock()
}

// Stats is a snapshot of a scheduler's counters, merged from every worker.
// Taken after Run returns it is exact; during a cycle each worker's
// figures may lag by up to 4096 packets.
type Stats struct {
	Cycles        uint64 // cycles completed (including aborted ones)
	Aborted       uint64 // cycles ended by a panic, cancellation or Close
	Dropped       uint64 // packets discarded by aborted cycles and Close
	ExternalWakes uint64 // wake-ups sent by goroutines that are not workers (Add from outside, Run)
	Ran           uint64 // packets run, by every worker (the sum of WorkerStats.Packets)
	Workers       []WorkerStats
	Packets       []PacketStats // by name, sorted
	Stages        []StageStats  // index = StageID (0 = Unconstrained)
}

// WorkerStats are one worker's counters.
type WorkerStats struct {
	Packets       uint64 // packets run
	BucketTakes   uint64 // takes from buckets
	BucketPackets uint64 // packets those takes moved (including the one run)
	StealAttempts uint64 // steal attempts on non-empty victims
	Steals        uint64 // successful steals
	Stolen        uint64 // packets moved by successful steals
	Parks         uint64
	WakesSent     uint64 // wake-ups this worker sent
	WakesReceived uint64
	Idle          time.Duration // time parked
	Dropped       uint64        // packets this worker discarded (aborts)
	Panics        uint64
	Failed        uint64        // packets that returned an error
	Inlined       uint64        // packets SpawnOrRun ran inline (counted in Packets too)
	SpinWakes     uint64        // wake-ups taken while polling (Config.ParkSpin), not blocked
	PacketTypes   []PacketStats // this worker's share of Stats.Packets, by name, sorted
}

// PacketStats are one packet name's counters over all workers. The times
// are zero unless Config.PacketTiming is set.
type PacketStats struct {
	Name  string
	Count uint64
	Timed uint64 // runs that were timed
	Total time.Duration
	Min   time.Duration
	Max   time.Duration
	Mean  time.Duration // Total ÷ Timed, or 0
}

// StageStats are one stage's timings. A stage's makespan here runs from
// its opening to the moment it and every earlier stage were drained (its
// sentinels included) and the next stage could open: what the scheduler
// sees. Two other figures go by the same name: `wsched demo`, `wsched
// simulate` and analyze's verdicts time a stage from when its work could
// start (its opening, or its first packet's queuing if later) to its last
// packet's end (examples/stagetime), and analyze's window figures from
// its opening to the next stage's. They agree when a stage's work is
// queued before it opens and nothing runs after its last packet.
type StageStats struct {
	Name          string
	Opens         uint64
	LastOpenAt    time.Duration // offset of the last opening from its cycle's start
	LastMakespan  time.Duration
	TotalMakespan time.Duration
}

// Stats returns the scheduler's counters. Any goroutine.
func (h *Scheduler) Stats() Stats {
	s := h.sched()
	var st Stats
	s.mu.Lock()
	st.Cycles = s.totals.cycles
	st.Aborted = s.totals.aborted
	st.Dropped = s.totals.dropped
	st.ExternalWakes = s.totals.externalWakes
	st.Stages = make([]StageStats, len(s.stages))
	for i, r := range s.stages {
		st.Stages[i] = StageStats{
			Name:          s.stageNames[i],
			Opens:         r.opens,
			LastOpenAt:    r.lastOpenAt,
			LastMakespan:  r.lastMakespan,
			TotalMakespan: r.totalMakespan,
		}
	}
	st.Workers = make([]WorkerStats, s.n)
	for i, w := range s.workers {
		st.Workers[i] = WorkerStats{
			Parks:         w.mon.parks,
			WakesSent:     w.mon.wakesSent,
			WakesReceived: w.mon.wakesReceived,
		}
	}
	s.mu.Unlock()

	byName := map[string]*PacketStats{}
	for i, w := range s.workers {
		w.pub.mu.Lock()
		h := w.pub.hot
		ws := &st.Workers[i]
		ws.BucketTakes = h.bucketTakes
		ws.BucketPackets = h.bucketPackets
		ws.StealAttempts = h.stealAttempts
		ws.Steals = h.steals
		ws.Stolen = h.stolen
		ws.Idle = time.Duration(h.idleNs)
		ws.Dropped = h.dropped
		ws.Panics = h.panics
		ws.Failed = h.failures
		ws.Inlined = h.inlined
		ws.SpinWakes = h.spinWakes
		for _, ts := range w.pub.types {
			ws.Packets += ts.count
			if ts.count == 0 {
				continue
			}
			mine := PacketStats{Name: ts.name, Count: ts.count}
			if ts.timed > 0 {
				mine.Timed = ts.timed
				mine.Total = time.Duration(ts.total)
				mine.Min = time.Duration(ts.min)
				mine.Max = time.Duration(ts.max)
				mine.Mean = mine.Total / time.Duration(ts.timed)
			}
			ws.PacketTypes = append(ws.PacketTypes, mine)
			p := byName[ts.name]
			if p == nil {
				p = &PacketStats{Name: ts.name, Min: time.Duration(math.MaxInt64)}
				byName[ts.name] = p
			}
			p.Count += ts.count
			if ts.timed > 0 {
				p.Timed += ts.timed
				p.Total += mine.Total
				p.Min = min(p.Min, mine.Min)
				p.Max = max(p.Max, mine.Max)
			}
		}
		w.pub.mu.Unlock()
		sortPackets(ws.PacketTypes)
	}
	for _, p := range byName {
		if p.Timed == 0 {
			p.Min = 0
		} else {
			p.Mean = p.Total / time.Duration(p.Timed)
		}
		st.Packets = append(st.Packets, *p)
	}
	for _, ws := range st.Workers {
		st.Ran += ws.Packets
	}
	sortPackets(st.Packets)
	return st
}

func sortPackets(ps []PacketStats) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
}

// tick counts one packet run towards the next publication of w's
// counters: every flushEvery packets (and at every park). Owner.
func (w *Worker) tick() {
	if w.unflush++; w.unflush >= flushEvery {
		w.flush()
	}
}
