package deque_test

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// Benchmarks, with the baselines a reader needs to judge them in the same
// file: a mutex-guarded ring deque, a buffered channel and a textbook
// Chase–Lev deque written with sync/atomic (one-word int slots, as the Go
// runtime's run queues). Names are fixed: harnesses look them up.
//
//	go test -run XXX -bench . -count=10 -benchtime=100ms ./internal/deque/ > /tmp/deque-bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest /tmp/deque-bench.txt
//
// Every benchmark moves int values; one op is one item through the queue.

// BenchmarkDequePushPop: the owner pushes one item and pops it back (LIFO,
// the scheduler's default local order).
func BenchmarkDequePushPop(b *testing.B) {
	b.ReportAllocs()
	d := deque.New[int]()
	for i := 0; b.Loop(); i++ {
		d.Push(i)
		d.Pop()
	}
}

// BenchmarkDequePushPopFIFO: the same with a FIFO owner end, whose Pop
// claims by CAS on top.
func BenchmarkDequePushPopFIFO(b *testing.B) {
	b.ReportAllocs()
	d := deque.NewFIFO[int]()
	for i := 0; b.Loop(); i++ {
		d.Push(i)
		d.Pop()
	}
}

// BenchmarkDequePushPop8: the owner pushes eight items and pops them back:
// Pop with more than one item left (no CAS), per item.
func BenchmarkDequePushPop8(b *testing.B) {
	b.ReportAllocs()
	d := deque.New[int]()
	for i := 0; i < b.N; i += 8 {
		for j := range 8 {
			d.Push(i + j)
		}
		for range 8 {
			d.Pop()
		}
	}
}

// BenchmarkDequeSteal: uncontended push and steal of one item, on one
// goroutine.
func BenchmarkDequeSteal(b *testing.B) {
	b.ReportAllocs()
	d := deque.New[int]()
	for i := 0; b.Loop(); i++ {
		d.Push(i)
		d.Steal()
	}
}

// BenchmarkDequeStealOnly: the steal alone, from a deque filled with the
// timer stopped, 1024 items at a time.
func BenchmarkDequeStealOnly(b *testing.B) {
	b.ReportAllocs()
	d := deque.New[int]()
	const chunk = 1024
	for i := 0; i < chunk; i++ { // grow the buffer outside the timed part
		d.Push(i)
	}
	for d.Len() > 0 {
		d.Steal()
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		b.StopTimer()
		n := min(chunk, b.N-done)
		for i := range n {
			d.Push(i)
		}
		b.StartTimer()
		for range n {
			d.Steal()
		}
	}
}

// BenchmarkDequeStealInto: uncontended; 64 items pushed, taken by
// StealInto batches of up to 32 into a slice (as a wsched thief runs
// them); ns/op is per item, push included. FIFO victims, as wsched's are:
// one CAS per batch.
func BenchmarkDequeStealInto(b *testing.B) { benchStealInto(b, deque.NewFIFO[int]) }

// BenchmarkDequeStealIntoLIFO: the same from a LIFO victim, whose batches
// are claimed one item at a time.
func BenchmarkDequeStealIntoLIFO(b *testing.B) { benchStealInto(b, deque.New[int]) }

