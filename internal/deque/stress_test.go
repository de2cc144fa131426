package deque_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// Exactly-once stress tests: every item pushed is consumed by exactly one
// goroutine, whatever mix of Pop, Steal and StealInto (its batch run from
// the thief's slice or moved on into the thief's deque with PushBatch)
// takes it, from indices that start at zero or just below the uint64
// wrap-around. A lost item leaves the run short of its total and trips the
// watchdog, which prints which items are missing; a duplicated one fails
// the final count.

// stealer is one way a thief takes work from a victim deque.
type stealer int

const (
	viaSteal stealer = iota
	// StealInto a slice, every item run from there (a scheduler's thief).
	viaStealInto
	// StealInto a slice; the first item run at once, the rest moved into
	// the thief's deque with one PushBatch.
	viaStealIntoRunFirst
	// StealInto a slice, all of it moved into the thief's deque with one
	// PushBatch.
	viaStealIntoPushBatch
	numStealers
)

func (s stealer) String() string {
	return [...]string{"Steal", "StealInto", "StealInto+run first", "StealInto+PushBatch"}[s]
}

// intoLen is the length of a thief's slice: larger than half of any
// deque in these tests, so that the drawn length of 1 << 20 leaves
// StealInto uncapped.
const intoLen = 1 << 13

// randLimit draws a batch limit: mostly small, sometimes 1 (a batch of
// one), sometimes larger than any deque here (no cap).
func randLimit(rng *rand.Rand) int {
	switch rng.IntN(8) {
	case 0:
		return 1
	case 1:
		return 1 << 20
	}
	return 1 + rng.IntN(40)
}

func TestDequeExactlyOnce(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		for _, start := range starts {
			t.Run(modeName(fifo)+"/"+startName(start), func(t *testing.T) {
				dequeExactlyOnce(t, fifo, start, items(), int(numStealers)) // one thief per way of stealing
			})
		}
	}
}

// TestDequeExactlyOnceMany runs more thieves than processors
// (WSCHED_STRESS=1 only): thieves preempted mid-claim.
func TestDequeExactlyOnceMany(t *testing.T) {
	if !stress() {
		t.Skip("WSCHED_STRESS=1 runs this")
	}
	for _, fifo := range []bool{false, true} {
		for _, start := range starts {
			t.Run(modeName(fifo)+"/"+startName(start), func(t *testing.T) {
				dequeExactlyOnce(t, fifo, start, 4*items(), 4*runtime.GOMAXPROCS(0)+1)
			})
		}
	}
}

