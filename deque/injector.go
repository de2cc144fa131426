package deque

import "sync/atomic"

// blockCap is the number of slots per injector block. 128 slots amortise
// the block allocation to under 1% of a push (one ~3 KiB allocation per
// 128 pushes of a 16-byte value) while a mostly empty bucket pins little
// memory.
const blockCap = 128

// injSlot is written once by the producer that drew its ticket and read
// once by the consumer that claimed it. written is the publication flag:
// 0 until val has been stored, then 1, never reset (blocks are not
// reused, so there is no ABA and no lap to hand back).
type injSlot[T any] struct {
	written atomic.Uint32
	val     T
}

type block[T any] struct {
	start uint64 // index of slots[0]
	next  atomic.Pointer[block[T]]
	slots [blockCap]injSlot[T]
}

// Injector is a multi-producer, multi-consumer FIFO queue: the queue
// behind a stage's bucket. Any goroutine may call any method.
//
// It is a linked list of fixed blocks indexed by two free-running
// tickets. A producer draws a ticket with one atomic add, walks to (or
// links) the ticket's block, writes the value, then sets the slot's
// written flag (store-release). A consumer checks that the slot at head
// is written (load-acquire), then claims it by CAS on head, then reads it
// (claim-then-read). Nobody blocks: a consumer that meets a ticket drawn
// but not yet written returns Retry instead of waiting.
//
// The injector is unbounded by design: its producers are packets adding
// work in the middle of a GC or batch phase, which cannot be made to wait
// without deadlocking the phase. Its memory is the live items plus at
// most two partly used blocks; consumed blocks become garbage at once.
type Injector[T any] struct {
	head      atomic.Uint64 // next ticket to consume
	headBlock atomic.Pointer[block[T]]
	_         cacheLine
	tail      atomic.Uint64 // next ticket to produce
	tailBlock atomic.Pointer[block[T]]
	_         cacheLine
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
	for i-b.start >= blockCap {
		next := b.next.Load()
		if next == nil {
			nb := &block[T]{start: b.start + blockCap}
			if b.next.CompareAndSwap(nil, nb) {
				next = nb
			} else {
				next = b.next.Load()
			}
		}
		q.tailBlock.CompareAndSwap(b, next)
		b = next
	}
	s := &b.slots[i-b.start]
	s.val = v
	// Store-release: publishes val to the consumer that claims i.
	s.written.Store(1)
}

// locate returns the slot of ticket h, or nil if its block is not linked
// yet. It moves headBlock forward past blocks that h has left.
func (q *Injector[T]) locate(b *block[T], h uint64) (*block[T], *injSlot[T]) {
	for h-b.start >= blockCap {
		next := b.next.Load()
		if next == nil {
			return nil, nil
		}
		q.headBlock.CompareAndSwap(b, next)
		b = next
	}
	return b, &b.slots[h-b.start]
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
	_, s := q.locate(hb, h)
	if s == nil || s.written.Load() == 0 { // load-acquire of val
		return zero, Retry
	}
	if !q.head.CompareAndSwap(h, h+1) {
		return zero, Retry
	}
	v := s.val
	s.val = zero // ours alone now; drop the reference for the GC
	return v, Success
}

// StealBatchAndPop takes up to limit items from the front: the first is
// returned, the rest are pushed into dst (which the caller must own) in
// FIFO order. A batch never crosses a block boundary, so it may take
// fewer than limit even when more are queued. The int result is the
// number moved into dst. Any goroutine; the owner of dst.
func (q *Injector[T]) StealBatchAndPop(dst *Deque[T], limit int) (T, int, Status) {
	var zero T
	switch {
	case limit <= 0:
		panic("deque: Injector.StealBatchAndPop with limit <= 0")
	case dst == nil:
		panic("deque: Injector.StealBatchAndPop into a nil destination")
	}
	dst.mustOwn("Injector.StealBatchAndPop destination")
	hb := q.headBlock.Load()
	h := q.head.Load()
	n := int64(q.tail.Load() - h)
	if n <= 0 {
		return zero, 0, Empty
	}
	b, s := q.locate(hb, h)
	if s == nil || s.written.Load() == 0 {
		return zero, 0, Retry
	}
	// Count the written prefix: every slot we claim must be published.
	off := h - b.start
	k := uint64(1)
	for k < uint64(min(n, int64(limit))) && off+k < blockCap && b.slots[off+k].written.Load() != 0 {
		k++
	}
	if !q.head.CompareAndSwap(h, h+k) {
		return zero, 0, Retry
	}
	v := s.val
	s.val = zero
	for j := uint64(1); j < k; j++ {
		sj := &b.slots[off+j]
		dst.put(sj.val)
		sj.val = zero
	}
	if k > 1 {
		dst.bottom.Store(dst.ownBot) // publish the moved items at once
	}
	return v, int(k - 1), Success
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