func benchStealInto(b *testing.B, mk func() *deque.Deque[int]) {
	b.ReportAllocs()
	d := mk()
	into := make([]int, 32)
	sum := 0
	for i := 0; i < b.N; i += 64 {
		for j := range 64 {
			d.Push(j)
		}
		for d.Len() > 0 {
			n, _ := d.StealInto(into)
			for _, v := range into[:n] {
				sum += v
			}
		}
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}

// BenchmarkDequeStealIntoPushBatch: BenchmarkDequeStealIntoLIFO with each
// batch moved on into the thief's own deque (PushBatch) and popped back
// from it, the baseline of running the batch from the slice; LIFO victim
// and deque. Per item.
func BenchmarkDequeStealIntoPushBatch(b *testing.B) { benchStealIntoPushBatch(b, deque.New[int]) }

// BenchmarkDequeStealIntoPushBatchFIFO: the same with FIFO deques, the
// baseline of BenchmarkDequeStealInto.
func BenchmarkDequeStealIntoPushBatchFIFO(b *testing.B) {
	benchStealIntoPushBatch(b, deque.NewFIFO[int])
}

func benchStealIntoPushBatch(b *testing.B, mk func() *deque.Deque[int]) {
	b.ReportAllocs()
	d, dst := mk(), mk()
	into := make([]int, 32)
	for i := 0; i < b.N; i += 64 {
		for j := range 64 {
			d.Push(j)
		}
		for d.Len() > 0 {
			n, _ := d.StealInto(into)
			dst.PushBatch(into[:n])
			for {
				if _, ok := dst.Pop(); !ok {
					break
				}
			}
		}
	}
}

// BenchmarkDequeStealContended: the owner pushes every item while
// GOMAXPROCS−1 thieves Steal without pause; once more than 256 are queued
// the owner pops one back per push, as a busy worker runs its own work.
// ns/op is per item; steals/op is the share the thieves got, retries/op
// how often a steal lost a race.
func BenchmarkDequeStealContended(b *testing.B) {
	b.ReportAllocs()
	thieves := max(runtime.GOMAXPROCS(0)-1, 1)
	d := deque.New[int]()
	var stop atomic.Bool
	var stolen, retries atomic.Int64
	var wg sync.WaitGroup
	for range thieves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s, r int64
			for !stop.Load() {
				switch _, st := d.Steal(); st {
				case deque.Success:
					s++
				case deque.Retry:
					r++
				}
			}
			stolen.Add(s)
			retries.Add(r)
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Push(i)
		if d.Len() > 256 {
			d.Pop()
		}
	}
	for {
		if _, ok := d.Pop(); !ok {
			break
		}
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(stolen.Load())/float64(b.N), "steals/op")
	b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
}

// BenchmarkInjectorPushSteal: uncontended push and steal of one item.
func BenchmarkInjectorPushSteal(b *testing.B) {
	b.ReportAllocs()
	q := deque.NewInjector[int]()
	for i := 0; b.Loop(); i++ {
		q.Push(i)
		q.Steal()
	}
}

// BenchmarkInjectorPushBatch: a bulk add of 1024 items (one PushBatch)
// then their batched removal (TakeBatch of 32 into a slice), per item;
// BenchmarkInjectorPushEach is the same with one Push per item, the
// baseline PushBatch must beat.
func BenchmarkInjectorPushBatch(b *testing.B) { benchInjectorBulk(b, true) }

func BenchmarkInjectorPushEach(b *testing.B) { benchInjectorBulk(b, false) }

func benchInjectorBulk(b *testing.B, batch bool) {
	const n = 1024
	b.ReportAllocs()
	q := deque.NewInjector[int]()
	vs := make([]int, n)
	into := make([]int, 32)
	for b.Loop() {
		if batch {
			q.PushBatch(vs)
		} else {
			for _, v := range vs {
				q.Push(v)
			}
		}
		for {
			if _, st := q.TakeBatch(into); st != deque.Success {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
}

// BenchmarkInjectorPushStealParallel: every P pushes and steals at once.
func BenchmarkInjectorPushStealParallel(b *testing.B) {
	b.ReportAllocs()
	q := deque.NewInjector[int]()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			q.Push(i)
			q.Steal()
		}
	})
}

// BenchmarkInjectorTakeBatch: 64 pushed, taken 32 at a time into a slice
// (a worker holding a bucket take); per item.
func BenchmarkInjectorTakeBatch(b *testing.B) {
	b.ReportAllocs()
	q := deque.NewInjector[int]()
	into := make([]int, 32)
	for i := 0; i < b.N; i += 64 {
		for j := range 64 {
			q.Push(j)
		}
		for !q.IsEmpty() {
			q.TakeBatch(into)
		}
	}
}

