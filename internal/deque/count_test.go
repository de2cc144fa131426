package deque_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wsched/wsched/internal/deque"
)

// Uncontended batch sizes, exactly as documented:
//
//	StealBatch        moves min(⌈n/2⌉, limit)
//	StealInto         takes min(⌈n/2⌉, len(dst)) into dst, oldest first
//	StealBatchAndPop  moves min(⌊(n−1)/2⌋, limit−1) and returns one more
//	Injector.StealBatchAndPop takes min(n, limit, what is left of the
//	                  current block): returns the first, moves the rest
//
// and always the oldest items (the top end), leaving the rest in order.

var (
	batchSizes  = append(seq(0, 70), 127, 128, 129, 255, 256, 257, 1000)
	batchLimits = []int{1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 64, 100, 1 << 20}
)

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// drain pops everything from d (owner end) and returns it.
func drain(d *deque.Deque[int]) []int {
	var out []int
	for {
		v, ok := d.Pop()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

// fill pushes 0..n-1 into a fresh deque that starts at start.
func fill(fifo bool, start uint64, n int) *deque.Deque[int] {
	d := deque.NewDequeAt[int](fifo, start)
	for i := range n {
		d.Push(i)
	}
	return d
}

// checkRest checks that d holds exactly the items from..n-1 in the order
// its owner pops them, and empties it.
func checkRest(d *deque.Deque[int], fifo bool, from, n int) error {
	if got := d.Len(); got != n-from {
		return fmt.Errorf("source Len %d, want %d", got, n-from)
	}
	want := seq(from, n-1)
	if !fifo {
		slices.Reverse(want)
	}
	if got := drain(d); !slices.Equal(got, want) {
		return fmt.Errorf("source then pops %v, want %v", got, want)
	}
	return nil
}

// checkMoved checks that dst (which held pre items, -1 each) now holds
// exactly pre + items lo..hi-1, and empties it.
func checkMoved(dst *deque.Deque[int], pre, lo, hi int) error {
	if got := dst.Len(); got != pre+hi-lo {
		return fmt.Errorf("destination Len %d, want %d (%d already there)", got, pre+hi-lo, pre)
	}
	got := drain(dst)
	slices.Sort(got)
	want := append(slices.Repeat([]int{-1}, pre), seq(lo, hi-1)...)
	if !slices.Equal(got, want) {
		return fmt.Errorf("destination holds %v, want %v", got, want)
	}
	return nil
}

func TestStealBatchCount(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range []uint64{0, ^uint64(0) - 40} {
			for _, n := range batchSizes {
				for _, limit := range batchLimits {
					for pre := range 2 { // into an empty and a non-empty dst
						name := fmt.Sprintf("%s/%s/n=%d/limit=%d/pre=%d", modeName(fifo), startName(start), n, limit, pre)
						d := fill(fifo, start, n)
						dst := deque.NewDequeAt[int](pre == 1, start+3)
						for range pre * 5 {
							dst.Push(-1)
						}
						want := min((n+1)/2, limit)
						moved, st := d.StealBatch(dst, limit)
						wantSt := deque.Success
						if n == 0 {
							wantSt = deque.Empty
						}
						if moved != want || st != wantSt {
							t.Fatalf("%s: StealBatch = %d, %v; want %d, %v", name, moved, st, want, wantSt)
						}
						if err := checkMoved(dst, pre*5, 0, want); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if err := checkRest(d, fifo, want, n); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
					}
				}
			}
		}
	}
}

func TestStealIntoCount(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range []uint64{0, ^uint64(0) - 40} {
			for _, n := range batchSizes {
				for _, size := range batchLimits {
					if size > 4096 {
						continue // a destination that big is allocated per case; 100 covers "more than half"
					}
					name := fmt.Sprintf("%s/%s/n=%d/len=%d", modeName(fifo), startName(start), n, size)
					d := fill(fifo, start, n)
					dst := slices.Repeat([]int{-1}, size+1) // one more: nothing written past len(dst)
					want := min((n+1)/2, size)
					got, st := d.StealInto(dst[:size])
					wantSt := deque.Success
					if n == 0 {
						wantSt = deque.Empty
					}
					if got != want || st != wantSt {
						t.Fatalf("%s: StealInto = %d, %v; want %d, %v", name, got, st, want, wantSt)
					}
					// The oldest items, oldest first, and nothing else written.
					if !slices.Equal(dst[:got], seq(0, want-1)) || slices.ContainsFunc(dst[got:], func(v int) bool { return v != -1 }) {
						t.Fatalf("%s: dst %v, want %v then -1s", name, dst, seq(0, want-1))
					}
					if err := checkRest(d, fifo, want, n); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
			}
		}
	}
}

func TestStealBatchAndPopCount(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range []uint64{0, ^uint64(0) - 40} {
			for _, n := range batchSizes {
				for _, limit := range batchLimits {
					name := fmt.Sprintf("%s/%s/n=%d/limit=%d", modeName(fifo), startName(start), n, limit)
					d := fill(fifo, start, n)
					dst := deque.New[int]()
					v, moved, st := d.StealBatchAndPop(dst, limit)
					if n == 0 {
						if st != deque.Empty || moved != 0 || v != 0 {
							t.Fatalf("%s: StealBatchAndPop on empty = %d, %d, %v; want 0, 0, empty", name, v, moved, st)
						}
						continue
					}
					want := min((n-1)/2, limit-1)
					if v != 0 || moved != want || st != deque.Success {
						t.Fatalf("%s: StealBatchAndPop = %d, %d, %v; want 0 (the oldest), %d, success", name, v, moved, st, want)
					}
					if err := checkMoved(dst, 0, 1, 1+want); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if err := checkRest(d, fifo, 1+want, n); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
			}
		}
	}
}

// TestStealBatchOrder records the order a batch lands in dst, which the
// API leaves open, so that a change to it is seen: the moved items should
// keep their queue order (dst.Steal gives the oldest first), as the
// Injector documents for its batches and crossbeam does for both flavours.
func TestStealBatchOrder(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(modeName(fifo), func(t *testing.T) {
			d := fill(fifo, 0, 8)
			dst := deque.New[int]()
			moved, _ := d.StealBatch(dst, 8)
			var got []int
			for range moved {
				v, _ := dst.Steal()
				got = append(got, v)
			}
			if want := seq(0, moved-1); !slices.Equal(got, want) {
				t.Errorf("StealBatch moved %v in the order %v (oldest first from dst.Steal); want %v", want, got, want)
			}
		})
	}
}

