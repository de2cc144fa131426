package gcmark

import (
	"math/bits"
	"unsafe"
)

// Bitmap is a set of object ids, one bit each.
type Bitmap []uint64

// NewBitmap returns an empty set for a heap of n objects. Its first word
// starts a 64-byte cache line, so that the ids 512k to 512k+511 share
// one line and no other (Go allocates a small slice on a 16-byte
// boundary only): the partitioned marker gives its packets whole lines.
func NewBitmap(n int) Bitmap {
	words := (n + 63) / 64
	b := make(Bitmap, words+7)
	skip := (64 - uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64) % 64 / 8
	return b[skip : skip+uintptr(words) : skip+uintptr(words)]
}

// Has reports whether o is in the set.
func (b Bitmap) Has(o uint32) bool { return b[o>>6]&(1<<(o&63)) != 0 }

// Count returns the number of objects in the set.
func (b Bitmap) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// FirstDifference returns the smallest object id in exactly one of a and b,
// or -1 when the sets are equal. Sets of different lengths differ at the
// first id past the shorter one.
func FirstDifference(a, b Bitmap) int {
	for i := range min(len(a), len(b)) {
		if d := a[i] ^ b[i]; d != 0 {
			return i*64 + bits.TrailingZeros64(d)
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b)) * 64
	}
	return -1
}

// MarkSequential returns the objects reachable from the roots, found by a
// breadth-first search on one goroutine. It is the reference the parallel
// mark must match, and the one-core baseline it must beat.
func (h *Heap) MarkSequential() Bitmap {
	marks := NewBitmap(h.Objects())
	queue := make([]uint32, 0, 1<<16)
	visit := func(o uint32) {
		if o == Null || marks.Has(o) {
			return
		}
		marks[o>>6] |= 1 << (o & 63)
		queue = append(queue, o)
	}
	for _, s := range h.Stacks {
		for _, o := range s {
			visit(o)
		}
	}
	for _, o := range h.CodeCache {
		visit(o)
	}
	for i := 0; i < len(queue); i++ { // queue[i:] is the frontier
		for _, c := range h.Slots(queue[i]) {
			visit(c)
		}
	}
	return marks
}
