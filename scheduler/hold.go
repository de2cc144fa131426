package scheduler

import (
	"errors"
	"sync/atomic"
)

// Holds: producers outside the workers that keep a cycle open while they
// add.
//
// A Hold on stage st keeps the cycle it belongs to from closing st: the
// last-parked decision (advance) closes the open stage only while no hold
// on it or on an earlier stage is outstanding; the workers park meanwhile,
// and the holder's adds wake them as any add does. Release takes the hold
// off (under the monitor) and, if every worker is parked, makes the
// decision again.
//
// A cycle that ends early (a failure, a cancel, Close) ends its holds, so
// that no add of a hold outlives its cycle unseen:
//
//	H1. abortCycle (under mu) sets every hold's stopping flag and closes
//	    its stop channel: an add that starts now fails, and one waiting
//	    for room under MaxQueued (Block) stops waiting.
//	H2. Each add counts itself in its hold's inflight before it reads
//	    stopping, and uncounts itself when its packets are queued (or
//	    refused). finishAbort, which drains the buckets, does nothing while
//	    a hold of the cycle has an add in flight: the last such add to
//	    finish makes the decision again (finishHeldAbort). So an add either
//	    saw stopping and queued nothing, or its packets were queued before
//	    the drain: dropped with the cycle and counted in its
//	    CycleError.Dropped. (inflight and stopping are sequentially
//	    consistent atomics: an add that missed stopping is seen in flight.)
//	H3. finishAbort then sets each hold's error and closes its ended
//	    channel; an add that saw stopping waits for it and returns the
//	    cycle's error, whether or not its packets were queued first.

// A Hold is a producer's claim on a cycle: until Release, the cycle does
// not close the hold's stage (nor end), so a goroutine that walks a
// directory or reads a socket can add as it goes without a packet that
// blocks a worker. Get one with Scheduler.Hold. Its methods are safe for
// concurrent use.
//
// The order (ExampleHold): take the hold (before Run it holds the next
// cycle; during a cycle, that one), run Run on its own goroutine (it
// returns only after Release), add, Release, then wait for Run. Release
// says nothing of success: a producer that fails on its own must cancel
// Run's context before it releases the hold, or the cycle ends normally
// with the work added so far. An add that fails because the cycle ended
// early returns the cycle's *CycleError, the error Run returns. Each Add
// of one packet wakes one parked worker unless a WakePolicy option says
// otherwise (Config.Wake decides for AddAll).
type Hold struct {
	h     *Scheduler
	stage StageID
	cycle uint64 // the cycle it holds open

	inflight atomic.Int32  // adds in progress (H2)
	released atomic.Bool   // by Release (set under mu)
	stopping atomic.Bool   // the cycle is ending early (H1)
	stop     chan struct{} // closed with stopping set
	ended    atomic.Pointer[error]
	endedCh  chan struct{} // closed once ended is set (H3)
}

// errHoldStopped is what an add waiting for room returns when its hold's
// cycle began to end; the hold's add then returns the cycle's error.
var errHoldStopped = errors.New("scheduler: the hold's cycle ended")

// Hold returns a hold on stage st of the running cycle, or of the next
// one if none runs (or the running one is ending early): Run does not
// return while it is held, however many packets it runs meanwhile.
// Release it when done adding; a hold never released keeps Run waiting
// (or until Run's context is cancelled). It returns ErrClosed after
// Close, and an error wrapping ErrInvalid for an unknown stage or
// Unconstrained (stage 0, which never closes).
func (h *Scheduler) Hold(st StageID) (*Hold, error) {
	s := h.sched()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if st < 1 || int(st) > s.nStages {
		return nil, invalid("Hold of stage %d: the stages are 1..%d", st, s.nStages)
	}
	c := s.cycle
	if !s.cycleActive.Load() || s.cause != nil {
		c++ // the next cycle's
	}
	hd := &Hold{h: h, stage: st, cycle: c, stop: make(chan struct{}), endedCh: make(chan struct{})}
	s.holds = append(s.holds, hd)
	return hd, nil
}

