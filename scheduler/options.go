package scheduler

import (
	"context"

	"github.com/wsched/wsched/internal/policy"
)

// Add options: what an Add or AddAll call may change about where its
// packets go and whom it wakes.

// Option modifies one Add or AddAll call. Options are a StageID (the stage
// to queue into; stage 1 by default), Priority, Lend, Block and a wake
// WakePolicy (WakeOne, WakeAll, WakeN, WakeSearcher: whom this call wakes,
// instead of Config.Wake; the zero WakePolicy changes nothing). An option that
// does not apply to the call is an error wrapping ErrInvalid.
type Option interface {
	// apply returns a with the option applied (by value: a pointer
	// passed through the interface would make every add allocate its
	// options).
	apply(a addOptions) addOptions
}

// addOptions collects Options.
type addOptions struct {
	stage StageID
	wake  WakePolicy
	woken bool // wake came from an option, not Config.Wake
	prio  bool
	lend  bool
	block context.Context
	stop  <-chan struct{} // a Hold's add: closed when its cycle ends early
	err   error
}

func (st StageID) apply(a addOptions) addOptions { a.stage = st; return a }

func (p WakePolicy) apply(a addOptions) addOptions {
	if p == 0 {
		return a // the zero WakePolicy: no override
	}
	if policy.Kind(p).Family() != policy.FamilyWake {
		if a.err == nil {
			a.err = invalid("%s is not a wake policy", p)
		}
		return a
	}
	a.wake, a.woken = p, true
	return a
}

type flagOption uint8

const (
	optPriority flagOption = iota
	optLend
)

func (o flagOption) apply(a addOptions) addOptions {
	if o == optPriority {
		a.prio = true
	} else {
		a.lend = true
	}
	return a
}

type blockOption struct{ ctx context.Context }

func (o blockOption) apply(a addOptions) addOptions { a.block = o.ctx; return a }

// Priority queues into the stage's priority lane: the next worker to look
// at the bucket takes each priority packet before any normal one, and
// takes it alone, never in a batch. For known-heavy packets (MMTk's
// ScanCodeCacheRoots in the luindex case, mmtk-core #1200), so that the
// worker that takes one is not also holding a batch of others.
var Priority Option = optPriority

// Lend makes AddAll lend its slice instead of copying it: the caller's
// cost is O(1) whatever its length, and workers read it in place, each
// take claiming the next run of it with one atomic add. The caller must
// not modify the slice's elements until every packet of it has been
// taken, which it knows for certain once the Run that drains the stage
// has returned (or Close has); reading it meanwhile is fine. Elements are
// not looked at when the slice is lent: a nil element is found when a
// worker takes it and ends the cycle like a failing packet (named "nil
// lent element", wrapping ErrInvalid, with its index). A stage keeps up
// to 64 lent slices per cycle; past that AddAll copies. The bucket serves
// copied packets before lent ones. Not with Priority.
var Lend Option = optLend

// Block makes Add and AddAll wait, until ctx is done, for room under
// Config.MaxQueued instead of failing with ErrQueueFull. From a packet it
// never waits (the workers could all be waiting): a full queue is then
// ErrQueueFull.
func Block(ctx context.Context) Option { return blockOption{ctx} }

// options applies opts over the scheduler's defaults, and over a hold's
// stage when hd is not nil. Caller: an add.
func (s *sched) options(hd *Hold, opts []Option) addOptions {
	a := addOptions{stage: 1, wake: s.cfg.Wake}
	if hd != nil {
		a.stage, a.stop = hd.stage, hd.stop
	}
	for _, o := range opts {
		if o != nil {
			a = o.apply(a)
		}
	}
	if a.err == nil && (a.stage < 0 || int(a.stage) > s.nStages) {
		a.err = invalid("StageID %d: unknown stage (have 0..%d)", a.stage, s.nStages)
	}
	return a
}