// BenchmarkInjectorTakeBatchPushBatch: the same, the first item of each
// take run at once and the rest moved into a deque (PushBatch) and popped
// back, as a bucket's TakeBatch hands a take to its worker's deque; per
// item.
func BenchmarkInjectorTakeBatchPushBatch(b *testing.B) {
	b.ReportAllocs()
	q, dst := deque.NewInjector[int](), deque.New[int]()
	into := make([]int, 32)
	for i := 0; i < b.N; i += 64 {
		for j := range 64 {
			q.Push(j)
		}
		for !q.IsEmpty() {
			n, _ := q.TakeBatch(into)
			if n > 1 {
				dst.PushBatch(into[1:n])
			}
			for {
				if _, ok := dst.Pop(); !ok {
					break
				}
			}
		}
	}
}

// Baselines.

// mutexDeque is the obvious alternative: a ring buffer behind a
// sync.Mutex; push and pop at the back, steal at the front.
type mutexDeque struct {
	mu         sync.Mutex
	buf        []int
	head, tail int // head: oldest; tail: one past the newest (free-running)
}

func (m *mutexDeque) push(v int) {
	m.mu.Lock()
	if m.tail-m.head == len(m.buf) {
		nb := make([]int, max(2*len(m.buf), 64))
		for i := m.head; i < m.tail; i++ {
			nb[i&(len(nb)-1)] = m.buf[i&(len(m.buf)-1)]
		}
		m.buf = nb
	}
	m.buf[m.tail&(len(m.buf)-1)] = v
	m.tail++
	m.mu.Unlock()
}

func (m *mutexDeque) pop() (int, bool) {
	m.mu.Lock()
	if m.tail == m.head {
		m.mu.Unlock()
		return 0, false
	}
	m.tail--
	v := m.buf[m.tail&(len(m.buf)-1)]
	m.mu.Unlock()
	return v, true
}

func (m *mutexDeque) steal() (int, bool) {
	m.mu.Lock()
	if m.tail == m.head {
		m.mu.Unlock()
		return 0, false
	}
	v := m.buf[m.head&(len(m.buf)-1)]
	m.head++
	m.mu.Unlock()
	return v, true
}

func BenchmarkMutexDequePushPop(b *testing.B) {
	b.ReportAllocs()
	var m mutexDeque
	for i := 0; b.Loop(); i++ {
		m.push(i)
		m.pop()
	}
}

func BenchmarkMutexDequeSteal(b *testing.B) {
	b.ReportAllocs()
	var m mutexDeque
	for i := 0; b.Loop(); i++ {
		m.push(i)
		m.steal()
	}
}

func BenchmarkChanPushPop(b *testing.B) {
	b.ReportAllocs()
	ch := make(chan int, 1024)
	for i := 0; b.Loop(); i++ {
		ch <- i
		<-ch
	}
}

// chaseLev is the textbook Chase–Lev deque (Chase & Lev 2005, with the
// C11 orderings of Lê et al. 2013) in sync/atomic, every access
// sequentially consistent as Go's atomics are: int slots, so a thief may
// read a slot before its CAS without a data race.
type chaseLev struct {
	top    atomic.Int64
	_      [56]byte
	bottom atomic.Int64
	buf    atomic.Pointer[clBuffer]
}

type clBuffer struct {
	mask  int64
	slots []atomic.Int64
}

func newChaseLev() *chaseLev {
	c := &chaseLev{}
	c.buf.Store(&clBuffer{mask: 63, slots: make([]atomic.Int64, 64)})
	return c
}

func (c *chaseLev) push(v int) {
	b := c.bottom.Load()
	t := c.top.Load()
	a := c.buf.Load()
	if b-t > a.mask {
		na := &clBuffer{mask: 2*a.mask + 1, slots: make([]atomic.Int64, 2*len(a.slots))}
		for i := t; i < b; i++ {
			na.slots[i&na.mask].Store(a.slots[i&a.mask].Load())
		}
		c.buf.Store(na)
		a = na
	}
	a.slots[b&a.mask].Store(int64(v))
	c.bottom.Store(b + 1)
}

func (c *chaseLev) pop() (int, bool) {
	b := c.bottom.Load() - 1
	a := c.buf.Load()
	c.bottom.Store(b)
	t := c.top.Load()
	if t > b {
		c.bottom.Store(b + 1)
		return 0, false
	}
	v := a.slots[b&a.mask].Load()
	if t == b {
		won := c.top.CompareAndSwap(t, t+1)
		c.bottom.Store(b + 1)
		return int(v), won
	}
	return int(v), true
}

