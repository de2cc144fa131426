package scheduler

import (
	"sync/atomic"
	"testing"
)

// TestStealPolicies: one steal from a victim holding n packets takes 1
// (StealOne), ⌈n/2⌉ (StealHalf) or min(⌈n/2⌉, limit) (StealBatch), one to
// run and the rest into the thief's deque, and counts it. White-box: the
// scheduler has never run, so its parked workers have never touched their
// deques and the test goroutine acts as the owner of both.
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
			moved := thief.local.Len()
			if !ok || tk.p == nil || tk.stage() != 1 || moved+1 != c.want || victim.local.Len() != c.n-c.want {
				t.Errorf("fifo %v, %v from %d: ok %v, took %d (1 + %d moved), victim left %d; want %d",
					fifo, c.steal, c.n, ok, moved+1, moved, victim.local.Len(), c.want)
			}
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
