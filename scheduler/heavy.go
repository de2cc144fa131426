package scheduler

import (
	"cmp"
	"slices"
	"time"
	"unsafe"

	"github.com/wsched/wsched/internal/policy"
)

// Learned heavy packets (Config.LearnHeavy): the scheduler times every
// packet, and at each cycle's normal end marks as heavy the packet types
// whose mean run in a stage was at least HeavyShare of that stage's work
// per worker. A packet type is a Go type, or for a Namer type each name
// apart (one Go type may carry short and long packets under different
// names). The mean, not the longest run: one run of a light type
// stretched by a preemption must not make the type heavy. Not looked at:
// Unconstrained work (it runs beside every stage, designated packets in a
// place of their own), a type alone in its stage (there is nothing to
// place it before), and schedulers of one worker (order does not change
// when a stage ends). One heavy packet started late ends after the
// others, so the stage waits for it (MMTk's luindex ScanCodeCacheRoots,
// mmtk-core #1200). From the next cycle on, Add and AddAll queue a heavy
// type's packets in the priority lane of the stage where it was heavy, as
// the Priority option does, so that a worker takes each alone, before any
// other packet of the stage; its packets added to another stage go where
// they would without the option. The set is decided again at every normal cycle end from that
// cycle's times, so a type that stops being heavy leaves it, after two
// cycles in a row below the share (one disturbed cycle does not move it);
// an aborted cycle leaves it as it was.
//
// Costs: the clock read of PacketTiming per packet (its figures come with
// it), and on an add, while the set is not empty, one load and compare of
// each packet's type word against at most MaxHeavyTypes words, and a
// PacketName call for a packet whose Namer type is in the set. A cycle
// end decides the set in buffers it keeps, and allocates only when the
// set changes. Lent slices
// (Lend) are not looked at (their cost is O(1) whatever their length),
// nor value packets (AddValues, Spawn), spawns, designated packets
// and sentinels, which do not go through a bucket's lanes by type.

// HeavyShare is the share of a stage's work per worker (its packets' run
// time summed, divided by the workers) that a packet type's mean run in
// the stage must reach for Config.LearnHeavy to mark it heavy: 0.5, half
// a worker's share. The rule is internal/policy's PickHeavy, which
// `wsched simulate` calls too (TestHeavyConstants holds the values here).
const HeavyShare = policy.HeavyShare

// MaxHeavyTypes is the most packet types Config.LearnHeavy marks heavy at
// once (the longest first), 8: a stage with more heavy types than this has
// no few packets that bound it.
const MaxHeavyTypes = policy.MaxHeavyTypes

// heavyKey is a heavy set member's packet type: its type word, and for a
// Namer type (namer) the name too, since one Go type may carry packets of
// many names (the prepare example's scanRoots is ScanMutatorRoots and
// ScanCodeCacheRoots).
type heavyKey struct {
	word  unsafe.Pointer
	name  string
	namer bool // compare the packet's PacketName with name
}

// heavySet is the published set of heavy packet types, each with the
// stage where it was heavy. Immutable.
type heavySet struct {
	n int
	e [MaxHeavyTypes]policy.Heavy[heavyKey]
}

// has reports whether p, whose type word is tw, is in the set for stage
// st. Only a packet whose type word and stage match a Namer entry pays a
// PacketName call.
func (h *heavySet) has(tw unsafe.Pointer, p Packet, st StageID) bool {
	for i := range h.n {
		e := &h.e[i]
		if e.Key.word != tw || e.Stage != int(st) {
			continue
		}
		if !e.Key.namer || p.(Namer).PacketName() == e.Key.name {
			return true
		}
	}
	return false
}

// learnRec is one worker's record of one packet type (one stats index,
// idx: a type, or a Namer type's name) in one stage of the running cycle:
// its runs' count and total time, its type word and whether the type is a
// Namer.
type learnRec struct {
	n     int64
	total time.Duration
	idx   int
	stage StageID
	word  unsafe.Pointer
	namer bool
}

// observeLearn records a run of d of packet t (stats index idx). Owner.
func (w *Worker) observeLearn(t task, idx int, d time.Duration) {
	st := t.stage()
	w.learnWork[st] += d
	if t.meta&slotBit != 0 {
		return // a value packet's type word is its slot's, not one an add sees
	}
	for len(w.learn) <= idx {
		w.learn = append(w.learn, learnRec{})
	}
	r := &w.learn[idx]
	if r.n != 0 && r.stage != st {
		// The type ran in another stage before: keep that stage's record
		// apart (stages follow one another, so this is rare).
		w.learnDone = append(w.learnDone, *r)
		r.n, r.total = 0, 0
	}
	if r.n == 0 {
		_, r.namer = t.p.(Namer) // once per type, stage and cycle
		r.word, r.idx, r.stage = typeWord(t.p), idx, st
	}
	r.n++
	r.total += d
}

