package deque

import "sync/atomic"

// Status is the outcome of a steal.
type Status uint8

const (
	// Empty: the queue held nothing when it was looked at.
	Empty Status = iota
	// Success: at least one item was taken.
	Success
	// Retry: the queue held items but another goroutine won the race for
	// them; the caller may try again. A scheduler reads Retry as "the system
	// is contended", Empty as "the system is idle".
	Retry
)

func (s Status) String() string {
	switch s {
	case Empty:
		return "empty"
	case Success:
		return "success"
	case Retry:
		return "retry"
	}
	return "Status(?)"
}

// minCap is the smallest buffer, and a new deque's: MaxTake (128) slots,
// the most one Injector take moves (and the length wsched gives its
// StealInto destinations), so that an owner that puts such a batch into
// its empty deque (PushBatch) never grows the buffer for it, and the
// windowed shrink (endEpoch) never takes it below that.
// crossbeam-deque uses 64; at 64, a scheduler that took 128-item batches
// and sometimes pushed one into its deque grew and shrank the buffer about
// every other cycle of a 16,384-packet fan-out with idle gaps between
// cycles (the shrink and the regrow each allocate a buffer: 2.5 and 5 KiB
// for 24-byte values, a slot being the value plus two words). 128 slots
// cost 5 KiB.
const minCap = MaxTake

// slot is one cell of a ring buffer. seq is the slot's claim word:
//
//   - seq == i means the slot may hold index i: the owner may write index i
//     into it (Push checks seq == bottom before writing), and it holds
//     index i while top <= i < bottom.
//   - a consumer that took index i from the top end stores seq = i+cap
//     after it has read val, handing the slot back to the owner for the
//     next lap. Until then the owner must not write the slot: Push sees
//     seq != bottom and moves to a fresh buffer instead of waiting.
//
// val is a plain field. It is written only by the owner, and only while
// seq (or free) says the slot is free, that is, after the last goroutine
// that read the slot's previous index has released it. Thieves read it
// only after claiming its index through top (a CAS); the owner may also
// read it before it knows the item is still its own (Pop's fast paths,
// resize's copy), which can overlap a thief's read but never a write. So
// no write to val overlaps any other access to it: no torn reads of
// multi-word values, and nothing for the race detector to report.
type slot[T any] struct {
	seq atomic.Uint64
	// free is the owner's private twin of seq: free == i means the owner
	// itself consumed the previous occupant of this slot, so no thief can
	// be reading it and index i may be written although seq was not
	// advanced. It spares the owner a locked store of seq whenever it
	// takes an item from the top end (the lone item of a LIFO deque,
	// every FIFO Pop). Owner only, plain memory.
	free uint64
	val  T
}

type buffer[T any] struct {
	mask  uint64
	slots []slot[T]
}

// newBuffer returns a buffer of n slots (a power of two) whose slots are
// free for the indices [first, first+n).
func newBuffer[T any](n int, first uint64) *buffer[T] {
	b := &buffer[T]{mask: uint64(n - 1), slots: make([]slot[T], n)}
	for i := first; i != first+uint64(n); i++ {
		s := &b.slots[i&b.mask]
		s.seq.Store(i)
		s.free = i
	}
	return b
}

// testHookResize, when set by a test, runs in resize between reading top
// and publishing the new buffer: the window in which a thief's claim
// leaves a stale slot behind (releasedInPrev).
var testHookResize func()

// testHookLastItem, when set by a test, runs in popRetracted between the
// owner's read of top and its CAS for the last item.
var testHookLastItem func()

// cacheLine pads the thieves' index away from the owner's fields so that
// a steal does not invalidate the line the owner pushes on.
type cacheLine [64]byte

