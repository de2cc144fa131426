package scheduler

import "sync/atomic"

// Holds: producers outside the workers that keep a cycle open while they
// add.
//
// A Hold on stage st keeps the cycle it belongs to from closing st: the
// last-parked decision (advance) closes the open stage only while no hold
// on it or on an earlier stage is outstanding; the workers park meanwhile,
// and the holder's adds wake them as any add does. Release takes the hold
// off (under the monitor) and, if every worker is parked, makes the
// decision again. A cycle that ends early (a failure, a cancel, Close)
// ends its holds with its error: their adds return it from then on.

// A Hold is a producer's claim on a cycle: until Release, the cycle does
// not close the hold's stage (nor end), so a goroutine that walks a
// directory or reads a socket can add as it goes without a packet that
// blocks a worker. Get one with Scheduler.Hold. Its methods are safe for
// concurrent use.
type Hold struct {
	h     *Scheduler
	stage StageID
	cycle uint64 // the cycle it holds open
	// ended is the error of the cycle, set when the cycle ended early;
	// released is set by Release.
	ended    atomic.Pointer[error]
	released bool // under mu
}

// Hold returns a hold on stage st of the running cycle, or of the next
// one if none runs: Run does
// not return while it is held, however many packets it runs meanwhile.
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
	if !s.cycleActive.Load() {
		c++ // the next cycle's
	}
	hd := &Hold{h: h, stage: st, cycle: c}
	s.holds = append(s.holds, hd)
	return hd, nil
}

// Add adds p to the hold's stage (unless a StageID option says
// otherwise), as Scheduler.Add, once the hold's cycle is running or
// before it starts; after the cycle ended early, it returns that cycle's
// error and queues nothing. An add that races the early end may be
// dropped by it (counted in the cycle's CycleError.Dropped).
func (hd *Hold) Add(p Packet, opts ...Option) error {
	if e := hd.ended.Load(); e != nil {
		return *e
	}
	return hd.h.Add(p, append([]Option{hd.stage}, opts...)...)
}

// AddAll is Add for many packets, as Scheduler.AddAll.
func (hd *Hold) AddAll(ps []Packet, opts ...Option) error {
	if e := hd.ended.Load(); e != nil {
		return *e
	}
	return hd.h.AddAll(ps, append([]Option{hd.stage}, opts...)...)
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
	if hd.released {
		return
	}
	hd.released = true
	for i, o := range s.holds {
		if o == hd {
			s.holds = append(s.holds[:i], s.holds[i+1:]...)
			break
		}
	}
	if hd.ended.Load() == nil && s.cycleActive.Load() && s.parked == s.n {
		s.advance(nil)
	}
}

// held reports whether a hold of the running cycle is on stage st or an
// earlier one. Caller holds mu.
func (s *sched) held(st int) bool {
	for _, hd := range s.holds {
		if hd.cycle == s.cycle && int(hd.stage) <= st {
			return true
		}
	}
	return false
}

// endHolds ends the holds of the cycle that just ended early with err,
// and drops them. Caller holds mu.
func (s *sched) endHolds(err error) {
	kept := s.holds[:0]
	for _, hd := range s.holds {
		if hd.cycle == s.cycle {
			hd.ended.Store(&err)
			continue
		}
		kept = append(kept, hd)
	}
	clear(s.holds[len(kept):])
	s.holds = kept
}
