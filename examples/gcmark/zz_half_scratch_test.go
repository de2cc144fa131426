package gcmark

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type halfW struct {
	id    int
	lo, n uint32 // my half: [lo, lo+n)
	stack []uint32
	out   []uint32
	mu    sync.Mutex
	inbox []uint32
	spare []uint32
	pend  atomic.Int32
	fwd   int64
	work  int64
	busy  time.Duration
	_     [64]byte
}

type halfM struct {
	h       *Heap
	marks   Bitmap
	ws      [2]*halfW
	pending atomic.Int64
	roots   [2][]uint32
}

func (m *halfM) flush(w *halfW) {
	if len(w.out) == 0 {
		return
	}
	d := m.ws[1-w.id]
	m.pending.Add(int64(len(w.out)))
	d.mu.Lock()
	d.inbox = append(d.inbox, w.out...)
	d.pend.Store(int32(len(d.inbox)))
	d.mu.Unlock()
	w.fwd += int64(len(w.out))
	w.out = w.out[:0]
}

func (m *halfM) take(w *halfW) int {
	w.mu.Lock()
	in := w.inbox
	w.inbox = w.spare[:0]
	w.pend.Store(0)
	w.mu.Unlock()
	for _, c := range in {
		if plainMark(m.marks, c) {
			w.stack = append(w.stack, c)
		}
	}
	w.spare = in
	return len(in)
}

func halfScan(h *Heap, marks Bitmap, lo, n uint32, stack, out []uint32, budget int) ([]uint32, []uint32, int64) {
	off, words := h.Offsets, h.Words
	var at, hd [MaxBatch]uint32
	var scanned int64
	for budget > 0 && len(stack) > 0 {
		k := min(32, len(stack))
		for i, o := range stack[len(stack)-k:] {
			at[i] = off[o]
			hd[i] = words[at[i]]
		}
		stack = stack[:len(stack)-k]
		budget -= k
		for i := k - 1; i >= 0; i-- {
			s := words[at[i]+1 : at[i]+1+hd[i]]
			for j := len(s) - 1; j >= 0; j-- {
				c := s[j]
				if c == Null {
					continue
				}
				if c-lo >= n {
					out = append(out, c)
					continue
				}
				if plainMark(marks, c) {
					stack = append(stack, c)
				}
			}
		}
		scanned += int64(k)
	}
	return stack, out, scanned
}

func (m *halfM) run(w *halfW) {
	t0 := time.Now()
	w.stack = w.stack[:0]
	m.pending.Add(1)
	for _, c := range m.roots[w.id] {
		if plainMark(m.marks, c) {
			w.stack = append(w.stack, c)
		}
	}
	for {
		for len(w.stack) > 0 {
			var k int64
			w.stack, w.out, k = halfScan(m.h, m.marks, w.lo, w.n, w.stack, w.out, 256)
			w.work += k
			if len(w.out) >= 64 {
				m.flush(w)
			}
			if w.pend.Load() > 0 {
				m.pending.Add(-int64(m.take(w)))
			}
		}
		m.flush(w)
		if w.pend.Load() > 0 {
			m.pending.Add(-int64(m.take(w)))
			continue
		}
		m.pending.Add(-1)
		w.busy += time.Since(t0)
		for {
			if w.pend.Load() > 0 {
				t0 = time.Now()
				m.pending.Add(1)
				m.pending.Add(-int64(m.take(w)))
				break
			}
			if m.pending.Load() == 0 {
				return
			}
			runtime.Gosched()
		}
	}
}

func TestHalfScratch(t *testing.T) {
	h := benchHeaps[ShapeBuilt]()
	bl, _ := NewBaseline(h, SequentialDFS, BaselineOptions{})
	bla, _ := NewBaseline(h, SequentialDFSAtomic, BaselineOptions{})
	roots := bl.decodeRoots(nil)
	n := uint32(h.Objects())
	half := (n/2 + 511) &^ 511
	m := &halfM{h: h, marks: NewBitmap(h.Objects())}
	m.ws[0] = &halfW{id: 0, lo: 0, n: half}
	m.ws[1] = &halfW{id: 1, lo: half, n: n - half}
	for _, r := range roots {
		i := 0
		if r >= half {
			i = 1
		}
		m.roots[i] = append(m.roots[i], r)
	}
	var tS, tA, tO []float64
	for r := 0; r < 21; r++ {
		clear(bl.marks)
		t0 := time.Now()
		bl.roots = roots
		bl.markDFS()
		tS = append(tS, float64(time.Since(t0).Microseconds())/1000)
		clear(bla.marks)
		t0 = time.Now()
		bla.roots = roots
		bla.markDFSAtomic()
		tA = append(tA, float64(time.Since(t0).Microseconds())/1000)
		clear(m.marks)
		for _, w := range m.ws {
			w.fwd, w.work, w.busy = 0, 0, 0
		}
		t0 = time.Now()
		var wg sync.WaitGroup
		for _, w := range m.ws {
			wg.Go(func() { m.run(w) })
		}
		wg.Wait()
		tO = append(tO, float64(time.Since(t0).Microseconds())/1000)
		for i := range m.marks {
			if m.marks[i] != bl.marks[i] {
				t.Fatalf("marks differ at word %d", i)
			}
		}
		if r == 20 {
			t.Logf("work %d/%d fwd %d/%d busy %v/%v", m.ws[0].work, m.ws[1].work, m.ws[0].fwd, m.ws[1].fwd, m.ws[0].busy, m.ws[1].busy)
		}
	}
	ms, ma, mo := median(tS), median(tA), median(tO)
	t.Logf("seq-dfs %.2f atomic %.2f half/2 %.2f speed %.3f", ms, ma, mo, ms/mo)
}
