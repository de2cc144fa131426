package bucket

import (
	"errors"
	"runtime"
	"sync/atomic"

	"github.com/wsched/wsched/internal/deque"
)

// ErrDisabled is returned by Add and AddSpan on a disabled bucket: the
// packets were refused, not queued.
var ErrDisabled = errors.New("bucket: disabled")

// disabledBit is bit 62 of Bucket.gate, the highest below the sign bit;
// reclaimBit is the one below it. The bits below both count Add calls in
// progress, so Disable can wait for them (see Disable). 2^61 concurrent
// Adds cannot happen, so the count never reaches either flag.
const disabledBit = int64(1) << 62

// reclaimBit is set in Bucket.gate while Reclaim runs; Adds wait for it.
const reclaimBit = int64(1) << 61

// Bucket is one stage's queue of packets: a normal lane and a priority lane,
// each an unbounded MPMC FIFO (a deque.Injector), the normal lane followed
// by up to MaxSpans spans (packets a Source produces when they are taken,
// AddSpan), plus the open, enabled and sentinel state the scheduler keeps
// per stage.
//
// Callers: producers (any goroutine) call Add and AddSpan; consumers (the
// scheduler's workers) call TakePriority and Take; the owner (the
// scheduler) calls Open, Close, Disable, Reclaim and the sentinel methods.
// A bucket wakes nobody: Add and AddSpan report how many packets became
// visible to consumers and the caller decides whom to wake.
type Bucket[T any] struct {
	queue *deque.Injector[T] // normal lane
	prio  *deque.Injector[T] // priority lane: taken one packet at a time

	// open says consumers may take packets. Written by the owner
	// (store: publishes the open state to Add, which loads it after its push,
	// see Add); read by anyone.
	open atomic.Bool

	// gate is disabledBit|adds-in-progress. Add increments it before pushing
	// and decrements it after (both read-modify-write, sequentially
	// consistent), so Disable, which sets disabledBit and then waits for the
	// count to reach zero, knows no push is in flight afterwards.
	gate atomic.Int64

	// The sentinel is guarded by the owner's lock: Bucket does no locking of
	// its own for it.
	sentinel    T
	hasSentinel bool

	// spans is the rest of the normal lane: runs of packets queued by
	// AddSpan and produced by their Source when taken (span.go).
	spans spans[T]
}

// New returns an enabled, closed, empty bucket.
func New[T any]() *Bucket[T] {
	return &Bucket[T]{queue: deque.NewInjector[T](), prio: deque.NewInjector[T]()}
}

// enter registers an Add in progress; false means the bucket is disabled.
func (b *Bucket[T]) enter() bool {
	for {
		g := b.gate.Add(1) // RMW: orders against Disable's Or and Reclaim's CAS
		if g&disabledBit != 0 {
			b.gate.Add(-1)
			return false
		}
		if g&reclaimBit == 0 {
			return true
		}
		// Reclaim holds the lanes for a few µs: step back and wait.
		b.gate.Add(-1)
		for b.gate.Load()&reclaimBit != 0 {
			runtime.Gosched()
		}
	}
}

// leave ends an Add in progress.
func (b *Bucket[T]) leave() { b.gate.Add(-1) }

// arrived returns n if the bucket is open, else 0. Called after the push: if
// the owner opens the bucket after this load, its count of queued packets
// (taken after the open store) includes ours, so one side always sees them.
func (b *Bucket[T]) arrived(n int) int {
	if b.open.Load() { // load-acquire, after the push
		return n
	}
	return 0
}

// Add queues vs, in order, on the normal lane (prio false) or the priority
// lane. Any goroutine. It returns how many packets became visible to
// consumers: len(vs) if the bucket is open, 0 if it is closed (they wait
// for Open). A disabled bucket refuses them with ErrDisabled (nothing is
// queued). Add keeps no reference to vs: its elements are copied, up to 64
// published with one atomic operation (a block's written bits), and two
// atomic adds on the gate per call.
func (b *Bucket[T]) Add(vs []T, prio bool) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	if !b.enter() {
		return 0, ErrDisabled
	}
	if prio {
		b.prio.PushBatch(vs)
	} else {
		b.queue.PushBatch(vs)
	}
	b.leave()
	return b.arrived(len(vs)), nil
}

