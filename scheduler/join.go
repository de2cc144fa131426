package scheduler

import (
	"sync/atomic"
	"unsafe"
)

// Joins.
//
// A join is a continuation waiting for a set of packets. Join(w, c)
// opens one in the running packet P: everything P spawns from then on (and
// everything those packets spawn, transitively, unless they open joins of
// their own) belongs to it, and when the last of them has finished, c runs
// as a packet. P's own place in its join (if it belongs to one) passes to
// c: P's join waits for c, not for P's return. No worker ever blocks; the
// worker that finishes the last member spawns the continuation (or runs
// it: fire).
//
// Counting. A join's pending count is the number of its members not yet
// finished, plus joinBias while the opener P still runs. P's spawns are
// counted locally (js.openedSpawns) and added in one atomic add when P
// returns, together with the removal of the bias: no member can bring the
// count to zero before that, because the bias exceeds any number of
// members. A member that is not the opener adds 1 atomically for each
// packet it spawns into the join, before the packet can be seen by
// another worker (the add is sequenced before the push), and every member
// subtracts 1 when it finishes. Every increment precedes its decrement, so
// once the bias is gone the count is exactly the number of unfinished
// members and reaches zero once, when the last finishes: that worker
// spawns the continuation, or runs it inline where the join's opener ran
// inline and its members finished before it returned (fire).

// joinBias is the opener's hold on its join's count (far above any number
// of packets).
const joinBias = 1 << 48

// joinHdr is the part of a join frame that members reference.
type joinHdr struct {
	pending atomic.Int64
	parent  *joinHdr // the join the continuation belongs to
	fire    firer    // the frame: spawns the continuation
}

// firer is a *frame[C].
type firer interface {
	fire(w *Worker)
}

// frame is a join opened by Join[C]: its header and the continuation's
// value, in an arena of the opening worker.
type frame[C Packet] struct {
	hdr joinHdr
	v   C
	c   *chunk[frame[C]]
}

// joinState is what a worker knows about the joins of the packet it runs.
type joinState struct {
	join  *joinHdr // the join the running packet belongs to (decremented when it ends)
	spawn *joinHdr // the join its spawns belong to: join, or the one it opened
	// opened is the join the running packet opened (Join), released when
	// it ends; openedSpawns counts its spawns into it, added then.
	opened       *joinHdr
	openedSpawns int64
}

// frameKey keys w's arena of frame[C] (see slotKey).
func frameKey[C Packet]() unsafe.Pointer {
	f := firer((*frame[C])(nil))
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&f))[0]
}

func frameArena[C Packet](w *Worker) *arena[frame[C]] {
	key := frameKey[C]()
	if a := w.lookupArena(key); a != nil {
		return (*arena[frame[C]])(a)
	}
	a := newArena[frame[C]](w)
	w.addArena(key, unsafe.Pointer(a), a)
	return a
}

