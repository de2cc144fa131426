package gcmark

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/scheduler"
)

// benchHeaps are the scale-1 heaps (2 Mi objects), each built once.
var benchHeaps = map[HeapShape]func() *Heap{
	ShapeBuilt:    sync.OnceValue(func() *Heap { return NewHeap(DefaultHeapConfig(1, 1)) }),
	ShapePowerLaw: sync.OnceValue(func() *Heap { return NewHeap(PowerLawHeapConfig(1, 1)) }),
}

// benchWant is what a cycle on each bench heap must find: the sequential
// depth-first marker's marks, objects and slots (each marked object
// scanned once, each of its slots traced once).
var benchWant = map[HeapShape]func() (Result, Bitmap){
	ShapeBuilt:    sync.OnceValues(func() (Result, Bitmap) { return sequentialWant(benchHeaps[ShapeBuilt]()) }),
	ShapePowerLaw: sync.OnceValues(func() (Result, Bitmap) { return sequentialWant(benchHeaps[ShapePowerLaw]()) }),
}

func sequentialWant(h *Heap) (Result, Bitmap) {
	bl, err := NewBaseline(h, SequentialDFS, BaselineOptions{})
	if err != nil {
		panic(err)
	}
	r, err := bl.Mark(context.Background())
	if err != nil {
		panic(err)
	}
	return r, bl.Marks()
}

// BenchmarkGCMark marks each scale-1 heap once per op: the baselines (the
// sequential depth-first marker with plain and with CAS mark bits, the
// sequential breadth-first one, the goroutine marker at 1 and 2
// goroutines), then the Marker with each Closure design at 1 and 2
// workers (default policies). Every one does a whole cycle: clear the
// bits, decode the roots, mark, count. Metrics: each stage's makespan ÷
// lower bound (median over ops; the Marker's), traced slots per second,
// splits, steals and wake-ups per op, Go GCs per op. The first (warm-up)
// and last cycle of each must mark exactly the objects the sequential
// depth-first marker marks, scanning as many objects and slots.
//
//	go test -run '^$' -bench 'GCMark/heap=built' -benchtime 10x -count 10 ./examples/gcmark/
//
// go test runs the sub-benchmarks one after another; the command's
// -compare mode interleaves them, which a shared machine needs.
func BenchmarkGCMark(b *testing.B) {
	for _, shape := range []HeapShape{ShapeBuilt, ShapePowerLaw} {
		b.Run("heap="+shape.String(), func(b *testing.B) {
			h := benchHeaps[shape]()
			for _, kind := range BaselineKinds {
				ws := []int{1}
				if kind == Goroutines {
					ws = []int{1, 2}
				}
				for _, w := range ws {
					name := "marker=" + kind.String()
					if kind == Goroutines {
						name += fmt.Sprintf("/workers=%d", w)
					}
					b.Run(name, func(b *testing.B) {
						bl, err := NewBaseline(h, kind, BaselineOptions{Workers: w})
						require.NoError(b, err)
						benchMarker(b, shape, bl, nil)
					})
				}
			}
			for _, tracing := range []Tracing{TracePartitioned, TraceDepthFirst, TraceEdgeBuffers, TraceWorklist} {
				for _, workers := range []int{1, 2} {
					b.Run(fmt.Sprintf("marker=%v/workers=%d", tracing, workers), func(b *testing.B) {
						m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}, Trace: tracing})
						require.NoError(b, err)
						defer m.Close()
						benchMarker(b, shape, m, m)
					})
				}
			}
		})
	}
}

