package deque_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// TestInjectorReclaimExactlyOnce: phases of concurrent producers and
// consumers separated by a quiescent Reclaim, as a scheduler runs cycles:
// reused blocks lose nothing and duplicate nothing, and each producer's
// items stay in order, across 200 phases.
func TestInjectorReclaimExactlyOnce(t *testing.T) {
	const phases, producers, perProducer = 200, 2, 3000
	q := deque.NewInjectorAt[int](^uint64(0) - 1000)
	for ph := range phases {
		n := producers * perProducer
		seen := make([]atomic.Int32, n)
		var wg sync.WaitGroup
		var produced atomic.Int32
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer produced.Add(1)
				if p == 0 {
					for i := range perProducer {
						q.Push(p*perProducer + i)
					}
					return
				}
				batch := make([]int, 0, 100)
				for i := 0; i < perProducer; i += 100 {
					batch = batch[:0]
					for j := i; j < min(i+100, perProducer); j++ {
						batch = append(batch, p*perProducer+j)
					}
					q.PushBatch(batch)
				}
			}()
		}
		for c := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := deque.New[int]()
				var run [16]int
				last := [producers]int{-1, -1}
				// ordered checks an item taken straight from the
				// injector against the last one from its producer.
				ordered := func(v int) {
					// Each check is made before asserting: testify's
					// reflection on each of the 1.2·10^6 takes would cost
					// more than the test.
					if p := v / perProducer; v <= last[p] {
						assert.Greater(t, v, last[p], "phase %d: producer %d's items out of order", ph, p)
					} else {
						last[p] = v
					}
				}
				take := func(v int, direct bool) {
					if n := seen[v].Add(1); n != 1 {
						assert.Equal(t, int32(1), n, "phase %d: item %d taken more than once", ph, v)
					}
					if direct {
						ordered(v)
					}
				}
				for produced.Load() < producers || !q.IsEmpty() {
					if c == 0 {
						if v, st := q.Steal(); st == deque.Success {
							take(v, true)
						}
						continue
					}
					// A bucket's TakeBatch: the first run at once, the
					// rest moved into the consumer's deque and popped.
					if k, st := q.TakeBatch(run[:]); st == deque.Success {
						take(run[0], true)
						for _, v := range run[1:k] {
							ordered(v)
						}
						mine.PushBatch(run[1:k])
					}
					for {
						v, ok := mine.Pop()
						if !ok {
							break
						}
						take(v, false)
					}
				}
			}()
		}
		wg.Wait()
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				require.Equal(t, int32(1), c, "phase %d: times item %d was taken", ph, i)
			}
		}
		q.Reclaim() // quiescent: every call above has returned
	}
}

// TestInjectorReclaimReuses: after a Reclaim, pushes reuse the retired
// blocks instead of allocating.
func TestInjectorReclaimReuses(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	q := deque.NewInjector[int]()
	round := func() {
		for i := range 4 * deque.BlockCap {
			q.Push(i)
		}
		for {
			if _, st := q.Steal(); st == deque.Empty {
				break
			}
		}
		q.Reclaim()
	}
	round() // fill the spare list
	require.Zero(t, testing.AllocsPerRun(20, round), "allocations per round of 4 blocks after Reclaim")
}