// Deque is a work-stealing deque owned by one goroutine (the owner, a
// worker). The owner pushes and pops at the bottom end; any goroutine
// steals from the top end.
//
// Owner only: Push, PushBatch, Pop. Any goroutine: Steal, StealInto, Len,
// IsEmpty.
//
// Indices are free-running uint64 counters; every comparison is made on
// their difference, so they may wrap around.
type Deque[T any] struct {
	// top is the index of the oldest item. Written only by CAS (thieves,
	// the owner taking the last item, the FIFO owner).
	top atomic.Uint64
	_   cacheLine
	// bottom is one past the newest published item. Written only by the
	// owner: store-release (a sequentially consistent store in Go) makes
	// the slots below it visible to thieves.
	bottom atomic.Uint64
	// buf is the current buffer, published for thieves. The owner reads
	// its own copy, own.
	buf atomic.Pointer[buffer[T]]

	// Owner-only fields: no synchronisation.
	own *buffer[T]
	// slots is own.slots, kept here so that the fast paths reach a slot
	// with one load fewer: after a locked instruction the loads that
	// follow wait for it, so each dependent load on the path between
	// two of them adds its full latency.
	slots []slot[T]
	// prev is the buffer before own, kept for releasedInPrev until the
	// deque next becomes empty (settlePrev); nil after a shrink. The
	// indices that were live in it when own was built are [prevFrom,
	// prevTo).
	prev             *buffer[T]
	prevFrom, prevTo uint64
	idlePolls        uint64 // polls of a deque known empty (endEpoch counts every fourth)
	resizes          int    // buffers built (tests)
	ownBot           uint64 // == bottom, plus items pushed but not yet published
	topCache         uint64 // a lower bound of top, refreshed on the slow paths
	peak             int64  // most items seen by the owner in this window (see endEpoch)
	scrubbed         uint64 // indices below it hold no stale value (Scrub)
	pops             int    // Pop calls in this window, counted while the buffer is above minCap
	fifo             bool   // immutable after New; read by thieves without sync
	// Pad to 256 bytes, a whole number of cache lines. The allocator puts
	// small objects (up to 512 bytes, which carry no malloc header) of a
	// size class that is a multiple of 64 on 64-byte boundaries, so each
	// Deque starts a line and its owner's fields never share one with the
	// next Deque's top. Unpadded (208 bytes, allocated from the 208-byte
	// size class) they do, since a scheduler allocates its workers'
	// deques one after another: the owner's notePeak writes pops on the
	// line holding the neighbour's top, which that neighbour's owner
	// loads on every Pop. Two deques side by side, one owner goroutine
	// each, nothing shared (BenchmarkDequeIndependentOwners, medians of six
	// interleaved runs): two owners took 24.7 ns per push+pop each against
	// 11.3 for one alone; padded, 13.0 against 8.6. TestDequeLayout keeps
	// the size right. Sized for 64-bit platforms; on 32-bit ones the Deque
	// is smaller and only padded.
	_ [256 - 208]byte
}

// New returns an empty LIFO deque: Pop returns the newest item.
func New[T any]() *Deque[T] { return newDeque[T](false, 0) }

// NewFIFO returns an empty FIFO deque: Pop returns the oldest item, as
// crossbeam's Worker::new_fifo (the flavour MMTk uses for local queues).
func NewFIFO[T any]() *Deque[T] { return newDeque[T](true, 0) }

func newDeque[T any](fifo bool, start uint64) *Deque[T] {
	d := new(Deque[T])
	d.init(fifo, start)
	return d
}

// init makes the zero Deque *d an empty deque whose indices start at start.
func (d *Deque[T]) init(fifo bool, start uint64) {
	d.fifo, d.ownBot, d.topCache, d.scrubbed = fifo, start, start, start
	d.top.Store(start)
	d.bottom.Store(start)
	d.own = newBuffer[T](minCap, start)
	d.slots = d.own.slots
	d.buf.Store(d.own)
}