// learnHeavy decides the heavy set from the cycle that just ended normally
// and publishes it, and clears the workers' records. Caller holds mu,
// every worker parked.
func (s *sched) learnHeavy() {
	buf := &s.learnBuf
	work := buf.work
	if n := len(s.stageNames); cap(work) < n {
		work = make([]time.Duration, n)
	} else {
		work = work[:n]
		clear(work)
	}
	recs := buf.recs[:0] // every worker's records, then one per type and stage
	for _, w := range s.workers {
		for st, d := range w.learnWork {
			work[st] += d
		}
		clear(w.learnWork)
		recs = append(recs, w.learnDone...)
		w.learnDone = w.learnDone[:0]
		for _, r := range w.learn {
			if r.n != 0 {
				recs = append(recs, r)
			}
		}
		clear(w.learn)
	}
	slices.SortFunc(recs, func(a, b learnRec) int {
		return cmp.Or(cmp.Compare(a.idx, b.idx), cmp.Compare(a.stage, b.stage))
	})
	merged := recs[:0]
	for _, r := range recs {
		if m := len(merged); m > 0 && merged[m-1].idx == r.idx && merged[m-1].stage == r.stage {
			merged[m-1].n += r.n
			merged[m-1].total += r.total
			continue
		}
		merged = append(merged, r)
	}
	tt := buf.tt[:0]
	for _, c := range merged {
		tt = append(tt, policy.TypeTime{Stage: int(c.stage), N: c.n, Total: c.total})
	}
	heavy := policy.PickHeavy(tt, work, s.n, buf.heavy[:0])
	next := buf.next[:0]
	for _, i := range heavy {
		c := merged[i]
		next = append(next, policy.Heavy[heavyKey]{Key: heavyKey{c.word, s.reg.entry(c.idx).name, c.namer}, Stage: int(c.stage)})
	}
	old := s.heavy.Load()
	if old != nil {
		next = policy.CarryHeavy(next, old.e[:old.n])
	}
	var hs heavySet
	hs.n = copy(hs.e[:], next)
	clear(recs)
	clear(next)
	buf.work, buf.recs, buf.heavy, buf.tt, buf.next = work, recs, heavy, tt, next
	switch {
	case hs.n == 0:
		s.heavy.Store(nil)
	case old == nil || *old != hs: // a new set only when it changed: steady cycles allocate nothing
		p := new(heavySet)
		*p = hs
		s.heavy.Store(p)
	}
}

// learnScratch is learnHeavy's buffers, kept from cycle to cycle.
type learnScratch struct {
	work  []time.Duration
	recs  []learnRec
	tt    []policy.TypeTime
	heavy []int
	next  []policy.Heavy[heavyKey]
}

// heavyOf reports whether learning has marked p's type heavy in stage st.
func (s *sched) heavyOf(p Packet, st StageID) bool {
	hs := s.heavy.Load()
	return hs != nil && hs.has(typeWord(p), p, st)
}

// HeavyType is a packet type that Config.LearnHeavy marked heavy, and the
// stage where it was: its packets added to that stage go to the stage's
// priority lane.
type HeavyType struct {
	Name  string  // the type's name in Stats
	Stage StageID // 1 for Config.Stages[0]
}

// HeavyTypes returns the packet types Config.LearnHeavy has marked heavy,
// as of the last cycle that ended normally, the longest mean run first
// (then those kept from the cycle before, below the share once); none
// without LearnHeavy. Any goroutine.
func (h *Scheduler) HeavyTypes() []HeavyType {
	hs := h.sched().heavy.Load()
	if hs == nil {
		return nil
	}
	out := make([]HeavyType, hs.n)
	for i := range out {
		out[i] = HeavyType{hs.e[i].Key.name, StageID(hs.e[i].Stage)}
	}
	return out
}

// splitHeavy returns the packets of ps whose type is in hs for stage st,
// and the rest in order; nil, ps when there are none (no allocation then).
func splitHeavy(ps []Packet, hs *heavySet, st StageID) (heavy, rest []Packet) {
	first := -1
	for i, p := range ps {
		if hs.has(typeWord(p), p, st) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, ps
	}
	rest = append(make([]Packet, 0, len(ps)), ps[:first]...)
	for _, p := range ps[first:] {
		if hs.has(typeWord(p), p, st) {
			heavy = append(heavy, p)
		} else {
			rest = append(rest, p)
		}
	}
	return heavy, rest
}
