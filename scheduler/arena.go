package scheduler

import (
	"sync/atomic"
	"unsafe"
)

// Arenas.
//
// An arena hands out slots from chunks of chunkSlots, in order. A slot is
// consumed when its packet has run: by its owner (the spawning worker),
// which counts it with a plain increment, or by a thief, which counts it
// with an atomic one. A chunk is reused once all of its slots are
// consumed; its owner checks when it needs a new chunk (refill), and
// otherwise allocates one. Each refill checks the chunk it seals and the
// next few of a sweep over the sealed chunks, so every sealed chunk is
// checked again within a bounded number of refills, however many chunks
// that are still in use precede it. So an arena holds about as many
// chunks as there are chunks with an unconsumed slot (at most about half
// again as many, the sweep's lag): memory follows the live packets, 64
// slots at most per live packet in the worst case (one unconsumed slot
// pinning each chunk) and a chunk or two in the common depth-first case.
// Chunks freed stay with the arena for the next cycle, so a scheduler that
// runs the same job cycle after cycle allocates none: an arena holds what
// its widest moment needed (a 16,384-child fan-out, 256 chunks of 64).
// A cycle that is aborted drops packets whose slots are never consumed;
// its end resets every arena (every worker is parked, nothing is queued).
//
// Ordering. The owner writes a slot and then publishes the task through
// its queues (a plain store to its private stack, read only by itself, or
// the deque's release store, read by a thief's acquire): the reader of a
// task sees its slot's contents. A thief reads the slot, clears it, and
// then increments the chunk's remote count (sequentially consistent); the
// owner reuses a chunk only after loading a count that includes every
// other consumer's increment, so its next writes follow their reads.

// chunkSlots is the number of slots in an arena chunk: 64 slots of a
// two-word packet are 2 KiB; fewer make the worst case (one live packet
// pinning a chunk) cheaper and refills more frequent.
const chunkSlots = 64

// chunk is one block of an arena's cells. Owner: the worker whose arena
// it belongs to.
type chunk[E any] struct {
	cells [chunkSlots]E
	owner *Worker
	next  int32 // owner: the next cell to hand out
	local int32 // owner: cells the owner consumed
	// remote counts cells consumed by other workers (atomic add by them,
	// load by the owner in done).
	remote atomic.Int32
}

// consumed counts one cell of c as consumed by w. Any worker; the cell
// must not be touched afterwards.
func (c *chunk[E]) consumed(w *Worker) {
	if c.owner == w {
		c.local++
		return
	}
	c.remote.Add(1) // after the consumer's reads and clears of the cell
}

// done reports whether every cell of c was handed out and consumed. Owner.
func (c *chunk[E]) done() bool {
	return c.next == chunkSlots && c.local+c.remote.Load() == chunkSlots
}

// reset makes c empty again: its cells are cleared already when c is done
// (each consumer clears its cell), but not after an aborted cycle. Owner,
// when done, or with every worker parked.
func (c *chunk[E]) reset(clearCells bool) {
	if clearCells {
		clear(c.cells[:])
	}
	c.next, c.local = 0, 0
	c.remote.Store(0)
}

// arena hands out cells of type E for one worker. Owner-only.
type arena[E any] struct {
	owner *Worker
	cur   *chunk[E]
	// sealed are chunks handed out whole and not known to be consumed;
	// free are chunks ready for reuse.
	sealed, free []*chunk[E]
	scan         int // the sealed chunk refill looks at next
	// direct: the arena's packet type is a pointer or an interface, which
	// a task holds as it is (a Packet of one pointer word, or the
	// interface itself): Spawn and SpawnOrRun queue such a packet without
	// a slot while it belongs to no join. Set at creation.
	direct bool
}

func newArena[E any](w *Worker) *arena[E] {
	return &arena[E]{owner: w, cur: &chunk[E]{owner: w}}
}

// get returns a free cell and its chunk. Owner.
func (a *arena[E]) get() (*E, *chunk[E]) {
	c := a.cur
	if c.next == chunkSlots {
		c = a.refill()
	}
	e := &c.cells[c.next]
	c.next++
	return e, c
}

