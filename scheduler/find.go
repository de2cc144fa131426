package scheduler

import (
	"runtime"

	"github.com/wsched/wsched/bucket"
	"github.com/wsched/wsched/internal/deque"
	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
)

// Finding work. A worker looks, in order:
//
//  1. its designated queue;
//  2. its private stack (offering all but the newest to the deque while
//     workers are idle), its held batch (from a bucket or a steal), then
//     its deque;
//  3. the open buckets in stage order (Unconstrained first): the priority
//     lane, one packet only, never batched; then the normal lane, as many
//     packets as Config.Take allows (takeLimit: by default up to
//     BucketBatch and no more than the worker's fair share ⌈depth ÷
//     workers⌉, or up to MaxSteal while the bucket is deep), one to run
//     and the rest held (a full take) or into its deque;
//  4. the other workers' deques, starting at a random victim, by the steal
//     policy: one packet, or a batch of at most MaxSteal into the held
//     array (held like a bucket take if 9 or more, else into its deque);
//  5. steps 1-4 again, Spins rounds in all, with runtime.Gosched between
//     rounds, but only while some worker is running a packet (nobody else
//     could produce work); then it parks (wake.go).
//
// From step 4 on the worker counts itself in s.nSearching, which throttles
// WakeSearcher and the surplus rule.

// find returns the next packet for w, or false if w should park: nothing
// found after Spins rounds, or the cycle is aborting. Owner.
func (w *Worker) find() (task, bool) {
	s := w.s
	if s.abort.Load() {
		return task{}, false
	}
	if t, ok := w.findLocal(); ok {
		w.foundWork()
		return t, true
	}
	if t, ok, _ := w.findBuckets(); ok {
		return t, true
	}
	if !w.searching {
		w.searching = true
		s.nSearching.Add(1)
	}
	// A round that met contention (Retry: another consumer raced us, or a
	// producer has drawn a slot it has not yet filled) does not count
	// towards Spins, up to 4×(Spins+1) rounds in all: work is there, and
	// parking would only be undone by the re-check.
	for round, spins := 0, 0; round < 4*(s.cfg.Spins+1); round++ {
		t, ok, contended := w.steal()
		if ok {
			return t, true
		}
		runtime.Gosched()
		if s.abort.Load() {
			return task{}, false
		}
		if t, ok := w.findLocal(); ok {
			w.foundWork()
			return t, true
		}
		t, ok, contended2 := w.findBuckets()
		if ok {
			return t, true
		}
		if contended || contended2 {
			continue
		}
		// Park after Spins empty rounds, or at once when nobody is running a
		// packet (every other worker is parked or searching too): then no
		// worker can produce work, and a goroutine outside that adds some
		// wakes a worker itself (wake.go). Spinning on would only delay the
		// last-parked decision that opens the next stage (BenchmarkCycle:
		// 140-230 µs per three-stage cycle with Spins 64, 6-15 µs without).
		if spins++; policy.GiveUp(spins, s.cfg.Spins, s.nIdle(), s.n) {
			break
		}
	}
	return task{}, false
}

// foundWork ends w's search: it stops counting as a searcher and, under
// WakeSearcher, wakes the next worker if it was the last searcher and
// workers are parked (the Go runtime's and Tokio's chain). Owner.
func (w *Worker) foundWork() {
	if !w.searching {
		return
	}
	w.searching = false
	s := w.s
	if s.nSearching.Add(-1) == 0 && s.cfg.Wake == WakeSearcher && s.nParked.Load() != 0 {
		s.wakeOneIdle(w.id)
	}
}

// findLocal is steps 1 and 2. Owner.
func (w *Worker) findLocal() (task, bool) {
	if w.nDesignated.Load() != 0 {
		if p, ok := w.takeDesignated(); ok {
			return mkTask(p, Unconstrained), true
		}
	}
	if w.privTail != w.privHead {
		w.offerAll()
		return w.popPriv(), true
	}
	if w.heldLo != w.heldHi {
		if t, ok := w.nextHeld(); ok {
			return t, true
		}
	}
	return w.local.Pop()
}

