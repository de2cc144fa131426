package deque_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// Steady state allocates nothing: a deque whose buffer already fits its
// working set, and an injector between block allocations (one per BlockCap
// pushes, which AllocsPerRun's integer average rounds to zero; the
// per-push figure is checked separately).

// packet is a two-word value, like the scheduler's interface-typed
// packets, so that any boxing would show up as an allocation.
type packet struct {
	p   *int
	seq uint64
}

func allocs(t *testing.T, name string, f func()) {
	t.Helper()
	assert.Zero(t, testing.AllocsPerRun(1000, f), "%s: allocs per run", name)
}

func TestZeroAllocs(t *testing.T) {
	x := new(int)
	for _, fifo := range []bool{false, true} {
		t.Run(modeName(fifo), func(t *testing.T) {
			d := deque.NewDequeAt[packet](fifo, ^uint64(0)-10)
			dst := deque.NewDequeAt[packet](!fifo, ^uint64(0)-10)
			// Warm up: one lap of the buffer, so each slot has been
			// handed back by a top-end consumer at least once.
			for i := range 4 * deque.MinCap {
				d.Push(packet{x, uint64(i)})
				if i%2 == 0 {
					d.Steal()
				} else {
					d.Pop()
				}
			}
			var i uint64
			allocs(t, "Push+Pop", func() {
				i++
				d.Push(packet{x, i})
				d.Pop()
			})
			allocs(t, "Push+Steal", func() {
				i++
				d.Push(packet{x, i})
				d.Steal()
			})
			allocs(t, "Push×3+Pop×3 (not the last item)", func() {
				d.Push(packet{x, 1})
				d.Push(packet{x, 2})
				d.Push(packet{x, 3})
				d.Pop()
				d.Pop()
				d.Pop()
			})
			into := make([]packet, 8)
			allocs(t, "Push×4+StealInto+drain", func() {
				for j := range 4 {
					d.Push(packet{x, uint64(j)})
				}
				d.StealInto(into)
				popAll(d)
			})
			allocs(t, "Push×16+StealInto(8)+drain", func() {
				for j := range 16 {
					d.Push(packet{x, uint64(j)})
				}
				d.StealInto(into)
				popAll(d)
			})
			// A batch moved on into the thief's own deque (of the
			// other flavour), all of it or all but the first.
			allocs(t, "Push×4+StealInto+PushBatch+drain", func() {
				for j := range 4 {
					d.Push(packet{x, uint64(j)})
				}
				n, _ := d.StealInto(into)
				dst.PushBatch(into[:n])
				popAll(d)
				popAll(dst)
			})
			allocs(t, "Push×16+StealInto(8), run the first, PushBatch the rest+drain", func() {
				for j := range 16 {
					d.Push(packet{x, uint64(j)})
				}
				n, _ := d.StealInto(into)
				dst.PushBatch(into[1:n])
				popAll(d)
				popAll(dst)
			})
			batch := []packet{{x, 1}, {x, 2}, {x, 3}, {x, 4}}
			allocs(t, "PushBatch×4+drain", func() {
				d.PushBatch(batch)
				popAll(d)
			})
			allocs(t, "Pop on empty, Steal on empty, Len", func() {
				d.Pop()
				d.Steal()
				_ = d.Len() + dst.Len()
			})
		})
	}
	t.Run("injector", func(t *testing.T) {
		q := deque.NewInjector[packet]()
		dst := deque.New[packet]()
		allocs(t, "Push+Steal", func() {
			q.Push(packet{x, 1})
			q.Steal()
		})
		buf := make([]packet, 8)
		allocs(t, "Push×4+TakeBatch, run the first, PushBatch the rest+drain", func() {
			for j := range 4 {
				q.Push(packet{x, uint64(j)})
			}
			n, _ := q.TakeBatch(buf)
			dst.PushBatch(buf[1:n])
			popAll(dst)
			q.Steal()
		})
		allocs(t, "PushBatch×4+TakeBatch", func() {
			q.PushBatch(buf[:4])
			q.TakeBatch(buf)
		})
		// At most one block per BlockCap pushes, counted by
		// AllocsPerRun (which pins GOMAXPROCS to 1, so other goroutines'
		// allocations stay out of the count). Not under -race: its
		// runtime adds allocations of its own.
		if raceEnabled {
			return
		}
		perBlock := testing.AllocsPerRun(100, func() {
			for range deque.BlockCap {
				q.Push(packet{x, 1})
				q.Steal()
			}
		})
		assert.LessOrEqual(t, perBlock, 1.0, "injector: allocations per %d Push+Steal, want at most one block", deque.BlockCap)
	})
}

// popAll pops d until it is empty, without collecting (no allocation).
func popAll[T any](d *deque.Deque[T]) {
	for {
		if _, ok := d.Pop(); !ok {
			return
		}
	}
}

// TestBatchFitsMinimum: a batch of MaxTake items (one Injector take, the
// most one StealInto moves) fits a deque's smallest buffer, and the
// windowed shrink never goes below it, so an owner that puts such a batch
// into its deque now and then, and polls its empty deque in between (a
// worker searching between cycles), allocates nothing. With a 64-slot
// minimum every round after a window of polls shrank the buffer and the
// next batch grew it again.
func TestBatchFitsMinimum(t *testing.T) {
	x := new(int)
	batch := make([]packet, deque.MaxTake)
	for i := range batch {
		batch[i] = packet{x, uint64(i)}
	}
	for _, fifo := range []bool{false, true} {
		t.Run(modeName(fifo), func(t *testing.T) {
			d := deque.NewDequeAt[packet](fifo, ^uint64(0)-10)
			require.GreaterOrEqual(t, deque.Cap(d), deque.MaxTake, "a new deque's slots against MaxTake")
			round := func() {
				d.PushBatch(batch)
				for n := 0; ; n++ {
					if _, ok := d.Pop(); !ok {
						require.Equal(t, len(batch), n, "items popped of the batch")
						break
					}
				}
				for range 8 * deque.MaxTake {
					d.Pop() // polls of the empty deque: they close shrink windows
				}
			}
			round()
			allocs(t, "PushBatch(MaxTake), drain, polls", round)
		})
	}
}