// Push adds v at the bottom end. Owner only. It allocates only when the
// buffer must grow.
//
// Push and Pop keep their common cases in small frames and move the rest
// out of line (pushSlow, popSlow): a slot a thief has not handed back,
// growth, an empty deque, a FIFO Pop of more than one item. The Go
// inliner takes neither fast path (a call to the slow path alone costs
// 57 of its budget of 80), so what the small frames save is the spills of
// the slow paths' state: 7.5–8.5 ns per push+pop on the 2-vCPU EPYC
// (go test -run '^$' -bench 'DequePushPop$' ./internal/deque/).
func (d *Deque[T]) Push(v T) {
	b := d.ownBot
	slots := d.slots
	// len(slots) is a power of two; the mask spares a load and the
	// bounds check.
	s := &slots[b&uint64(len(slots)-1)]
	// The slot is free for index b if the owner consumed its previous
	// occupant (free), or a thief did and released it (seq, a
	// load-acquire: see write).
	if s.free != b && s.seq.Load() != b {
		d.pushSlow(v)
		return
	}
	s.val = v
	d.bottom.Store(b + 1)
	d.ownBot = b + 1
}

func (d *Deque[T]) pushSlow(v T) {
	b := d.ownBot
	d.write(b, v)
	d.bottom.Store(b + 1)
	d.ownBot = b + 1
}

// put writes v at ownBot without publishing it. Owner only.
func (d *Deque[T]) put(v T) {
	b := d.ownBot
	d.write(b, v)
	d.ownBot = b + 1
}

// PushBatch adds vs at the bottom end in order (vs[len(vs)-1] ends
// nearest the bottom, as len(vs) calls of Push would leave them), and
// publishes them with one store of bottom: thieves see all of them or
// none. Owner only. It allocates only when the buffer must grow.
func (d *Deque[T]) PushBatch(vs []T) {
	if len(vs) == 0 {
		return
	}
	d.putAll(vs)
	d.bottom.Store(d.ownBot) // release: the slots' writes happen before
	if len(d.slots) > minCap {
		// The window's peak counts what a batch leaves in the deque, not
		// only what the owner sees at its Pops: a spawner whose batches a
		// thief drains while it spawns would otherwise see a small peak,
		// shrink at every window's end and regrow in the next burst.
		if n := int64(d.ownBot - d.top.Load()); n > d.peak {
			d.peak = n
		}
	}
}

// putAll writes vs at ownBot, ownBot+1, … without publishing them, as
// len(vs) calls of put would, but in one loop: a slot that is free takes
// a plain store, and only the first one that is not (full, or still held
// by a consumer) sends the rest through put. Owner only.
func (d *Deque[T]) putAll(vs []T) {
	b := d.ownBot
	slots := d.slots
	mask := uint64(len(slots) - 1)
	for i, v := range vs {
		idx := b + uint64(i)
		s := &slots[idx&mask]
		if s.free != idx && s.seq.Load() != idx {
			d.ownBot = idx
			for _, v := range vs[i:] {
				d.put(v)
			}
			return
		}
		s.val = v
	}
	d.ownBot = b + uint64(len(vs))
}

// write stores v into the slot of index b == ownBot. Owner only.
func (d *Deque[T]) write(b uint64, v T) {
	buf := d.own
	s := &buf.slots[b&buf.mask]
	// Load-acquire of seq: synchronises with the consumer that released
	// the slot's previous index, so our write cannot race with its read.
	// Or the owner consumed that index itself (free).
	if s.free != b && s.seq.Load() != b && !d.releasedInPrev(buf, b) {
		// Full (the slot still holds index b-cap), or a consumer of
		// index b-cap has claimed but not yet released it, or a
		// consumer claimed it in an older buffer than prev during a
		// resize. A fresh buffer settles all three without waiting.
		buf = d.slowPut()
		s = &buf.slots[b&buf.mask]
	}
	s.val = v
}

func (d *Deque[T]) slowPut() *buffer[T] {
	t := d.top.Load()
	d.topCache = t
	n := len(d.own.slots)
	if d.ownBot-t >= uint64(n) {
		d.notePeak(int64(n))
		n *= 2
	}
	return d.resize(n, t)
}