// Join opens a join in the running packet: every packet it spawns from
// now on (Spawn, SpawnOrRun), and everything those spawn, belongs to the
// join, and when all of them have finished, c runs as a packet of the
// same stage. Join returns a pointer to the continuation's value, where
// the children may leave their results (each in a field or element of its
// own): c runs with what they wrote. No worker waits: the worker that
// finishes the last member spawns c.
//
// The running packet's own place in the join it belongs to, if any,
// passes to c: a parent's join waits for c, not for the packet's return,
// so joins nest (a tree sum, fib, merge sort), and c, a member of that
// join, may write its result through the pointer the parent's Join
// returned (as the packet could). A join that gets no members is allowed:
// c runs once the packet returns. A packet may open one join
// per run; Join panics on a second, and on a *Worker kept past its
// packet's Run. If the cycle ends early, continuations of unfinished joins
// never run. A join costs about two value spawns
// (BenchmarkJoin against BenchmarkSpawnValue).
//
// Any number of children: c's value holds the reduction they add to,
// a sum or count that each child adds to atomically (c reads it plainly:
// the join orders their writes before it), or a value behind a mutex in
// c for anything else; no slice per node (ExampleJoin_children; a count
// by joins over a tree whose nodes have 0 to 7 children allocates nothing
// per node: TestJoinAnyChildrenAllocatesNothingPerNode). When a packet
// that SpawnOrRun ran inline opened a join whose members have all
// finished by the time it returns (they ran inline too), the continuation
// runs inline at once, where SpawnOrRun would run a child inline (else it
// is spawned), nested at most SpawnOrRun's 64 levels (a chain of such
// continuations, each opening the next join, is spawned past them); so a
// subtree run inline frees its join frames as it goes:
// a count of N-queens 13 by joins with SpawnOrRun children, 4.7 million
// states on one worker, allocated 54 KB in its first cycle, where
// spawning those continuations kept every frame until the root's packet
// returned (401 MB); TestJoinInlineFreesFrames.
//
// The pointer is valid until c starts: it points into the join's frame,
// which c's spawn clears and a later Join on this worker reuses. Only the
// join's members may write through it, each before it finishes (the
// join's count orders their writes before c runs). A packet that is not a
// member (queued with Scheduler().Add, by a goroutine, or spawned outside
// the join) must not keep it: its writes would land in a frame that c has
// left or that another join now uses, unordered with them (a data race,
// which the race detector reports when it sees both sides).
func Join[C Packet](w *Worker, c C) *C {
	if w.cur.p == nil || isNil(c) {
		w.badUse(isNil(c), "Join")
	}
	if w.js.opened != nil {
		panic("scheduler: Join called twice in one packet run")
	}
	a := frameArena[C](w)
	f, ch := a.get()
	f.v, f.c = c, ch
	f.hdr.parent = w.js.join
	f.hdr.pending.Store(joinBias)
	f.hdr.fire = f
	w.js.join = nil // its place passes to c
	w.js.opened, w.js.openedSpawns = &f.hdr, 0
	w.js.spawn = &f.hdr
	return &f.v
}

// joinForSpawn counts a packet about to be spawned (or run inline) in the
// running packet's spawn join and returns that join (nil: none). Owner.
func (w *Worker) joinForSpawn() *joinHdr {
	j := w.js.spawn
	if j == nil {
		return nil
	}
	if j == w.js.opened {
		w.js.openedSpawns++
	} else {
		j.pending.Add(1) // before the packet is pushed
	}
	return j
}

// endJoin settles the joins of a packet that just finished: it releases
// the join it opened, or leaves the join it belongs to, and spawns the
// continuation of a join whose count reaches zero. Owner.
func (w *Worker) endJoin() {
	if o := w.js.opened; o != nil {
		if o.pending.Add(w.js.openedSpawns-joinBias) == 0 {
			o.fire.fire(w)
		}
	} else if j := w.js.join; j != nil {
		if j.pending.Add(-1) == 0 {
			j.fire.fire(w)
		}
	}
	w.js = joinState{}
}

// fire spawns the continuation of f, whose members have all finished, on
// w, in the stage of the packet that finished last, as a member of f's
// parent join (its place there was f's opener's), and frees f. Where f's
// opener ran inline (SpawnOrRun settles its joins: w.fireInline) and
// SpawnOrRun would run a child inline now, it frees f and runs the
// continuation inline instead, so that a subtree run inline frees its
// frames as it goes.
func (f *frame[C]) fire(w *Worker) {
	if w.fireInline && w.inlineOK() {
		v, parent := f.v, f.hdr.parent
		var zero C
		f.v = zero
		f.hdr.parent, f.hdr.fire = nil, nil
		f.c.consumed(w)
		runContinuation(w, v, parent)
		return
	}
	a := slotArena[C](w)
	s, c := a.get()
	s.v, s.c, s.join = f.v, c, f.hdr.parent
	var zero C
	f.v = zero
	f.hdr.parent, f.hdr.fire = nil, nil
	f.c.consumed(w)
	w.push(task{p: s, meta: uint64(w.cur.stage()) | slotBit})
}
