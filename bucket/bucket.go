package bucket

import (
	"errors"
	"runtime"
	"sync/atomic"

	"github.com/wsched/wsched/internal/deque"
)

// ErrDisabled is returned by the Add methods of a disabled bucket: the
// packets were refused, not queued.
var ErrDisabled = errors.New("bucket: disabled")

// disabledBit is the top bit of Bucket.gate. The low bits count Add calls in
// progress, so Disable can wait for them (see Disable). 2^62 concurrent Adds
// cannot happen, so the count never reaches the flag.
const disabledBit = int64(1) << 62

// reclaimBit is set in Bucket.gate while Reclaim runs; Adds wait for it.
const reclaimBit = int64(1) << 61

// Bucket is one stage's queue of packets: a normal lane and a priority lane,
// each an unbounded MPMC FIFO (a deque.Injector), the normal lane followed
// by up to MaxSpans spans (packets a Source produces when they are taken,
// AddSpan), plus the open, enabled and sentinel state the scheduler keeps
// per stage.
//
// Callers: producers (any goroutine) call the Add methods; consumers (the
// scheduler's workers) call TakePriority, TakeBatch and Take; the owner (the
// scheduler) calls Open, Close, Enable, Disable and the sentinel methods. A
// bucket wakes nobody: the Add methods report how many packets became
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

// Add queues v on the normal lane. Any goroutine. It returns how many packets
// became visible to consumers: 1 if the bucket is open, 0 if it is closed
// (the packet waits for Open). A disabled bucket refuses v with ErrDisabled.
func (b *Bucket[T]) Add(v T) (int, error) {
	if !b.enter() {
		return 0, ErrDisabled
	}
	b.queue.Push(v)
	b.leave()
	return b.arrived(1), nil
}

// BulkAdd queues vs on the normal lane, in order. Any goroutine. It returns
// len(vs) if the bucket is open, else 0; ErrDisabled if it is disabled (then
// nothing was queued).
func (b *Bucket[T]) BulkAdd(vs []T) (int, error) { return b.bulkSlice(false, vs) }

// BulkAddFunc queues at(0), …, at(n-1) on the normal lane, for callers whose
// packets are not already a []T. Same results as BulkAdd. (A Bulk spares
// the call per packet.) If at panics, the runs of 64 staged before it stay
// queued, released to consumers but not reported as arrived, so the
// caller's wake policy is not applied to them; the bucket stays usable.
func (b *Bucket[T]) BulkAddFunc(n int, at func(i int) T) (int, error) {
	return b.bulk(false, n, at)
}

// A Bulk adds packets to one lane of a bucket in runs, with the results of
// one BulkAdd of all of them: the bucket's gate is held from StartBulk to
// End, so Disable waits for End and a disabled bucket refuses the whole
// Bulk at StartBulk. For a caller that converts its packets into T in
// runs of its own (the scheduler stages 64 tasks at a time on its stack):
// no call per packet, and nothing escapes to the heap. Use it from one
// goroutine, and always call End.
type Bulk[T any] struct {
	b *Bucket[T]
	q *deque.Injector[T]
	n int
}

// StartBulk begins a Bulk on the normal lane (prio false) or the priority
// lane. ErrDisabled if the bucket is disabled (then there is nothing to
// End).
//
// Measured: a scheduler's BulkAdd of 4096 packets (BenchmarkBulkAddFanout,
// add-ns/packet) took 7.0 ns per packet with BulkAddFunc's call per packet
// (commit 637bf04) and 4.7 with runs of 64 pushed by Bulk (6044d0a),
// medians of 8 interleaved runs each, p<0.001.
func (b *Bucket[T]) StartBulk(prio bool) (Bulk[T], error) {
	if !b.enter() {
		return Bulk[T]{}, ErrDisabled
	}
	q := b.queue
	if prio {
		q = b.prio
	}
	return Bulk[T]{b: b, q: q}, nil
}

// Push queues vs, in order, after the packets pushed before (one
// Injector.PushBatch; vs is copied, not kept). It panics after End.
func (a *Bulk[T]) Push(vs []T) {
	if a.b == nil {
		panic("bucket: Bulk.Push after End (or on a Bulk that StartBulk refused)")
	}
	a.q.PushBatch(vs)
	a.n += len(vs)
}

// End releases the gate and returns how many of the pushed packets became
// visible to consumers, as BulkAdd does: all of them if the bucket is
// open, else 0. Call it exactly once per StartBulk that succeeded; later
// calls, and calls on the zero Bulk, do nothing and return 0. (A copy of a
// Bulk must not be ended as well: the gate would be released twice.)
func (a *Bulk[T]) End() int {
	b := a.b
	if b == nil {
		return 0
	}
	a.b = nil
	b.leave()
	return b.arrived(a.n)
}

// AddPriority queues v on the priority lane. Consumers take priority packets
// before normal ones and one at a time, never in a batch with others. Same
// results as Add.
func (b *Bucket[T]) AddPriority(v T) (int, error) {
	if !b.enter() {
		return 0, ErrDisabled
	}
	b.prio.Push(v)
	b.leave()
	return b.arrived(1), nil
}