// TakePriority takes one packet from the priority lane: a priority packet
// is never taken in a batch with others. ok is false if none was taken;
// retry says a producer was mid-push or another consumer raced this one,
// so the lane may hold packets still. Consumers.
func (b *Bucket[T]) TakePriority() (v T, ok, retry bool) {
	v, st := b.prio.Steal()
	return v, st == deque.Success, st == deque.Retry
}

// Take takes up to len(dst) packets from the normal lane, oldest first
// (queued packets, then the spans in the order they were added), into
// dst, and returns how many (0: none, with retry as for TakePriority).
// len(dst) must not exceed 128: one take claims from one block of the
// queue or one run of a span. Consumers.
func (b *Bucket[T]) Take(dst []T) (n int, retry bool) {
	n, st := b.queue.TakeBatch(dst)
	if st == deque.Success {
		return n, false
	}
	if k := b.spans.take(dst); k > 0 {
		return k, false
	}
	return 0, st == deque.Retry
}

// Drain takes every packet from both lanes, calls f (if not nil) on each, and
// returns how many it took. Any goroutine; packets added concurrently may or
// may not be taken. Drain(nil) discards a span without producing its
// packets.
func (b *Bucket[T]) Drain(f func(T)) int {
	n := 0
	for {
		v, st := b.prio.Steal()
		if st == deque.Empty {
			v, st = b.queue.Steal()
		}
		if st == deque.Empty {
			return n + b.spans.drain(f)
		}
		if st == deque.Success {
			n++
			if f != nil {
				f(v)
			}
		}
	}
}

// Len is the number of queued packets in both lanes (spans included), the
// bucket's depth. Any goroutine; a snapshot.
func (b *Bucket[T]) Len() int { return b.queue.Len() + b.spans.len() + b.prio.Len() }

// PriorityEmpty reports whether the priority lane is empty.
func (b *Bucket[T]) PriorityEmpty() bool { return b.prio.IsEmpty() }

// NormalEmpty reports whether the normal lane is empty (a consumer that
// has just looked at the priority lane need not look again).
func (b *Bucket[T]) NormalEmpty() bool { return b.queue.IsEmpty() && b.spans.empty() }

// Open lets consumers take packets and makes later Adds report their packets
// as arrived. Owner.
func (b *Bucket[T]) Open() { b.open.Store(true) }

// Close makes later Adds report 0 arrivals. Queued packets stay queued. Owner.
func (b *Bucket[T]) Close() { b.open.Store(false) }

// Disable makes every later Add fail with ErrDisabled and waits until the
// Adds already in progress have queued their packets, so that a Drain after
// Disable takes everything that was accepted. Owner.
func (b *Bucket[T]) Disable() {
	b.gate.Or(disabledBit)
	for b.gate.Load()&^disabledBit != 0 { // an Add is between enter and leave
		runtime.Gosched() // an Add holds the gate for a few pushes only
	}
}

// Reclaim lets both lanes reuse their consumed blocks (deque.Injector's
// Reclaim), so that the next cycle's adds allocate nothing, and forgets the
// spans if all of them are consumed (releasing their sources, which frees
// their slots). Owner, when no
// consumer can be taking from the bucket (a scheduler's workers are all
// parked, or gone after Close). Adds from other goroutines are held off
// meanwhile; if one is in progress, Reclaim does nothing this time. A
// disabled bucket may be reclaimed too (after Close's Drain, so that the
// spans' sources are released).
func (b *Bucket[T]) Reclaim() {
	g := b.gate.Load()
	if g&^disabledBit != 0 || !b.gate.CompareAndSwap(g, g|reclaimBit) {
		return
	}
	b.queue.Reclaim()
	b.prio.Reclaim()
	b.spans.reclaim()
	b.gate.Add(-reclaimBit)
}

// SetSentinel sets the bucket's sentinel, the packet the owner queues when
// the stage has drained. A bucket holds at most one: SetSentinel returns
// false, and changes nothing, if one is already set. The owner serialises
// every sentinel method with its own lock.
func (b *Bucket[T]) SetSentinel(v T) bool {
	if b.hasSentinel {
		return false
	}
	b.sentinel, b.hasSentinel = v, true
	return true
}

// TakeSentinel removes and returns the sentinel, if one is set. Owner, under
// its lock.
func (b *Bucket[T]) TakeSentinel() (T, bool) {
	var zero T
	v, ok := b.sentinel, b.hasSentinel
	b.sentinel, b.hasSentinel = zero, false
	return v, ok
}
