package deque_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/deque"
)

// FuzzDeque drives random single-goroutine sequences of operations on two
// deques, a victim d and a thief's own deque dst, against slice models:
//
//	go test -run XXX -fuzz FuzzDeque -fuzztime 60s ./internal/deque/
//
// The input's first byte picks the modes (d LIFO or FIFO, dst LIFO or
// FIFO), the next eight the starting index of d (dst starts at its
// complement), so the fuzzer reaches the uint64 wrap-around; each later
// byte is an operation, some taking the following byte as an argument.
// Single-threaded, every batch count is exact, and the order in which a
// batch lands in dst (not part of the contract) is the only thing the
// dst model does not pin down: it is checked as a multiset.
func FuzzDeque(f *testing.F) {
	seed := func(mode byte, start uint64, ops ...byte) []byte {
		b := []byte{mode}
		b = binary.LittleEndian.AppendUint64(b, start)
		return append(b, ops...)
	}
	f.Add(seed(0, 0, 0, 0, 0, 1, 1, 2, 3, 5, 4, 5))
	f.Add(seed(1, 0, 0, 0, 0, 0, 4, 9, 2, 1))
	f.Add(seed(2, ^uint64(0)-3, 0, 0, 0, 0, 0, 0, 3, 7, 1, 1, 2, 2))
	f.Add(seed(3, ^uint64(0)-1, 6, 200, 3, 100, 4, 100, 7, 255, 8, 9, 10))
	f.Add(seed(0, ^uint64(0)-60, 6, 255, 6, 255, 7, 255, 7, 255, 6, 20, 3, 3))
	f.Add(seed(1, 1<<63-5, 6, 64, 2, 2, 2, 7, 70, 8, 8, 9, 9))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 9 {
			return
		}
		// Watchdog: an input that hangs (a resize loop that never
		// ends, say) panics from the timer's goroutine with every
		// stack, which makes the fuzzer save it as a crasher instead of
		// stalling.
		watchdog := time.AfterFunc(10*time.Second, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("FuzzDeque: one input ran for 10s\n%s", buf[:runtime.Stack(buf, true)]))
		})
		defer watchdog.Stop()
		mode, start, ops := in[0], binary.LittleEndian.Uint64(in[1:9]), in[9:]
		fifo, dstFIFO := mode&1 != 0, mode&2 != 0
		d := deque.NewDequeAt[int](fifo, start)
		dst := deque.NewDequeAt[int](dstFIFO, ^start)
		var model []int // d, oldest first
		var dstModel []int
		next := 0
		arg := func(i *int) int {
			if *i+1 < len(ops) {
				*i++
				return int(ops[*i])
			}
			return 0
		}
		// take removes v from the dst multiset.
		take := func(what string, v int) {
			j := slices.Index(dstModel, v)
			if j < 0 {
				t.Fatalf("%s: %d, which dst does not hold (holds %v)", what, v, dstModel)
			}
			dstModel = slices.Delete(dstModel, j, j+1)
		}
		popModel := func() (int, bool) {
			if len(model) == 0 {
				return 0, false
			}
			if fifo {
				v := model[0]
				model = model[1:]
				return v, true
			}
			v := model[len(model)-1]
			model = model[:len(model)-1]
			return v, true
		}
		for i := 0; i < len(ops); i++ {
			switch ops[i] % 13 {
			case 0: // Push
				d.Push(next)
				model = append(model, next)
				next++
			case 1: // Pop
				v, ok := d.Pop()
				mv, mok := popModel()
				if v != mv || ok != mok {
					t.Fatalf("op %d: Pop = %d, %v; model %d, %v", i, v, ok, mv, mok)
				}
			case 2: // Steal
				v, st := d.Steal()
				if len(model) == 0 {
					if st != deque.Empty {
						t.Fatalf("op %d: Steal on empty = %v", i, st)
					}
					break
				}
				if st != deque.Success || v != model[0] {
					t.Fatalf("op %d: Steal = %d, %v; want %d", i, v, st, model[0])
				}
				model = model[1:]
			case 3: // StealBatch
				limit := 1 + arg(&i)%70
				n, st := d.StealBatch(dst, limit)
				want := min((len(model)+1)/2, limit)
				if n != want || (st == deque.Success) != (want > 0) || (want == 0 && st != deque.Empty) {
					t.Fatalf("op %d: StealBatch(%d) of %d = %d, %v; want %d", i, limit, len(model), n, st, want)
				}
				dstModel = append(dstModel, model[:want]...)
				model = model[want:]
			case 4: // StealBatchAndPop
				limit := 1 + arg(&i)%70
				v, n, st := d.StealBatchAndPop(dst, limit)
				if len(model) == 0 {
					if st != deque.Empty || n != 0 {
						t.Fatalf("op %d: StealBatchAndPop on empty = %d, %d, %v", i, v, n, st)
					}
					break
				}
				want := min((len(model)-1)/2, limit-1)
				if st != deque.Success || v != model[0] || n != want {
					t.Fatalf("op %d: StealBatchAndPop(%d) of %d = %d, %d, %v; want %d, %d", i, limit, len(model), v, n, st, model[0], want)
				}
				dstModel = append(dstModel, model[1:1+want]...)
				model = model[1+want:]
			case 5: // Pop from dst
				v, ok := dst.Pop()
				if ok != (len(dstModel) > 0) {
					t.Fatalf("op %d: dst.Pop ok = %v with %d held", i, ok, len(dstModel))
				}
				if ok {
					take("dst.Pop", v)
				}
			case 6: // a burst of pushes: growth
				for range 1 + arg(&i)*4 {
					d.Push(next)
					model = append(model, next)
					next++
				}
			case 7: // a run of pops: shrink
				for range 1 + arg(&i)*4 {
					v, ok := d.Pop()
					mv, mok := popModel()
					if v != mv || ok != mok {
						t.Fatalf("op %d: Pop in a run = %d, %v; model %d, %v", i, v, ok, mv, mok)
					}
				}
			case 8: // Steal from dst
				v, st := dst.Steal()
				if (st == deque.Success) != (len(dstModel) > 0) || st == deque.Retry {
					t.Fatalf("op %d: dst.Steal = %v with %d held", i, st, len(dstModel))
				}
				if st == deque.Success {
					take("dst.Steal", v)
				}
			case 9: // dst is a victim too: batch from it back into d
				// (only when d is empty: the order a batch lands in is
				// not pinned down, so d's model could not follow it;
				// the items are stolen straight back out and checked).
				if len(model) != 0 {
					break
				}
				limit := 1 + arg(&i)%70
				n, st := dst.StealBatch(d, limit)
				if want := min((len(dstModel)+1)/2, limit); n != want || (n > 0) != (st == deque.Success) {
					t.Fatalf("op %d: dst.StealBatch(%d) of %d = %d, %v; want %d", i, limit, len(dstModel), n, st, want)
				}
				for range n {
					v, st := d.Steal()
					if st != deque.Success {
						t.Fatalf("op %d: d.Steal after a batch into it = %v", i, st)
					}
					take("dst.StealBatch into d", v)
				}
			case 10: // Len, IsEmpty, Cap
			case 11: // PushBatch: as that many Pushes
				m := arg(&i) % 70
				vs := make([]int, m)
				for j := range vs {
					vs[j] = next
					next++
				}
				d.PushBatch(vs)
				model = append(model, vs...)
			case 12: // StealInto: the oldest min(⌈n/2⌉, len) into a slice
				into := make([]int, 1+arg(&i)%70)
				n, st := d.StealInto(into)
				want := min((len(model)+1)/2, len(into))
				if n != want || (st == deque.Success) != (want > 0) || (want == 0 && st != deque.Empty) ||
					!slices.Equal(into[:n], model[:want]) {
					t.Fatalf("op %d: StealInto(len %d) of %v = %v, %v; want the first %d", i, len(into), model, into[:n], st, want)
				}
				model = model[want:]
			}
			if d.Len() != len(model) || d.IsEmpty() != (len(model) == 0) {
				t.Fatalf("op %d (%d): Len %d, IsEmpty %v; model holds %d", i, ops[i]%13, d.Len(), d.IsEmpty(), len(model))
			}
			if dst.Len() != len(dstModel) {
				t.Fatalf("op %d: dst Len %d; model holds %d", i, dst.Len(), len(dstModel))
			}
			if c := d.Cap(); c < deque.MinCap || c&(c-1) != 0 || c < len(model) {
				t.Fatalf("op %d: Cap %d with %d items", i, c, len(model))
			}
		}
		// Drain both and release them.
		for len(model) > 0 {
			want, _ := popModel()
			if v, ok := d.Pop(); !ok || v != want {
				t.Fatalf("final Pop = %d, %v; want %d", v, ok, want)
			}
		}
		for len(dstModel) > 0 {
			v, ok := dst.Pop()
			if !ok {
				t.Fatalf("dst empty with %v left in the model", dstModel)
			}
			take("final dst.Pop", v)
		}
		d.Release()
		dst.Release()
	})
}
