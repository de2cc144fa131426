package scheduler

import (
	"reflect"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// Value packets.
//
// Spawn[P] keeps the spawned value in a slot of an arena owned by the
// spawning worker, one arena per packet type, and queues a pointer to the
// slot: a *slot[P] is a Packet whose Run runs the value. So a small packet
// spawned by value costs a copy into memory the worker reuses, not a heap
// allocation.
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
// unconsumed slots. (Looking at fixed positions
// instead, the oldest few, failed: removal moves the newest sealed chunk,
// unconsumed, into the removed one's place, the fixed positions filled
// with chunks in use, and done chunks further on were never found: a
// fan-out of 16,384 children allocated about 110 new chunks every
// cycle.) Owner.
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

// resetter is an arena of any cell type, for the reset after an aborted
// cycle.
type resetter interface{ reset() }

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

// slot holds one value packet spawned by a worker.
type slot[P Packet] struct {
	v    P
	join *joinHdr // the join the packet belongs to, or nil
	c    *chunk[slot[P]]
}

// slotKey is the type word of *slot[P] as a Packet: one per P, so it keys
// P's arena and P's stats.
func slotKey[P Packet]() unsafe.Pointer { return typeWord(Packet((*slot[P])(nil))) }

// slotArena returns w's arena of P slots, making it on first use. Owner.
func slotArena[P Packet](w *Worker) *arena[slot[P]] {
	key := slotKey[P]()
	if a := w.lookupArena(key); a != nil {
		return (*arena[slot[P]])(a)
	}
	a := newArena[slot[P]](w)
	k := reflect.TypeFor[P]().Kind()
	a.direct = k == reflect.Pointer || k == reflect.Interface
	w.addArena(key, unsafe.Pointer(a), a)
	return a
}

// valuePacket is a *slot[P]: a value packet as its queues hold it.
type valuePacket interface {
	Packet
	valueName() string
	// statIndex is the stats index of the packet's value (instrumented
	// runs, which look it up before the packet runs).
	statIndex(w *Worker) int
}

// Run runs the slot's value as a packet of its own: it counts it in the
// stats (an instrumented run counts it in execInstrumented), enters its
// join, runs it and consumes the slot. A slot whose packet fails or panics
// is left as it is (the error names its value) and freed when the aborted
// cycle ends.
func (s *slot[P]) Run(w *Worker) error {
	v := s.v
	w.js = joinState{join: s.join, spawn: s.join}
	if !w.instrument && !w.countRun(slotKey[P]()) {
		countSlot(w, &s.v)
	}
	if err := v.Run(w); err != nil {
		return err
	}
	var zero P
	s.v, s.join = zero, nil
	s.c.consumed(w)
	return nil
}

func (s *slot[P]) valueName() string { return valueName(s.v) }

func (s *slot[P]) statIndex(w *Worker) int {
	if ti := w.s.reg.valueType(slotKey[P](), reflect.TypeFor[P]()); ti.namer && !ti.iface {
		return w.nameIndex(namerAt(&s.v))
	}
	return valueIndex(w, s.v)
}

// valueName is the name of value packet v: its Namer name, its dynamic
// packet's name for an interface type, or its type. Slow path.
func valueName[P Packet](v P) string {
	if ti := reflect.TypeFor[P](); ti.Kind() == reflect.Interface {
		return nameOf(any(v).(Packet))
	}
	if n, ok := any(v).(Namer); ok {
		return namerName(n)
	}
	return reflect.TypeFor[P]().String()
}

// safeValueName is valueName, surviving a PacketName that panics too.
func safeValueName[P Packet](v P) (name string) {
	defer func() {
		if recover() != nil {
			name = reflect.TypeFor[P]().String()
		}
	}()
	return valueName(v)
}

// countRun counts a run of the value packet type whose slot key is key,
// as countPacket counts a Packet, if it is the type counted last (a
// compare and an increment), and reports whether it did; countSlot or
// countValueSlow count it when not. Owner.
func (w *Worker) countRun(key unsafe.Pointer) bool {
	if key == w.lastType {
		w.lastRun++
		return true
	}
	return false
}

// countSlot counts a run of the value in a slot, at p, when countRun could
// not: as countValueSlow, but a Namer's name is asked through p, so that
// the value is not copied into an interface (which allocates for a value
// bigger than a pointer, once a run). Owner.
func countSlot[P Packet](w *Worker, p *P) {
	if ti := w.s.reg.valueType(slotKey[P](), reflect.TypeFor[P]()); ti.namer && !ti.iface {
		w.types[w.nameIndex(namerAt(p))].count++
		return
	}
	countValueSlow(w, *p)
}

// namerAt returns the PacketName of the Namer value at p, called through
// p (a value's methods are its pointer's too) or, for a P of pointer
// shape, whose methods *P lacks, through the value, which then fits an
// interface without a box.
func namerAt[P Packet](p *P) string {
	if n, ok := any(p).(Namer); ok {
		if name := n.PacketName(); name != "" {
			return name
		}
		return reflect.TypeFor[P]().String()
	}
	return namerName(any(*p).(Namer))
}

// countValueSlow counts a run of v when countRun could not (SpawnOrRun's
// inline run: v is its own copy; a Namer's name costs a box). Owner.
func countValueSlow[P Packet](w *Worker, v P) {
	key := slotKey[P]()
	ti := w.s.reg.valueType(key, reflect.TypeFor[P]())
	switch {
	case ti.iface:
		w.countPacket(any(v).(Packet)) // an interface: its dynamic packet
	case ti.namer:
		w.types[w.nameIndex(valueName(v))].count++
	default:
		w.foldRun()
		w.lastType, w.lastIdx = key, ti.idx
		w.growTypes(ti.idx)
		w.lastRun++
	}
}

// valueIndex is the stats index of value packet v. Owner, slow path.
func valueIndex[P Packet](w *Worker, v P) int {
	key := slotKey[P]()
	ti := w.s.reg.valueType(key, reflect.TypeFor[P]())
	switch {
	case ti.iface:
		return w.statIndex(any(v).(Packet))
	case ti.namer:
		return w.nameIndex(valueName(v))
	}
	w.growTypes(ti.idx)
	return ti.idx
}

// Spawn queues v as a packet on worker w, in the running packet's stage.
// Only the packet running on w may call it: on a *Worker kept past its
// packet's Run it panics, as it does for a nil v.
//
// v is kept by value in memory the worker reuses, so spawning a small
// struct, a pointer or a Packet allocates nothing (BenchmarkSpawnValue:
// 0 allocs, about 13 ns a packet here). A pointer or an interface is
// queued as it is, outside joins (BenchmarkSpawnTrivial). It runs once;
// once the Run call of its cycle has returned, the scheduler keeps no
// reference to it (during the cycle, a packet that a thief or a bucket
// take copied out may stay referenced by the slot it was copied from).
//
// While every other worker is busy, v waits on w's private stack, where
// only w sees it (plain stores, no atomics), and w runs it newest first
// after the running packet. While some worker is parked or searching and
// w's deque holds fewer packets than there are such workers, Spawn hands
// every private packet but the newest to the deque, where thieves take
// the oldest, and wakes one parked worker if nobody searches, so spare
// work never waits for a busy worker. A worker that becomes idle while
// this packet computes without spawning waits until the packet returns
// (or spawns again) for what it spawned: spawn before a long computation
// only what this worker should run next, or set Config.Local to
// LocalLIFO, which sends every spawn to the deque. The stack holds 256
// packets; the older half of a full one goes to the deque.
//
// Inside a join (Join), v belongs to it: the join's continuation waits for
// v, and for everything v spawns.
func Spawn[P Packet](w *Worker, v P) {
	if w.cur.p == nil || isNil(v) {
		w.badSpawn(isNil(v), "Spawn")
	}
	if slotKey[P]() == w.directKey && w.js.spawn == nil {
		// A pointer or an interface outside joins: push's common case
		// written out (onto the private stack, untraced), a call fewer
		// (push's common case as a function of its own costs 136 in the
		// compiler's inlining budget of 80: it would stay a call).
		t := task{p: Packet(v), meta: uint64(w.cur.stage())}
		if n := w.privTail - w.privHead; w.priv != nil && w.tb == nil && n != privCap {
			w.priv[w.privTail%privCap] = t // a fixed array: no bounds check
			w.privTail++
			if (n != 0 || w.heldLo != w.heldHi) && w.s.nIdle() != 0 {
				w.offerAll()
			}
			return
		}
		w.push(t)
		return
	}
	spawnSlow(w, v)
}

// spawnSlow is Spawn for a value packet, inside a join, or the first
// spawn of a pointer or interface type on w since another's.
func spawnSlow[P Packet](w *Worker, v P) {
	a := slotArena[P](w)
	if a.direct {
		w.directKey = slotKey[P]()
		if w.js.spawn == nil {
			w.push(task{p: Packet(v), meta: uint64(w.cur.stage())})
			return
		}
	}
	s, c := a.get()
	s.v, s.c, s.join = v, c, w.joinForSpawn()
	w.push(task{p: s, meta: uint64(w.cur.stage()) | slotBit})
}

// isNil reports whether v is a nil Packet (an interface type holding
// nothing). A nil pointer of a concrete type is a value like any other.
func isNil[P Packet](v P) bool {
	return any(v) == nil
}

// SpawnOrRun runs v at once, on this worker and inside the running
// packet, unless some worker is idle (parked or searching) and this
// worker's deque holds fewer packets than there are idle workers: then it
// spawns v, and the next 15 children it is given without asking again,
// handing them to the deque as the streak goes, where an idle worker
// steals half of them in one go. While every worker is busy, children run
// inline instead of waiting in a queue: for fine-grained recursion whose
// children cost less than a trip through a queue (errgroup's TryGo with a
// fallback to running inline). Spawn children that take long, or that
// should be free to run elsewhere while the parent computes, with Spawn.
// (BenchmarkSpawnOrRunWideCost, 2 workers on the 2-vCPU EPYC, a flat loop
// of children against one goroutine calling them: 0.5 µs children about
// 1.7×, 4 µs and longer about 1.9× faster.)
//
// v runs in the running packet's stage, is counted as a packet of its own
// (Stats and WorkerStats.Inlined) and belongs to the running packet's join
// like a spawned one. If it fails or panics, the cycle ends with a
// *CycleError naming v, and SpawnOrRun returns: the running packet goes on
// (what it spawns next is dropped with the aborting cycle; its context is
// cancelled). runtime.Goexit in v ends the running packet too. v must not
// wait for something the running packet holds (a lock, a channel it has
// yet to send on).
//
// It always spawns while the cycle is ending, when inline runs are nested
// 64 deep (so recursion is bounded), and when the scheduler records
// per-packet timing, tracing, runtime/trace regions or pprof labels, so
// that every packet keeps its own slice, region and time. Only the packet
// running on w may call it.
func SpawnOrRun[P Packet](w *Worker, v P) {
	if w.cur.p == nil || isNil(v) {
		w.badSpawn(isNil(v), "SpawnOrRun")
	}
	if w.instrument || w.inlineDepth >= maxInline || w.s.abort.Load() {
		Spawn(w, v)
		return
	}
	if w.streak > 0 || w.s.nIdle() != 0 && w.wantsWork() { // the idle test inline: no call while every worker is busy
		if slotKey[P]() == w.directKey && w.js.spawn == nil {
			w.handOff(task{p: Packet(v), meta: uint64(w.cur.stage())})
			return
		}
		a := slotArena[P](w)
		if a.direct {
			w.directKey = slotKey[P]()
			if w.js.spawn == nil {
				w.handOff(task{p: Packet(v), meta: uint64(w.cur.stage())})
				return
			}
		}
		s, c := a.get()
		s.v, s.c, s.join = v, c, w.joinForSpawn()
		w.handOff(task{p: s, meta: uint64(w.cur.stage()) | slotBit})
		return
	}
	// Inline: as a spawn that runs at once. It belongs to the spawn join
	// like a spawned child, and runs with join state of its own. The
	// parent's state is saved after the child is counted in it: if the
	// parent opened the spawn join, the count is openedSpawns, part of
	// that state. Outside joins (no spawn join: the whole state is zero)
	// there is nothing to save: the child starts from the zero state, and
	// ends with it (endJoin zeroes what a Join of its own set).
	var saved joinState
	if w.js.spawn != nil {
		j := w.joinForSpawn()
		saved = w.js
		w.js = joinState{join: j, spawn: j}
	}
	w.inlineDepth++
	if !w.countRun(slotKey[P]()) {
		countValueSlow(w, v)
	}
	err, pn := runInline(w, v, &saved)
	if pn != nil { // runInline restored the running packet's state
		w.goexitName = "" // a panic, not runtime.Goexit: runInline returned
		w.packetPanicked(valueName(v), pn.value, pn.stack)
		return
	}
	w.inlineDepth--
	if err != nil {
		w.packetFailed(valueName(v), err)
		w.js = saved
		return
	}
	w.hot.inlined++
	w.tick()
	if w.js.join != nil || w.js.opened != nil {
		w.endJoin()
	}
	if saved.spawn != nil {
		w.js = saved
	}
}

// runInline runs v inline for SpawnOrRun and returns its error, or the
// panic it recovered (non-nil even for panic(nil) under GODEBUG
// panicnil=1). On a panic, and under runtime.Goexit (then it does not
// return: the goroutine goes on unwinding and burst reports it, naming
// v), its
// deferred function ends the inline run: inlineDepth and the running
// packet's join state (saved) are restored. One defer for both, and one
// result for a panic: a second defer in SpawnOrRun for the Goexit case,
// and the panic's value, stack and flag as results of their own, cost
// about 50 of the 254 instructions an inline child cost beyond a plain
// call (cachegrind, benchmarks/uts's small geometric tree).
func runInline[P Packet](w *Worker, v P, saved *joinState) (err error, pn *inlinePanic) {
	done := false
	defer func() {
		if !done {
			w.inlineDepth--
			w.js = *saved
			r := recover()
			if r == nil && w.goexitName == "" {
				// runtime.Goexit, or panic(nil) under panicnil=1 (then
				// runInline returns and SpawnOrRun forgets the name):
				// v is the innermost inline run, the one that called
				// it, and burst names it.
				w.goexitName = safeValueName(v)
			}
			pn = &inlinePanic{r, debug.Stack()}
		}
	}()
	err = v.Run(w)
	done = true
	return err, nil
}

// inlinePanic is a panic recovered from an inline run: its value and
// stack.
type inlinePanic struct {
	value any
	stack []byte
}

// maxInline bounds the nesting of SpawnOrRun's inline runs: deeper, it
// spawns. 64 levels of a binary fork-join tree is far more than a worker
// can keep busy; the bound is there for stack depth, not for speed.
const maxInline = 64
