package bucket

import "testing"

// BenchmarkAddTake: one Add per packet, taken 32 at a time.
func BenchmarkAddTake(b *testing.B) {
	bk := New[int]()
	bk.Open()
	dst := make([]int, 32)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		one := [1]int{i}
		bk.Add(one[:], false)
		if i%32 == 31 {
			for {
				if n, retry := bk.Take(dst); n == 0 && !retry {
					break
				}
			}
			bk.Reclaim()
		}
	}
}

// benchTake queues 4096 packets with add, takes them 32 at a time into a
// slice, and reclaims: the cost per packet of a stage's round trip.
func benchTake(b *testing.B, add func(bk *Bucket[int], vs []int)) {
	bk := New[int]()
	bk.Open()
	vs := make([]int, 4096)
	dst := make([]int, 32)
	b.ReportAllocs()
	for b.Loop() {
		add(bk, vs)
		for {
			if n, retry := bk.Take(dst); n == 0 && !retry {
				break
			}
		}
		bk.Reclaim()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(vs)), "ns/packet")
}

// BenchmarkAddManyTake: Add copies the 4096 packets into the lane's blocks.
func BenchmarkAddManyTake(b *testing.B) {
	benchTake(b, func(bk *Bucket[int], vs []int) { bk.Add(vs, false) })
}

// BenchmarkSpanTake: AddSpan queues the 4096 packets in O(1); each take
// has the source fill its run.
func BenchmarkSpanTake(b *testing.B) {
	src := &rangeSource{}
	benchTake(b, func(bk *Bucket[int], vs []int) {
		bk.AddSpan(len(vs), func(int) Source[int] { return src })
	})
}
