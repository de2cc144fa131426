package deque_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
// Single-threaded, every batch is exact: StealInto takes the oldest
// min(⌈n/2⌉, len(dst)) items, oldest first, and PushBatch leaves them as
// that many Pushes would, so both models pin down every item's place.
// Batches reach dst the ways a thief moves them: all of a StealInto
// batch by PushBatch, or all but the first (which the thief runs).
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
	// A batch back from dst into a deque that still holds items, and
	// StealInto of every length class.
	f.Add(seed(2, ^uint64(0)-130, 6, 40, 3, 69, 9, 30, 12, 0, 12, 69, 4, 1, 9, 69, 5, 8))
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
		model := &fuzzModel{fifo: fifo}       // d, oldest first
		dstModel := &fuzzModel{fifo: dstFIFO} // dst, oldest first
		next := 0
		arg := func(i *int) int {
			if *i+1 < len(ops) {
				*i++
				return int(ops[*i])
			}
			return 0
		}
		into := make([]int, 70)
		// stealInto takes a batch of 1..70 from src by StealInto and
		// checks it against m, which it updates.
		stealInto := func(i int, what string, src *deque.Deque[int], m *fuzzModel, size int) []int {
			n, st := src.StealInto(into[:size])
			want := min((len(m.items)+1)/2, size)
			wantSt := deque.Success
			if want == 0 {
				wantSt = deque.Empty
			}
			require.Equal(t, wantSt, st, "op %d: %s(len %d) of %v: status", i, what, size, m.items)
			require.Equal(t, want, n, "op %d: %s(len %d) of %v: count", i, what, size, m.items)
			if n > 0 {
				require.Equal(t, m.items[:want], into[:n], "op %d: %s(len %d) of %v: the oldest, oldest first", i, what, size, m.items)
			}
			m.items = m.items[want:]
			return into[:n]
		}
		for i := 0; i < len(ops); i++ {
			switch ops[i] % 13 {
			case 0: // Push
				d.Push(next)
				model.push(next)
				next++
			case 1: // Pop
				v, ok := d.Pop()
				mv, mok := model.pop()
				require.Equal(t, mok, ok, "op %d: Pop ok", i)
				require.Equal(t, mv, v, "op %d: Pop", i)
			case 2: // Steal
				v, st := d.Steal()
				mv, mok := model.steal()
				if !mok {
					require.Equal(t, deque.Empty, st, "op %d: Steal on empty", i)
					break
				}
				require.Equal(t, deque.Success, st, "op %d: Steal", i)
				require.Equal(t, mv, v, "op %d: Steal", i)
			case 3: // StealInto, the whole batch moved into dst
				batch := stealInto(i, "StealInto", d, model, 1+arg(&i)%70)
				dst.PushBatch(batch)
				dstModel.push(batch...)
			case 4: // StealInto, the first run at once, the rest moved into dst
				batch := stealInto(i, "StealInto", d, model, 1+arg(&i)%70)
				if len(batch) > 1 {
					dst.PushBatch(batch[1:])
					dstModel.push(batch[1:]...)
				}
			case 5: // Pop from dst
				v, ok := dst.Pop()
				mv, mok := dstModel.pop()
				require.Equal(t, mok, ok, "op %d: dst.Pop ok", i)
				require.Equal(t, mv, v, "op %d: dst.Pop", i)
			case 6: // a burst of pushes: growth
				for range 1 + arg(&i)*4 {
					d.Push(next)
					model.push(next)
					next++
				}
			case 7: // a run of pops: shrink
				for range 1 + arg(&i)*4 {
					v, ok := d.Pop()
					mv, mok := model.pop()
					require.Equal(t, mok, ok, "op %d: Pop in a run ok", i)
					require.Equal(t, mv, v, "op %d: Pop in a run", i)
				}
			case 8: // Steal from dst
				v, st := dst.Steal()
				mv, mok := dstModel.steal()
				if !mok {
					require.Equal(t, deque.Empty, st, "op %d: dst.Steal on empty", i)
					break
				}
				require.Equal(t, deque.Success, st, "op %d: dst.Steal", i)
				require.Equal(t, mv, v, "op %d: dst.Steal", i)
			case 9: // dst is a victim too: a batch from it moved into d
				batch := stealInto(i, "dst.StealInto", dst, dstModel, 1+arg(&i)%70)
				d.PushBatch(batch)
				model.push(batch...)
			case 10: // Len, IsEmpty, Cap: checked after every operation
			case 11: // PushBatch: as that many Pushes
				m := arg(&i) % 70
				vs := make([]int, m)
				for j := range vs {
					vs[j] = next
					next++
				}
				d.PushBatch(vs)
				model.push(vs...)
			case 12: // StealInto a slice, the batch run from there
				stealInto(i, "StealInto", d, model, 1+arg(&i)%70)
			}
			for _, q := range []struct {
				name string
				d    *deque.Deque[int]
				m    *fuzzModel
			}{{"d", d, model}, {"dst", dst, dstModel}} {
				n := len(q.m.items)
				require.Equal(t, n, q.d.Len(), "op %d (%d): %s Len", i, ops[i]%13, q.name)
				require.Equal(t, n == 0, q.d.IsEmpty(), "op %d (%d): %s IsEmpty", i, ops[i]%13, q.name)
				c := deque.Cap(q.d)
				require.True(t, c >= deque.MinCap && c&(c-1) == 0 && c >= n, "op %d: %s Cap %d with %d items", i, q.name, c, n)
			}
		}
		// Drain both.
		for _, q := range []struct {
			d *deque.Deque[int]
			m *fuzzModel
		}{{d, model}, {dst, dstModel}} {
			for len(q.m.items) > 0 {
				want, _ := q.m.pop()
				v, ok := q.d.Pop()
				require.True(t, ok, "final Pop")
				require.Equal(t, want, v, "final Pop")
			}
			_, ok := q.d.Pop()
			require.False(t, ok, "final Pop of an empty deque")
		}
	})
}

// fuzzModel is a deque as a slice, oldest first.
type fuzzModel struct {
	fifo  bool
	items []int
}

func (m *fuzzModel) push(vs ...int) { m.items = append(m.items, vs...) }

// pop is the owner's end: the newest (LIFO) or the oldest (FIFO).
func (m *fuzzModel) pop() (int, bool) {
	if len(m.items) == 0 {
		return 0, false
	}
	if m.fifo {
		return m.steal()
	}
	v := m.items[len(m.items)-1]
	m.items = m.items[:len(m.items)-1]
	return v, true
}

// steal is the top end: the oldest.
func (m *fuzzModel) steal() (int, bool) {
	if len(m.items) == 0 {
		return 0, false
	}
	v := m.items[0]
	m.items = m.items[1:]
	return v, true
}