// releasedInPrev reports whether index i = b-cap, whose slot in buf (the
// current buffer) still says "may hold i", was consumed by a thief that
// read it from the previous buffer and has released it there. Owner only.
//
// resize builds the new buffer from a top it read before publishing it,
// and copies every index from there: a thief that claims one of them
// meanwhile reads (and releases) it in the old buffer, and the new
// buffer's slot keeps saying "may hold i" for good. Without this check the
// owner, lapping onto that slot, took it for held and replaced the whole
// buffer with a same-size copy, which the next thief then raced the same
// way: in a 16k-packet spawn burst with a busy thief, about one 650 KB
// copy per lap (TestResizeRaceNoCopies).
//
// prev.seq == i+len(prev) proves it: only i's claimant advances that
// slot to i+len(prev) (a buffer built after i was consumed would not have
// marked i live in buf), so the claimant read prev, is done, and never
// touches buf. Anything else (a thief still reading, a claim made in an
// even older buffer, a full buffer) keeps the fresh-buffer path.
func (d *Deque[T]) releasedInPrev(buf *buffer[T], b uint64) bool {
	p := d.prev
	if p == nil {
		return false
	}
	i := b - uint64(len(buf.slots))
	if int64(i-d.top.Load()) >= 0 {
		return false // index i is still in the deque: full
	}
	return doneIn(p, i)
}

// doneIn reports whether the thief that claimed index i from p has
// released it there (p's seq moved on to i+len(p)); see releasedInPrev.
func doneIn[T any](p *buffer[T], i uint64) bool {
	return p.slots[i&p.mask].seq.Load() == i+uint64(len(p.slots))
}

// settlePrev ends the life of prev, which otherwise keeps the previous
// buffer and every value that was live in it reachable. Owner only; called
// when the deque is empty (endEpoch), so every index below ownBot has been
// consumed. For each index i that was live in prev when own was built and
// that own's slot still shows as "may hold i" (neither a thief's release
// in own nor the owner's free word moved it on), it asks releasedInPrev's
// question: if prev's seq says i's claimant read prev and is done, the
// owner records the slot as free for the next lap in own's free word,
// which is exactly what a release in own would have allowed. An index
// whose claimant is still reading (or read an even older buffer) is left
// as it is: lapping onto it costs a copy of the buffer, nothing worse.
func (d *Deque[T]) settlePrev() {
	p := d.prev
	if p == nil {
		return
	}
	d.prev = nil
	buf := d.own
	lap := uint64(len(buf.slots))
	end := d.prevTo
	if t := d.top.Load(); int64(t-end) < 0 {
		end = t // only consumed indices
	}
	for i := d.prevFrom; int64(end-i) > 0; i++ {
		s := &buf.slots[i&buf.mask]
		if s.free == i+lap || s.seq.Load() != i {
			continue // released in own, or moved on
		}
		if doneIn(p, i) {
			s.free = i + lap
		}
	}
}

// resize copies the live items [t, ownBot) into a fresh buffer of n slots
// and publishes it. Owner only. Consumers that claimed an index in the
// old buffer keep reading the old buffer, which nobody writes again, so
// they need no coordination with the copy (both only read the slots).
func (d *Deque[T]) resize(n int, t uint64) *buffer[T] {
	old := d.own
	nb := newBuffer[T](n, t)
	for i := t; i != d.ownBot; i++ {
		nb.slots[i&nb.mask].val = old.slots[i&old.mask].val
	}
	if testHookResize != nil {
		testHookResize() // a thief claims here in TestResizeRaceNoCopies
	}
	d.resizes++
	d.own = nb
	d.slots = nb.slots
	// Kept for releasedInPrev, unless the new buffer is smaller (a
	// shrink must not keep the big buffer alive; the check is only an
	// optimisation).
	d.prev = nil
	if len(old.slots) <= n {
		d.prev, d.prevFrom, d.prevTo = old, t, d.ownBot
	}
	// Store-release: a thief that loads this pointer sees the copied
	// slots. Thieves load buf after bottom, so a thief that saw an index
	// pushed into nb also sees nb (or a newer buffer).
	d.buf.Store(nb)
	return nb
}