func TestInjectorStealBatchAndPopCount(t *testing.T) {
	bc := deque.BlockCap
	sizes := []int{0, 1, 2, 3, 4, 10, 33, bc - 1, bc, bc + 1, 2*bc + 5}
	limits := []int{1, 2, 3, 8, 32, 33, bc - 1, bc, bc + 1, 1 << 20}
	// Offsets of the first ticket in its block; bases at zero and just
	// below the wrap-around (2^64 is a multiple of BlockCap, so the
	// offset is the same on both).
	for _, base := range []uint64{0, 0 - 2*uint64(bc)} {
		for _, off := range []int{0, 1, 5, bc / 2, bc - 3, bc - 1} {
			start := base + uint64(off)
			t.Run(fmt.Sprintf("%s/off=%d", startName(start), off), func(t *testing.T) {
				for _, n := range sizes {
					for _, limit := range limits {
						q := deque.NewInjectorAt[int](start)
						for i := range n {
							q.Push(i)
						}
						if q.Len() != n {
							t.Fatalf("n=%d: Len %d", n, q.Len())
						}
						dst := deque.New[int]()
						v, moved, st := q.StealBatchAndPop(dst, limit)
						if n == 0 {
							if st != deque.Empty || moved != 0 {
								t.Fatalf("n=0: StealBatchAndPop = %d, %d, %v; want empty", v, moved, st)
							}
							continue
						}
						k := min(n, limit, bc-off)
						if v != 0 || moved != k-1 || st != deque.Success {
							t.Fatalf("n=%d limit=%d: StealBatchAndPop = %d, %d, %v; want 0, %d, success", n, limit, v, moved, st, k-1)
						}
						// "pushed into dst in FIFO order": dst's top end
						// (Steal) gives them oldest first.
						for i := 1; i < k; i++ {
							if got, st := dst.Steal(); got != i || st != deque.Success {
								t.Fatalf("n=%d limit=%d: dst.Steal = %d, %v; want %d", n, limit, got, st, i)
							}
						}
						if !dst.IsEmpty() {
							t.Fatalf("n=%d limit=%d: dst holds %d more than moved", n, limit, dst.Len())
						}
						if q.Len() != n-k {
							t.Fatalf("n=%d limit=%d: Len %d after, want %d", n, limit, q.Len(), n-k)
						}
						for i := k; i < n; i++ {
							if got, st := q.Steal(); got != i || st != deque.Success {
								t.Fatalf("n=%d limit=%d: Steal = %d, %v; want %d", n, limit, got, st, i)
							}
						}
						if _, st := q.Steal(); st != deque.Empty || !q.IsEmpty() {
							t.Fatalf("n=%d: Steal on drained injector: %v", n, st)
						}
					}
				}
			})
		}
	}
}