// benchMarker times mk's cycles on the heap of shape; stages are reported
// for a Marker m.
func benchMarker(b *testing.B, shape HeapShape, mk interface {
	Mark(context.Context) (Result, error)
	Marks() Bitmap
}, m *Marker) {
	want, wantMarks := benchWant[shape]()
	check := func(r Result) {
		require.Equal(b, -1, FirstDifference(mk.Marks(), wantMarks), "first object marked differently from the sequential marker")
		require.Equal(b, want.Marked, r.Marked, "objects scanned")
		require.Equal(b, want.Live, r.Live, "objects counted live")
		require.Equal(b, want.Slots, r.Slots, "slots traced")
	}
	r, err := mk.Mark(context.Background()) // warm: buffers, page faults
	require.NoError(b, err)
	check(r)
	ratios := make([][]float64, len(Stages))
	var slots, splits, steals, wakes uint64
	b.ReportAllocs()
	gcs := numGC()
	for b.Loop() {
		r, err = mk.Mark(context.Background())
		require.NoError(b, err)
		for i, s := range r.Stages {
			ratios[i] = append(ratios[i], s.Ratio())
		}
		slots += uint64(r.Slots)
		splits += uint64(r.Splits)
		steals += r.Stats.Steals
		wakes += r.Stats.Wakes
	}
	b.StopTimer()
	check(r)
	n := float64(b.N)
	b.ReportMetric(float64(numGC()-gcs)/n, "gcs/op")
	b.ReportMetric(float64(slots)/b.Elapsed().Seconds(), "slots/s")
	if m == nil {
		return
	}
	for i, name := range Stages {
		b.ReportMetric(median(ratios[i]), name+"-ratio")
	}
	b.ReportMetric(float64(splits)/n, "splits/op")
	b.ReportMetric(float64(steals)/n, "steals/op")
	b.ReportMetric(float64(wakes)/n, "wakes/op")
}

// BenchmarkSequentialDFS is the sequential depth-first mark alone (plain
// mark bits, no roots' decode work, no sweep) on the built heap: popping
// batch objects at a time (1: one at a time), and scanning an object's
// slots first to last (its first slot is popped next: the heap's
// allocation order) or last to first. Go test's sub-benchmarks run one
// after another: compare them over several -count.
//
//	go test -run '^$' -bench SequentialDFS -count 6 ./examples/gcmark/
func BenchmarkSequentialDFS(b *testing.B) {
	h := benchHeaps[ShapeBuilt]()
	bl, err := NewBaseline(h, SequentialDFS, BaselineOptions{RootSlotWork: -1})
	require.NoError(b, err)
	roots := bl.decodeRoots(nil)
	marks := NewBitmap(h.Objects())
	var stack []uint32
	for _, batch := range []int{1, 8, 32} {
		for _, firstFirst := range []bool{true, false} {
			order := "first-slot-first"
			if !firstFirst {
				order = "last-slot-first"
			}
			b.Run(fmt.Sprintf("batch=%d/order=%s", batch, order), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					clear(marks)
					stack = markOrder(h, marks, roots, stack[:0], batch, firstFirst)
				}
			})
		}
	}
}

// markOrder is Baseline.markDFS with a choice of slot order.
func markOrder(h *Heap, marks Bitmap, roots, stack []uint32, batch int, firstFirst bool) []uint32 {
	off, words := h.Offsets, h.Words
	push := func(c uint32) {
		if c == Null {
			return
		}
		if w, bit := &marks[c>>6], uint64(1)<<(c&63); *w&bit == 0 {
			*w |= bit
			stack = append(stack, c)
		}
	}
	for _, o := range roots {
		push(o)
	}
	var at, hd [MaxBatch]uint32
	for len(stack) > 0 {
		k := min(batch, len(stack))
		for i, o := range stack[len(stack)-k:] {
			at[i] = off[o]
			hd[i] = words[at[i]]
		}
		stack = stack[:len(stack)-k]
		for i := k - 1; i >= 0; i-- {
			s := words[at[i]+1 : at[i]+1+hd[i]]
			if firstFirst {
				for j := len(s) - 1; j >= 0; j-- {
					push(s[j])
				}
			} else {
				for _, c := range s {
					push(c)
				}
			}
		}
	}
	return stack
}

