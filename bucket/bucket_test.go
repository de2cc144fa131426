package bucket

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArrivals: Add reports its packets as arrived only while the bucket
// is open; a closed bucket keeps them.
func TestArrivals(t *testing.T) {
	b := New[int]()
	require.True(t, b.NormalEmpty() && b.PriorityEmpty(), "a new bucket is empty")
	assert.Equal(t, 0, add(t, b, false, 1), "Add to a closed bucket")
	assert.Equal(t, 0, add(t, b, false, 2, 3))
	b.Open()
	assert.Equal(t, 1, add(t, b, false, 4), "Add to an open bucket")
	assert.Equal(t, 2, add(t, b, true, 5, 6))
	assert.Equal(t, 1, add(t, b, true, 7))
	assert.Equal(t, 0, add(t, b, false), "an empty Add")
	assert.Equal(t, 7, b.Len())
	assert.False(t, b.PriorityEmpty())
	b.Close()
	assert.Equal(t, 0, add(t, b, false, 8), "Add after Close")
	assert.Equal(t, 8, b.Len(), "closed keeps its packets")
}

// TestTakeOrder: the priority lane is taken one packet at a time, each
// lane is FIFO, and Drain takes what is left from both.
func TestTakeOrder(t *testing.T) {
	b := New[int]()
	b.Open()
	add(t, b, false, 1, 2, 3, 4, 5)
	add(t, b, true, 100)
	add(t, b, true, 101)
	for _, want := range []int{100, 101} {
		v, ok, _ := b.TakePriority()
		require.True(t, ok)
		require.Equal(t, want, v)
	}
	_, ok, retry := b.TakePriority()
	require.False(t, ok || retry, "TakePriority on an empty lane")
	dst := make([]int, 3)
	n, _ := b.Take(dst)
	require.Equal(t, 3, n)
	require.Equal(t, []int{1, 2, 3}, dst)
	add(t, b, true, 9)
	n, _ = b.Take(dst)
	require.Equal(t, 2, n, "Take takes from the normal lane only")
	require.Equal(t, []int{4, 5}, dst[:2])
	var got []int
	require.Equal(t, 1, b.Drain(func(v int) { got = append(got, v) }))
	require.Equal(t, []int{9}, got)
	require.True(t, b.NormalEmpty() && b.PriorityEmpty())
	require.Equal(t, 0, b.Drain(nil))
}

// TestTake: Take fills at most len(dst), oldest first, and reports no
// packet (and no race) on an empty normal lane.
func TestTake(t *testing.T) {
	b := New[int]()
	b.Open()
	add(t, b, false, 1, 2, 3, 4, 5)
	add(t, b, true, 99)
	dst := make([]int, 3)
	n, retry := b.Take(dst)
	require.Equal(t, 3, n)
	require.False(t, retry)
	require.Equal(t, []int{1, 2, 3}, dst)
	n, _ = b.Take(dst)
	require.Equal(t, 2, n)
	require.Equal(t, []int{4, 5}, dst[:2])
	n, retry = b.Take(dst)
	require.Equal(t, 0, n)
	require.False(t, retry)
	v, ok, _ := b.TakePriority()
	require.True(t, ok)
	require.Equal(t, 99, v, "the priority lane kept its packet")
}

// TestSentinel: a bucket holds at most one sentinel.
func TestSentinel(t *testing.T) {
	b := New[string]()
	_, ok := b.TakeSentinel()
	require.False(t, ok, "TakeSentinel on none")
	require.True(t, b.SetSentinel("a"))
	require.False(t, b.SetSentinel("b"), "at most one")
	v, ok := b.TakeSentinel()
	require.True(t, ok)
	require.Equal(t, "a", v)
	_, ok = b.TakeSentinel()
	require.False(t, ok)
	require.True(t, b.SetSentinel("c"), "SetSentinel after Take")
}

// TestDisable: concurrent producers against Disable: every Add either fails
// with ErrDisabled or its packets are drained afterwards, none lost.
func TestDisable(t *testing.T) {
	b := New[int]()
	b.Open()
	var accepted atomic.Int64
	var started sync.WaitGroup
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		started.Add(1)
		wg.Go(func() {
			first := true
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.Add([]int{1, 2, 3}, false); err == nil {
					accepted.Add(3)
				} else if !assert.ErrorIs(t, err, ErrDisabled) {
					return
				}
				if _, err := b.Add([]int{1}, true); err == nil {
					accepted.Add(1)
				}
				if first {
					started.Done() // Disable comes after every producer added
					first = false
				}
			}
		})
	}
	started.Wait()
	var drained int
	watch(t, 30*time.Second, func() {
		b.Disable()
		drained = b.Drain(nil)
		close(stop)
		wg.Wait()
	})
	require.Equal(t, accepted.Load(), int64(drained), "every accepted packet is drained")
	require.Zero(t, b.Len())
	_, err := b.Add([]int{1}, false)
	require.ErrorIs(t, err, ErrDisabled)
	_, _, err = b.AddSpan(3, func(int) Source[int] { require.FailNow(t, "bound on a disabled bucket"); return nil })
	require.ErrorIs(t, err, ErrDisabled)
}

