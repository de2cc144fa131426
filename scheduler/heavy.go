package scheduler

import (
	"cmp"
	"slices"
	"time"
	"unsafe"
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
// nor value packets (AddValues, SpawnValue), spawns, designated packets
// and sentinels, which do not go through a bucket's lanes by type.

// HeavyShare is the share of a stage's work per worker (its packets' run
// time summed, divided by the workers) that a packet type's mean run in
// the stage must reach for Config.LearnHeavy to mark it heavy.
const HeavyShare = 0.5

// MaxHeavyTypes is the most packet types Config.LearnHeavy marks heavy at
// once (the longest first): a stage with more heavy types than this has no
// few packets that bound it.
const MaxHeavyTypes = 8

// heavySet is the published set of heavy packet types, each with the
// stage where it was heavy: a type word each,
// and for a Namer type the name too, since one Go type may carry packets
// of many names (the prepare example's scanRoots is ScanMutatorRoots and
// ScanCodeCacheRoots). Immutable.
type heavySet struct {
	n      int
	words  [MaxHeavyTypes]unsafe.Pointer
	names  [MaxHeavyTypes]string
	stages [MaxHeavyTypes]StageID
	namer  [MaxHeavyTypes]bool // compare the packet's PacketName with names[i]
	miss   [MaxHeavyTypes]bool // kept from the set before, below the share in the last cycle
}

// has reports whether p, whose type word is tw, is in the set for stage
// st. Only a packet whose type word and stage match a Namer entry pays a
// PacketName call.
func (h *heavySet) has(tw unsafe.Pointer, p Packet, st StageID) bool {
	for i := range h.n {
		if h.words[i] != tw || h.stages[i] != st {
			continue
		}
		if !h.namer[i] || p.(Namer).PacketName() == h.names[i] {
			return true
		}
	}
	return false
}

// hasEntry reports whether the set holds the type word tw named name in
// stage st.
func (h *heavySet) hasEntry(tw unsafe.Pointer, name string, st StageID) bool {
	for i := range h.n {
		if h.words[i] == tw && h.names[i] == name && h.stages[i] == st {
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
	heavy := buf.heavy[:0] // indices into merged whose mean run reached HeavyShare
	for i, c := range merged {
		// A type alone in its stage has nothing to be placed before; on
		// one worker the order does not change when a stage ends; and
		// Unconstrained work runs beside every stage, its designated
		// packets in a place of their own.
		if c.total == work[c.stage] || s.n == 1 || c.stage == Unconstrained {
			continue
		}
		share := float64(work[c.stage]) / float64(s.n)
		if float64(c.total)/float64(c.n) >= HeavyShare*share {
			heavy = append(heavy, i)
		}
	}
	mean := func(i int) time.Duration { return merged[i].total / time.Duration(merged[i].n) }
	slices.SortFunc(heavy, func(a, b int) int { return cmp.Compare(mean(b), mean(a)) })
	var hs heavySet
	for _, i := range heavy {
		c := merged[i]
		name := s.reg.entry(c.idx).name
		if hs.n == MaxHeavyTypes {
			break
		}
		hs.words[hs.n], hs.names[hs.n], hs.stages[hs.n], hs.namer[hs.n] = c.word, name, c.stage, c.namer
		hs.n++
	}
	// A type leaves the set after two cycles in a row below the share, not
	// one: a run of another type stretched by a preemption (milliseconds
	// on a busy host) inflates its stage's work for one cycle.
	old := s.heavy.Load()
	if old != nil {
		for i := range old.n {
			if old.miss[i] || hs.n == MaxHeavyTypes || hs.hasEntry(old.words[i], old.names[i], old.stages[i]) {
				continue
			}
			hs.words[hs.n], hs.names[hs.n], hs.stages[hs.n] = old.words[i], old.names[i], old.stages[i]
			hs.namer[hs.n], hs.miss[hs.n] = old.namer[i], true
			hs.n++
		}
	}
	clear(recs)
	buf.work, buf.recs, buf.heavy = work, recs, heavy
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
	heavy []int
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
		out[i] = HeavyType{hs.names[i], hs.stages[i]}
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
