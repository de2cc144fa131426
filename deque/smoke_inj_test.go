package deque

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestSmokeInjector(t *testing.T) {
	q := newInjector[int](^uint64(0) - 300)
	const P, N = 2, 100000
	seen := make([]atomic.Int32, P*N)
	var wg sync.WaitGroup
	var produced atomic.Int32
	for p := 0; p < P; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < N; i++ {
				q.Push(p*N + i)
			}
			produced.Add(1)
		}(p)
	}
	var cw sync.WaitGroup
	for c := 0; c < 3; c++ {
		cw.Add(1)
		go func(c int) {
			defer cw.Done()
			mine := New[int]()
			for produced.Load() < P || !q.IsEmpty() {
				if c == 0 {
					if v, st := q.Steal(); st == Success {
						seen[v].Add(1)
					}
				} else if v, _, st := q.StealBatchAndPop(mine, 17); st == Success {
					seen[v].Add(1)
				}
				for {
					v, ok := mine.Pop()
					if !ok {
						break
					}
					seen[v].Add(1)
				}
			}
		}(c)
	}
	wg.Wait()
	cw.Wait()
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("item %d seen %d times", i, c)
		}
	}
}