// dequeExactlyOnce: one owner pushes n items in bursts (now and then a
// burst of a few thousand, so the buffer grows and shrinks while thieves
// are stealing) and pops some of them back; k thieves take from it with
// Steal and the three uses of StealInto in turn (stealer): from the
// slice, or moved on into deques of their own (half LIFO, half FIFO) that
// they pop from and that their peers also steal from. Values are pushed
// in increasing order, so any one goroutine's takes from the top end
// (Steal, every item of a StealInto batch, a FIFO owner's Pop) must come
// out increasing.
func dequeExactlyOnce(t *testing.T, fifo bool, start uint64, n, k int) {
	d := deque.NewDequeAt[int](fifo, start)
	c := newCounter(n)
	mines := make([]*deque.Deque[int], k)
	for i := range mines {
		mines[i] = deque.NewDequeAt[int](i%2 == 1, start+uint64(i)*7919)
	}
	var g group
	var maxCap atomic.Int64
	var statuses [numStealers][3]atomic.Int64 // [method][Status]
	var fails atomic.Pointer[string]
	fail := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		fails.CompareAndSwap(nil, &s)
		g.stop.Store(true)
	}

	g.Go(func() { // the owner
		rng := rand.New(rand.NewPCG(uint64(start), 1))
		lastPop := -1
		var local int64
		consume := func(v int) {
			if fifo {
				if v <= lastPop {
					fail("FIFO owner popped %d after %d", v, lastPop)
				}
				lastPop = v
			}
			c.add(v)
			local++
		}
		for next := 0; next < n && !g.stopped(); {
			burst := 1 + rng.IntN(48)
			if rng.IntN(128) == 0 {
				burst = 1000 + rng.IntN(4000)
			}
			for j := 0; j < burst && next < n; j++ {
				d.Push(next)
				next++
			}
			maxCap.Store(max(maxCap.Load(), int64(deque.Cap(d))))
			for pops := rng.IntN(burst + 1); pops > 0; pops-- {
				v, ok := d.Pop()
				if !ok {
					break
				}
				consume(v)
			}
			c.total.Add(local)
			local = 0
		}
		for !g.stopped() {
			v, ok := d.Pop()
			if !ok {
				break
			}
			consume(v)
		}
		c.total.Add(local)
	})

	for i := range k {
		g.Go(func() { // thief i
			rng := rand.New(rand.NewPCG(uint64(start), uint64(i)+2))
			mine, peer := mines[i], mines[(i+1)%k]
			how := stealer(i % int(numStealers))
			into := make([]int, intoLen)
			last := -1
			var local int64
			ordered := func(v int) {
				if v <= last {
					fail("thief %d (%v) took %d after %d from the top end", i, how, v, last)
				}
				last = v
			}
			for !g.stopped() && !c.done() {
				if how == viaSteal {
					v, st := d.Steal()
					statuses[how][st].Add(1)
					if st == deque.Success {
						ordered(v)
						c.add(v)
						local++
					}
				} else {
					buf := into[:min(randLimit(rng), len(into))]
					got, st := d.StealInto(buf)
					statuses[how][st].Add(1)
					if (st == deque.Success) != (got > 0) || got > len(buf) {
						fail("StealInto(len %d) = %d, %v", len(buf), got, st)
					}
					// The batch is the oldest items, oldest first.
					for _, v := range buf[:got] {
						ordered(v)
					}
					run := buf[:got] // counted here; the rest goes to mine
					switch how {
					case viaStealIntoRunFirst:
						run = buf[:min(got, 1)]
						if got > 1 {
							mine.PushBatch(buf[1:got])
						}
					case viaStealIntoPushBatch:
						run = nil
						mine.PushBatch(buf[:got])
					}
					for _, v := range run {
						c.add(v)
						local++
					}
				}
				local += takeSome(rng, peer, mine, c)
				c.total.Add(local)
				local = 0
			}
		})
	}
	g.Wait(t, "deque exactly-once", func() string {
		lens := fmt.Sprintf("victim Len %d", d.Len())
		for i, m := range mines {
			lens += fmt.Sprintf(", thief %d Len %d", i, m.Len())
		}
		return c.summary() + "; " + lens
	})
	if f := fails.Load(); f != nil {
		require.Fail(t, *f)
	}
	c.check(t)
	assert.Zero(t, d.Len(), "victim Len after all items were consumed")
	assert.Greater(t, maxCap.Load(), int64(deque.MinCap), "the buffer's largest Cap while bursts of 1000+ were pushed")
	for i, m := range mines {
		assert.Zero(t, m.Len(), "thief %d Len after all items were consumed", i)
	}
	var report string
	for how := range numStealers {
		report += fmt.Sprintf(" %v: %d success, %d empty, %d retry;", how,
			statuses[how][deque.Success].Load(), statuses[how][deque.Empty].Load(), statuses[how][deque.Retry].Load())
	}
	t.Logf("%d items, %d thieves, max Cap %d;%s", n, k, maxCap.Load(), report)
}

func TestInjectorExactlyOnce(t *testing.T) {
	for _, start := range []uint64{0, ^uint64(0) - 300} {
		t.Run(startName(start), func(t *testing.T) {
			injectorExactlyOnce(t, start, items(), 2, 3)
		})
	}
}

func TestInjectorExactlyOnceMany(t *testing.T) {
	if !stress() {
		t.Skip("WSCHED_STRESS=1 runs this")
	}
	p := 2 * runtime.GOMAXPROCS(0)
	injectorExactlyOnce(t, ^uint64(0)-300, 4*items(), p, p+1)
}

