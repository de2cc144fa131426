package bucket

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/deque"
)

// rangeSource is a span of the ints base, base+1, …; it counts its Fills'
// packets and its Releases.
type rangeSource struct {
	base     int
	filled   atomic.Int64
	released atomic.Int32
}

func (r *rangeSource) Fill(dst []int, lo int) {
	for i := range dst {
		dst[i] = r.base + lo + i
	}
	r.filled.Add(int64(len(dst)))
}

func (r *rangeSource) Release() { r.released.Add(1) }

// addSpan queues src's n packets and fails the test if the bucket refuses.
func addSpan(t *testing.T, b *Bucket[int], n int, src *rangeSource) int {
	t.Helper()
	arrived, ok, err := b.AddSpan(n, func(int) Source[int] { return src })
	if err != nil || !ok {
		t.Fatalf("AddSpan(%d) = %v, %v", n, ok, err)
	}
	return arrived
}

// takeAll takes everything by TakeInto in runs of k and returns it.
func takeAll(b *Bucket[int], k int) []int {
	var out []int
	buf := make([]int, k)
	for {
		n, st := b.TakeInto(buf)
		if st == deque.Empty {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// TestSpanOrder: a span's packets come after what the normal lane held,
// in order, in runs of at most the taker's size, each produced once; spans
// count in Len, IsEmpty and NormalEmpty, and arrive like a BulkAdd.
func TestSpanOrder(t *testing.T) {
	b := New[int]()
	src1, src2 := &rangeSource{base: 1000}, &rangeSource{base: 2000}
	if got := addSpan(t, b, 10, src1); got != 0 {
		t.Fatalf("closed bucket: %d arrived, want 0", got)
	}
	b.Add(1)
	b.Open()
	if got := addSpan(t, b, 5, src2); got != 5 {
		t.Fatalf("open bucket: %d arrived, want 5", got)
	}
	if b.Len() != 16 || b.IsEmpty() || b.NormalEmpty() {
		t.Fatalf("Len %d IsEmpty %v NormalEmpty %v, want 16 false false", b.Len(), b.IsEmpty(), b.NormalEmpty())
	}
	got := takeAll(b, 4)
	want := []int{1, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 2000, 2001, 2002, 2003, 2004}
	if len(got) != len(want) {
		t.Fatalf("took %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("took %v, want %v", got, want)
		}
	}
	if src1.filled.Load() != 10 || src2.filled.Load() != 5 {
		t.Fatalf("filled %d and %d, want 10 and 5", src1.filled.Load(), src2.filled.Load())
	}
	if b.Len() != 0 || !b.IsEmpty() || !b.NormalEmpty() {
		t.Fatalf("drained: Len %d IsEmpty %v NormalEmpty %v", b.Len(), b.IsEmpty(), b.NormalEmpty())
	}
	if _, ok, err := b.AddSpan(0, func(int) Source[int] { t.Fatal("bind called for 0 packets"); return nil }); !ok || err != nil {
		t.Fatalf("AddSpan(0) = %v, %v", ok, err)
	}
}

// TestSpanTakes: a span alone makes the bucket non-empty; Take, TakeBatch
// and Drain take spans too.
func TestSpanTakes(t *testing.T) {
	b := New[int]()
	b.Open()
	addSpan(t, b, 100, &rangeSource{})
	if b.IsEmpty() || b.NormalEmpty() || !b.PriorityEmpty() || b.Len() != 100 {
		t.Fatalf("a span alone: IsEmpty %v NormalEmpty %v PriorityEmpty %v Len %d", b.IsEmpty(), b.NormalEmpty(), b.PriorityEmpty(), b.Len())
	}
	if v, st := b.Take(); st != deque.Success || v != 0 {
		t.Fatalf("Take = %d, %v", v, st)
	}
	local := deque.New[int]()
	v, n, st := b.TakeBatch(local, 8)
	if st != deque.Success || v != 1 || n != 7 || local.Len() != 7 {
		t.Fatalf("TakeBatch = %d, %d, %v (deque %d)", v, n, st, local.Len())
	}
	for i := 2; i < 9; i++ {
		if x, ok := local.Steal(); ok != deque.Success || x != i {
			t.Fatalf("deque holds %d (%v), want %d", x, ok, i)
		}
	}
	// TakeBatch fills at most 64 at a time from a span, whatever the limit.
	v, n, st = b.TakeBatch(local, 1000)
	if st != deque.Success || v != 9 || n != 63 {
		t.Fatalf("TakeBatch(1000) = %d, %d, %v", v, n, st)
	}
	if got := b.Drain(nil); got != 100-9-64 {
		t.Fatalf("Drain took %d, want %d", got, 100-9-64)
	}
	if _, _, st := b.TakeBatch(local, 8); st != deque.Empty {
		t.Fatalf("TakeBatch of an empty bucket: %v", st)
	}
}

// TestSpanSlots: a bucket holds MaxSpans spans; the next AddSpan is refused
// without calling bind; Reclaim forgets them only when all are consumed,
// releasing each source once, and then the slots are free again. bind
// sees each slot once, in order.
func TestSpanSlots(t *testing.T) {
	b := New[int]()
	b.Open()
	srcs := make([]*rangeSource, MaxSpans)
	for i := range srcs {
		srcs[i] = &rangeSource{base: 10 * i}
		_, ok, err := b.AddSpan(10, func(slot int) Source[int] {
			if slot != i {
				t.Fatalf("span %d got slot %d", i, slot)
			}
			return srcs[i]
		})
		if !ok || err != nil {
			t.Fatalf("span %d: %v, %v", i, ok, err)
		}
	}
	_, ok, err := b.AddSpan(10, func(int) Source[int] { t.Fatal("bind called for a refused span"); return nil })
	if ok || err != nil {
		t.Fatalf("span %d: %v, %v; want refused", MaxSpans, ok, err)
	}
	if b.Len() != 10*MaxSpans {
		t.Fatalf("Len %d, want %d", b.Len(), 10*MaxSpans)
	}
	buf := make([]int, 5)
	b.TakeInto(buf) // half of the first span
	b.Reclaim()
	if srcs[0].released.Load() != 0 {
		t.Fatal("Reclaim released a span with packets left")
	}
	if got := takeAll(b, 7); len(got) != 10*MaxSpans-5 {
		t.Fatalf("took %d after Reclaim, want %d", len(got), 10*MaxSpans-5)
	}
	b.Reclaim()
	for i, s := range srcs {
		if s.released.Load() != 1 || s.filled.Load() != 10 {
			t.Fatalf("span %d: released %d times, filled %d", i, s.released.Load(), s.filled.Load())
		}
	}
	src := &rangeSource{}
	if _, ok, err := b.AddSpan(3, func(slot int) Source[int] {
		if slot != 0 {
			t.Fatalf("first span after Reclaim got slot %d", slot)
		}
		return src
	}); !ok || err != nil {
		t.Fatalf("AddSpan after Reclaim: %v, %v", ok, err)
	}
	if got := takeAll(b, 8); len(got) != 3 {
		t.Fatalf("took %v", got)
	}
}

// TestSpanDisabled: a disabled bucket refuses a span without calling bind,
// and Disable waits for an AddSpan in progress.
func TestSpanDisabled(t *testing.T) {
	b := New[int]()
	b.Disable()
	_, ok, err := b.AddSpan(5, func(int) Source[int] { t.Fatal("bind called on a disabled bucket"); return nil })
	if ok || !errors.Is(err, ErrDisabled) {
		t.Fatalf("AddSpan on a disabled bucket = %v, %v", ok, err)
	}
	b.Enable()
	inBind, release := make(chan struct{}), make(chan struct{})
	go b.AddSpan(5, func(int) Source[int] {
		close(inBind)
		<-release
		return &rangeSource{}
	})
	<-inBind
	disabled := make(chan struct{})
	go func() { b.Disable(); close(disabled) }()
	select {
	case <-disabled:
		t.Fatal("Disable returned while an AddSpan was in progress")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	watch(t, 10*time.Second, func() { <-disabled })
	if got := b.Drain(nil); got != 5 {
		t.Fatalf("Drain after Disable took %d, want the span's 5", got)
	}
}

// TestSpanConcurrentExactlyOnce: producers queue spans (and single
// packets) while consumers take with TakeInto, TakeBatch and Take; every
// packet is taken exactly once, none is lost. Reclaim runs between rounds,
// when no consumer takes, as a scheduler's does.
func TestSpanConcurrentExactlyOnce(t *testing.T) {
	const rounds, producers, spansPer, spanLen = 20, 3, 8, 500
	const perRound = producers * spansPer * (spanLen + 1)
	b := New[int]()
	b.Open()
	seen := make([]atomic.Int32, rounds*perRound)
	for r := range rounds {
		base := r * perRound
		var pw sync.WaitGroup
		for p := range producers {
			pw.Add(1)
			go func() {
				defer pw.Done()
				for s := range spansPer {
					start := base + (p*spansPer+s)*(spanLen+1)
					src := &rangeSource{base: start}
					if _, ok, err := b.AddSpan(spanLen, func(int) Source[int] { return src }); !ok || err != nil {
						panic("AddSpan refused")
					}
					b.Add(start + spanLen)
				}
			}()
		}
		done := make(chan struct{})
		record := func(v int) { seen[v].Add(1) }
		wait := consume(b, []takeWay{takeOne, takeIntoOf(17), takeBatchOf(24)}, record, done)
		watch(t, 30*time.Second, func() {
			pw.Wait()
			close(done)
			wait()
		})
		b.Drain(func(v int) { seen[v].Add(1) })
		b.Reclaim()
		for i := base; i < base+perRound; i++ {
			if n := seen[i].Load(); n != 1 {
				t.Fatalf("round %d: packet %d taken %d times", r, i, n)
			}
		}
	}
}

// TestSpanDrain: Drain(nil) discards a span's packets without producing
// them and without allocating; Drain(f) produces them in order through one
// buffer; a disabled, drained bucket can still be reclaimed, which releases
// its sources (a scheduler's Close); Take and TakeBatch on an empty bucket
// allocate nothing.
func TestSpanDrain(t *testing.T) {
	b := New[int]()
	b.Open()
	src := &rangeSource{}
	addSpan(t, b, 1000, src)
	b.TakeInto(make([]int, 10))
	if got := b.Drain(nil); got != 990 || src.filled.Load() != 10 {
		t.Fatalf("Drain(nil) = %d, filled %d; want 990 without filling", got, src.filled.Load())
	}
	b.Reclaim()
	src2 := &rangeSource{base: 5000}
	addSpan(t, b, 300, src2)
	b.Add(7)
	var got []int
	if n := b.Drain(func(v int) { got = append(got, v) }); n != 301 || got[0] != 7 || got[1] != 5000 || got[300] != 5299 {
		t.Fatalf("Drain(f) = %d: %v…", n, got[:3])
	}
	b.Disable()
	b.Reclaim()
	if src2.released.Load() != 1 {
		t.Fatalf("a disabled, drained bucket's Reclaim released the source %d times, want 1", src2.released.Load())
	}
	if raceEnabled {
		return
	}
	b.Enable()
	addSpan(t, b, 200, &rangeSource{})
	if a := testing.AllocsPerRun(20, func() { b.Drain(nil) }); a != 0 {
		t.Fatalf("Drain(nil) of spans: %v allocs", a)
	}
	local := deque.New[int]()
	if a := testing.AllocsPerRun(100, func() { b.Take(); b.TakeBatch(local, 32) }); a != 0 {
		t.Fatalf("Take and TakeBatch on an empty bucket: %v allocs", a)
	}
}

// TestSpanAllocs: queueing a span and taking it allocates nothing once the
// bucket has its span slots (allocated on the first AddSpan).
func TestSpanAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := New[int]()
	b.Open()
	src := &rangeSource{}
	bind := func(int) Source[int] { return src }
	buf := make([]int, 32)
	round := func() {
		b.AddSpan(1000, bind)
		for {
			if _, st := b.TakeInto(buf); st == deque.Empty {
				break
			}
		}
		b.Reclaim()
	}
	round()
	if got := testing.AllocsPerRun(100, round); got != 0 {
		t.Fatalf("%v allocs per span of 1000, want 0", got)
	}
}