func (c *chaseLev) steal() (int, bool) {
	t := c.top.Load()
	b := c.bottom.Load()
	if t >= b {
		return 0, false
	}
	a := c.buf.Load()
	v := a.slots[t&a.mask].Load()
	if !c.top.CompareAndSwap(t, t+1) {
		return 0, false
	}
	return int(v), true
}

func BenchmarkChaseLevPushPop(b *testing.B) {
	b.ReportAllocs()
	c := newChaseLev()
	for i := 0; b.Loop(); i++ {
		c.push(i)
		c.pop()
	}
}

func BenchmarkChaseLevSteal(b *testing.B) {
	b.ReportAllocs()
	c := newChaseLev()
	for i := 0; b.Loop(); i++ {
		c.push(i)
		c.steal()
	}
}

// TestBaselines keeps the baselines honest: they are queues.
func TestBaselines(t *testing.T) {
	var m mutexDeque
	c := newChaseLev()
	for i := range 200 {
		m.push(i)
		c.push(i)
	}
	for i := range 100 {
		v, ok := m.steal()
		require.True(t, ok, "mutexDeque.steal %d found nothing", i)
		require.Equal(t, i, v, "mutexDeque.steal")
		v, ok = c.steal()
		require.True(t, ok, "chaseLev.steal %d found nothing", i)
		require.Equal(t, i, v, "chaseLev.steal")
	}
	for i := 199; i >= 100; i-- {
		v, ok := m.pop()
		require.True(t, ok, "mutexDeque.pop %d found nothing", i)
		require.Equal(t, i, v, "mutexDeque.pop")
		v, ok = c.pop()
		require.True(t, ok, "chaseLev.pop %d found nothing", i)
		require.Equal(t, i, v, "chaseLev.pop")
	}
	_, ok := m.pop()
	require.False(t, ok, "mutexDeque not empty")
	_, ok = c.pop()
	require.False(t, ok, "chaseLev not empty")
}

// lockedA and lockedB are on separate cache lines, like a deque's bottom
// and top.
var lockedA, lockedB struct {
	v atomic.Uint64
	_ [56]byte
}

// BenchmarkLockedPairFloor: one atomic store and one CAS per op, the two
// locked instructions a Push+Pop of one item needs, with nothing else: the
// floor under BenchmarkDequePushPop on this CPU.
func BenchmarkLockedPairFloor(b *testing.B) {
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		lockedA.v.Store(i)
		lockedB.v.CompareAndSwap(i, i+1)
	}
}

// BenchmarkDequeVsMutexPushPop runs the deque's push+pop and the mutex
// baseline's (BenchmarkDequePushPop, BenchmarkMutexDequePushPop) in
// alternating blocks of 4096 operations inside one loop, so that a shared
// machine's drift, which moves either benchmark by up to 2× from one
// second to the next, hits both alike. It reports each side's ns per
// push+pop and mutex/deque, the median over the block pairs of the ratio
// of their times (the figure internal/deque's doc quotes). ns/op is one
// push+pop of each.
func BenchmarkDequeVsMutexPushPop(b *testing.B) {
	b.ReportAllocs()
	const block = 4096
	d := deque.New[int]()
	var m mutexDeque
	var ratios []float64
	var tDeque, tMutex time.Duration
	for left := b.N; left > 0; left -= block {
		n := min(left, block)
		t0 := time.Now()
		for i := range n {
			d.Push(i)
			d.Pop()
		}
		t1 := time.Now()
		for i := range n {
			m.push(i)
			m.pop()
		}
		t2 := time.Now()
		tDeque += t1.Sub(t0)
		tMutex += t2.Sub(t1)
		if n == block {
			ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
		}
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "mutex/deque")
	}
	b.ReportMetric(float64(tDeque.Nanoseconds())/float64(b.N), "deque-ns")
	b.ReportMetric(float64(tMutex.Nanoseconds())/float64(b.N), "mutex-ns")
}
