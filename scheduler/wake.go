package scheduler

import (
	"runtime"
	"time"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
)

// Parking and waking.
//
// A worker that finds nothing to do parks on its own channel (capacity 1,
// one token); a waker picks parked workers from the idle stack under the
// monitor s.mu and sends each a token. The protocol, as numbered steps:
//
// Parking worker W (Worker.park):
//
//	P1. W's search failed: its designated queue, its private stack, held
//	    batch and deque, every open bucket and Spins rounds of steals were
//	    empty. W stops
//	    counting itself as a searcher: nSearching.Add(-1).
//	P2. Under mu, W registers as parked: pushes itself on s.idle, sets
//	    w.parked, parked++ and nParked.Store(parked) (sequentially
//	    consistent).
//	P3. Still under mu, if parked == n, W is the last worker to go idle and
//	    runs advance (stage.go): resume itself for visible work, wake the
//	    worker of designated work, queue a sentinel, open the next stages,
//	    or end the cycle. No coordinator goroutine exists.
//	P4. W unlocks mu and, if the cycle is active and not aborting, re-checks
//	    every queue another goroutine can fill: its designated queue, the
//	    open buckets and the other workers' deques (emptiness snapshots:
//	    atomic loads of the queues' indices; it takes nothing).
//	P5. If P4 saw work, W takes mu again. If it is still registered and the
//	    cycle is active, it unregisters (parked--, nParked store), counts
//	    itself as a searcher and searches again. If it is no longer
//	    registered, a waker chose it (W3) and its token is already in the
//	    channel: W takes it and searches.
//	P6. Otherwise W waits for its token: for up to Config.ParkSpin it polls
//	    the channel (non-blocking receives, runtime.Gosched between them),
//	    then it blocks receiving. W is registered as parked throughout, so
//	    the poll changes nothing above: wakers choose W and send its token
//	    as before, the last worker to register still advances (P3), and a
//	    token taken by a poll is taken by a receive that synchronizes with
//	    its send exactly as a blocking one does. It only spares the OS
//	    thread wake-up when the token comes early (see ParkSpin). Parked
//	    workers use no CPU once the poll has ended.
//
// Waker X (Add, AddAll, AddDesignated, a spawn with surplus, a thief that
// gained or left surplus, a searcher that found work, advance):
//
//	W1. X publishes the work first: a bucket push, a deque push (atomic
//	    stores) or a designated send (a channel send).
//	W2. Then X loads nParked, and for WakeSearcher nSearching. If nothing is
//	    parked, or a searcher exists, X is done, without a lock.
//	W3. Otherwise, under mu and only while the cycle is active, X pops
//	    parked workers off s.idle (most recently parked first, warmest
//	    cache), unregisters each (w.parked = false, parked--, nParked
//	    store), counts it as a searcher (nSearching.Add(1), so producers that
//	    follow see a searcher and do not pile on) and sends its token. The
//	    send happens under mu into an empty buffer: it never blocks, and a
//	    registered worker never has a token pending.
//
// Why no wake-up is lost. Suppose packet p is published (W1) during an
// active cycle and later every worker is blocked in P6 with p still
// queued. Let L be the last worker to register (P2) before that state;
// from L's P2 on, all n workers stay registered, so nSearching is 0 (every
// worker passed P1 before registering, and nSearching is raised only when a
// worker is unregistered, in W3 or P5). Go's atomics are sequentially
// consistent, and every publication ends in an atomic store that L's P4
// load observes if it comes first. If p's publication preceded L's P4,
// L saw p and resumed in P5 — a contradiction. So it came after, and X's
// W2 loads, later still, see nParked = n and nSearching = 0; X then wakes
// a worker in W3, which unregisters it after L's P2 — again a
// contradiction. Designated sends are ordered by the mutex instead:
// AddDesignated sends under mu, so either the owner's P2 came first (X
// sees w.parked and wakes that worker) or the send happens-before the
// owner's P4 re-check. The private stack and held
// batch are invisible to others, but their owner is awake while they
// hold a packet. A packet
// published while the last parked worker ends the cycle (advance, under
// mu) waits in its bucket for the next cycle: X's W3 finds the cycle
// inactive.
//
// Rejected designs:
//
//   - A coordinator goroutine that opens stages when told the workers are
//     idle (MMTk before mmtk-core #1067): one more goroutine and one more
//     hand-off per stage transition, when the last worker to park already
//     holds the monitor and knows that everyone is idle.
//   - Check the queues, then register as parked (check-then-sleep): a
//     producer that publishes in between sees nParked == 0 and wakes
//     nobody. Registering first and re-checking (P2, P4) closes the window,
//     as the Go runtime's "drop spinning, then re-check all Ps" does.
//   - One sync.Cond for all workers: Signal wakes an arbitrary waiter, so
//     designated work could not wake its own worker (the MMTk #1160 defect),
//     and Broadcast is a thundering herd. Per-worker channels wake the
//     chosen worker, and the idle stack wakes the most recently parked one.
//   - Always locking the monitor in Add (MMTk locks to notify): W2's two
//     atomic loads keep a busy scheduler's Add and Spawn lock-free.
//   - Spinning forever, or parking with a timeout (polling): idle CPU.
//     Workers search at most Spins rounds, poll their token at most
//     ParkSpin, then block (TestIdleCPU).
//   - More search rounds (Spins) instead of the poll, to keep a worker
//     awake for the next wake-up: a searching worker is not parked, so the
//     last-parked decision that ends a stage or cycle (P3) waits for its
//     search to end, and it keeps scanning every queue. A polling worker
//     is parked and reads one channel.
//   - Capping searchers at half the busy workers (the Go runtime's and
//     Tokio's rule). Here a searcher already spins at most Spins rounds,
//     yields the CPU between rounds (runtime.Gosched) and parks at once
//     when no worker runs a packet, and under WakeSearcher wakers add at
//     most one searcher at a time. A capped worker would also have to
//     skip P4's re-check, or the re-check makes it a searcher anyway, and
//     the no-lost-wakeup argument would then rest on the uncapped
//     searchers' re-checks, as Go's does on its spinning Ms. Measured
//     with the cap at the top of the search (a fork tree of 2^19
//     packets, 2, 4 and 8 workers on the 2-vCPU machine, 4 interleaved
//     runs each, load 3-5 from other jobs): 8.5-12.3, 9.5-15.0 and
//     8.7-16.5 ns/packet with it, 8.5-13.5, 8.9-12.0 and 9.0-11.0
//     without; no gain above the noise to pay for.
//   - Wake-all on every bulk add (MMTk's bulk_add): the luindex case
//     (mmtk-core #1200) showed early wakers batching the few packets away
//     from late ones; it is the WakeAll policy, not the default.

