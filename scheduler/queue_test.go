package scheduler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Backpressure: Config.MaxQueued and the Block option.

// TestMaxQueued: Add and AddAll (copied, lent, priority) are refused with
// ErrQueueFull, and queue nothing, once MaxQueued packets wait in their
// stage (each stage has its own bound); an AddAll
// is admitted only if all of it fits; spawns, designated packets and
// sentinels are not counted; the count comes back to zero when the
// workers take the packets, when an aborted cycle drops them, and at
// Close.
func TestMaxQueued(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}, MaxQueued: 4})
	var ran atomic.Int64
	p := counter{&ran}
	ps := []Packet{p, p, p}
	require.NoError(t, s.Add(p))
	require.NoError(t, s.Add(p, Priority))
	require.NoError(t, s.AddAll(ps[:2], Lend))
	require.NoError(t, s.Add(p, StageID(2), Priority), "stage 2 has its own bound")
	require.ErrorIs(t, s.Add(p), ErrQueueFull)
	require.ErrorIs(t, s.Add(p, Priority), ErrQueueFull)
	require.ErrorIs(t, s.AddAll(ps), ErrQueueFull)
	require.ErrorIs(t, s.AddAll(ps, Lend), ErrQueueFull)
	require.NoError(t, s.AddAll(nil), "an empty slice queues nothing")
	require.NoError(t, s.AddDesignated(0, p), "designated packets are not counted")
	require.NoError(t, s.SetSentinel(1, p), "sentinels are not counted")
	assert.Equal(t, int64(4+1), queuedTotal(s.s))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(5+2), ran.Load())
	assert.Equal(t, int64(0), queuedTotal(s.s), "after the cycle")

	// An AddAll queues only if all of it fits: the bound holds.
	require.NoError(t, s.AddAll(ps))
	require.ErrorIs(t, s.AddAll(ps, Lend), ErrQueueFull)
	require.NoError(t, s.AddAll(ps[:1], Lend))
	require.ErrorIs(t, s.Add(p), ErrQueueFull)
	assert.Equal(t, int64(4), queuedTotal(s.s))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(7+4), ran.Load())
	// Spawns are the cycle's own work: a packet spawns past the bound.
	ran.Store(0)
	require.NoError(t, s.Add(fn(func(w *Worker) {
		for range 100 {
			Spawn(w, p)
		}
	})))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(100), ran.Load())

	// An aborted cycle's dropped packets leave the count.
	require.NoError(t, s.Add(boom{}))
	require.NoError(t, s.AddAll(ps, StageID(2)))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, uint64(3), ce.Dropped)
	assert.Equal(t, int64(0), queuedTotal(s.s), "after an aborted cycle")

	// Close: adds are ErrClosed, not ErrQueueFull; Close takes what it
	// drops off the count.
	require.NoError(t, s.AddAll(ps, StageID(2)))
	require.NoError(t, s.Add(p, StageID(2)))
	require.ErrorIs(t, s.Add(p, StageID(2)), ErrQueueFull)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Add(p), ErrClosed)
	require.ErrorIs(t, s.Add(p, Block(bg)), ErrClosed)
	assert.Equal(t, int64(0), queuedTotal(s.s), "after Close")
}

// TestMaxQueuedBlock: with Block, an add from outside waits for room
// while the workers drain: 2,000 packets go through a queue of at most 8,
// each runs exactly once, and the bound holds after every add.
func TestMaxQueuedBlock(t *testing.T) {
	const n, bound = 2000, 8
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, MaxQueued: bound})
	end := holdCycle(t, s) // worker 0 blocked: worker 1 drains
	runs := make([]atomic.Int32, n)
	over, full := 0, 0
	watch(t, 60*time.Second, func() {
		for i := range n {
			// Each packet computes about 10 µs: the adds outpace the drain.
			p := fn(func(*Worker) { runs[i].Add(1); spinKid{10000}.Run(nil) })
			if queuedTotal(s.s) >= bound {
				full++ // this add waits
			}
			var err error
			if i%10 == 9 {
				err = s.AddAll([]Packet{p}, Unconstrained, Block(bg))
			} else {
				err = s.Add(p, Unconstrained, Block(bg))
			}
			if err != nil {
				assert.NoError(t, err, "add %d", i)
				return
			}
			if queuedTotal(s.s) > bound {
				over++
			}
		}
	})
	waitFor(t, 10*time.Second, func() bool { return queuedTotal(s.s) == 0 }, "the queue to drain")
	end()
	i, c, bad := notOnce(runs)
	require.False(t, bad, "packet %d ran %d times", i, c)
	assert.Zero(t, over, "adds after which more than %d packets waited", bound)
	assert.NotZero(t, full, "adds that found the queue full")
	t.Logf("%d of %d adds found the queue full", full, n)
}

// TestBlockUnbounded: without MaxQueued, Block changes nothing.
func TestBlockUnbounded(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var ran atomic.Int64
	ctx, cancel := context.WithCancel(bg)
	cancel()
	for range 100 {
		require.NoError(t, s.Add(counter{&ran}, Block(ctx)))
	}
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(100), ran.Load())
}
