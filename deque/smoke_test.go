package deque

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestSmokeExactlyOnce(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		d := newDeque[int](fifo, ^uint64(0)-1000)
		const N = 200000
		seen := make([]atomic.Int32, N)
		var wg sync.WaitGroup
		var done atomic.Bool
		for k := 0; k < 3; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				mine := New[int]()
				for !done.Load() || !d.IsEmpty() {
					switch k {
					case 0:
						if v, st := d.Steal(); st == Success {
							seen[v].Add(1)
						}
					case 1:
						d.StealBatch(mine, 7)
					case 2:
						if v, _, st := d.StealBatchAndPop(mine, 9); st == Success {
							seen[v].Add(1)
						}
					}
					for {
						v, ok := mine.Pop()
						if !ok {
							break
						}
						seen[v].Add(1)
					}
				}
			}(k)
		}
		for i := 0; i < N; i++ {
			d.Push(i)
			if i%3 == 0 {
				if v, ok := d.Pop(); ok {
					seen[v].Add(1)
				}
			}
		}
		for {
			v, ok := d.Pop()
			if !ok {
				break
			}
			seen[v].Add(1)
		}
		done.Store(true)
		wg.Wait()
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("fifo=%v item %d seen %d times", fifo, i, c)
			}
		}
	}
}
