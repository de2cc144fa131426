package bucket

import (
	"sync"
	"sync/atomic"
)

// MaxSpans is how many spans (AddSpan) a bucket holds between two Reclaims
// that find them all consumed. AddSpan reports false when they are used
// up, and the caller queues its packets another way (the scheduler's
// AddAll with Lend copies them instead).
const MaxSpans = 64

// A Source produces the packets of a span when consumers take them, so that
// queueing n packets costs O(1) and nothing is copied until a consumer
// takes a run of them.
type Source[T any] interface {
	// Fill writes packets lo, lo+1, …, lo+len(dst)-1 of the span into
	// dst. Consumers call it concurrently, on disjoint ranges: every
	// index of the span exactly once.
	Fill(dst []T, lo int)
	// Release is called once the span's packets have all been taken and
	// the bucket forgets the span (at a Reclaim), so that the source can
	// drop what it references. Owner.
	Release()
}

// span is one AddSpan: n packets produced by src, claimed in runs by an
// atomic add on next. One cache line each, so consumers claiming from one
// span do not slow those reading the next.
type span[T any] struct {
	next atomic.Int64 // indices below next are claimed; it may pass n
	n    atomic.Int64 // the span's length; 0 in a free slot
	src  Source[T]
	_    [64 - 32]byte // next, n and src take 32
}

// spans is a bucket's span lane. Producers append under mu and publish
// with the store of count; consumers read spans[cur:count] without a lock.
//
// Memory ordering: a producer writes the span's src (a plain store) and n
// and then stores count (sequentially consistent), a release; a consumer
// loads count (an acquire) before it reads any span below it, so it sees
// them written. A slot is written again only by reclaim, when no consumer
// is taking (the scheduler's workers are parked) and no producer is in
// AddSpan (the gate), and then by the AddSpan that reuses it. Parked
// workers may still look at the lane's emptiness meanwhile (empty, from
// the scheduler's P4 re-check), which reads only n, next, cur and count:
// those are atomics, and since empty loads next before n, a stale reader
// sees a consumed span (next ≥ n before reclaim, 0 ≥ 0 after) or, once the
// slot is reused, the new one, which is there. (len loads them the other
// way round; it is not called concurrently with reclaim.) A claim is one
// atomic add on next: the range it returns [lo, lo+k) is the claimer's
// alone, so each index is filled once; next may pass n, and a claim that
// starts at or past n gets nothing.
type spans[T any] struct {
	mu    sync.Mutex
	count atomic.Int32 // slots [0, count) are published
	cur   atomic.Int32 // slots below cur are known to be consumed
	slot  *[MaxSpans]span[T]
}

// AddSpan queues n packets on the normal lane that src produces when
// consumers take them (Source.Fill), after what the lane already holds.
// Any goroutine. bind is called once, under the span lane's lock, with the
// span's slot (0 ≤ slot < MaxSpans, unique among the bucket's live spans)
// and returns the source; it lets a caller keep its sources in an array
// indexed by slot instead of allocating one per call (a slot is free again
// once the Source's Release was called). ok is false if every slot is in
// use (nothing was queued, bind was not called); arrived is n if the
// bucket is open, else 0, as for Add. ErrDisabled if the bucket is
// disabled.
func (b *Bucket[T]) AddSpan(n int, bind func(slot int) Source[T]) (arrived int, ok bool, err error) {
	if n <= 0 {
		return 0, true, nil
	}
	if !b.enter() {
		return 0, false, ErrDisabled
	}
	l := &b.spans
	l.mu.Lock()
	k := l.count.Load()
	if k == MaxSpans {
		l.mu.Unlock()
		b.leave()
		return 0, false, nil
	}
	if l.slot == nil {
		l.slot = new([MaxSpans]span[T])
	}
	sp := &l.slot[k]
	sp.src = bind(int(k))
	sp.n.Store(int64(n)) // next is 0: a new bucket's, or reclaim's
	l.count.Store(k + 1) // release: publishes the span
	l.mu.Unlock()
	b.leave()
	return b.arrived(n), true, nil
}

// take claims up to len(dst) packets from the oldest span that has any
// left and fills them into dst; it returns how many (0: the lane is empty).
// Consumers.
func (l *spans[T]) take(dst []T) int {
	n := l.count.Load() // acquire: the spans below n are written
	for i := l.cur.Load(); i < n; i++ {
		sp := &l.slot[i]
		if n := sp.n.Load(); sp.next.Load() < n {
			k := int64(len(dst))
			lo := sp.next.Add(k) - k
			if lo < n {
				hi := min(lo+k, n)
				sp.src.Fill(dst[:hi-lo], int(lo))
				return int(hi - lo)
			}
		}
		l.cur.CompareAndSwap(i, i+1) // consumed: later takes start past it
	}
	return 0
}

// drain claims every packet left in the spans and passes each to f; if f
// is nil it only counts them, producing none (a scheduler discarding an
// aborted cycle's packets). It returns how many. Any goroutine.
func (l *spans[T]) drain(f func(T)) int {
	total := 0
	if f == nil {
		n := l.count.Load()
		for i := l.cur.Load(); i < n; i++ {
			sp := &l.slot[i]
			end := sp.n.Load()
			for next := sp.next.Load(); next < end; next = sp.next.Load() {
				if sp.next.CompareAndSwap(next, end) {
					total += int(end - next)
					break
				}
			}
		}
		return total
	}
	if l.empty() {
		return 0
	}
	buf := make([]T, 64) // escapes through Source.Fill: one per drain
	for {
		k := l.take(buf)
		if k == 0 {
			return total
		}
		for _, v := range buf[:k] {
			f(v)
		}
		total += k
	}
}

// len is the number of packets not yet claimed. Any goroutine; a snapshot.
func (l *spans[T]) len() int {
	n := l.count.Load()
	total := int64(0)
	for i := l.cur.Load(); i < n; i++ {
		sp := &l.slot[i]
		if r := sp.n.Load() - sp.next.Load(); r > 0 {
			total += r
		}
	}
	return int(total)
}

// empty reports whether every span is consumed. Any goroutine; a snapshot.
func (l *spans[T]) empty() bool {
	n := l.count.Load()
	for i := l.cur.Load(); i < n; i++ {
		sp := &l.slot[i]
		if sp.next.Load() < sp.n.Load() {
			return false
		}
	}
	return true
}

// reclaim forgets the spans, releasing their sources, if every one is
// consumed; otherwise it keeps them all (a later reclaim will find them
// consumed). Owner, under the gate's reclaim bit with no consumer taking.
func (l *spans[T]) reclaim() {
	n := l.count.Load()
	if n == 0 || !l.empty() {
		return
	}
	for i := range n {
		sp := &l.slot[i]
		sp.src.Release()
		sp.src = nil
		sp.n.Store(0)
		sp.next.Store(0)
	}
	l.cur.Store(0)
	l.count.Store(0)
}