// TestInjectorTakeBatchCount: TakeBatch takes min(queued, len(dst), what
// is left of the first item's block), oldest first, writes nothing past
// what it took, and leaves the rest queued in order.
func TestInjectorTakeBatchCount(t *testing.T) {
	bc := deque.BlockCap
	for _, base := range []uint64{0, 0 - 2*uint64(bc)} {
		for _, off := range []int{0, 1, bc / 2, bc - 1} {
			start := base + uint64(off)
			for _, n := range []int{0, 1, 2, 33, bc - 1, bc, bc + 1, 2*bc + 5} {
				for _, size := range []int{1, 2, 8, 32, bc, bc + 1, 3 * bc} {
					q := deque.NewInjectorAt[int](start)
					for i := range n {
						q.Push(i + 1)
					}
					dst := make([]int, size)
					got, st := q.TakeBatch(dst)
					if n == 0 {
						if st != deque.Empty || got != 0 {
							t.Fatalf("n=0: TakeBatch = %d, %v; want empty", got, st)
						}
						continue
					}
					k := min(n, size, bc-off)
					if got != k || st != deque.Success {
						t.Fatalf("start %s n=%d size=%d: TakeBatch = %d, %v; want %d, success", startName(start), n, size, got, st, k)
					}
					for i := range size {
						want := 0 // untouched
						if i < k {
							want = i + 1
						}
						if dst[i] != want {
							t.Fatalf("start %s n=%d size=%d: dst[%d] = %d, want %d", startName(start), n, size, i, dst[i], want)
						}
					}
					if q.Len() != n-k {
						t.Fatalf("n=%d size=%d: Len %d after, want %d", n, size, q.Len(), n-k)
					}
					for i := k; i < n; i++ {
						if v, st := q.Steal(); v != i+1 || st != deque.Success {
							t.Fatalf("n=%d size=%d: Steal = %d, %v; want %d", n, size, v, st, i+1)
						}
					}
				}
			}
		}
	}
	mustPanic(t, func() { deque.NewInjector[int]().TakeBatch(nil) }, "deque:", "TakeBatch", "empty destination")
}

// TestDequePushBatch: PushBatch leaves the items as that many Pushes
// would (Pop gives them newest first, Steal oldest first), through growth
// and after a thief emptied the buffer; an empty batch does nothing; a
// released deque panics.
func TestDequePushBatch(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, pre := range []int{0, 1, 7, 100} {
			for _, m := range []int{0, 1, 4, 5, 64, 65, 300, 301} {
				d := deque.NewDequeAt[int](fifo, ^uint64(0)-50)
				for i := range pre {
					d.Push(-1 - i)
				}
				for range pre / 2 {
					d.Steal()
				}
				vs := make([]int, m)
				for i := range vs {
					vs[i] = i + 1
				}
				d.PushBatch(vs)
				if d.Len() != pre-pre/2+m {
					t.Fatalf("fifo=%v pre=%d m=%d: Len %d, want %d", fifo, pre, m, d.Len(), pre-pre/2+m)
				}
				// The older items first from the top, then vs: by Steal
				// oldest first; by Pop newest first (LIFO) or oldest
				// first (FIFO).
				for range pre - pre/2 {
					if v, st := d.Steal(); st != deque.Success || v >= 0 {
						t.Fatalf("fifo=%v pre=%d m=%d: Steal = %d, %v; want an older item", fifo, pre, m, v, st)
					}
				}
				byPop := m%2 == 1
				for i := range m {
					want := i + 1
					var v int
					if byPop {
						var ok bool
						if v, ok = d.Pop(); !ok {
							t.Fatalf("fifo=%v pre=%d m=%d: Pop found nothing", fifo, pre, m)
						}
						if !fifo {
							want = m - i
						}
					} else {
						var st deque.Status
						if v, st = d.Steal(); st != deque.Success {
							t.Fatalf("fifo=%v pre=%d m=%d: Steal: %v", fifo, pre, m, st)
						}
					}
					if v != want {
						t.Fatalf("fifo=%v pre=%d m=%d byPop=%v: item %d is %d, want %d", fifo, pre, m, byPop, i, v, want)
					}
				}
				if !d.IsEmpty() {
					t.Fatalf("fifo=%v pre=%d m=%d: %d left", fifo, pre, m, d.Len())
				}
			}
		}
	}
	d := deque.New[int]()
	d.Release()
	mustPanic(t, func() { d.PushBatch([]int{1}) }, "deque:", "PushBatch", "after Release")
}

