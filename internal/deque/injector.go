package deque

import "sync/atomic"

// blockCap is the number of slots per injector block. 128 slots amortise
// the block allocation to under 1% of a push (one ~3 KiB allocation per
// 128 pushes of a 24-byte value) while a mostly empty bucket pins little
// memory. It is a multiple of 64, the slots one written word covers.
const blockCap = 128

// MaxTake is the most items one Injector.TakeBatch takes: a take never
// crosses one of the injector's blocks.
const MaxTake = blockCap

// block is a run of slots, each written once by the producer that drew its
// ticket and read once by the consumer that claimed it. written holds one
// publication bit per slot: 0 until the slot's value has been stored, then
// 1, never reset (blocks are not reused, so there is no ABA and no lap to
// hand back). Bits rather than a flag per slot let PushBatch publish up to
// 64 slots with one atomic OR.
type block[T any] struct {
	start   uint64 // index of vals[0]
	next    atomic.Pointer[block[T]]
	written [blockCap / 64]atomic.Uint64
	// spare links the block into the injector's retired or free stack
	// (see Reclaim).
	spare atomic.Pointer[block[T]]
	vals  [blockCap]T
}

// maxSpare bounds the free blocks an injector keeps for reuse: 128 blocks
// hold 16,384 items (≈ 400 KiB of 24-byte tasks), a large bulk add such
// as the benchmarks' fan-out; blocks beyond it are left to the garbage
// collector, so a larger burst does not pin its memory.
const maxSpare = 128

// isWritten reports whether slot off has been published (load-acquire:
// the value's write happens before).
func (b *block[T]) isWritten(off uint64) bool {
	return b.written[off/64].Load()&(1<<(off%64)) != 0
}

// Injector is a multi-producer, multi-consumer FIFO queue: the queue
// behind a stage's bucket. Any goroutine may call any method.
//
// It is a linked list of fixed blocks indexed by two free-running
// tickets. A producer draws a ticket with one atomic add, walks to (or
// links) the ticket's block, writes the value, then sets the slot's bit
// in the block's written bitmap (an atomic OR: a release). A consumer
// checks that the slot at head is written (load-acquire), then claims it
// by CAS on head, then reads it (claim-then-read). Nobody blocks: a consumer that meets a ticket drawn
// but not yet written returns Retry instead of waiting.
//
// The injector is unbounded by design: its producers are packets adding
// work in the middle of a GC or batch phase, which cannot be made to wait
// without deadlocking the phase. Its memory is the live items, at most two
// partly used blocks, and the consumed blocks: garbage at once, or kept
// for reuse (at most maxSpare) once the owner calls Reclaim.
type Injector[T any] struct {
	head      atomic.Uint64 // next ticket to consume
	headBlock atomic.Pointer[block[T]]
	// retired stacks the blocks that consumers have moved headBlock
	// past; pushed by consumers (a Treiber push), emptied by Reclaim.
	retired   atomic.Pointer[block[T]]
	_         cacheLine
	tail      atomic.Uint64 // next ticket to produce
	tailBlock atomic.Pointer[block[T]]
	// free stacks reclaimed blocks for producers to reuse. Between two
	// Reclaims it is only popped (producers, by CAS), never pushed, so a
	// popper cannot meet a block that left and came back (no ABA).
	free atomic.Pointer[block[T]]
	_    cacheLine
}

// NewInjector returns an empty injector.
func NewInjector[T any]() *Injector[T] { return newInjector[T](0) }

func newInjector[T any](start uint64) *Injector[T] {
	q := &Injector[T]{}
	b := &block[T]{start: start - start%blockCap}
	q.head.Store(start)
	q.tail.Store(start)
	q.headBlock.Store(b)
	q.tailBlock.Store(b)
	return q
}

// Push appends v. Any goroutine. It allocates one block per blockCap
// pushes.
func (q *Injector[T]) Push(v T) {
	// Load the tail block before drawing the ticket: the block was
	// reached by a producer whose ticket was drawn earlier than ours, so
	// it starts at or before our ticket and we only ever walk forward.
	b := q.tailBlock.Load()
	i := q.tail.Add(1) - 1
	b = q.walk(b, i)
	off := i - b.start
	b.vals[off] = v
	// Release (an atomic OR): publishes the value to the consumer that
	// claims i.
	b.written[off/64].Or(1 << (off % 64))
}

// PushBatch appends vs in order, as one producer's run of consecutive
// tickets: one atomic add draws them all and one atomic OR publishes each
// run of up to 64 slots, so a bulk add costs a plain store per item
// instead of two locked instructions. Consumers may take the first items
// while later ones are still being written. Any goroutine.
func (q *Injector[T]) PushBatch(vs []T) {
	if len(vs) == 0 {
		return
	}
	b := q.tailBlock.Load()
	i := q.tail.Add(uint64(len(vs))) - uint64(len(vs))
	for len(vs) > 0 {
		b = q.walk(b, i)
		off := i - b.start
		// The rest of this 64-slot word, or of vs.
		k := min(uint64(len(vs)), 64-off%64)
		copy(b.vals[off:off+k], vs[:k])
		mask := ^uint64(0)
		if k < 64 {
			mask = (uint64(1)<<k - 1) << (off % 64)
		}
		b.written[off/64].Or(mask)
		vs = vs[k:]
		i += k
	}
}