// Pop removes and returns an item from the owner's end: the newest for a
// LIFO deque, the oldest for a FIFO one. Owner only.
func (d *Deque[T]) Pop() (T, bool) {
	// Only the owner ever writes a slot's value (thieves read it, and
	// do not clear it), so the owner may read it before it knows whether
	// the item is still its own: the fast paths load it first, where the
	// load overlaps the index arithmetic, instead of after the locked
	// instruction, which every later load would wait for.
	var zero T
	b := d.ownBot
	switch n := b - d.topCache; {
	case n == 1:
		// The lone item (LIFO or FIFO alike): take it from the top end
		// with one CAS, as a thief would, without moving bottom. This
		// is the same CAS that Chase–Lev's last-item race ends in, minus
		// the two stores of bottom around it. topCache == b-1 guesses
		// top; if the guess is stale (a thief took the item) the CAS
		// fails and popSlow looks.
		t := b - 1
		slots := d.slots
		s := &slots[t&uint64(len(slots)-1)]
		v := s.val
		if !d.top.CompareAndSwap(t, b) {
			break
		}
		d.topCache = b
		s.val = zero
		// Taken from the top end: hand the slot to the next lap,
		// privately (no thief can be reading it).
		s.free = t + uint64(len(slots))
		if len(slots) > minCap {
			d.endEpoch() // that was the last item
		}
		return v, true
	case n >= 2 && !d.fifo:
		// At least two items by topCache, a lower bound of top that
		// may be stale: retract bottom, then look at top.
		b--
		slots := d.slots
		s := &slots[b&uint64(len(slots)-1)]
		v := s.val
		// Sequentially consistent store then load: the claim on index b
		// must be visible to thieves before we read top (the store–load
		// order that Chase–Lev needs; an XCHG on amd64). A thief loads
		// top before bottom, so either it sees the lowered bottom or we
		// see its CAS.
		d.bottom.Store(b)
		t := d.top.Load()
		d.topCache = t
		// Index b is ours if it is above top: no thief can claim an
		// index >= bottom.
		if size := int64(b - t); size > 0 {
			s.val = zero
			d.ownBot = b
			if len(slots) > minCap {
				d.notePeak(size)
			}
			return v, true
		}
		return d.popRetracted(b, t)
	}
	return d.popSlow()
}

// popSlow is Pop for the cases the fast paths leave: an empty deque, a
// FIFO deque with more than one item, a lone item whose CAS lost to a
// thief (topCache was stale).
func (d *Deque[T]) popSlow() (T, bool) {
	buf := d.own
	var zero T
	b := d.ownBot
	if b == d.topCache {
		// top never passes bottom and topCache <= top: empty, and no
		// fence was needed to learn it. A poll of a deque already known
		// to be empty counts a quarter of a Pop towards the shrink
		// window (endEpoch): an owner that only polls still gives its
		// buffer back, after four times as many calls.
		if len(buf.slots) > minCap {
			if d.idlePolls++; d.idlePolls%4 == 0 {
				d.endEpoch()
			}
		}
		return zero, false
	}
	// FIFO, or the lone item of a LIFO deque whose CAS in Pop failed (a
	// LIFO deque with two or more items never gets here: Pop retracts
	// bottom itself). Take the oldest from the top end with one CAS, as a
	// thief would, without moving bottom. For the lone item this is the
	// same CAS that Chase–Lev's last-item race ends in, minus the two
	// stores of bottom around it.
	for {
		t := d.top.Load()
		if t == b {
			d.topCache = t
			if len(buf.slots) > minCap {
				d.endEpoch()
			}
			return zero, false
		}
		if d.top.CompareAndSwap(t, t+1) {
			d.topCache = t + 1
			s := &buf.slots[t&buf.mask]
			v := s.val
			s.val = zero
			s.free = t + uint64(len(buf.slots))
			if len(buf.slots) > minCap {
				if t+1 == b {
					d.endEpoch() // that was the last item
				} else {
					d.notePeak(int64(b - t - 1))
				}
			}
			return v, true
		}
		// A thief took index t first; try the next one.
	}
}