// findBuckets is step 3. contended reports a Retry. Owner.
func (w *Worker) findBuckets() (t task, ok, contended bool) {
	s := w.s
	cur := int(s.cur.Load()) // load-acquire: buckets 0..cur are open
	for st := 0; st <= cur; st++ {
		b := s.buckets[st]
		for !b.PriorityEmpty() {
			t, ok, retry := b.TakePriority()
			if ok {
				s.unqueue(st, 1)
				w.hot.bucketTakes++
				w.hot.bucketPackets++
				if w.tb != nil {
					w.tb.Counter(trace.CounterBucketDepth, st, int64(b.Len()))
					w.prio = true // it runs next: its begin says so
				}
				w.foundWork()
				return t, true, contended
			}
			if !retry {
				break
			}
			contended = true // a producer is mid-push; try again
			runtime.Gosched()
		}
		if b.NormalEmpty() { // the priority lane was just seen empty
			continue
		}
		limit := s.takeLimit(b)
		// The batch stays private (held) until a worker is idle: see
		// nextHeld. held is empty here: find runs after a burst, which
		// ends only when nothing is held.
		got, retry := b.Take(w.held[:limit]) // limit <= maxHeld = len(held)
		switch {
		case got > 0:
			moved := got - 1
			// A take that came back smaller than a full batch was cut
			// by the fair share (the bucket is running low, and
			// workers that go idle will find little there), or by the
			// end of one of the bucket's blocks. Balance matters more
			// then than the cost of a Pop: holdBatch publishes it at
			// once, as thieves' work, since a held take can hide a long
			// packet's successors for that packet's whole run. The test
			// is on the batch taken, not the limit, so a take cut by a
			// block's end is published too (examples/prepare's (d)
			// configuration is the case that shows it).
			t := w.holdBatch(got, policy.HoldTake(got, s.cfg.BucketBatch))
			s.unqueue(st, got)
			w.hot.bucketTakes++
			w.hot.bucketPackets += uint64(moved) + 1
			w.foundWork()
			if w.tb != nil {
				// Queue depth for `wsched analyze`: what is left in the
				// bucket. (exposeHeld records the deque's.)
				w.tb.Counter(trace.CounterBucketDepth, st, int64(b.Len()))
			}
			if moved > 0 {
				w.surplus()
			}
			return t, true, contended
		case retry:
			contended = true
		}
	}
	return task{}, false, contended
}

// takeLimit is how many packets a take from b's normal lane may move
// (Config.Take, policy.TakeLimit), at most len(held). TakeFair and
// TakeGuided read b's depth (Bucket.Len, a few atomic loads; TakeFixed
// spares them), a snapshot, so a take may find fewer packets. Any
// goroutine.
func (s *sched) takeLimit(b *bucket.Bucket[task]) int {
	take := policy.Kind(s.cfg.Take)
	d := 0
	if take != policy.TakeFixed {
		d = b.Len()
	}
	return policy.TakeLimit(take, s.cfg.BucketBatch, d, s.n)
}

// holdBatch takes the first of the got packets just written into w.held
// (by a bucket take or a steal) to run at once, and holds the rest if hold
// (policy.HoldTake, policy.HoldSteal); otherwise they go to w's deque,
// where idle workers can take them. Owner; nothing was held before.
func (w *Worker) holdBatch(got int, hold bool) task {
	t := w.held[0]
	w.held[0] = task{}
	w.heldLo, w.heldHi = 1, got
	if !hold {
		w.exposeHeld()
	}
	return t
}

// stealInto steals a batch from v into w's held array (empty: w is
// searching) and returns its first packet to run; the rest are held, or go
// to w's deque if fewer than minHeld, as for a bucket take. Owner.
func (w *Worker) stealInto(v *Worker, limit int) (task, int, deque.Status) {
	got, status := v.local.StealInto(w.held[:min(limit, len(w.held))])
	if status != deque.Success {
		return task{}, 0, status
	}
	return w.holdBatch(got, policy.HoldSteal(got)), got - 1, deque.Success
}

// steal is step 4: one pass over the other workers, from a random one.
// Owner.
func (w *Worker) steal() (t task, ok, contended bool) {
	s := w.s
	n := s.n
	if n == 1 {
		return task{}, false, false
	}
	start := w.rand(n)
	limit := policy.StealLimit(policy.Kind(s.cfg.Steal), s.cfg.StealLimit)
	for i := range n {
		v := s.workers[(start+i)%n]
		if v == w || v.local.IsEmpty() {
			continue
		}
		w.hot.stealAttempts++
		var moved int
		var status deque.Status
		if limit == 1 {
			t, status = v.local.Steal()
		} else {
			// Into the held array (limit <= MaxSteal, its size): run
			// from there, with no writes into our deque and no locked
			// instruction per packet to take them back out, and offered
			// to idle workers as a bucket take is (nextHeld).
			t, moved, status = w.stealInto(v, limit)
		}
		switch status {
		case deque.Success:
			w.hot.steals++
			w.hot.stolen += uint64(moved) + 1
			if w.tb != nil {
				w.flowSeq++
				w.flow = uint64(w.id+1)<<40 | w.flowSeq
				// One arrow per steal, for the packet we run now: from
				// where it was queued (its spawn on some worker, or its
				// add from outside) to its slice on this worker.
				w.tb.StealStamped(v.id, moved+1, w.flow, t.born(), t.origin())
				w.tb.Counter(trace.CounterLocalLen, w.id, int64(w.local.Len()))
				// The victim's deque after the steal (a snapshot: the
				// victim may be pushing or popping meanwhile).
				w.tb.Counter(trace.CounterLocalLen, v.id, int64(v.local.Len()))
			}
			w.foundWork()
			// Surplus: our deque gained packets, or the victim still has
			// some. Either way spare work sits in a deque; if nobody is
			// searching now (we just stopped), a parked worker must come
			// for it, or a one-at-a-time steal leaves it to the victim
			// alone (TestSpawnParallelism: WakeOne and StealOne ran 200
			// spawned children on 2 of 4 workers).
			if moved > 0 || !v.local.IsEmpty() {
				w.surplus()
			}
			return t, true, contended
		case deque.Retry:
			contended = true
		}
	}
	return task{}, false, contended
}