// injectorExactlyOnce: p producers push n items in all (producer j pushes
// j, j+p, j+2p, ..., one by one if j is even, in PushBatch runs if odd);
// k consumers take with Steal (consumer 0) or TakeBatch into a slice,
// whose items they either run from there (consumers 1, 4, ...: a
// scheduler's worker holding a bucket take) or, but for the first, hand
// on to their own deque with Deque.PushBatch (consumers 2, 5, ...: the
// bucket's TakeBatch). The deques alternate LIFO and FIFO; their owners
// pop them and their peers steal from them. The queue is FIFO, so the
// items one consumer takes straight from the injector must come out in
// each producer's order.
func injectorExactlyOnce(t *testing.T, start uint64, n, p, k int) {
	q := deque.NewInjectorAt[int](start)
	c := newCounter(n)
	mines := make([]*deque.Deque[int], k)
	for i := range mines {
		mines[i] = deque.NewDequeAt[int](i%2 == 1, start)
	}
	var g group
	var fails atomic.Pointer[string]
	fail := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		fails.CompareAndSwap(nil, &s)
		g.stop.Store(true)
	}
	var statuses [3][3]atomic.Int64 // Steal, TakeBatch run from the slice, TakeBatch+PushBatch
	for j := range p {
		g.Go(func() {
			if j%2 == 0 {
				for v := j; v < n && !g.stopped(); v += p {
					q.Push(v)
				}
				return
			}
			// Odd producers push runs of 1..300 items with PushBatch
			// (runs cross the 64-slot words and the blocks).
			rng := rand.New(rand.NewPCG(start, uint64(j)+100))
			batch := make([]int, 0, 300)
			for v := j; v < n && !g.stopped(); {
				batch = batch[:0]
				for m := 1 + rng.IntN(300); m > 0 && v < n; m-- {
					batch = append(batch, v)
					v += p
				}
				q.PushBatch(batch)
			}
		})
	}
	for i := range k {
		g.Go(func() {
			rng := rand.New(rand.NewPCG(start, uint64(i)))
			mine, peer := mines[i], mines[(i+1)%k]
			last := make([]int, p) // last item taken from the injector, per producer
			for j := range last {
				last[j] = -1
			}
			ordered := func(v int) {
				if v <= last[v%p] {
					fail("consumer %d took %d after %d (producer %d) from the injector", i, v, last[v%p], v%p)
				}
				last[v%p] = v
			}
			var local int64
			buf := make([]int, 1<<12)
			for !g.stopped() && !c.done() {
				if i == 0 {
					v, st := q.Steal()
					statuses[0][st].Add(1)
					if st == deque.Success {
						ordered(v)
						c.add(v)
						local++
					}
				} else {
					// TakeBatch into a private slice: run every item from
					// there (consumers 1, 4, ...), or run the first at once
					// and hand the rest to mine with PushBatch (consumers
					// 2, 5, ...; its pops and the peers' steals count them).
					way := 1
					if i%3 == 2 {
						way = 2
					}
					limit := min(randLimit(rng), len(buf))
					got, st := q.TakeBatch(buf[:limit])
					statuses[way][st].Add(1)
					if st == deque.Success {
						if got < 1 || got > limit || got > deque.MaxTake {
							fail("Injector.TakeBatch(%d slots) took %d", limit, got)
						}
						for _, v := range buf[:got] {
							ordered(v)
						}
						run := buf[:got]
						if way == 2 {
							run = buf[:1]
							mine.PushBatch(buf[1:got])
						}
						for _, v := range run {
							c.add(v)
							local++
						}
					} else if got != 0 {
						fail("Injector.TakeBatch = %d, %v", got, st)
					}
				}
				local += takeSome(rng, peer, mine, c)
				c.total.Add(local)
				local = 0
			}
		})
	}
	g.Wait(t, "injector exactly-once", func() string {
		s := fmt.Sprintf("injector Len %d", q.Len())
		for i, m := range mines {
			s += fmt.Sprintf(", consumer %d Len %d", i, m.Len())
		}
		return c.summary() + "; " + s
	})
	if f := fails.Load(); f != nil {
		require.Fail(t, *f)
	}
	c.check(t)
	assert.True(t, q.IsEmpty(), "injector not empty after all items were consumed")
	assert.Zero(t, q.Len(), "injector Len after all items were consumed")
	t.Logf("%d items, %d producers, %d consumers; Steal %d/%d/%d, TakeBatch %d/%d/%d, TakeBatch+PushBatch %d/%d/%d (success/empty/retry)",
		n, p, k,
		statuses[0][deque.Success].Load(), statuses[0][deque.Empty].Load(), statuses[0][deque.Retry].Load(),
		statuses[1][deque.Success].Load(), statuses[1][deque.Empty].Load(), statuses[1][deque.Retry].Load(),
		statuses[2][deque.Success].Load(), statuses[2][deque.Empty].Load(), statuses[2][deque.Retry].Load())
}

// takeSome is a consumer's turn after its own take: now and then one item
// stolen from a peer's deque, then up to four popped from its own, leaving
// some for the peers to steal. It counts every item in c and returns how
// many it took. mine's owner only.
func takeSome(rng *rand.Rand, peer, mine *deque.Deque[int], c *counter) int64 {
	var n int64
	if rng.IntN(4) == 0 {
		if v, st := peer.Steal(); st == deque.Success {
			c.add(v)
			n++
		}
	}
	for pops := 1 + rng.IntN(4); pops > 0; pops-- {
		v, ok := mine.Pop()
		if !ok {
			break
		}
		c.add(v)
		n++
	}
	return n
}