func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkTwoSequentialMarkers runs two sequential depth-first markers
// with CAS mark bits at once, each on a goroutine of its own and with a
// bitmap of its own: on one heap, or each on a heap of its own, against
// one alone. ns/op is the time for both to mark a cycle each (one
// marker's cycle, for alone). Two markers that share only the heap's
// lines, which marking only reads, running about as fast as one alone
// show that the machine and the shared heap leave room for about twice
// the speed: what two workers of one parallel mark lose beyond that comes
// from what they share besides, the mark bitmap and the work.
//
//	go test -run '^$' -bench TwoSequentialMarkers -count 6 ./examples/gcmark/
func BenchmarkTwoSequentialMarkers(b *testing.B) {
	h := benchHeaps[ShapeBuilt]()
	other := sync.OnceValue(func() *Heap { return NewHeap(DefaultHeapConfig(1, 2)) })
	newBL := func(h *Heap) *Baseline {
		bl, err := NewBaseline(h, SequentialDFSAtomic, BaselineOptions{})
		require.NoError(b, err)
		return bl
	}
	markErr := func(bl *Baseline) error {
		_, err := bl.Mark(context.Background())
		return err
	}
	mark := func(bl *Baseline) { require.NoError(b, markErr(bl)) }
	b.Run("alone", func(b *testing.B) {
		bl := newBL(h)
		mark(bl)
		for b.Loop() {
			mark(bl)
		}
	})
	for _, c := range []struct {
		name string
		h2   func() *Heap
	}{{"one-heap", func() *Heap { return h }}, {"two-heaps", other}} {
		b.Run(c.name, func(b *testing.B) {
			if runtime.GOMAXPROCS(0) < 2 {
				b.Skip("needs two Ps")
			}
			x, y := newBL(h), newBL(c.h2())
			mark(x)
			mark(y)
			for b.Loop() {
				var wg sync.WaitGroup
				// assert, not require: FailNow must run on the benchmark's goroutine.
				wg.Go(func() { assert.NoError(b, markErr(x)) })
				wg.Go(func() { assert.NoError(b, markErr(y)) })
				wg.Wait()
			}
		})
	}
}

// BenchmarkLineTransfer measures what a cache line costs to move between
// the two CPUs: two goroutines take turns writing one atomic counter, each
// waiting (spinning) for the other's write; ns/transfer is the time from
// one write to the other goroutine's next. A mark bit whose line the other
// worker wrote last costs about this on the first test:
//
//	go test -run '^$' -bench LineTransfer -count 4 ./examples/gcmark/
func BenchmarkLineTransfer(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two Ps")
	}
	var x struct {
		_ [64]byte
		v atomic.Int64
		_ [56]byte
	}
	n := 2 * int64(b.N) // an op is a round trip: two transfers
	var wg sync.WaitGroup
	for id := range int64(2) {
		wg.Go(func() {
			for i := id; i < n; i += 2 {
				for x.v.Load() != i {
				}
				x.v.Store(i + 1)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/transfer")
}

// BenchmarkCancelLatency cancels a cycle of the Marker on the built heap
// 20 ms into it (in Closure: a cycle takes 50–110 ms here) and reports the
// time from the cancel to Mark's return (median over ops, µs): how long
// the packets running then take to notice the cycle's end and stop, for
// each depth-first design on 1 and 2 workers.
//
//	go test -run '^$' -bench CancelLatency -benchtime 20x ./examples/gcmark/
func BenchmarkCancelLatency(b *testing.B) {
	h := benchHeaps[ShapeBuilt]()
	for _, tracing := range []Tracing{TracePartitioned, TraceDepthFirst} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("marker=%v/workers=%d", tracing, workers), func(b *testing.B) {
				m, err := NewMarker(h, Options{Scheduler: scheduler.Config{Workers: workers}, Trace: tracing})
				require.NoError(b, err)
				defer m.Close()
				_, err = m.Mark(context.Background()) // warm-up: buffers grown
				require.NoError(b, err)
				var lat []float64
				for b.Loop() {
					ctx, cancel := context.WithCancel(context.Background())
					var at atomic.Int64
					timer := time.AfterFunc(20*time.Millisecond, func() {
						at.Store(time.Now().UnixNano())
						cancel()
					})
					_, err := m.Mark(ctx)
					end := time.Now().UnixNano()
					timer.Stop()
					cancel()
					if err == nil {
						continue // the cycle ended before the cancel
					}
					require.ErrorIs(b, err, context.Canceled)
					lat = append(lat, float64(end-at.Load())/1e3)
				}
				if len(lat) > 0 {
					b.ReportMetric(median(lat), "µs-to-return")
				}
			})
		}
	}
}
