package scheduler

import (
	"time"
	"unsafe"
)

// Learned heavy packets (Config.LearnHeavy): the scheduler times every
// packet, and at each cycle's normal end marks as heavy the packet types
// whose mean run in a stage was at least HeavyShare of that stage's work
// per worker (the mean, not the longest: one run of a light type stretched
// by a preemption must not make the type heavy): one such packet started
// late ends after the others, so
// the stage waits for it (MMTk's luindex ScanCodeCacheRoots, mmtk-core
// #1200). From the next cycle on, Add and AddAll queue a heavy type's
// packets in their stage's priority lane, as the Priority option does, so
// that a worker takes each alone, before any other packet of the stage.
// The set is decided again at every normal cycle end from that cycle's
// times, so a type that stops being heavy leaves it; an aborted cycle
// leaves it as it was.
//
// Costs: the clock read of PacketTiming per packet (its figures come with
// it), and on an add, while the set is not empty, one load and compare of
// each packet's type word against at most MaxHeavyTypes words. Lent slices
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

// heavySet is the published set of heavy type words. Immutable.
type heavySet struct {
	n     int
	words [MaxHeavyTypes]unsafe.Pointer
	names [MaxHeavyTypes]string
}

// has reports whether the type word tw is in the set.
func (h *heavySet) has(tw unsafe.Pointer) bool {
	for i := range h.n {
		if h.words[i] == tw {
			return true
		}
	}
	return false
}

// learnRec is one worker's record of one packet type in the running
// cycle: its runs' count and total time, the stage of its last run, and
// its type word.
type learnRec struct {
	n     int64
	total time.Duration
	stage StageID
	word  unsafe.Pointer
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
	r.n++
	r.total += d
	r.stage, r.word = st, typeWord(t.p)
}

// learnHeavy decides the heavy set from the cycle that just ended normally
// and publishes it, and clears the workers' records. Caller holds mu,
// every worker parked.
func (s *sched) learnHeavy() {
	work := make([]time.Duration, len(s.stageNames))
	type cand struct {
		word  unsafe.Pointer
		n     int64
		total time.Duration
		stage StageID
		name  string
	}
	var byWord []cand
	for _, w := range s.workers {
		for st, d := range w.learnWork {
			work[st] += d
		}
		clear(w.learnWork)
		for idx, r := range w.learn {
			if r.word == nil {
				continue
			}
			i := 0
			for i < len(byWord) && byWord[i].word != r.word {
				i++
			}
			if i == len(byWord) {
				byWord = append(byWord, cand{word: r.word, name: s.reg.entry(idx).name})
			}
			byWord[i].n += r.n
			byWord[i].total += r.total
			byWord[i].stage = r.stage
		}
		clear(w.learn)
	}
	hs := &heavySet{}
	for _, c := range byWord {
		share := float64(work[c.stage]) / float64(s.n)
		if float64(c.total)/float64(c.n) < HeavyShare*share {
			continue
		}
		if hs.n < MaxHeavyTypes {
			hs.words[hs.n], hs.names[hs.n] = c.word, c.name
			hs.n++
		}
	}
	if hs.n == 0 {
		hs = nil
	}
	s.heavy.Store(hs)
}

// heavyOf reports whether learning has marked p's type heavy.
func (s *sched) heavyOf(p Packet) bool {
	hs := s.heavy.Load()
	return hs != nil && hs.has(typeWord(p))
}

// HeavyTypes returns the names of the packet types Config.LearnHeavy has
// marked heavy, as of the last cycle that ended normally (none without
// LearnHeavy). Any goroutine.
func (h *Scheduler) HeavyTypes() []string {
	hs := h.sched().heavy.Load()
	if hs == nil {
		return nil
	}
	return append([]string(nil), hs.names[:hs.n]...)
}

// splitHeavy returns the packets of ps whose type is in hs, and the rest
// in order; nil, ps when there are none (no allocation then).
func splitHeavy(ps []Packet, hs *heavySet) (heavy, rest []Packet) {
	first := -1
	for i, p := range ps {
		if hs.has(typeWord(p)) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, ps
	}
	rest = append(make([]Packet, 0, len(ps)), ps[:first]...)
	for _, p := range ps[first:] {
		if hs.has(typeWord(p)) {
			heavy = append(heavy, p)
		} else {
			rest = append(rest, p)
		}
	}
	return heavy, rest
}