// popRetracted finishes a Pop that lowered bottom to b and then read top
// t >= b: the deque is empty (t > b) or b is the last item (t == b),
// which the owner races the thieves for. Owner only.
func (d *Deque[T]) popRetracted(b, t uint64) (T, bool) {
	var zero T
	buf := d.own
	if t != b {
		// Empty: thieves took everything. Restore bottom = top.
		d.bottom.Store(t)
		d.ownBot = t
		if len(buf.slots) > minCap {
			d.endEpoch()
		}
		return zero, false
	}
	s := &buf.slots[b&buf.mask]
	// The last item: race the thieves for it through top.
	if testHookLastItem != nil {
		testHookLastItem() // a thief takes it here in TestLostLastItemEndsEpoch
	}
	won := d.top.CompareAndSwap(t, t+1)
	d.bottom.Store(b + 1) // top == bottom == b+1 either way
	d.ownBot = b + 1
	d.topCache = t + 1
	if !won {
		// The winning thief releases the slot. The deque is empty: the
		// epoch ends here too.
		if len(buf.slots) > minCap {
			d.endEpoch()
		}
		return zero, false
	}
	v := s.val
	s.val = zero
	// Taken from the top end: hand the slot to the next lap, privately.
	s.free = b + uint64(len(buf.slots))
	if len(buf.slots) > minCap {
		d.endEpoch() // that was the last item
	}
	return v, true
}

// notePeak records that the owner saw size items left after a Pop.
// Owner only.
func (d *Deque[T]) notePeak(size int64) {
	d.pops++
	if size > d.peak {
		d.peak = size
	}
}

// endEpoch runs when the owner finds its deque empty or takes (or loses
// to a thief) its last item, the end of an epoch of use, and on every
// fourth poll of a deque it already knows to be empty. Once the owner has
// made at least as many such calls and Pops as the buffer has slots since
// the last decision (the window; counting every poll let a worker that
// spins between two bursts close a window of nothing but polls and shrink
// the buffer that the next burst regrows: a 16k-packet spawn cycle did so
// every few cycles), a buffer that the window never needed more than a
// quarter of shrinks to fit the window's peak (at least minCap);
// otherwise it stays. The window makes shrinking amortised O(1): a regrow
// costs O(n) for a buffer of n slots and can follow at most one shrink per
// n Pops, so a worker that fills and drains the same burst over and over
// keeps its buffer instead of reallocating it every time (halving on every
// Pop under a quarter full, as crossbeam does, regrew and reshrank a
// 16k-packet burst eight times per cycle). A burst of a million therefore
// holds its buffer until the owner has made a million more Pops (or four
// million polls of its empty deque) without needing it. Owner only; the
// deque is empty.
func (d *Deque[T]) endEpoch() {
	d.settlePrev()
	d.pops++
	n := len(d.own.slots)
	if d.pops < n {
		return
	}
	target := n
	for target > minCap && d.peak < int64(target/4) {
		target /= 2
	}
	d.peak, d.pops = 0, 0
	if target < n {
		t := d.top.Load()
		d.topCache = t
		d.resize(target, t)
	}
}

// Scrub clears the values that consumers left behind in an empty deque:
// thieves read a slot without clearing it (see take), so up to a
// buffer's worth of taken items stay referenced until the owner writes
// over them; Scrub drops them, and the previous buffer kept after a
// growth. It looks only at the indices pushed since the last Scrub (at
// most one buffer's worth): O(1) amortised per push. Caller: the owner or
// another goroutine ordered after the owner's and every thief's last
// access (a lock they took, with all of them quiescent); the deque is
// empty. It panics otherwise.
func (d *Deque[T]) Scrub() {
	t := d.top.Load()
	if t != d.ownBot || d.bottom.Load() != t {
		panic("deque: Scrub of a deque that is not empty")
	}
	d.settlePrev()
	var zero T
	slots := d.own.slots
	lo := d.scrubbed
	if n := uint64(len(slots)); t-lo > n {
		lo = t - n // older indices share these slots
	}
	for i := lo; i != t; i++ {
		slots[i&uint64(len(slots)-1)].val = zero
	}
	d.scrubbed = t
}

