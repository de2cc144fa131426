package scheduler

import (
	"github.com/wsched/wsched/bucket"
	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/internal/tracebuf"
)

// Adding packets from outside the workers or from packets: Add, AddAll,
// AddDesignated and SetSentinel, and the trace record of each add.

// addTarget is the bucket that an add on stage st queues into: ErrClosed
// after Close.
func (s *sched) addTarget(st StageID) (*bucket.Bucket[task], error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.buckets[st], nil
}

// Add queues p in a stage's bucket: stage 1 unless a StageID option says
// otherwise. Any goroutine, at any time: before Run (the packet waits for
// its stage), during a cycle (from packets too), to an open or a later
// stage. If the stage is open and a worker is parked, Add wakes one (under
// WakeSearcher: only if no worker is searching already). Options: a
// StageID, Priority, a WakePolicy, Block.
//
// Add returns ErrClosed after Close, ErrQueueFull when Config.MaxQueued is
// reached, and an error wrapping ErrInvalid for a nil p or a bad option;
// nothing is queued then.
func (h *Scheduler) Add(p Packet, opts ...Option) error {
	s := h.sched()
	return s.add(p, s.options(nil, opts))
}

// add is Add with its options applied.
func (s *sched) add(p Packet, a addOptions) error {
	if !a.prio && p != nil && s.heavyOf(p, a.stage) {
		a.prio = true // learned heavy (heavy.go)
	}
	switch {
	case a.err != nil:
		return a.err
	case p == nil:
		return invalid("nil Packet")
	case a.lend:
		return invalid("Lend applies to AddAll")
	}
	b, err := s.addTarget(a.stage)
	if err != nil {
		return err
	}
	if s.bounded {
		if err := s.admit(a.stage, 1, a.block, a.stop); err != nil {
			return err
		}
	}
	one := [1]task{s.queued(p, a.stage)}
	n, err := b.Add(one[:], a.prio)
	if err != nil {
		s.unqueue(int(a.stage), 1)
		return ErrClosed
	}
	if s.ctl != nil {
		s.recordAdd(one[0], true, 1, a)
	}
	if n > 0 {
		wake := a.wake
		if !a.woken {
			wake = WakePolicy(policy.SingleWake(policy.Kind(wake)))
		}
		s.wakeForAdd(1, wake, -1)
	}
	return nil
}

// AddAll queues ps in a stage's bucket, in order: stage 1 unless a StageID
// option says otherwise, and wakes workers by Config.Wake or a WakePolicy
// option. It copies ps (about 3-4 ns a packet), unless Lend lends it. A
// nil element rejects the whole slice (nothing is queued), except with
// Lend, which does not look. Options: a StageID, Priority, Lend, a
// WakePolicy, Block. Errors as for Add, and under Config.MaxQueued an error
// wrapping ErrInvalid for more packets than the bound; an AddAll that
// races Close may have queued some of ps before it returns ErrClosed:
// Close drops those and counts them in Stats.Dropped.
func (h *Scheduler) AddAll(ps []Packet, opts ...Option) error {
	s := h.sched()
	return s.addAll(ps, s.options(nil, opts))
}

// addAll is AddAll with its options applied.
func (s *sched) addAll(ps []Packet, a addOptions) error {
	if a.err != nil {
		return a.err
	}
	if a.lend && a.prio {
		return invalid("Lend with Priority: priority packets are taken one at a time, there is no copy to save")
	}
	if !a.lend {
		for i, p := range ps {
			if p == nil {
				return invalid("nil Packet at index %d", i)
			}
		}
	}
	if _, err := s.addTarget(a.stage); err != nil {
		return err
	}
	if !a.prio && !a.lend {
		if hs := s.heavy.Load(); hs != nil {
			// Learned heavy packets first, each in the priority lane.
			if heavy, rest := splitHeavy(ps, hs, a.stage); heavy != nil {
				pa := a
				pa.prio = true
				for _, p := range heavy {
					if err := s.add(p, pa); err != nil {
						return err
					}
				}
				ps = rest
			}
		}
	}
	if len(ps) == 0 {
		return nil
	}
	if s.bounded {
		if err := s.admit(a.stage, len(ps), a.block, a.stop); err != nil {
			return err
		}
	}
	if a.lend {
		return s.lend(ps, a)
	}
	return s.copyAdd(ps, a, 0)
}

// queued returns the task for p in stage st. While tracing it is stamped
// with the control buffer's clock: an add cannot tell which goroutine
// calls it (a running packet or another goroutine), so a packet it queues
// is drawn as born on the control track. Any goroutine.
func (s *sched) queued(p Packet, st StageID) task {
	if s.ctl != nil {
		return s.stamped(p, st)
	}
	return mkTask(p, st)
}

// stamped is queued while tracing (out of line: queued stays inlinable).
//
//go:noinline
func (s *sched) stamped(p Packet, st StageID) task {
	t := mkTask(p, st)
	t.stamp(s.ctl.Stamp(), fromControl)
	return t
}