// TestConcurrentExactlyOnce: producers add to both lanes, one packet or
// several at a time, while consumers take in every way; each value
// arrives exactly once.
func TestConcurrentExactlyOnce(t *testing.T) {
	const producers, per = 4, 20000
	b := New[int]()
	b.Open()
	seen := make([]atomic.Int32, producers*per)
	var taken atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			base := p * per
			for i := 0; i < per; {
				k := min(1+i%3, per-i) // runs of 1, 2 and 3
				vs := make([]int, k)
				for j := range vs {
					vs[j] = base + i + j
				}
				if _, err := b.Add(vs, i%2 == 1); !assert.NoError(t, err) {
					return
				}
				i += k
			}
		})
	}
	done := make(chan struct{})
	record := func(v int) {
		seen[v].Add(1)
		taken.Add(1)
	}
	wait := consume(b, []takeWay{takePriorityFirst, takeOf(8), takeOf(1)}, record, done)
	watch(t, 30*time.Second, func() {
		wg.Wait()
		close(done)
		wait()
	})
	b.Drain(record)
	require.Equal(t, int64(producers*per), taken.Load())
	for i := range seen {
		require.Equal(t, int32(1), seen[i].Load(), "value %d", i)
	}
}

// TestLaneEmptiness: PriorityEmpty and NormalEmpty each see one lane only.
func TestLaneEmptiness(t *testing.T) {
	b := New[int]()
	add(t, b, true, 1)
	assert.False(t, b.PriorityEmpty())
	assert.True(t, b.NormalEmpty())
	b.TakePriority()
	add(t, b, false, 2)
	assert.True(t, b.PriorityEmpty())
	assert.False(t, b.NormalEmpty())
}

// TestReclaimWithAdds: Reclaim may run while other goroutines add (it
// holds them off or skips); consumers take only between reclaims, as a
// scheduler's parked workers do. Every packet arrives exactly once over
// many rounds of reused blocks.
func TestReclaimWithAdds(t *testing.T) {
	b := New[int]()
	b.Open()
	const rounds, adders, per = 50, 2, 700
	next := 0
	for r := range rounds {
		var wg sync.WaitGroup
		var done atomic.Bool
		for a := range adders {
			wg.Go(func() {
				for i := range per {
					v := next + a*per + i
					if _, err := b.Add([]int{v}, false); !assert.NoError(t, err) {
						return
					}
				}
			})
		}
		go func() { wg.Wait(); done.Store(true) }()
		for !done.Load() {
			b.Reclaim() // with adds in flight: holds them off or skips
		}
		seen := make(map[int]bool, adders*per)
		b.Drain(func(v int) {
			if seen[v] || v < next || v >= next+adders*per { // checked first: an assertion per packet costs more than the round
				require.False(t, seen[v], "round %d: packet %d duplicated", r, v)
				require.Fail(t, fmt.Sprintf("round %d: packet %d foreign", r, v))
			}
			seen[v] = true
		})
		require.Len(t, seen, adders*per, "round %d", r)
		b.Reclaim() // quiescent: the drained blocks become reusable
		next += adders * per
	}
}

// TestAddMany: an Add of many packets (several 128-packet blocks) queues
// them all, in order, on its lane, and reports them all as arrived.
func TestAddMany(t *testing.T) {
	const n = 300
	want := make([]int, n)
	for i := range want {
		want[i] = 1000 + i
	}
	for _, prio := range []bool{false, true} {
		b := New[int]()
		b.Open()
		require.Equal(t, n, add(t, b, prio, want...))
		var got []int
		for {
			if prio {
				v, ok, _ := b.TakePriority()
				if !ok {
					break
				}
				got = append(got, v)
				continue
			}
			buf := make([]int, 32)
			k, _ := b.Take(buf)
			if k == 0 {
				break
			}
			got = append(got, buf[:k]...)
		}
		require.Equal(t, want, got, "prio %v", prio)
	}
}
