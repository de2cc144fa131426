package deque_test

import (
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/deque"
)

// box is a deque item that the test watches for reachability.
type box struct{ buf [128]byte }

// reachable collects garbage and counts the boxes still reachable.
func reachable(refs []weak.Pointer[box]) int {
	for range 3 {
		runtime.GC()
	}
	n := 0
	for _, r := range refs {
		if r.Value() != nil {
			n++
		}
	}
	return n
}

// TestScrubDropsStolenValues: thieves leave the values they took in their
// slots (a read, not a clear), so items that were stolen stay reachable
// from the deque; Scrub, once every thief is done and the deque is empty,
// drops them, in LIFO and FIFO deques, through a growth, and again after
// a second round of pushes (it looks only at what was pushed since).
func TestScrubDropsStolenValues(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		d := deque.New[*box]()
		if fifo {
			d = deque.NewFIFO[*box]()
		}
		for round, n := range []int{100, 1000, 50} { // 1000 grows the buffer
			refs := make([]weak.Pointer[box], n)
			for i := range n {
				b := &box{}
				refs[i] = weak.Make(b)
				d.Push(b)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			stolen := 0
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						v, st := d.Steal()
						if st == deque.Empty {
							return
						}
						if st == deque.Success {
							assert.NotNil(t, v)
							mu.Lock()
							stolen++
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			require.Equal(t, n, stolen, "fifo %v round %d: items stolen", fifo, round)
			require.Positive(t, reachable(refs), "fifo %v round %d: stolen items kept by their slots (nothing to scrub?)", fifo, round)
			d.Scrub()
			require.Zero(t, reachable(refs), "fifo %v round %d: items reachable after Scrub", fifo, round)
		}
	}
}

// TestScrubNotEmpty: Scrub of a deque that holds items panics (it would
// otherwise have to tell live slots from stale ones).
func TestScrubNotEmpty(t *testing.T) {
	d := deque.New[int]()
	d.Push(1)
	require.PanicsWithValue(t, "deque: Scrub of a deque that is not empty", d.Scrub)
	_, ok := d.Pop()
	require.True(t, ok)
	require.NotPanics(t, d.Scrub)
}
