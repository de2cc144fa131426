package scheduler

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// produce adds n counter packets through hd, yielding now and then so
// that the workers drain the stage and park while the hold keeps the
// cycle open; it returns how many adds succeeded and the first error.
func produce(hd *Hold, n int, ran *atomic.Int64, opts ...Option) (int, error) {
	for i := range n {
		if err := hd.Add(counter{ran}, opts...); err != nil {
			return i, err
		}
		if i%64 == 0 {
			runtime.Gosched()
		}
	}
	return n, nil
}

// TestHoldStreams: producers outside the workers hold the cycle open
// while they add, on 1 and 4 workers, one producer taking its hold before
// Run and three during it: Run returns only once every hold is released
// and every packet has run, each exactly once, and no worker ran a
// blocking packet meanwhile.
func TestHoldStreams(t *testing.T) {
	for _, workers := range []int{1, 4} {
		s := newSched(t, Config{Workers: workers})
		var ran atomic.Int64
		const per = 5000
		first, err := s.Hold(1)
		require.NoError(t, err)
		var wg sync.WaitGroup
		started := make(chan struct{})
		wg.Go(func() {
			<-started
			n, err := produce(first, per, &ran)
			assert.NoError(t, err)
			assert.Equal(t, per, n)
			// Three more producers, during the cycle, before this hold
			// is released.
			var inner sync.WaitGroup
			for range 3 {
				hd, err := s.Hold(1)
				if !assert.NoError(t, err) {
					return
				}
				inner.Go(func() {
					defer hd.Release()
					_, err := produce(hd, per, &ran)
					assert.NoError(t, err)
				})
			}
			first.Release()
			inner.Wait()
		})
		done := make(chan error, 1)
		go func() { done <- runCycle(t, s) }()
		close(started)
		require.NoError(t, <-done)
		assert.Equal(t, int64(4*per), ran.Load(), "every packet ran before Run returned (workers=%d)", workers)
		wg.Wait()
		first.Release() // idempotent
	}
}

// TestHoldStageOrder: a hold on stage 1 keeps stage 2 closed until it is
// released; then stage 2 runs after everything the producer added.
func TestHoldStageOrder(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"walk", "sum"}})
	var walked, seenBySum atomic.Int64
	require.NoError(t, s.Add(Func("sum", func(*Worker) error { seenBySum.Store(walked.Load()); return nil }), StageID(2)))
	hd, err := s.Hold(1)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- runCycle(t, s) }()
	n, err := produce(hd, 3000, &walked)
	require.NoError(t, err)
	waitParked(t, s, 2) // stage 1 drained, the hold keeps stage 2 closed
	assert.Zero(t, seenBySum.Load(), "stage 2 opened under the hold")
	hd.Release()
	require.NoError(t, <-done)
	assert.Equal(t, int64(n), seenBySum.Load(), "stage 2 saw every packet of stage 1")
}

var errHoldBoom = errors.New("boom")

// TestHoldEndsEarly: a failing packet, a cancelled context or Close end
// a held cycle: Run returns, the hold's adds return the cycle's error,
// and every packet added is run or counted dropped.
func TestHoldEndsEarly(t *testing.T) {
	for _, how := range []string{"failure", "cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			s, err := New(Config{Workers: 2})
			require.NoError(t, err)
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran atomic.Int64
			hd, err := s.Hold(1)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() { done <- runCycleCtx(t, s, ctx) }()
			added := 0
			for ; added < 200_000; added++ {
				if added == 2000 {
					switch how {
					case "failure":
						require.NoError(t, hd.Add(Func("boom", func(*Worker) error { return errHoldBoom })))
					case "cancel":
						cancel()
					case "close":
						go s.Close()
					}
				}
				if hd.Add(counter{&ran}) != nil {
					break
				}
			}
			require.Less(t, added, 200_000, "adds went on after the cycle ended")
			runErr := <-done
			require.Error(t, runErr)
			assert.ErrorIs(t, hd.Add(counter{&ran}), hd.Err())
			var ce *CycleError
			require.ErrorAs(t, runErr, &ce)
			if how == "failure" {
				assert.ErrorIs(t, runErr, errHoldBoom)
			}
			s.Close()
			st := s.Stats()
			assert.Equal(t, int64(added), ran.Load()+int64(st.Dropped), "added = ran + dropped (%d ran, %d dropped)", ran.Load(), st.Dropped)
			hd.Release()
		})
	}
}

// TestHoldBoundedPipeline: with MaxQueued and Block, a producer that
// outruns the workers waits for room instead of queuing without bound;
// every packet runs.
func TestHoldBoundedPipeline(t *testing.T) {
	s := newSched(t, Config{Workers: 2, MaxQueued: 64})
	var ran, peak atomic.Int64
	hd, err := s.Hold(1)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- runCycle(t, s) }()
	const n = 20_000
	for range n {
		require.NoError(t, hd.Add(Func("slow", func(*Worker) error {
			ran.Add(1)
			time.Sleep(0) // a little work
			return nil
		}), Block(context.Background())))
		if q := queuedTotal(s.s); q > peak.Load() {
			peak.Store(q)
		}
	}
	hd.Release()
	require.NoError(t, <-done)
	assert.Equal(t, int64(n), ran.Load())
	assert.LessOrEqual(t, peak.Load(), int64(64), "queued packets above MaxQueued")
}

