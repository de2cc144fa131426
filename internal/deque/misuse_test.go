package deque_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// Misuse panics with a "deque: " message that names the method and the
// misuse, and never loses or duplicates an item on the way. The batch
// takes have one misuse: a destination with no room (nil, empty, or of
// length zero with capacity to spare), which panics before the queue is
// looked at, so from an empty queue too.

// noRoom are destinations of length zero.
var noRoom = map[string][]int{"nil": nil, "empty": {}, "zero length, spare capacity": make([]int, 0, 8)}

func TestStealIntoNoRoom(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, n := range []int{0, 1, 10} {
			for name, dst := range noRoom {
				src := fill(fifo, 0, n)
				assert.PanicsWithValue(t, "deque: StealInto an empty destination", func() { src.StealInto(dst) },
					"%s, %d items: StealInto into a %s destination", modeName(fifo), n, name)
				// Nothing was taken: the items are all there, in order.
				checkRest(t, src, fifo, 0, n, modeName(fifo)+" after a refused StealInto")
			}
		}
	}
}

func TestInjectorTakeBatchNoRoom(t *testing.T) {
	for _, n := range []int{0, 1, 10} {
		for name, dst := range noRoom {
			q := deque.NewInjector[int]()
			for i := range n {
				q.Push(i)
			}
			assert.PanicsWithValue(t, "deque: Injector.TakeBatch into an empty destination", func() { q.TakeBatch(dst) },
				"%d items: TakeBatch into a %s destination", n, name)
			require.Equal(t, n, q.Len(), "a refused TakeBatch took items")
			for i := range n {
				v, st := q.Steal()
				require.Equal(t, deque.Success, st)
				require.Equal(t, i, v, "after a refused TakeBatch")
			}
		}
	}
}