// pushIdle registers w as parked (P2). Caller holds mu.
func (s *sched) pushIdle(w *Worker) {
	w.parked = true
	w.idleIdx = len(s.idle)
	s.idle = append(s.idle, w)
	s.parked++
	s.nParked.Store(int32(s.parked)) // W2 of later wakers reads this
}

// removeIdle unregisters w. Caller holds mu; w.parked is true.
func (s *sched) removeIdle(w *Worker) {
	last := len(s.idle) - 1
	moved := s.idle[last]
	s.idle[w.idleIdx] = moved
	moved.idleIdx = w.idleIdx
	s.idle[last] = nil
	s.idle = s.idle[:last]
	w.parked = false
	w.idleIdx = -1
	s.parked--
	s.nParked.Store(int32(s.parked))
}

// resume unregisters w, the caller's own worker, to search again (P5, or
// advance resuming the last parked worker). Caller holds mu.
func (s *sched) resume(w *Worker) {
	s.removeIdle(w)
	s.nSearching.Add(1)
	w.tb.Counter(trace.CounterParked, 0, int64(s.parked))
}

// bufFor is the trace buffer of the goroutine that wakes: worker by's, or
// the control buffer (written under mu) for a goroutine that is not a
// worker (-1).
func (s *sched) bufFor(by int) *tracebuf.Buf {
	if by >= 0 {
		return s.workers[by].tb
	}
	return s.ctl
}

// wakeWorker wakes the parked worker w (W3). by is the waker's worker ID or
// -1. Caller holds mu, the cycle is active and w.parked is true.
func (s *sched) wakeWorker(w *Worker, by int) {
	s.removeIdle(w)
	s.nSearching.Add(1) // w searches when it runs; producers now see a searcher
	w.mon.wakesReceived++
	if by >= 0 {
		s.workers[by].mon.wakesSent++
	} else {
		s.totals.externalWakes++
	}
	tb := s.bufFor(by)
	tb.WakeSent(w.id)
	tb.Counter(trace.CounterParked, 0, int64(s.parked))
	w.wake <- struct{}{} // never blocks: w had no token pending
}

// wakeIdle wakes up to n parked workers, most recently parked first, and
// returns how many it woke. Caller holds mu, the cycle is active.
func (s *sched) wakeIdle(n, by int) int {
	woke := 0
	for ; woke < n && len(s.idle) > 0; woke++ {
		s.wakeWorker(s.idle[len(s.idle)-1], by)
	}
	return woke
}

