package deque

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestDequeLayout: a Deque fills whole cache lines, so that the allocator
// puts it on a 64-byte boundary and two Deques allocated one after the
// other never share a line (the padding at the end of Deque says why);
// top, which thieves CAS, has its line to itself. The size does not depend
// on T: every field that mentions T is a pointer or a slice header.
func TestDequeLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the padding is sized for 64-bit platforms")
	}
	var d Deque[int]
	size := unsafe.Sizeof(d)
	require.Zero(t, size%64, "Deque is %d bytes, not a whole number of 64-byte lines: adjust its final padding", size)
	// Larger objects carry a malloc header and lose the alignment.
	require.LessOrEqual(t, size, uintptr(512), "Deque's size; above 512 bytes the allocator no longer aligns it to 64")
	require.Zero(t, unsafe.Offsetof(d.top), "top's offset: it must start the Deque's first line")
	require.GreaterOrEqual(t, unsafe.Offsetof(d.bottom), uintptr(64), "bottom's offset: it must not share top's cache line")
	require.Equal(t, size, unsafe.Sizeof(Deque[[5]string]{}), "Deque[[5]string] against Deque[int]")
}

// BenchmarkDequeIndependentOwners: one or two goroutines, each pushing 1024
// items onto its own deque and popping them back. The two deques are the
// two halves of one allocation, side by side in memory as two deques
// allocated one after the other usually are (a scheduler allocates its
// workers' deques so). Nothing is shared, so two owners should each run as
// fast as one; ns/op is one push+pop of one owner. Without the Deque's
// final padding (TestDequeLayout), two owners ran at about twice the time
// of one: one deque's owner fields shared a cache line with the next
// deque's top.
func BenchmarkDequeIndependentOwners(b *testing.B) {
	for _, owners := range []int{1, 2} {
		b.Run(fmt.Sprintf("owners=%d", owners), func(b *testing.B) {
			b.ReportAllocs()
			pair := new([2]Deque[int])
			for i := range pair {
				pair[i].init(false, 0)
			}
			var wg sync.WaitGroup
			b.ResetTimer()
			for g := range owners {
				wg.Add(1)
				go func(d *Deque[int]) {
					defer wg.Done()
					for left := b.N; left > 0; left -= 1024 {
						n := min(left, 1024)
						for i := range n {
							d.Push(i)
						}
						for range n {
							d.Pop()
						}
					}
				}(&pair[g])
			}
			wg.Wait()
		})
	}
}
