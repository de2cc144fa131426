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

// TestBucketTake: how many packets a bucket take moves under each
// Config.Take: at most the worker's fair share of the bucket, ⌈depth ÷
// workers⌉, and BucketBatch (TakeFair); BucketBatch whenever there are
// that many (TakeFixed, MMTk's whole batches); the fair share, or
// ⌈depth ÷ 2·workers⌉ up to MaxSteal while the bucket is deep (TakeGuided,
// the default), from the bucket's queue (BulkAdd) and from lent slices
// (AddSlice) alike. White-box, as above: the test goroutine acts as
// worker 0 on a scheduler that has never run.
func TestBucketTake(t *testing.T) {
	cases := []struct {
		take       TakePolicy
		workers, n int
		want       int
		batch      int // 0: DefaultBucketBatch
	}{
		{TakeFair, 4, 32, 8, 0},
		{TakeFair, 2, 32, 16, 0},
		{TakeFair, 2, 67, 32, 0}, // ⌈67/2⌉ = 34, capped at BucketBatch
		{TakeFair, 4, 3, 1, 0},
		{TakeFair, 1, 100, 32, 0},
		{TakeFair, 2, 1000, 32, 0},
		{TakeFixed, 4, 32, 32, 0},
		{TakeFixed, 4, 3, 3, 0},
		{TakeFixed, 2, 1000, 32, 0},
		{TakeGuided, 4, 32, 8, 0},   // ⌈32/8⌉ = 4 < the fair share
		{TakeGuided, 2, 67, 32, 0},  // ⌈67/4⌉ = 17 < BucketBatch
		{TakeGuided, 2, 300, 75, 0}, // ⌈300/4⌉
		{TakeGuided, 1, 100, 50, 0}, // ⌈100/2⌉
		{TakeGuided, 2, 1000, MaxSteal, 0},
		{TakeGuided, 4, 3, 1, 0},
		{TakeDefault, 2, 300, 75, 0},
		{TakeGuided, 2, 1000, 32, 8}, // four times BucketBatch
		{TakeGuided, 2, 20, 4, 1},    // ⌈20/4⌉ = 5, capped at 4 × BucketBatch
		{TakeGuided, 2, 12, 3, 1},    // ⌈12/4⌉ = 3 > the fair share of 1
		{TakeFair, 2, 1000, 1, 1},
	}
	for _, lent := range []bool{false, true} {
		for _, c := range cases {
			s := newSched(t, Config{Workers: c.workers, Stages: []string{"a"}, Take: c.take, BucketBatch: c.batch})
			var n atomic.Int64
			ps := make([]Packet, c.n)
			for i := range ps {
				ps[i] = counter{&n}
			}
			add := s.BulkAdd
			if lent {
				add = s.AddSlice
			}
			if err := add(1, ps); err != nil {
				t.Fatal(err)
			}
			s.cur.Store(1) // stage 1 open for findBuckets
			w := s.workers[0]
			tk, ok, _ := w.findBuckets()
			if got := w.local.Len() + w.heldHi - w.heldLo + 1; !ok || tk.p == nil || got != c.want {
				t.Errorf("%v, batch %d, lent %v, %d workers, %d queued: took %d (ok %v); want %d", c.take, c.batch, lent, c.workers, c.n, got, ok, c.want)
			}
		}
	}
}

// TestTakeLimitBounds: over every depth, worker count and batch, a take
// limit is at least 1 and at most the held array; TakeFair never exceeds
// the batch or the fair share; TakeGuided never falls below TakeFair, never
// exceeds four batches, and exceeds TakeFair only while the bucket is
// deeper than 2 × workers × batch.
func TestTakeLimitBounds(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for batch := 1; batch <= maxHeld; batch = batch*2 + 1 {
			for d := 0; d <= 4*maxHeld*n; d += 1 + d/7 {
				fair := takeLimitFor(TakeFair, batch, d, n)
				guided := takeLimitFor(TakeGuided, batch, d, n)
				share := max(1, (d+n-1)/n)
				if fair < 1 || fair > batch || fair > share {
					t.Fatalf("fair(batch %d, d %d, n %d) = %d", batch, d, n, fair)
				}
				if guided < fair || guided > min(guidedFactor*batch, maxHeld) {
					t.Fatalf("guided(batch %d, d %d, n %d) = %d, fair %d", batch, d, n, guided, fair)
				}
				if guided > fair && d <= 2*n*batch {
					t.Fatalf("guided(batch %d, d %d, n %d) = %d above fair %d on a short bucket", batch, d, n, guided, fair)
				}
			}
		}
	}
}

func TestParseTakePolicy(t *testing.T) {
	for p := TakeDefault; p < takeEnd; p++ {
		if q, err := ParseTakePolicy(p.String()); err != nil || q != p {
			t.Errorf("%v: parsed back as %v, %v", p, q, err)
		}
	}
	if _, err := ParseTakePolicy("greedy"); err == nil {
		t.Error("unknown take policy parsed")
	}
	if s := TakePolicy(9).String(); s != "TakePolicy(9)" {
		t.Errorf("String of an unknown policy: %q", s)
	}
}
