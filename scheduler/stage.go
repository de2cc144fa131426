package scheduler

import (
	"time"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
)

// Stage transitions. Every function here runs with s.mu held and with
// every worker parked (s.parked == s.n) or, for beginCycle, before any
// worker of the new cycle is woken: there is no coordinator goroutine; the
// last worker to park (or Run, at the start) decides, as MMTk's
// WorkerMonitor does.

// beginCycle starts a cycle and opens stage 1. Caller: Run, holding mu,
// with every worker parked.
func (s *sched) beginCycle() {
	s.cycle++
	s.cause = nil
	s.result = nil
	s.dropped = 0
	s.abort.Store(false)
	s.cycleStart = time.Now()
	s.cycleActive.Store(true) // before any wake-up: wakers check it under mu
	s.ctl.CycleBegin(s.cycle)
	s.openStage(1)
}

// advance is the last-parked decision. It runs when every worker is parked
// during a cycle: called by the worker whose park made parked == n (self),
// or by Run at the start of the cycle (self == nil). In order:
//
//  1. Aborting: discard everything and end the cycle.
//  2. Work visible in an open bucket, or designated work: wake for it.
//  3. A sentinel of an open stage: queue it into its own bucket and wake
//     for it (the stage is re-armed; later stages stay closed).
//  4. Otherwise the open stages are drained: close the current one and
//     open the next, passing empty ones at once; wake for the first that
//     has work. After the last stage the cycle ends.
//
// It reports whether self was resumed (unparked to search again); then
// self is already counted as searching.
func (s *sched) advance(self *Worker) bool {
	by := -1
	if self != nil {
		by = self.id
	}
	if s.cause != nil {
		s.finishAbort()
		return false
	}
	for {
		cur := int(s.cur.Load())
		k := 0
		for st := 0; st <= cur; st++ {
			k += s.buckets[st].Len()
		}
		selfDesignated := false
		others := 0
		for _, w := range s.workers {
			if len(w.designated) == 0 {
				continue
			}
			if w == self {
				selfDesignated = true
			} else if w.parked {
				s.wakeWorker(w, by)
				others++
			}
		}
		if k == 0 && !selfDesignated && others == 0 {
			for st := 1; st <= cur; st++ {
				if t, ok := s.buckets[st].TakeSentinel(); ok {
					t = s.queued(t.p, StageID(st)) // its enqueue, for a steal's arrow
					one := [1]task{t}
					if _, err := s.buckets[st].Add(one[:], false); err == nil {
						k = 1
						s.ctl.Add(tracebuf.AddSentinel, true, st, 1, 0, t.born())
						if s.bounded {
							s.nQueued[st].n.Add(1) // its take subtracts it
						}
					}
					break
				}
			}
		}
		if k > 0 || selfDesignated || others > 0 {
			resumed := false
			if self != nil && (k > 0 || selfDesignated) {
				s.resume(self)
				resumed = true
			}
			if k > 0 {
				n := s.openWakeCount(k)
				if resumed {
					n--
				}
				s.wakeIdle(n, by)
			}
			return resumed
		}
		if s.held(cur) {
			return false // a producer still adds: the workers park
		}
		s.closeStage(cur)
		if cur == s.nStages {
			s.endHolds(nil) // every hold of the cycle was released
			if s.cfg.LearnHeavy {
				s.learnHeavy()
			}
			s.endCycle()
			return false
		}
		s.openStage(cur + 1)
	}
}

// openWakeCount is how many workers a stage opening with k visible packets
// wakes, by the scheduler's policy.
func (s *sched) openWakeCount(k int) int {
	return policy.OpenWakes(policy.Kind(s.cfg.Wake), k, s.n)
}

// openStage opens stage st's bucket. Caller holds mu.
func (s *sched) openStage(st int) {
	now := time.Now()
	s.buckets[st].Open()
	s.cur.Store(int32(st)) // store-release: searching workers now scan st
	r := &s.stages[st]
	r.opens++
	r.openedAt = now
	r.lastOpenAt = now.Sub(s.cycleStart)
	s.ctl.StageOpen(st, s.stageTrace[st])
	s.ctl.Counter(trace.CounterBucketDepth, st, int64(s.buckets[st].Len()))
}

// closeStage records the end of stage st (drained, sentinel done). Its
// bucket stays open until the cycle ends, so a packet added to a finished
// stage still runs in this cycle. Caller holds mu.
func (s *sched) closeStage(st int) {
	r := &s.stages[st]
	d := time.Since(r.openedAt)
	r.lastMakespan = d
	r.totalMakespan += d
	s.ctl.StageClose(st)
}

// endCycle ends the cycle: closes the user buckets (packets queued in them
// wait for the next cycle), records the result and wakes Run. If the
// scheduler is closing, it releases the workers. Caller holds mu.
func (s *sched) endCycle() {
	for st := 1; st <= s.nStages; st++ {
		s.buckets[st].Close()
	}
	// Every worker is parked (the last one decided, or an abort found them
	// so), so no consumer is inside a bucket: its blocks can be reused.
	for _, b := range s.buckets {
		b.Reclaim()
	}
	// Nor is anyone inside a deque, each empty: drop the packets that
	// thieves copied out of its slots and left there (Deque.Scrub), so
	// that nothing that ran stays reachable until the next cycle.
	for _, w := range s.workers {
		w.local.Scrub()
		// Nor inside an arena: what the refills' sweep has not reached
		// yet is freed now (an aborted cycle's were reset already).
		for _, a := range w.arenaList {
			a.sweep()
		}
	}
	s.cur.Store(0)
	if c := s.cctx.Swap(nil); c != nil {
		c.cancel(nil) // the cycle is over: context.Canceled for what outlives it
	}
	s.cycleActive.Store(false)
	s.totals.cycles++
	s.ctl.CycleEnd(s.cycle)
	s.done <- struct{}{} // capacity 1, drained by Run before the next cycle
	if s.closed.Load() {
		s.releaseAll()
	}
}

// finishAbort discards every packet still queued anywhere (the workers have
// dropped their local ones before parking), builds the cycle's error and
// ends the cycle. Caller holds mu, every worker parked.
func (s *sched) finishAbort() {
	if s.holdAddsInFlight() {
		return // the last hold add to finish decides again (hold.go, H2)
	}
	n := s.dropped
	for st, b := range s.buckets {
		d := uint64(b.Drain(nil))
		n += d
		s.unqueue(st, int(d))
		if _, ok := b.TakeSentinel(); ok {
			n++
		}
	}
	for _, w := range s.workers {
		clear(w.learn) // an aborted cycle teaches nothing (heavy.go)
		w.learnDone = w.learnDone[:0]
		clear(w.learnWork)
		n += w.drainDesignated()
		// Dropped value packets never consumed their slots, nor unfinished
		// joins their frames: every worker is parked, nothing is queued.
		for _, a := range w.arenaList {
			a.reset()
		}
	}
	s.totals.dropped += n
	s.totals.aborted++
	ce := s.cause
	ce.Cycle = s.cycle
	ce.Dropped = n
	s.result = ce
	s.endHolds(ce)
	s.closeStage(int(s.cur.Load()))
	s.endCycle()
}