// wakeForAdd is W2 and W3 after k packets became visible, by policy
// (policy.AddWakes). by is the waker's worker ID, or -1 when not known (an
// add).
func (s *sched) wakeForAdd(k int, p WakePolicy, by int) {
	wake := policy.Kind(p)
	if wake == policy.WakeSearcher && s.nSearching.Load() != 0 {
		return // that searcher re-checks before it parks (P1, P4)
	}
	if s.nParked.Load() == 0 {
		return // every worker is awake and will look before parking
	}
	s.mu.Lock()
	if s.cycleActive.Load() {
		s.wakeIdle(policy.AddWakes(wake, k, s.parked, int(s.nSearching.Load())), by)
	}
	s.mu.Unlock()
}

// wakeOneIdle wakes one parked worker if the cycle is active and nobody is
// searching: the surplus rule of Spawn, batch takes and steals, and the
// searcher chain. Caller: worker by, not holding mu.
func (s *sched) wakeOneIdle(by int) {
	s.mu.Lock()
	if s.cycleActive.Load() && s.nSearching.Load() == 0 {
		s.wakeIdle(1, by)
	}
	s.mu.Unlock()
}

// releaseAll wakes every parked worker to exit (Close). Caller holds mu; no
// cycle is active.
func (s *sched) releaseAll() {
	for len(s.idle) > 0 {
		w := s.idle[len(s.idle)-1]
		s.removeIdle(w)
		w.wake <- struct{}{}
	}
}

// park is steps P1-P6 for worker w, called when its search failed. On
// return w searches again (and is counted in nSearching), or, if the
// scheduler is closed and no cycle is active, exits.
func (w *Worker) park() {
	s := w.s
	if w.searching { // P1
		w.searching = false
		s.nSearching.Add(-1)
	}
	if s.abort.Load() {
		w.dropLocal()
	}
	w.streak = 0 // a SpawnOrRun hand-off streak ends with the burst
	w.flush()
	w.tb.Park() // before P2: nothing of w's is recorded once the cycle may end

	s.mu.Lock() // P2
	s.dropped += w.dropped
	w.dropped = 0
	w.mon.parks++
	s.pushIdle(w)
	w.tb.Counter(trace.CounterParked, 0, int64(s.parked))
	if s.parked == s.n && s.cycleActive.Load() && s.advance(w) { // P3
		s.mu.Unlock()
		w.resumed()
		return
	}
	s.mu.Unlock()

	if s.cycleActive.Load() && !s.abort.Load() && w.workVisible() { // P4
		s.mu.Lock() // P5
		if !w.parked {
			s.mu.Unlock()
			<-w.wake // a waker chose w; its token is already there
			w.resumed()
			w.tb.WakeReceived(false)
			return
		}
		if s.cycleActive.Load() && !s.abort.Load() {
			s.resume(w)
			s.mu.Unlock()
			w.resumed()
			return
		}
		s.mu.Unlock()
	}

	w.waitToken() // P6
}

// waitToken is P6: it waits for w's token, polling for ParkSpin before it
// blocks, counts the wait as idle time and records the wake-up. Owner; w
// is registered as parked (in park, or since New).
func (w *Worker) waitToken() {
	w.waits.Add(1)
	start := time.Now()
	polled := w.pollToken(start)
	if !polled {
		<-w.wake
	}
	w.hot.idleNs += int64(time.Since(start))
	w.resumed()
	w.tb.WakeReceived(!polled)
}

// resumed records that w leaves the parked state as a searcher.
func (w *Worker) resumed() {
	w.searching = true
	w.tb.Unpark()
}

// workVisible reports whether any queue that others fill holds work for
// w: its designated queue, an open bucket, another worker's deque. P4.
func (w *Worker) workVisible() bool {
	s := w.s
	if len(w.designated) != 0 {
		return true
	}
	cur := int(s.cur.Load())
	for st := 0; st <= cur; st++ {
		if b := s.buckets[st]; !b.NormalEmpty() || !b.PriorityEmpty() {
			return true
		}
	}
	for _, v := range s.workers {
		if v != w && !v.local.IsEmpty() {
			return true
		}
	}
	return false
}

// pollToken is P6's first phase: until Config.ParkSpin has passed since
// start, w polls its channel for a token (a non-blocking receive), with
// runtime.Gosched between polls so that any other runnable goroutine gets
// the CPU first. It reports whether a token came. Owner; w is registered
// as parked.
func (w *Worker) pollToken(start time.Time) bool {
	d := int64(w.s.cfg.ParkSpin)
	if !policy.Polling(0, d) {
		return false
	}
	for i := 1; ; i++ {
		select {
		case <-w.wake:
			w.hot.spinWakes++
			return true
		default:
		}
		// The clock costs about as much as a poll: read it every 8th.
		if i%8 == 0 && !policy.Polling(int64(time.Since(start)), d) {
			return false
		}
		runtime.Gosched()
	}
}