// TestInjectorBatchIntoFullDeque: a batch that meets a destination slot
// that is not free (the buffer is full, or a thief took the slot's last
// occupant and the owner has not lapped it yet) moves the rest through
// the deque's growth path; nothing is lost and the order holds.
func TestInjectorBatchIntoFullDeque(t *testing.T) {
	for _, have := range []int{deque.MinCap - 40, deque.MinCap - 5, deque.MinCap - 1, deque.MinCap} {
		for _, stolen := range []int{0, 3} {
			q := deque.NewInjector[int]()
			for i := range 100 {
				q.Push(1000 + i)
			}
			dst := deque.New[int]()
			for i := range have {
				dst.Push(i)
			}
			// Thieves take the oldest few: their slots come back through
			// seq, not the owner's free word.
			for i := range stolen {
				if v, st := dst.Steal(); v != i || st != deque.Success {
					t.Fatalf("have=%d: Steal = %d, %v", have, v, st)
				}
			}
			v, moved, st := q.StealBatchAndPop(dst, 32)
			if v != 1000 || moved != 31 || st != deque.Success {
				t.Fatalf("have=%d stolen=%d: StealBatchAndPop = %d, %d, %v; want 1000, 31, success", have, stolen, v, moved, st)
			}
			if got, want := dst.Len(), have-stolen+31; got != want {
				t.Fatalf("have=%d stolen=%d: dst.Len = %d, want %d", have, stolen, got, want)
			}
			// LIFO owner end: the batch newest first, then the old items.
			for i := 31; i >= 1; i-- {
				if got, ok := dst.Pop(); !ok || got != 1000+i {
					t.Fatalf("have=%d stolen=%d: Pop = %d, %v; want %d", have, stolen, got, ok, 1000+i)
				}
			}
			for i := have - 1; i >= stolen; i-- {
				if got, ok := dst.Pop(); !ok || got != i {
					t.Fatalf("have=%d stolen=%d: Pop = %d, %v; want %d", have, stolen, got, ok, i)
				}
			}
			if _, ok := dst.Pop(); ok {
				t.Fatalf("have=%d stolen=%d: dst not empty", have, stolen)
			}
		}
	}
}

// TestInjectorFIFO: a single goroutine's pushes come back in order through
// Steal, across many blocks and the wrap-around.
func TestInjectorFIFO(t *testing.T) {
	for _, start := range []uint64{0, ^uint64(0) - 1000} {
		q := deque.NewInjectorAt[int](start)
		const n = 10 * deque.BlockCap
		for i := range n {
			q.Push(i)
		}
		for i := range n {
			if v, st := q.Steal(); v != i || st != deque.Success {
				t.Fatalf("%s: Steal %d = %d, %v", startName(start), i, v, st)
			}
		}
		if _, st := q.Steal(); st != deque.Empty {
			t.Fatalf("Steal on empty = %v", st)
		}
	}
}

func TestStatusString(t *testing.T) {
	for st, want := range map[deque.Status]string{deque.Empty: "empty", deque.Success: "success", deque.Retry: "retry"} {
		if st.String() != want {
			t.Errorf("%d.String() = %q, want %q", st, st.String(), want)
		}
	}
}
