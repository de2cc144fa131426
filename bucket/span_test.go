package bucket

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err, "AddSpan(%d)", n)
	require.True(t, ok, "AddSpan(%d) refused", n)
	return arrived
}

// takeAll takes everything by Take in runs of k and returns it.
func takeAll(b *Bucket[int], k int) []int {
	var out []int
	buf := make([]int, k)
	for {
		n, retry := b.Take(buf)
		if n == 0 && !retry {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// TestSpanOrder: a span's packets come after what the normal lane held,
// in order, in runs of at most the taker's size, each produced once; spans
// count in Len and NormalEmpty, and arrive like an Add.
func TestSpanOrder(t *testing.T) {
	b := New[int]()
	src1, src2 := &rangeSource{base: 1000}, &rangeSource{base: 2000}
	require.Zero(t, addSpan(t, b, 10, src1), "closed bucket: packets arrived")
	add(t, b, false, 1)
	b.Open()
	require.Equal(t, 5, addSpan(t, b, 5, src2), "open bucket: packets arrived")
	require.Equal(t, 16, b.Len())
	require.False(t, b.NormalEmpty())
	got := takeAll(b, 4)
	want := []int{1, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 2000, 2001, 2002, 2003, 2004}
	require.Equal(t, want, got, "taken")
	require.Equal(t, int64(10), src1.filled.Load(), "first span's packets filled")
	require.Equal(t, int64(5), src2.filled.Load(), "second span's packets filled")
	require.Zero(t, b.Len(), "drained")
	require.True(t, b.NormalEmpty(), "drained")
	_, ok, err := b.AddSpan(0, func(int) Source[int] { require.FailNow(t, "bind called for 0 packets"); return nil })
	require.NoError(t, err, "AddSpan(0)")
	require.True(t, ok, "AddSpan(0)")
}

// TestSpanTakes: a span alone makes the bucket non-empty; Take and Drain
// take spans too, a Take up to len(dst) from a span.
func TestSpanTakes(t *testing.T) {
	b := New[int]()
	b.Open()
	addSpan(t, b, 200, &rangeSource{})
	require.False(t, b.NormalEmpty())
	require.True(t, b.PriorityEmpty())
	require.Equal(t, 200, b.Len())
	buf := make([]int, 128)
	n, _ := b.Take(buf[:1])
	require.Equal(t, 1, n)
	require.Equal(t, 0, buf[0])
	n, _ = b.Take(buf[:8])
	require.Equal(t, 8, n)
	require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, buf[:8])
	n, _ = b.Take(buf)
	require.Equal(t, 128, n)
	require.Equal(t, 9, buf[0])
	require.Equal(t, 136, buf[127])
	require.Equal(t, 200-9-128, b.Drain(nil))
	n, retry := b.Take(buf)
	require.Zero(t, n)
	require.False(t, retry)
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
			require.Equal(t, i, slot, "span %d's slot", i)
			return srcs[i]
		})
		require.NoError(t, err, "span %d", i)
		require.True(t, ok, "span %d refused", i)
	}
	_, ok, err := b.AddSpan(10, func(int) Source[int] { require.FailNow(t, "bind called for a refused span"); return nil })
	require.NoError(t, err, "span %d", MaxSpans)
	require.False(t, ok, "span %d; want refused", MaxSpans)
	require.Equal(t, 10*MaxSpans, b.Len())
	buf := make([]int, 5)
	b.Take(buf) // half of the first span
	b.Reclaim()
	require.Zero(t, srcs[0].released.Load(), "Reclaim released a span with packets left")
	require.Len(t, takeAll(b, 7), 10*MaxSpans-5, "taken after Reclaim")
	b.Reclaim()
	for i, s := range srcs {
		require.Equal(t, int32(1), s.released.Load(), "span %d: times released", i)
		require.Equal(t, int64(10), s.filled.Load(), "span %d: packets filled", i)
	}
	src := &rangeSource{}
	_, ok, err = b.AddSpan(3, func(slot int) Source[int] {
		require.Zero(t, slot, "first span after Reclaim's slot")
		return src
	})
	require.NoError(t, err, "AddSpan after Reclaim")
	require.True(t, ok, "AddSpan after Reclaim")
	require.Len(t, takeAll(b, 8), 3, "taken")
}

