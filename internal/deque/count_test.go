package deque_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// Uncontended batch sizes, exactly as documented:
//
//	StealInto           takes min(⌈n/2⌉, len(dst)) into dst, oldest first
//	Injector.TakeBatch  takes min(n, len(dst), what is left of the first
//	                    item's block) into dst, oldest first
//
// always the oldest items (the top end), leaving the rest in order, and
// writing nothing past what they took.

var (
	batchSizes = append(seq(0, 70), 127, 128, 129, 255, 256, 257, 1000)
	// batchLimits are destination lengths; 1 << 20 is more than twice
	// any batchSizes entry: no cap.
	batchLimits = []int{1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 64, 100, 1 << 20}
)

// seq returns lo..hi, an empty slice (not nil) if hi < lo.
func seq(lo, hi int) []int {
	s := []int{}
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// drain pops everything from d (owner end) and returns it (not nil).
func drain(d *deque.Deque[int]) []int {
	out := []int{}
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

// requireInts is require.Equal for int slices (nil and empty alike), with
// a fast path: the count tests compare thousands of them.
func requireInts(t *testing.T, want, got []int, msgAndArgs ...any) {
	t.Helper()
	if !slices.Equal(want, got) {
		require.Equal(t, want, got, msgAndArgs...)
	}
}

// checkRest checks that d holds exactly the items from..n-1 in the order
// its owner pops them, and empties it.
func checkRest(t *testing.T, d *deque.Deque[int], fifo bool, from, n int, name string) {
	t.Helper()
	require.Equal(t, n-from, d.Len(), "%s: source Len", name)
	want := seq(from, n-1)
	if !fifo {
		slices.Reverse(want)
	}
	requireInts(t, want, drain(d), "%s: what the source's owner pops then", name)
}

// destination returns a slice of length size over big, whose elements a
// batch of at most half of n items may write set to -1: the prefix it
// can reach, the element after it and the last one. A 1 << 20 destination
// then costs no allocation per case.
func destination(big []int, size, n int) []int {
	dst := big[:size]
	for i := range min(size, n/2+2) {
		dst[i] = -1
	}
	dst[size-1] = -1
	return dst
}

// untouched checks that dst[k:] is as destination left it.
func untouched(t *testing.T, dst []int, k, n int, name string) {
	t.Helper()
	if end := max(k, min(len(dst), n/2+2)); slices.ContainsFunc(dst[k:end], func(v int) bool { return v != -1 }) {
		require.Equal(t, slices.Repeat([]int{-1}, end-k), dst[k:end], "%s: dst written past the %d taken", name, k)
	}
	if len(dst) > k {
		require.Equal(t, -1, dst[len(dst)-1], "%s: last element of dst written", name)
	}
}

func TestStealIntoCount(t *testing.T) {
	big := make([]int, slices.Max(batchLimits))
	for _, fifo := range []bool{false, true} {
		for _, start := range []uint64{0, ^uint64(0) - 40} {
			for _, n := range batchSizes {
				for _, size := range batchLimits {
					name := fmt.Sprintf("%s/%s/n=%d/len=%d", modeName(fifo), startName(start), n, size)
					d := fill(fifo, start, n)
					dst := destination(big, size, n)
					want := min((n+1)/2, size)
					wantSt := deque.Success
					if n == 0 {
						wantSt = deque.Empty
					}
					got, st := d.StealInto(dst)
					require.Equal(t, want, got, "%s: StealInto count", name)
					require.Equal(t, wantSt, st, "%s: StealInto status", name)
					// The oldest items, oldest first, and nothing else written.
					requireInts(t, seq(0, want-1), dst[:got], "%s: dst[:k]", name)
					untouched(t, dst, got, n, name)
					checkRest(t, d, fifo, want, n, name)
				}
			}
		}
	}
}

// TestStealIntoPushBatch: a batch that a thief moves on into its own deque
// (StealInto, then PushBatch of what it took), into an empty deque and one
// that already holds items, of either flavour: the thief's deque holds
// its old items and then the batch, in queue order (its top end, Steal,
// gives them oldest first), and the source keeps the rest.
func TestStealIntoPushBatch(t *testing.T) {
	big := make([]int, slices.Max(batchLimits))
	for _, fifo := range []bool{false, true} {
		for _, start := range []uint64{0, ^uint64(0) - 40} {
			for _, n := range batchSizes {
				for _, size := range batchLimits {
					for pre := range 2 { // into an empty and a non-empty deque
						name := fmt.Sprintf("%s/%s/n=%d/len=%d/pre=%d", modeName(fifo), startName(start), n, size, pre)
						d := fill(fifo, start, n)
						mine := deque.NewDequeAt[int](pre == 1, start+3)
						for range pre * 5 {
							mine.Push(-1)
						}
						got, _ := d.StealInto(destination(big, size, n))
						want := min((n+1)/2, size)
						require.Equal(t, want, got, "%s: StealInto count", name)
						mine.PushBatch(big[:got])
						require.Equal(t, pre*5+want, mine.Len(), "%s: thief's deque Len", name)
						moved := []int{}
						for {
							v, st := mine.Steal()
							if st != deque.Success {
								require.Equal(t, deque.Empty, st, "%s: thief's deque Steal", name)
								break
							}
							moved = append(moved, v)
						}
						requireInts(t, append(slices.Repeat([]int{-1}, pre*5), seq(0, want-1)...), moved,
							"%s: the thief's deque, oldest first", name)
						checkRest(t, d, fifo, want, n, name)
					}
				}
			}
		}
	}
}

// TestInjectorTakeBatchCount: TakeBatch takes min(queued, len(dst), what
// is left of the first item's block), oldest first, writes nothing past
// what it took, and leaves the rest queued in order, from tickets at
// several offsets in their block, at zero and just below the wrap-around,
// whether the items came one Push at a time or in one PushBatch.
func TestInjectorTakeBatchCount(t *testing.T) {
	bc := deque.BlockCap
	sizes := []int{0, 1, 2, 3, 4, 10, 33, bc - 1, bc, bc + 1, 2*bc + 5}
	lengths := []int{1, 2, 3, 8, 32, 33, bc - 1, bc, bc + 1, 3 * bc, 1 << 20}
	big := make([]int, slices.Max(lengths))
	// Bases at zero and just below the wrap-around (2^64 is a multiple of
	// BlockCap, so the offset in the block is the same on both).
	for _, base := range []uint64{0, 0 - 2*uint64(bc)} {
		for _, off := range []int{0, 1, 5, bc / 2, bc - 3, bc - 1} {
			start := base + uint64(off)
			for _, n := range sizes {
				for _, size := range lengths {
					for _, batched := range []bool{false, true} {
						name := fmt.Sprintf("%s/off=%d/n=%d/len=%d/batched=%v", startName(start), off, n, size, batched)
						q := deque.NewInjectorAt[int](start)
						if batched {
							q.PushBatch(seq(1, n))
						} else {
							for i := range n {
								q.Push(i + 1)
							}
						}
						require.Equal(t, n, q.Len(), "%s: Len", name)
						// Untouched elements hold 0; the items are 1..n.
						dst := big[:size]
						clear(dst[:min(size, bc+1)])
						dst[size-1] = 0
						got, st := q.TakeBatch(dst)
						if n == 0 {
							require.Equal(t, deque.Empty, st, "%s: TakeBatch status", name)
							require.Zero(t, got, "%s: TakeBatch count", name)
							require.True(t, q.IsEmpty(), "%s: IsEmpty", name)
							continue
						}
						k := min(n, size, bc-off)
						require.Equal(t, deque.Success, st, "%s: TakeBatch status", name)
						require.Equal(t, k, got, "%s: TakeBatch count", name)
						requireInts(t, seq(1, k), dst[:k], "%s: dst[:k]", name)
						if end := max(k, min(size, bc+1)); slices.ContainsFunc(dst[k:end], func(v int) bool { return v != 0 }) {
							require.Equal(t, make([]int, end-k), dst[k:end], "%s: dst written past the %d taken", name, k)
						}
						if size > k {
							require.Zero(t, dst[size-1], "%s: last element of dst written", name)
						}
						require.Equal(t, n-k, q.Len(), "%s: Len after", name)
						rest := []int{}
						for {
							v, st := q.Steal()
							if st != deque.Success {
								require.Equal(t, deque.Empty, st, "%s: Steal on the drained injector", name)
								break
							}
							rest = append(rest, v)
						}
						requireInts(t, seq(k+1, n), rest, "%s: what Steal takes after", name)
						require.True(t, q.IsEmpty(), "%s: IsEmpty after", name)
					}
				}
			}
		}
	}
}

// TestDequePushBatch: PushBatch leaves the items as that many Pushes
// would (Pop gives them newest first, Steal oldest first), through growth
// and after a thief emptied the buffer; an empty batch does nothing.
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
				where := fmt.Sprintf("fifo=%v pre=%d m=%d", fifo, pre, m)
				require.Equal(t, pre-pre/2+m, d.Len(), "%s: Len", where)
				// The older items first from the top, then vs: by Steal
				// oldest first; by Pop newest first (LIFO) or oldest
				// first (FIFO).
				for range pre - pre/2 {
					v, st := d.Steal()
					require.Equal(t, deque.Success, st, "%s: Steal", where)
					require.Negative(t, v, "%s: Steal; want an older item", where)
				}
				byPop := m%2 == 1
				for i := range m {
					want := i + 1
					var v int
					if byPop {
						var ok bool
						v, ok = d.Pop()
						require.True(t, ok, "%s: Pop found nothing", where)
						if !fifo {
							want = m - i
						}
					} else {
						var st deque.Status
						v, st = d.Steal()
						require.Equal(t, deque.Success, st, "%s: Steal", where)
					}
					require.Equal(t, want, v, "%s byPop=%v: item %d", where, byPop, i)
				}
				require.True(t, d.IsEmpty(), "%s: %d left", where, d.Len())
			}
		}
	}
}