// BulkAddPriority queues vs on the priority lane. Same results as BulkAdd.
func (b *Bucket[T]) BulkAddPriority(vs []T) (int, error) { return b.bulkSlice(true, vs) }

// BulkAddPriorityFunc is BulkAddFunc for the priority lane.
func (b *Bucket[T]) BulkAddPriorityFunc(n int, at func(i int) T) (int, error) {
	return b.bulk(true, n, at)
}

// bulkSlice queues vs on a lane as one Bulk: one Injector.PushBatch, no
// staging.
func (b *Bucket[T]) bulkSlice(prio bool, vs []T) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	a, err := b.StartBulk(prio)
	if err != nil {
		return 0, err
	}
	a.Push(vs)
	return a.End(), nil
}

// bulk queues at(0), …, at(n-1) on a lane as one Bulk, staging the
// packets 64 at a time on the stack: one atomic add and one atomic OR per
// 64 packets instead of two locked instructions per packet.
func (b *Bucket[T]) bulk(prio bool, n int, at func(i int) T) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	a, err := b.StartBulk(prio)
	if err != nil {
		return 0, err
	}
	// An at that panics must not leave the gate held (Disable would wait
	// for ever); End is idempotent, so the deferred call is a no-op
	// after the one below.
	defer a.End()
	var chunk [64]T
	for i := 0; i < n; {
		k := min(n-i, len(chunk))
		for j := range k {
			chunk[j] = at(i + j)
		}
		a.Push(chunk[:k])
		i += k
	}
	clear(chunk[:]) // drop the references the stack copy holds
	return a.End(), nil
}

// TakePriority takes one packet from the priority lane. Consumers.
func (b *Bucket[T]) TakePriority() (T, deque.Status) { return b.prio.Steal() }

// TakeBatch takes up to limit packets from the normal lane: one is returned,
// the rest are pushed into dst, which the caller must own. The int is how
// many went into dst. Consumers. It panics if limit <= 0 or dst is nil.
func (b *Bucket[T]) TakeBatch(dst *deque.Deque[T], limit int) (T, int, deque.Status) {
	var v T
	switch {
	case limit <= 0:
		panic("bucket: TakeBatch with limit <= 0")
	case dst == nil:
		panic("bucket: TakeBatch into a nil destination")
	}
	// One injector take moves at most MaxTake packets: it never crosses
	// one of the injector's blocks.
	var run [deque.MaxTake]T
	k, st := b.queue.TakeBatch(run[:min(limit, deque.MaxTake)])
	if st == deque.Success {
		dst.PushBatch(run[1:k])
		return run[0], k - 1, st
	}
	if b.spans.empty() {
		return v, 0, st
	}
	// The run passes through a buffer (allocated: Source.Fill is an
	// interface call, so the buffer escapes), at most 64 packets a call.
	buf := make([]T, min(limit, 64))
	k = b.spans.take(buf)
	if k == 0 {
		return v, 0, st
	}
	dst.PushBatch(buf[1:k])
	return buf[0], k - 1, deque.Success
}

// TakeInto takes up to len(dst) packets from the normal lane into dst,
// oldest first, and returns how many: TakeBatch for a consumer that keeps
// the batch to itself instead of publishing it in a deque. Consumers. It
// panics if dst is empty.
func (b *Bucket[T]) TakeInto(dst []T) (int, deque.Status) {
	n, st := b.queue.TakeBatch(dst)
	if st == deque.Success {
		return n, st
	}
	if k := b.spans.take(dst); k > 0 {
		return k, deque.Success
	}
	return 0, st
}

// Take takes one packet, from the priority lane if it has one, else from the
// normal lane. Consumers.
func (b *Bucket[T]) Take() (T, deque.Status) {
	v, st := b.prio.Steal()
	if st != deque.Empty {
		return v, st
	}
	if v, st = b.queue.Steal(); st == deque.Success || b.spans.empty() {
		return v, st
	}
	one := make([]T, 1) // escapes through Source.Fill: only when spans hold packets
	if b.spans.take(one) == 1 {
		return one[0], deque.Success
	}
	return v, st
}

// Drain takes every packet from both lanes, calls f (if not nil) on each, and
// returns how many it took. Any goroutine; packets added concurrently may or
// may not be taken.
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

// PriorityLen is the number of queued packets in the priority lane.
func (b *Bucket[T]) PriorityLen() int { return b.prio.Len() }

// IsEmpty reports whether both lanes are empty. Any goroutine; a snapshot.
func (b *Bucket[T]) IsEmpty() bool {
	return b.prio.IsEmpty() && b.queue.IsEmpty() && b.spans.empty()
}

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

// IsOpen reports whether the bucket is open. Any goroutine.
func (b *Bucket[T]) IsOpen() bool { return b.open.Load() }

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

// Enable undoes Disable. Owner.
func (b *Bucket[T]) Enable() { b.gate.And(^disabledBit) }

// IsEnabled reports whether Adds are accepted. Any goroutine.
func (b *Bucket[T]) IsEnabled() bool { return b.gate.Load()&disabledBit == 0 }

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

// HasSentinel reports whether a sentinel is set. Owner, under its lock.
func (b *Bucket[T]) HasSentinel() bool { return b.hasSentinel }
