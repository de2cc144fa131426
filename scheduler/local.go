package scheduler

import "github.com/wsched/wsched/internal/policy"

// A worker's own queues: the private stack that Spawn pushes onto, the
// held batch of a bucket take or a steal, and the deque that thieves see,
// with the rules that move packets from the first two to the third while
// workers are idle.

// push queues t, a spawned packet, on w: onto its private stack (offering
// all but the newest to the deque while workers are idle), or onto its
// deque under LocalLIFO and LocalFIFO (applying the surplus rule). Owner;
// the packet running on w spawns.
func (w *Worker) push(t task) {
	if w.tb != nil {
		t.stamp(w.spawnStamp(), w.from)
	}
	if w.priv != nil {
		n := w.privTail - w.privHead
		if n == privCap {
			w.spillPriv()
		}
		w.priv[w.privTail%privCap] = t // a fixed array: no bounds check
		w.privTail++
		// Something to offer (two or more private packets, or a held
		// batch), if anyone is idle. (The idle test is offerAll's first,
		// made here to spare the call while every worker is busy.)
		if (n != 0 || w.heldLo != w.heldHi) && w.s.nIdle() != 0 {
			w.offerAll()
		}
		return
	}
	w.local.Push(t)
	w.surplus()
}

// spawnStamp is the trace stamp of a packet w spawns now: the time of its
// buffer's newest event (the running packet's begin, or later), with no
// clock reading per spawn (a reading costs about 10 ns on the 2-vCPU
// EPYC), so that the steal arrow
// starts inside the spawning packet's slice, and the replay of `wsched
// simulate` finds the spawning packet. Stamps of one worker's spawns
// increase strictly, by spawnStampStep ticks at least, so that they also
// give the order of a packet's spawns. Owner; tracing.
func (w *Worker) spawnStamp() int64 {
	t := max(w.tb.Last(), w.lastStamp+spawnStampStep)
	w.lastStamp = t
	return t
}

// spawnStampStep is how far apart two spawn stamps of one worker are at
// least, in clock ticks: 8 ticks are 3.3 ns at 2.45 GHz, still apart once
// converted to nanoseconds, and less than a spawn costs, so that a stamp
// stays no later than its spawn.
const spawnStampStep = 8

// privCap is the private stack's size (policy.PrivCap).
const privCap = policy.PrivCap

// offerAll makes w's private packets available to idle workers
// (policy.Offer): if some worker is parked or searching and w's deque
// holds fewer packets than there are such workers (wantsWork), it moves
// every private packet but the newest to the deque, then the held batch
// if the deque still holds too few (a chain of single spawns, each run
// next, would otherwise keep the batch behind it from idle workers for the
// whole chain), and applies the surplus rule if anything moved. Owner. (Its callers in push and
// burst test for something to offer and for idle workers first, so that
// while every worker is busy a spawn or packet boundary costs two loads
// and no call.)
func (w *Worker) offerAll() {
	movePriv, exposeHeld := policy.Offer(int(w.privTail-w.privHead), w.heldLo != w.heldHi, w.s.nIdle(), w.local.Len())
	if movePriv {
		w.movePriv(w.privTail - 1)
	}
	if exposeHeld {
		w.exposeHeld()
	}
	if movePriv || exposeHeld {
		w.surplus()
	}
}

// wantsWork reports whether some worker is parked or searching and w's
// deque holds fewer packets than there are such workers: the rule by
// which SpawnOrRun spawns and w offers what it keeps private. Owner.
func (w *Worker) wantsWork() bool {
	idle := w.s.nIdle()
	if idle == 0 { // the common case while every worker is busy: no deque loads
		return false
	}
	return policy.WantsWork(idle, w.local.Len())
}

// spillPriv moves the older half of a full private stack to the deque
// (the Go runtime's runqput moves half of a full run queue to the global
// one) and applies the surplus rule. Owner.
func (w *Worker) spillPriv() {
	w.movePriv(w.privHead + privCap/2)
	w.surplus()
}