// recordAdd records an add call on the control buffer while tracing: how
// it queued n packets into a.stage and whom it wakes (a wake option, or
// the scheduler's rule), with the stamp of its first packet t. The
// replay of `wsched simulate` reads it; the control buffer is written
// under mu. single: a one-packet Add. Any goroutine, not holding mu.
//
//go:noinline
func (s *sched) recordAdd(t task, single bool, n int, a addOptions) {
	how := tracebuf.AddNormal
	switch {
	case a.prio:
		how = tracebuf.AddPriority
	case a.lend:
		how = tracebuf.AddLend
	}
	var wake uint8
	if a.woken {
		wake = uint8(a.wake)
	}
	s.mu.Lock()
	s.ctl.Add(how, single, int(a.stage), n, wake, t.born())
	s.mu.Unlock()
}

// copyAdd queues a copy of ps (a.prio: in the priority lane), and is the
// copy of a lent slice when its bucket has no span slot left (lent: nil
// elements are queued as nilElement packets, as the span would have
// produced them). Packets admitted and then refused (Close) leave the
// queued count here.
func (s *sched) copyAdd(ps []Packet, a addOptions, flags uint64) error {
	b := s.buckets[a.stage]
	t := s.queued(nil, a.stage) // one stamp for the whole slice
	t.meta |= flags
	// While tracing, each packet's stamp is spawnStampStep ticks after
	// the previous one's, so that a trace gives their order in the slice
	// (the order a bucket serves them in).
	var step uint64
	if s.ctl != nil {
		step = spawnStampStep << bornShift
	}
	// Runs of 64 tasks built on the stack in a tight loop, each pushed
	// with one call: no call per packet, no allocation.
	var chunk [64]task
	n := 0
	u := t
	for i := 0; i < len(ps); {
		src := ps[i:min(len(ps), i+len(chunk))]
		for j, p := range src {
			if p == nil { // lent only: copies reject nil above
				p = nilElement{i + j}
			}
			u.p = p
			chunk[j] = u
			u.meta += step
		}
		k, err := b.Add(chunk[:len(src)], a.prio)
		if err != nil {
			clear(chunk[:])
			// Closed (Close came before this run, maybe between two):
			// the runs already queued are Close's to drop, count in
			// Stats.Dropped and take off the queued count; the rest is
			// refused here.
			s.unqueue(int(a.stage), len(ps)-i)
			return ErrClosed
		}
		n += k
		i += len(src)
	}
	clear(chunk[:]) // drop the references the stack copy holds
	u.p = nil
	if s.ctl != nil {
		a.lend = false // copied
		s.recordAdd(t, false, len(ps), a)
	}
	if n > 0 {
		s.wakeForAdd(n, a.wake, -1)
	}
	return nil
}

// AddDesignated queues p for one worker only (MMTk's designated work, e.g.
// a per-worker prepare step). The worker runs designated packets before
// anything else, as stage Unconstrained, and is woken for them if it is
// parked during a cycle (MMTk queues them without a wake-up: #1160). The
// queue is bounded (64 packets): ErrQueueFull when full. An unknown worker
// or a nil p is an error wrapping ErrInvalid; ErrClosed after Close.
func (h *Scheduler) AddDesignated(worker int, p Packet) error {
	s := h.sched()
	if p == nil {
		return invalid("nil Packet")
	}
	if worker < 0 || worker >= s.n {
		return invalid("worker %d: unknown worker (have 0..%d)", worker, s.n-1)
	}
	w := s.workers[worker]
	// Send under the monitor, which Close takes to set closed: either the
	// send comes first and Close's drain counts the packet as dropped, or
	// we see closed and queue nothing. (The lock also orders the send
	// before the worker's re-check, wake.go step P4.) Designated work is
	// rare; the lock costs nothing that matters.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	select {
	case w.designated <- p:
		w.nDesignated.Add(1)
	default:
		return ErrQueueFull
	}
	// While tracing, the add (the packet itself carries no stamp: it
	// goes through the channel as it is).
	s.ctl.Add(tracebuf.AddDesignated, true, worker, 1, 0, s.ctl.Stamp())
	if s.cycleActive.Load() && w.parked {
		s.wakeWorker(w, -1)
	}
	return nil
}

// SetSentinel sets stage st's sentinel: a packet queued into st's own
// bucket when every worker is idle and st is otherwise drained, before any
// later stage opens. It is one-shot (taken when queued); a sentinel packet
// that calls SetSentinel again, and adds work to st, makes the stage loop.
// A stage has at most one pending; setting a second, or one for
// Unconstrained or an unknown stage, or a nil p, is an error wrapping
// ErrInvalid. ErrClosed after Close.
func (h *Scheduler) SetSentinel(st StageID, p Packet) error {
	s := h.sched()
	switch {
	case p == nil:
		return invalid("nil Packet")
	case st == Unconstrained:
		return invalid("Unconstrained has no sentinel")
	case st < 0 || int(st) > s.nStages:
		return invalid("StageID %d: unknown stage (have 1..%d)", st, s.nStages)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.buckets[st].SetSentinel(mkTask(p, st)) { // stamped when queued (advance)
		return invalid("stage %d already has a sentinel", st)
	}
	return nil
}
