package scheduler

import "runtime/debug"

// Spawning from a running packet: Spawn and SpawnOrRun.

// Spawn queues v as a packet on worker w, in the running packet's stage.
// Only the packet running on w may call it: on a *Worker kept past its
// packet's Run it panics, as it does for a nil v.
//
// v is kept by value in memory the worker reuses, so spawning a small
// struct, a pointer or a Packet allocates nothing (BenchmarkSpawnValue:
// 0 allocs, about 13 ns a packet on the 2-vCPU EPYC). A pointer or an interface is
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
		w.badUse(isNil(v), "Spawn")
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
func spawnSlow[P Packet](w *Worker, v P) { w.push(spawnTask(w, v)) }

// spawnTask is the task that queues v, spawned on w: v itself for a
// pointer or an interface outside joins (and w remembers its type, for
// Spawn's and SpawnOrRun's fast paths), else a slot of w's arena for P
// holding v and its join, counted in that join. Owner.
func spawnTask[P Packet](w *Worker, v P) task {
	a := slotArena[P](w)
	if a.direct {
		w.directKey = slotKey[P]()
		if w.js.spawn == nil {
			return task{p: Packet(v), meta: uint64(w.cur.stage())}
		}
	}
	s, c := a.get()
	s.v, s.c, s.join = v, c, w.joinForSpawn()
	return task{p: s, meta: uint64(w.cur.stage()) | slotBit}
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
// like a spawned one. If v opened a join whose members have all finished
// when v returns, the join's continuation runs inline too, under the same
// rule, and is counted the same way. If it fails or panics, the cycle ends with a
// *CycleError naming v, and SpawnOrRun returns: the running packet goes on
// (what it spawns next is dropped with the aborting cycle; its context is
// cancelled). runtime.Goexit in v ends the running packet too. v must not
// wait for something the running packet holds (a lock, a channel it has
// yet to send on), nor may the continuation of a join v opens, which may
// run inline too.
//
// An inline child costs about 10 ns beyond a plain call when its value
// holds only scalar fields (BenchmarkSpawnOrRunNode, one worker, a
// 40-byte node: 13.6 against 3.35 ns a node on the 2-vCPU EPYC), and
// about 19 when a field is an array of more than one element
// (BenchmarkSpawnOrRunArrayNode: the same 40 bytes, 28.3 against 9.75):
// Go passes such a struct in memory, not in registers, and the child's
// value is copied on its way to its Run. So keep a per-node value's
// fields scalars: benchmarks/uts's node, its SHA-1 state held as two
// uint64 and a uint32 instead of a [20]byte, costs 11–16 ns a node over
// the fastest sequential search instead of 27–31 (three runs of its
// BenchmarkTargets). For items under about
// 1 µs that loop over a stack, a Worklist costs less still.
//
// It always spawns while the cycle is ending, when inline runs are nested
// 64 deep (so recursion is bounded; the spawned child runs after the
// packet returns and nests 64 deep again). Past the bound a node costs
// no more than within it (BenchmarkSpawnOrRunNode's chains, each node with
// a leaf child, 3 runs on the EPYC): 24.8–25.1 ns a node on a path of
// 100,000, 29.0–29.8 on a path of 1,000, 34.2–36.3 on a path of 60,
// which stays within it (each op is a cycle, whose start and end a
// shorter path shares among fewer nodes; a balanced tree's node costs
// 13.4–13.8). It also spawns when the scheduler records
// per-packet timing, tracing, runtime/trace regions or pprof labels, so
// that every packet keeps its own slice, region and time. Only the packet
// running on w may call it.
func SpawnOrRun[P Packet](w *Worker, v P) {
	if w.cur.p == nil || isNil(v) {
		w.badUse(isNil(v), "SpawnOrRun")
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
		w.handOff(spawnTask(w, v))
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
		w.packetPanicked(valueName(v), w.failedInline(v), pn.value, pn.stack)
		return
	}
	w.inlineDepth--
	if err != nil {
		w.packetFailed(valueName(v), w.failedInline(v), err)
		w.js = saved
		return
	}
	w.hot.inlined++
	w.tick()
	if w.js.join != nil || w.js.opened != nil {
		prev := w.fireInline
		w.fireInline = true
		w.endJoin()
		w.fireInline = prev
	}
	if saved.spawn != nil {
		w.js = saved
	}
}

// inlineOK reports whether SpawnOrRun would run a child inline on w now:
// no instrumentation, inline runs nested less than maxInline deep, the
// cycle not ending, and no idle worker short of work (nor a streak of
// spawns for one). Owner.
func (w *Worker) inlineOK() bool {
	return !w.instrument && w.inlineDepth < maxInline && !w.s.abort.Load() &&
		w.streak == 0 && (w.s.nIdle() == 0 || !w.wantsWork())
}

// runContinuation runs c, the continuation of a join whose last member
// finished inline (frame.fire under SpawnOrRun), inline at once, as a
// member of parent (its opener's place there), as SpawnOrRun runs an
// inline child: counted, failures and panics reported naming c; then it
// leaves parent, which may fire parent's continuation in turn. The state
// of the finished member is restored afterwards (endJoin then clears it).
// Its body repeats SpawnOrRun's inline run on purpose: with that run in
// a function of its own that both call, SpawnOrRun's inline child cost
// 15.5–16.0 ns against 12.7–13.2 (BenchmarkSpawnOrRunNode's tree), and
// 38.3–39.5 against 29.0–30.3 with an array field (4 alternating runs
// on the EPYC). Owner.
func runContinuation[C Packet](w *Worker, c C, parent *joinHdr) {
	saved := w.js
	w.js = joinState{join: parent, spawn: parent}
	w.inlineDepth++
	if !w.countRun(slotKey[C]()) {
		countValueSlow(w, c)
	}
	err, pn := runInline(w, c, &saved)
	if pn != nil {
		w.goexitName = ""
		w.packetPanicked(valueName(c), w.failedInline(c), pn.value, pn.stack)
		return
	}
	w.inlineDepth--
	if err != nil {
		w.packetFailed(valueName(c), w.failedInline(c), err)
		w.js = saved
		return
	}
	w.hot.inlined++
	w.tick()
	if w.js.join != nil || w.js.opened != nil {
		// A continuation this endJoin fires runs nested in this one:
		// counted as one more inline level, so that a chain of them (c
		// opened a join whose members ran inline, its continuation did
		// the same, …) is bounded by maxInline and then spawned.
		w.inlineDepth++
		w.endJoin()
		w.inlineDepth--
	}
	w.js = saved
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
	pv := &v // the deferred function names v through a pointer: a copy of v in its closure costs more than the run (the copy reads v with loads of other widths than the stores that spilled it)
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
				w.goexitName = safeValueName(*pv)
				w.goexitItem = describeValue(*pv)
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

// failedInline is the Item of v, a failing inline child: the worklist
// item a drain inside it left in w.item, or v's description. Owner.
func (w *Worker) failedInline(v any) string {
	if it := w.item; it != "" {
		w.item = ""
		return it
	}
	return describeValue(v)
}