// movePriv moves the private packets [privHead, end) to the deque, oldest
// first (thieves take them in that order). Owner.
func (w *Worker) movePriv(end uint32) {
	for w.privHead != end {
		lo := w.privHead % privCap
		n := min(end-w.privHead, privCap-lo) // up to the ring's end
		run := w.priv[lo : lo+n]
		w.local.PushBatch(run)
		clear(run)
		w.privHead += n
	}
	w.traceLocalLen()
}

// popPriv takes the newest private packet. Owner; the stack is not empty.
func (w *Worker) popPriv() task {
	w.privTail--
	i := w.privTail % privCap
	t := w.priv[i]
	w.priv[i] = task{} // drop the reference for the GC
	return t
}

// handoff is how many children in a row SpawnOrRun spawns once it sees an
// idle worker short of queued work: the first and the next handoff-1,
// pushed onto the private stack and moved to the deque (all but the
// newest) after the 2nd, 4th, 8th and 16th, the streak ending there if no
// worker is idle any more: the first child goes out at once, a parent
// that spawns a few and then computes has all but one out, and a thief
// that comes back finds several and steals half of them in one go. One
// child at a time, the spawner asked on every child (two shared counters
// and its deque's top, lines the searching thief keeps writing) and the
// thief came back for every child.
const handoff = 16

// handOff queues t, a SpawnOrRun child, as part of a hand-off streak.
// Owner.
func (w *Worker) handOff(t task) {
	if w.streak == 0 {
		w.streak = handoff
	}
	w.streak--
	if w.priv == nil { // LocalLIFO or LocalFIFO: straight to the deque
		w.push(t)
		return
	}
	if w.tb != nil {
		t.stamp(w.spawnStamp(), w.from)
	}
	if w.privTail-w.privHead == privCap {
		w.spillPriv()
	}
	w.priv[w.privTail%privCap] = t
	w.privTail++
	if k := handoff - w.streak; k >= 2 && k&(k-1) == 0 { // 2, 4, 8, 16
		w.movePriv(w.privTail - 1)
		if w.s.nIdle() == 0 {
			w.streak = 0 // nobody to hand to: back to asking per child
			return
		}
		w.surplus()
	}
}

// nIdle returns how many workers are parked or searching (two loads).
// Any goroutine.
func (s *sched) nIdle() int { return int(s.nParked.Load()) + int(s.nSearching.Load()) }

// surplus applies the surplus rule after w's deque gained packets, or w
// stole from a deque that still holds some: wake one parked worker if
// nobody is searching (W2, then W3 in wakeOneIdle). Owner.
func (w *Worker) surplus() {
	s := w.s
	if policy.Surplus(int(s.nParked.Load()), int(s.nSearching.Load())) {
		s.wakeOneIdle(w.id)
	}
}

// nextHeld takes the oldest held packet, unless workers are idle (parked
// or searching) and w's deque holds fewer packets than there are idle
// workers (SpawnOrRun's rule): then it moves everything held into the
// deque, applies the surplus rule (wake one parked worker if nobody
// searches) and reports false, and the caller pops. In a fan-out, while
// every worker is busy, a packet costs two loads of counters that nobody
// writes, not a Pop. Owner; held is not empty.
func (w *Worker) nextHeld() (task, bool) {
	if w.offerHeld() {
		return task{}, false
	}
	t := w.held[w.heldLo]
	w.held[w.heldLo] = task{} // drop the reference for the GC
	w.heldLo++
	return t, true
}

// maxHeld is the size of a worker's held array (24 bytes a packet): no
// bucket take or steal moves more than policy.MaxTake, one bucket block.
const maxHeld = policy.MaxTake

// offerHeld moves what w holds into its deque if workers are idle and
// the deque holds fewer packets than there are idle workers, then applies
// the surplus rule, and reports whether it did. Owner; held is not empty.
func (w *Worker) offerHeld() bool {
	if !w.wantsWork() {
		return false
	}
	w.exposeHeld()
	w.surplus()
	return true
}

// exposeHeld moves what w holds into its deque, where thieves can take
// it. Owner.
func (w *Worker) exposeHeld() {
	h := w.held[w.heldLo:w.heldHi]
	w.local.PushBatch(h)
	clear(h)
	w.heldLo, w.heldHi = 0, 0
	w.traceLocalLen()
}