// TestHoldMisuse: stages outside 1..n are ErrInvalid, a hold after Close
// is ErrClosed, and holds of a next cycle that never runs end with
// ErrClosed.
func TestHoldMisuse(t *testing.T) {
	s, err := New(Config{Workers: 1, Stages: []string{"a", "b"}})
	require.NoError(t, err)
	for _, st := range []StageID{0, 3, -1} {
		_, err := s.Hold(st)
		assert.ErrorIs(t, err, ErrInvalid, "stage %d", st)
	}
	hd, err := s.Hold(2)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.ErrorIs(t, hd.Err(), ErrClosed)
	assert.ErrorIs(t, hd.Add(Func("late", func(*Worker) error { return nil })), ErrClosed)
	_, err = s.Hold(1)
	assert.ErrorIs(t, err, ErrClosed)
	hd.Release()

	// An add after Release is an error, and queues nothing.
	s2 := newSched(t, Config{Workers: 1})
	var n atomic.Int64
	hd2, err := s2.Hold(1)
	require.NoError(t, err)
	hd2.Release()
	hd2.Release() // idempotent
	assert.ErrorIs(t, hd2.Add(counter{&n}), ErrInvalid)
	assert.ErrorContains(t, hd2.AddAll(counters(2, &n)), "after Release")
	require.NoError(t, runCycle(t, s2))
	assert.Zero(t, n.Load())
}

// TestHoldBlockedAddEndsWithCycle: a producer waiting for room under
// MaxQueued (Block) when its cycle is cancelled stops waiting and gets the
// cycle's error; its packet is not queued for the next cycle, which runs
// only its own packets; every add that returned nil ran or was dropped.
func TestHoldBlockedAddEndsWithCycle(t *testing.T) {
	for trial := range 20 {
		s := newSched(t, Config{Workers: 2, MaxQueued: 2})
		var ran atomic.Int64
		release := make(chan struct{})
		started := make(chan struct{}, 8)
		blocker := Func("blocker", func(w *Worker) error {
			started <- struct{}{}
			<-release
			return nil
		})
		hd, err := s.Hold(1)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		// Two blockers take both workers; two counters fill the queue;
		// the next add waits for room.
		require.NoError(t, hd.Add(blocker))
		require.NoError(t, hd.Add(blocker))
		<-started
		<-started
		require.NoError(t, hd.Add(counter{&ran}))
		require.NoError(t, hd.Add(counter{&ran}))
		added := make(chan error, 1)
		go func() { added <- hd.Add(counter{&ran}, Block(bg)) }()
		waitUntil(t, "the add to wait for room", func() bool { return s.s.waiters.Load() == 1 })
		cancel()
		// Once the cycle is ending the workers take nothing more, so the
		// waiting add can only stop.
		waitUntil(t, "the hold to stop", hd.stopping.Load)
		close(release)
		addErr := recvWithin(t, added)
		runErr := recvWithin(t, done)
		require.ErrorIs(t, runErr, context.Canceled, "trial %d", trial)
		require.ErrorIs(t, addErr, context.Canceled, "the waiting add gets the cycle's error")
		var ce *CycleError
		require.ErrorAs(t, runErr, &ce)
		st := s.Stats()
		assert.Equal(t, uint64(4), st.Ran+st.Dropped, "trial %d: the four added packets ran or were dropped", trial)
		hd.Release()
		// The next cycle runs nothing left over.
		ran.Store(0)
		require.NoError(t, runCycle(t, s))
		assert.Zero(t, ran.Load(), "trial %d: nothing leaked into the next cycle", trial)
		assert.Equal(t, uint64(4), s.Stats().Ran+s.Stats().Dropped)
	}
}

// TestHoldProducersRacingClose: four producers add through holds of
// their own while Close ends the cycle: every add that succeeded is run
// or counted dropped, and every producer's adds fail from then on.
func TestHoldProducersRacingClose(t *testing.T) {
	for trial := range 5 {
		s, err := New(Config{Workers: 2})
		require.NoError(t, err)
		var ran, added atomic.Int64
		var wg sync.WaitGroup
		holds := make([]*Hold, 4)
		for i := range holds {
			holds[i], err = s.Hold(1)
			require.NoError(t, err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run(context.Background()) }()
		for _, hd := range holds {
			wg.Go(func() {
				for {
					if hd.Add(counter{&ran}) != nil {
						return
					}
					if added.Add(1) == 4000 {
						go s.Close()
					}
				}
			})
		}
		wg.Wait()
		require.Error(t, <-done)
		require.NoError(t, s.Close())
		st := s.Stats()
		assert.Equal(t, added.Load(), ran.Load()+int64(st.Dropped), "trial %d: added = ran + dropped", trial)
	}
}