// refill seals the current chunk and makes a new one current: a sealed
// chunk that is done, or a new one. It looks at the chunk just sealed
// first (a depth-first run has usually consumed it already), then at
// refillScan more, taken in turn from where the previous refill stopped:
// every sealed chunk is looked at again within len(sealed)/refillScan
// refills, so a chunk that becomes done is reused, wherever it sits: a
// round of the list frees its done chunks, while the refills of that
// round use one chunk each, so the arena grows only while more than
// about (refillScan-1)/refillScan of its sealed chunks (two thirds) hold
// unconsumed slots. The sweep must move: removal moves the newest sealed
// chunk into the removed one's place, so fixed positions fill with
// chunks in use and miss done chunks further on. Owner.
func (a *arena[E]) refill() *chunk[E] {
	a.sealed = append(a.sealed, a.cur)
	a.reclaim(len(a.sealed) - 1)
	for range refillScan {
		if len(a.sealed) == 0 {
			break
		}
		if a.scan >= len(a.sealed) {
			a.scan = 0
		}
		if !a.reclaim(a.scan) {
			a.scan++
		}
	}
	if n := len(a.free); n > 0 {
		a.cur = a.free[n-1]
		a.free[n-1] = nil
		a.free = a.free[:n-1]
	} else {
		a.cur = &chunk[E]{owner: a.owner}
	}
	return a.cur
}

// refillScan is how many sealed chunks a refill looks at besides the one
// it seals.
const refillScan = 3

// reclaim moves sealed chunk i to the free list if it is done (the last
// sealed chunk takes its place) and reports whether it did. Owner.
func (a *arena[E]) reclaim(i int) bool {
	c := a.sealed[i]
	if !c.done() {
		return false
	}
	c.reset(false)
	last := len(a.sealed) - 1
	a.sealed[i] = a.sealed[last]
	a.sealed[last] = nil
	a.sealed = a.sealed[:last]
	a.free = append(a.free, c)
	return true
}

// reset forgets every hand-out: all chunks become free. Caller holds the
// scheduler's monitor with every worker parked (an aborted cycle's end,
// whose dropped packets never consume their cells).
func (a *arena[E]) reset() {
	for _, c := range a.sealed {
		c.reset(true)
		a.free = append(a.free, c)
	}
	clear(a.sealed)
	a.sealed = a.sealed[:0]
	a.scan = 0
	a.cur.reset(true)
}

// sweep moves every sealed chunk that is done to the free list. Caller
// holds the scheduler's monitor with every worker parked (a cycle's end:
// after a cycle that ran to its end every cell handed out is consumed, so
// the next cycle starts with every chunk free, however the refills'
// sweep lagged). O(sealed chunks).
func (a *arena[E]) sweep() {
	for i := 0; i < len(a.sealed); {
		if !a.reclaim(i) {
			i++
		}
	}
	a.scan = 0
}

// resetter is an arena of any cell type, for the reset after an aborted
// cycle and the sweep at every cycle's end.
type resetter interface {
	reset()
	sweep()
}

// arenaEntry is one entry of a worker's arena cache: the slot (or frame)
// type word a value type maps to, and its arena.
type arenaEntry struct {
	key   unsafe.Pointer
	arena unsafe.Pointer
}

// arenaWays is the size of a worker's direct-mapped arena cache: a worker
// that spawns up to this many packet types (and join frames) in turn finds
// each arena with one compare, usually.
const arenaWays = 8

// lookupArena returns w's arena for the type whose slot type word is key,
// or nil. Owner.
func (w *Worker) lookupArena(key unsafe.Pointer) unsafe.Pointer {
	e := &w.arenas[uintptr(key)>>5%arenaWays]
	if e.key == key {
		return e.arena
	}
	if a, ok := w.arenaMap[key]; ok {
		*e = arenaEntry{key, a}
		return a
	}
	return nil
}

// addArena records a new arena for key. Owner.
func (w *Worker) addArena(key, a unsafe.Pointer, r resetter) {
	if w.arenaMap == nil {
		w.arenaMap = make(map[unsafe.Pointer]unsafe.Pointer)
	}
	w.arenaMap[key] = a
	w.arenaList = append(w.arenaList, r)
	w.arenas[uintptr(key)>>5%arenaWays] = arenaEntry{key, a}
}
