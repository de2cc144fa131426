package scheduler

import (
	"sync/atomic"
	"testing"
)

// TestStealPolicies: one steal from a victim holding n packets takes 1
// (StealOne), min(⌈n/2⌉, MaxSteal) (StealHalf) or min(⌈n/2⌉, limit)
// (StealBatch), one to run and the rest held by the thief (minHeld or
// more) or in its deque, and counts it. White-box: the scheduler has never
// run, so its parked workers have never touched their deques and the test
// goroutine acts as the owner of both.
func TestStealPolicies(t *testing.T) {
	cases := []struct {
		steal StealPolicy
		n     int
		want  int
	}{
		{StealOne(), 20, 1},
		{StealHalf(), 20, 10},
		{StealHalf(), 21, 11},
		{StealHalf(), 1, 1},
		{StealBatch(4), 20, 4},
		{StealBatch(4), 5, 3},
		{StealBatch(1), 20, 1},
		{StealHalf(), 2 * MaxSteal, MaxSteal},
		{StealHalf(), 600, MaxSteal}, // half capped at MaxSteal
		{StealBatch(MaxSteal), 600, MaxSteal},
		{StealBatch(16), 600, 16},
	}
	for _, fifo := range []bool{false, true} {
		for _, c := range cases {
			s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, Steal: c.steal, LocalFIFO: fifo})
			victim, thief := s.workers[0], s.workers[1]
			var n atomic.Int64
			for range c.n {
				victim.local.Push(mkTask(counter{&n}, 1))
			}
			tk, ok, _ := thief.steal()
			held, queued := thief.heldHi-thief.heldLo, thief.local.Len()
			moved := held + queued
			if !ok || tk.p == nil || tk.stage() != 1 || moved+1 != c.want || victim.local.Len() != c.n-c.want {
				t.Errorf("fifo %v, %v from %d: ok %v, took %d (1 + %d moved), victim left %d; want %d",
					fifo, c.steal, c.n, ok, moved+1, moved, victim.local.Len(), c.want)
			}
			if wantHeld := c.want-1 >= minHeld; moved > 0 && ((held == moved) != wantHeld || (held != 0 && queued != 0)) {
				t.Errorf("fifo %v, %v from %d: %d held and %d in the deque; want them all %s", fifo, c.steal, c.n, held, queued,
					map[bool]string{true: "held", false: "in the deque"}[wantHeld])
			}
			clear(thief.held)
			thief.heldLo, thief.heldHi = 0, 0
			h := thief.hot
			if h.stealAttempts != 1 || h.steals != 1 || h.stolen != uint64(c.want) {
				t.Errorf("fifo %v, %v: counters attempts %d steals %d stolen %d", fifo, c.steal, h.stealAttempts, h.steals, h.stolen)
			}
			// Empty both deques (their owner is this goroutine) before Close.
			for _, w := range s.workers {
				for {
					if _, ok := w.local.Pop(); !ok {
						break
					}
				}
			}
			if _, ok, _ := thief.steal(); ok || thief.hot.stealAttempts != 1 {
				t.Errorf("steal from empty deques succeeded or counted an attempt")
			}
			s.Close()
		}
	}
}

// TestBucketFairShare: a bucket take is capped at the worker's fair share
// of the bucket, ⌈depth ÷ workers⌉ (at most BucketBatch), unless
// BucketBatchFixed asks for MMTk's whole batches. White-box, as above: the
// test goroutine acts as worker 0 on a scheduler that has never run.
func TestBucketFairShare(t *testing.T) {
	cases := []struct {
		fixed      bool
		workers, n int
		want       int
	}{
		{false, 4, 32, 8},
		{false, 2, 32, 16},
		{false, 2, 67, 32}, // ⌈67/2⌉ = 34, capped at BucketBatch
		{false, 4, 3, 1},
		{false, 1, 100, 32},
		{true, 4, 32, 32},
		{true, 4, 3, 3},
	}
	for _, c := range cases {
		s := newSched(t, Config{Workers: c.workers, Stages: []string{"a"}, BucketBatchFixed: c.fixed})
		var n atomic.Int64
		ps := make([]Packet, c.n)
		for i := range ps {
			ps[i] = counter{&n}
		}
		if err := s.BulkAdd(1, ps); err != nil {
			t.Fatal(err)
		}
		s.cur.Store(1) // stage 1 open for findBuckets
		w := s.workers[0]
		tk, ok, _ := w.findBuckets()
		if got := w.local.Len() + w.heldHi - w.heldLo + 1; !ok || tk.p == nil || got != c.want {
			t.Errorf("fixed %v, %d workers, %d queued: took %d (ok %v); want %d", c.fixed, c.workers, c.n, got, ok, c.want)
		}
	}
}
