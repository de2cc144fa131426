package bucket

import (
	"testing"

	"github.com/wsched/wsched/deque"
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
