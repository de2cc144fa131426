package deque_test

import (
	"math"
	"testing"

	"github.com/wsched/wsched/internal/deque"
)

// Misuse panics with a "deque: " message that names the method and the
// misuse, and never loses or duplicates an item on the way.

func TestBadLimit(t *testing.T) {
	for _, limit := range []int{0, -1, math.MinInt} {
		for _, fifo := range []bool{false, true} {
			src := fill(fifo, 0, 10)
			dst := deque.New[int]()
			mustPanic(t, func() { src.StealBatch(dst, limit) }, "StealBatch", "limit")
			mustPanic(t, func() { src.StealBatchAndPop(dst, limit) }, "StealBatchAndPop", "limit")
			if src.Len() != 10 || dst.Len() != 0 {
				t.Fatalf("a rejected batch moved items: src %d, dst %d", src.Len(), dst.Len())
			}
		}
		q := deque.NewInjector[int]()
		q.Push(1)
		mustPanic(t, func() { q.StealBatchAndPop(deque.New[int](), limit) }, "StealBatchAndPop", "limit")
		if q.Len() != 1 {
			t.Fatalf("a rejected injector batch took items")
		}
	}
}

func TestNilDestination(t *testing.T) {
	src := fill(false, 0, 10)
	mustPanic(t, func() { src.StealInto(nil) }, "StealInto", "empty destination")
	mustPanic(t, func() { src.StealInto([]int{}) }, "StealInto", "empty destination")
	mustPanic(t, func() { src.StealBatch(nil, 4) }, "StealBatch", "nil")
	mustPanic(t, func() { src.StealBatchAndPop(nil, 4) }, "StealBatchAndPop", "nil")
	q := deque.NewInjector[int]()
	q.Push(1)
	mustPanic(t, func() { q.StealBatchAndPop(nil, 4) }, "StealBatchAndPop", "nil")
	if src.Len() != 10 || q.Len() != 1 {
		t.Fatalf("a rejected batch took items")
	}
}

func TestSelfDestination(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		d := fill(fifo, 0, 10)
		mustPanic(t, func() { d.StealBatch(d, 4) }, "StealBatch", "steals from")
		mustPanic(t, func() { d.StealBatchAndPop(d, 4) }, "StealBatchAndPop", "steals from")
		if d.Len() != 10 {
			t.Fatalf("a rejected batch changed Len to %d", d.Len())
		}
	}
}

func TestReleaseNonEmpty(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		d := fill(fifo, 0, 3)
		mustPanic(t, func() { d.Release() }, "Release", "holds items")
		// The deque is still usable and still holds its items.
		if got := drain(d); len(got) != 3 {
			t.Fatalf("after a refused Release the deque holds %v", got)
		}
		d.Release()
	}
}

// released returns a deque that held, lost and released items.
func released(fifo bool) *deque.Deque[int] {
	d := fill(fifo, 0, 100)
	drain(d)
	d.Release()
	return d
}

func TestUseAfterRelease(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(modeName(fifo), func(t *testing.T) {
			const after = "after Release"
			mustPanic(t, func() { released(fifo).Push(1) }, "Push", after)
			mustPanic(t, func() { released(fifo).Pop() }, "Pop", after)
			mustPanic(t, func() { released(fifo).Cap() }, "Cap", after)
			mustPanic(t, func() { released(fifo).Release() }, "Release", after)
			src := fill(fifo, 0, 10)
			mustPanic(t, func() { src.StealBatch(released(fifo), 4) }, "StealBatch", after)
			mustPanic(t, func() { src.StealBatchAndPop(released(fifo), 4) }, "StealBatchAndPop", after)
			q := deque.NewInjector[int]()
			q.Push(1)
			mustPanic(t, func() { q.StealBatchAndPop(released(fifo), 4) }, "StealBatchAndPop", after)
			if src.Len() != 10 || q.Len() != 1 {
				t.Fatalf("a batch into a released deque took items: src %d, injector %d", src.Len(), q.Len())
			}
		})
	}
}

// TestStealAfterRelease: the API says any use after Release panics; a
// thief's Steal, StealBatch or StealBatchAndPop from a released deque is
// such a use. (Today they report Empty when the deque was empty at
// Release, which Release requires, and panic only in the rare window where
// a thief loaded a non-empty bottom before the last item went; see
// TestStealRacingRelease.)
func TestStealAfterRelease(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(modeName(fifo), func(t *testing.T) {
			const after = "after Release"
			mustPanic(t, func() { released(fifo).Steal() }, "teal", after)
			mustPanic(t, func() { released(fifo).StealBatch(deque.New[int](), 4) }, "teal", after)
			mustPanic(t, func() { released(fifo).StealBatchAndPop(deque.New[int](), 4) }, "teal", after)
			mustPanic(t, func() { released(fifo).StealInto(make([]int, 4)) }, "teal", after)
			// Len and IsEmpty are snapshots: they stay usable.
			if d := released(fifo); d.Len() != 0 || !d.IsEmpty() {
				t.Fatalf("released deque: Len %d, IsEmpty %v", d.Len(), d.IsEmpty())
			}
		})
	}
}