// TestInjectorBatchIntoFullDeque: an injector batch moved into a deque
// (TakeBatch, then PushBatch of all but the first, as a bucket hands a
// take to its worker's deque) that meets a destination slot that is not
// free (the buffer is full, or a thief took the slot's last occupant and
// the owner has not lapped it yet) moves the rest through the deque's
// growth path; nothing is lost and the order holds.
func TestInjectorBatchIntoFullDeque(t *testing.T) {
	for _, have := range []int{deque.MinCap - 40, deque.MinCap - 5, deque.MinCap - 1, deque.MinCap} {
		for _, stolen := range []int{0, 3} {
			name := fmt.Sprintf("have=%d/stolen=%d", have, stolen)
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
				v, st := dst.Steal()
				require.Equal(t, deque.Success, st, "%s: Steal", name)
				require.Equal(t, i, v, "%s: Steal", name)
			}
			var run [32]int
			k, st := q.TakeBatch(run[:])
			require.Equal(t, deque.Success, st, "%s: TakeBatch", name)
			require.Equal(t, 32, k, "%s: TakeBatch", name)
			require.Equal(t, 1000, run[0], "%s: the batch's first", name)
			dst.PushBatch(run[1:k])
			require.Equal(t, have-stolen+31, dst.Len(), "%s: dst.Len", name)
			// LIFO owner end: the batch newest first, then the old items.
			for i := 31; i >= 1; i-- {
				v, ok := dst.Pop()
				require.True(t, ok, "%s: Pop", name)
				require.Equal(t, 1000+i, v, "%s: Pop", name)
			}
			for i := have - 1; i >= stolen; i-- {
				v, ok := dst.Pop()
				require.True(t, ok, "%s: Pop", name)
				require.Equal(t, i, v, "%s: Pop", name)
			}
			_, ok := dst.Pop()
			require.False(t, ok, "%s: dst not empty", name)
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
			v, st := q.Steal()
			require.Equal(t, deque.Success, st, "%s: Steal %d", startName(start), i)
			require.Equal(t, i, v, "%s: Steal %d", startName(start), i)
		}
		_, st := q.Steal()
		require.Equal(t, deque.Empty, st, "%s: Steal on empty", startName(start))
	}
}

func TestStatusString(t *testing.T) {
	for st, want := range map[deque.Status]string{deque.Empty: "empty", deque.Success: "success", deque.Retry: "retry"} {
		assert.Equal(t, want, st.String(), "Status(%d).String()", int(st))
	}
}