// TestSpanDisabled: a disabled bucket refuses a span without calling bind,
// and Disable waits for an AddSpan in progress.
func TestSpanDisabled(t *testing.T) {
	b := New[int]()
	b.Disable()
	_, ok, err := b.AddSpan(5, func(int) Source[int] { require.FailNow(t, "bind called on a disabled bucket"); return nil })
	require.False(t, ok)
	require.ErrorIs(t, err, ErrDisabled)

	b = New[int]()
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
		require.FailNow(t, "Disable returned while an AddSpan was in progress")
	case <-time.After(20 * time.Millisecond):
		// Disable is still waiting, as it must until the AddSpan ends.
	}
	close(release)
	watch(t, 10*time.Second, func() { <-disabled })
	require.Equal(t, 5, b.Drain(nil), "Drain after Disable takes the span")
}

// TestSpanConcurrentExactlyOnce: producers queue spans (and single
// packets) while consumers take runs of several sizes; every
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
					// On a failure the producer stops; the packets it
					// leaves out fail the count below.
					_, ok, err := b.AddSpan(spanLen, func(int) Source[int] { return src })
					if !assert.NoError(t, err, "AddSpan") || !assert.True(t, ok, "AddSpan refused") {
						return
					}
					if _, err := b.Add([]int{start + spanLen}, false); !assert.NoError(t, err, "Add") {
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		record := func(v int) { seen[v].Add(1) }
		wait := consume(b, []takeWay{takePriorityFirst, takeOf(17), takeOf(24)}, record, done)
		watch(t, 30*time.Second, func() {
			pw.Wait()
			close(done)
			wait()
		})
		b.Drain(func(v int) { seen[v].Add(1) })
		b.Reclaim()
		for i := base; i < base+perRound; i++ {
			if n := seen[i].Load(); n != 1 { // checked first: an assertion per packet costs more than the round
				require.Equal(t, int32(1), n, "round %d: times packet %d was taken", r, i)
			}
		}
	}
}

// TestSpanDrain: Drain(nil) discards a span's packets without producing
// them and without allocating; Drain(f) produces them in order through one
// buffer; a disabled, drained bucket can still be reclaimed, which releases
// its sources (a scheduler's Close); Take on an empty bucket allocates
// nothing.
func TestSpanDrain(t *testing.T) {
	b := New[int]()
	b.Open()
	src := &rangeSource{}
	addSpan(t, b, 1000, src)
	b.Take(make([]int, 10))
	require.Equal(t, 990, b.Drain(nil))
	require.Equal(t, int64(10), src.filled.Load(), "Drain(nil) produces nothing")
	b.Reclaim()
	src2 := &rangeSource{base: 5000}
	addSpan(t, b, 300, src2)
	add(t, b, false, 7)
	var got []int
	require.Equal(t, 301, b.Drain(func(v int) { got = append(got, v) }))
	require.Equal(t, []int{7, 5000}, got[:2])
	require.Equal(t, 5299, got[300])
	b.Disable()
	b.Reclaim()
	require.Equal(t, int32(1), src2.released.Load(), "a disabled, drained bucket's Reclaim releases its sources")
	if raceEnabled {
		return
	}
	b = New[int]()
	b.Open()
	addSpan(t, b, 200, &rangeSource{})
	require.Zero(t, testing.AllocsPerRun(20, func() { b.Drain(nil) }), "Drain(nil) of spans")
	buf := make([]int, 32)
	require.Zero(t, testing.AllocsPerRun(100, func() { b.Take(buf); b.TakePriority() }), "takes on an empty bucket")
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
			if n, retry := b.Take(buf); n == 0 && !retry {
				break
			}
		}
		b.Reclaim()
	}
	round()
	require.Zero(t, testing.AllocsPerRun(100, round), "allocations per span of 1000")
}