// walk returns the block of ticket i, starting from b (whose start is at
// or before i), linking new blocks as needed and moving tailBlock forward.
func (q *Injector[T]) walk(b *block[T], i uint64) *block[T] {
	for i-b.start >= blockCap {
		next := b.next.Load()
		if next == nil {
			nb := q.newBlock(b.start + blockCap)
			if b.next.CompareAndSwap(nil, nb) {
				next = nb
			} else {
				// Another producer linked first; nobody has seen nb,
				// so the garbage collector may have it.
				next = b.next.Load()
			}
		}
		q.tailBlock.CompareAndSwap(b, next)
		b = next
	}
	return b
}

// locate returns the block of ticket h, or nil if it is not linked yet.
// It moves headBlock forward past blocks that h has left.
func (q *Injector[T]) locate(b *block[T], h uint64) *block[T] {
	for h-b.start >= blockCap {
		next := b.next.Load()
		if next == nil {
			return nil
		}
		if q.headBlock.CompareAndSwap(b, next) {
			// Every ticket of b is claimed; its last readers may still
			// be reading it. Retire it; Reclaim makes it reusable once
			// nobody can be.
			for {
				top := q.retired.Load()
				b.spare.Store(top)
				if q.retired.CompareAndSwap(top, b) {
					break
				}
			}
		}
		b = next
	}
	return b
}

// newBlock returns an empty block starting at start: a reclaimed one if
// any, else a new one. Any goroutine.
func (q *Injector[T]) newBlock(start uint64) *block[T] {
	for {
		b := q.free.Load()
		if b == nil {
			return &block[T]{start: start}
		}
		// Only pops happen between Reclaims, so b.spare is stable.
		if q.free.CompareAndSwap(b, b.spare.Load()) {
			// Consumers zeroed every value they read; clear the rest of
			// the state before the block is linked (the link's CAS
			// publishes it).
			b.start = start
			b.next.Store(nil)
			b.spare.Store(nil)
			for i := range b.written {
				b.written[i].Store(0)
			}
			return b
		}
	}
}

// Reclaim makes the retired blocks (every slot consumed) reusable by later
// pushes, keeping at most maxSpare of them, so that a steady stream of
// bulk adds allocates no blocks. The caller must guarantee that no other
// goroutine is inside any method of q during Reclaim and that every call
// before it has returned: a scheduler calls it at the end of a cycle, with
// its workers parked and its bucket's Adds held off (bucket.Reclaim).
func (q *Injector[T]) Reclaim() {
	n := 0
	for f := q.free.Load(); f != nil; f = f.spare.Load() {
		n++
	}
	b := q.retired.Swap(nil)
	for ; b != nil && n < maxSpare; n++ {
		next := b.spare.Load()
		b.spare.Store(q.free.Load())
		q.free.Store(b)
		b = next
	}
}

// Steal takes the oldest item. Any goroutine. Retry means the oldest
// ticket was drawn by a producer that has not finished writing it, or
// another consumer claimed it first.
func (q *Injector[T]) Steal() (T, Status) {
	var zero T
	// headBlock before head: headBlock only moves to a block that some
	// head value already reached, so it starts at or before h.
	hb := q.headBlock.Load()
	h := q.head.Load()
	if int64(q.tail.Load()-h) <= 0 {
		return zero, Empty
	}
	b := q.locate(hb, h)
	if b == nil || !b.isWritten(h-b.start) { // load-acquire of the value
		return zero, Retry
	}
	if !q.head.CompareAndSwap(h, h+1) {
		return zero, Retry
	}
	v := &b.vals[h-b.start]
	r := *v
	*v = zero // ours alone now; drop the reference for the GC
	return r, Success
}

// claim takes up to limit items from the front, never across a block
// boundary, and returns them in place: the claimed run of the block's
// slots, ours alone once the CAS on head has succeeded. Any goroutine.
func (q *Injector[T]) claim(limit int) ([]T, Status) {
	hb := q.headBlock.Load()
	h := q.head.Load()
	n := int64(q.tail.Load() - h)
	if n <= 0 {
		return nil, Empty
	}
	b := q.locate(hb, h)
	if b == nil || !b.isWritten(h-b.start) {
		return nil, Retry
	}
	// Count the written prefix: every slot we claim must be published.
	off := h - b.start
	k := uint64(1)
	for k < uint64(min(n, int64(limit))) && off+k < blockCap && b.isWritten(off+k) {
		k++
	}
	if !q.head.CompareAndSwap(h, h+k) {
		return nil, Retry
	}
	return b.vals[off : off+k], Success
}

// TakeBatch takes up to len(dst) items from the front into dst, oldest
// first, and returns how many, k: a consumer may run them from dst (a
// scheduler's worker holding a bucket take, at a plain load each instead
// of a deque Pop) or move them into its deque with PushBatch. A batch
// never crosses a block boundary, so it may take fewer than len(dst)
// (at most MaxTake) even when more are queued; it also stops before a
// ticket whose producer has not finished writing. dst[k:] is left as it
// was. Success means k >= 1. Any goroutine; it panics if len(dst) is 0.
func (q *Injector[T]) TakeBatch(dst []T) (int, Status) {
	if len(dst) == 0 {
		panic("deque: Injector.TakeBatch into an empty destination")
	}
	run, st := q.claim(len(dst))
	if st != Success {
		return 0, st
	}
	copy(dst, run)
	clear(run) // ours alone; drop the references for the GC
	return len(run), Success
}

// Len returns the number of items drawn and not yet consumed (including
// tickets whose producer is still writing), as a snapshot. Any goroutine.
func (q *Injector[T]) Len() int {
	h := q.head.Load()
	t := q.tail.Load()
	if n := int64(t - h); n > 0 {
		return int(n)
	}
	return 0
}

// IsEmpty reports whether Len was zero when looked at. Any goroutine.
func (q *Injector[T]) IsEmpty() bool { return q.Len() == 0 }