// Len returns the number of items, as a snapshot that may be stale by
// the time it is used. Any goroutine.
func (d *Deque[T]) Len() int {
	b := d.bottom.Load()
	t := d.top.Load()
	if n := int64(b - t); n > 0 {
		return int(n)
	}
	return 0
}

// IsEmpty reports whether the deque held no items at the moment it was
// looked at. Any goroutine.
func (d *Deque[T]) IsEmpty() bool { return d.Len() == 0 }

// Steal takes the oldest item. Any goroutine.
func (d *Deque[T]) Steal() (T, Status) {
	// take for one item, without its batch loop: the orderings are
	// those written down in take.
	var zero T
	t := d.top.Load()
	b := d.bottom.Load()
	buf := d.buf.Load()
	if int64(b-t) <= 0 {
		return zero, Empty
	}
	if !d.top.CompareAndSwap(t, t+1) {
		return zero, Retry
	}
	s := &buf.slots[t&buf.mask]
	v := s.val
	s.seq.Store(t + uint64(len(buf.slots)))
	return v, Success
}

// StealInto takes about half of the items, min(⌈n/2⌉, len(dst)), oldest
// first, into dst[0:k] and returns k, leaving dst[k:] as it was: a batch
// for a thief that runs it from a private array (no slot writes, no
// locked instruction per item afterwards), or that moves it on into its
// own deque with PushBatch. From a FIFO deque one CAS claims the whole
// range; from a LIFO one each item is claimed against a fresh bottom, as
// crossbeam does for LIFO workers: the owner pops from the bottom without
// a CAS while more than one item is left, so a range claim could overlap
// its pops (a stale bottom). Success means k >= 1; a LIFO batch that lost
// a race after its first claim returns what it has. Any goroutine; it
// panics if len(dst) is 0.
func (d *Deque[T]) StealInto(dst []T) (int, Status) {
	if len(dst) == 0 {
		panic("deque: StealInto an empty destination")
	}
	// top, then bottom: the order take needs.
	t := d.top.Load()
	n := int64(d.bottom.Load() - t)
	if n <= 0 {
		return 0, Empty
	}
	want := min((n+1)/2, int64(len(dst)))
	if d.fifo {
		got, st := d.take(dst[:want], t, want)
		return int(got), st
	}
	got := 0
	st := Success
	for int64(got) < want {
		if _, st = d.take(dst[got:got+1], d.top.Load(), 1); st != Success {
			break
		}
		got++
	}
	if got == 0 {
		return 0, st
	}
	return got, Success
}

// take claims up to want items (want <= len(into)) starting at index t,
// which the caller loaded from top before anything else, from the top end
// with one CAS, then reads them into into[0:k], oldest first
// (claim-then-read), and returns k. Thieves only.
func (d *Deque[T]) take(into []T, t uint64, want int64) (int64, Status) {
	// Load-acquire bottom after top: a bottom that covers an index also
	// makes the owner's write of its slot visible.
	b := d.bottom.Load()
	// Load the buffer after bottom: it holds every index in [t, b) that
	// is still unclaimed, or the CAS below fails.
	buf := d.buf.Load()
	n := int64(b - t)
	if n <= 0 {
		return 0, Empty
	}
	want = min(want, n)
	// The claim. Once it succeeds no other goroutine writes these
	// slots of buf until we release them (the owner may read them: see
	// slot).
	if !d.top.CompareAndSwap(t, t+uint64(want)) {
		return 0, Retry
	}
	lap := uint64(len(buf.slots))
	for i := int64(0); i < want; i++ {
		idx := t + uint64(i)
		s := &buf.slots[idx&buf.mask]
		into[i] = s.val
		// Store-release: our read of val is done; the owner may write
		// the slot on its next lap. (We do not clear val: the owner may
		// be copying this slot in a resize, a read that a write here
		// would race with. The stale value is overwritten on the next
		// lap or dropped with the buffer: at most one buffer's worth.)
		s.seq.Store(idx + lap)
	}
	return want, Success
}
