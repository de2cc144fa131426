package bucket

import (
	"testing"

	"github.com/wsched/wsched/internal/deque"
)

func drainLocal(local *deque.Deque[int]) {
	for {
		if _, ok := local.Pop(); !ok {
			return
		}
	}
}

// BenchmarkAddTakeBatch: one Add per packet, taken 32 at a time.
func BenchmarkAddTakeBatch(b *testing.B) {
	bk := New[int]()
	bk.Open()
	local := deque.New[int]()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bk.Add(i)
		if i%32 == 31 {
			for {
				_, _, st := bk.TakeBatch(local, 32)
				if st == deque.Empty {
					break
				}
				drainLocal(local)
			}
		}
	}
}

// BenchmarkBulkAddTakeBatch: BulkAdd of 64 packets, taken 32 at a time;
// one op is one packet.
func BenchmarkBulkAddTakeBatch(b *testing.B) {
	bk := New[int]()
	bk.Open()
	local := deque.New[int]()
	vs := make([]int, 64)
	b.ReportAllocs()
	for left := b.N; left > 0; left -= len(vs) {
		bk.BulkAdd(vs[:min(left, len(vs))])
		for {
			_, _, st := bk.TakeBatch(local, 32)
			if st == deque.Empty {
				break
			}
			drainLocal(local)
		}
	}
}

// intSlice is a Source over a []int: what a scheduler's AddSlice does with
// its caller's packets, for ints.
type intSlice struct{ vs []int }

func (s *intSlice) Fill(dst []int, lo int) { copy(dst, s.vs[lo:lo+len(dst)]) }
func (s *intSlice) Release()               {}

// benchTakeInto queues 4096 packets with add, takes them 32 at a time into
// a slice (as a scheduler's worker holds them) and reclaims; one op is one
// packet.
func benchTakeInto(b *testing.B, add func(bk *Bucket[int], vs []int)) {
	bk := New[int]()
	bk.Open()
	vs := make([]int, 4096)
	dst := make([]int, 32)
	b.ReportAllocs()
	for left := b.N; left > 0; left -= len(vs) {
		add(bk, vs[:min(left, len(vs))])
		for {
			if _, st := bk.TakeInto(dst); st == deque.Empty {
				break
			}
		}
		bk.Reclaim()
	}
}

// BenchmarkBulkAddTakeInto: BulkAdd copies the 4096 packets into the
// injector's blocks; the takes copy them out.
func BenchmarkBulkAddTakeInto(b *testing.B) {
	benchTakeInto(b, func(bk *Bucket[int], vs []int) { bk.BulkAdd(vs) })
}

// BenchmarkSpanTakeInto: AddSpan queues the 4096 packets in O(1); each take
// claims 32 of them with one atomic add and copies them from the caller's
// slice.
func BenchmarkSpanTakeInto(b *testing.B) {
	src := &intSlice{}
	benchTakeInto(b, func(bk *Bucket[int], vs []int) {
		src.vs = vs
		bk.AddSpan(len(vs), func(int) Source[int] { return src })
	})
}