// Add adds p to the hold's stage (unless a StageID option says
// otherwise), as Scheduler.Add, once the hold's cycle is running or
// before it starts. Nil means p was queued in the hold's cycle: it runs,
// or is dropped with the cycle and counted in its CycleError.Dropped (an
// add that races the early end), never left for a later cycle. Once the
// cycle has begun to end early, Add queues nothing and returns the cycle's
// error; an add waiting for room (Block) stops waiting then. After
// Release, Add is an error wrapping ErrInvalid.
func (hd *Hold) Add(p Packet, opts ...Option) error {
	return hd.add(p, nil, false, opts)
}

// AddAll is Add for many packets, as Scheduler.AddAll.
func (hd *Hold) AddAll(ps []Packet, opts ...Option) error {
	return hd.add(nil, ps, true, opts)
}

// add runs one add of the hold under H2: nil if its packets were queued
// in the hold's cycle (run, or dropped with it and counted), the cycle's
// error if the cycle was ending and they were not.
func (hd *Hold) add(p Packet, ps []Packet, all bool, opts []Option) error {
	s := hd.h.sched()
	hd.inflight.Add(1)
	err := errHoldStopped
	switch {
	case hd.stopping.Load():
	case hd.released.Load():
		err = invalid("Hold.Add after Release")
	case all:
		err = s.addAll(ps, s.options(hd, opts))
	default:
		err = s.add(p, s.options(hd, opts))
	}
	if hd.inflight.Add(-1) == 0 && hd.stopping.Load() {
		hd.h.sched().finishHeldAbort()
	}
	if err != nil && hd.stopping.Load() {
		<-hd.endedCh
		return *hd.ended.Load()
	}
	return err
}

// Err returns the error of the hold's cycle if it ended early, else nil.
func (hd *Hold) Err() error {
	if e := hd.ended.Load(); e != nil {
		return *e
	}
	return nil
}

// Release takes the hold off: once no hold on the open stage or an
// earlier one is left and its packets have run, the stage closes and the
// cycle goes on. Idempotent.
func (hd *Hold) Release() {
	s := hd.h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if hd.released.Load() {
		return
	}
	hd.released.Store(true)
	if hd.ended.Load() == nil && s.cycleActive.Load() && s.parked == s.n {
		s.advance(nil)
	}
}

// held reports whether a hold of the running cycle, not released, is on
// stage st or an earlier one. Caller holds mu.
func (s *sched) held(st int) bool {
	for _, hd := range s.holds {
		if hd.cycle == s.cycle && !hd.released.Load() && int(hd.stage) <= st {
			return true
		}
	}
	return false
}

// stopHolds is H1 for the running cycle's holds. Caller holds mu.
func (s *sched) stopHolds() {
	for _, hd := range s.holds {
		if hd.cycle == s.cycle {
			hd.stopNow()
		}
	}
}

// stopNow sets hd's stopping flag and closes stop, once. Caller holds mu.
func (hd *Hold) stopNow() {
	if !hd.stopping.Load() {
		hd.stopping.Store(true)
		close(hd.stop)
	}
}

// holdAddsInFlight reports whether an add of a running cycle's hold is in
// progress (H2). Caller holds mu.
func (s *sched) holdAddsInFlight() bool {
	for _, hd := range s.holds {
		if hd.cycle == s.cycle && hd.inflight.Load() != 0 {
			return true
		}
	}
	return false
}

// finishHeldAbort makes the abort's last decision again once the last
// hold add in flight has finished (H2), if every worker is parked.
func (s *sched) finishHeldAbort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause != nil && s.cycleActive.Load() && s.parked == s.n {
		s.finishAbort()
	}
}

// endHolds is H3: it ends the running cycle's holds with err and drops
// them with those of earlier cycles. Caller holds mu.
func (s *sched) endHolds(err error) {
	kept := s.holds[:0]
	for _, hd := range s.holds {
		if hd.cycle > s.cycle {
			kept = append(kept, hd)
			continue
		}
		if err != nil {
			hd.end(err)
		}
	}
	clear(s.holds[len(kept):])
	s.holds = kept
}

// end stops hd and sets its error, once. Caller holds mu.
func (hd *Hold) end(err error) {
	hd.stopNow()
	if hd.ended.Load() == nil {
		hd.ended.Store(&err)
		close(hd.endedCh)
	}
}
