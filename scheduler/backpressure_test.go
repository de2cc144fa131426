package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/watchdog"
)

// TestMaxQueuedFull: with Config.MaxQueued, Add and AddAll fail with
// ErrQueueFull once that many packets are queued in the stage they add to
// (both lanes count; each stage has its own bound), queueing nothing; an
// AddAll is admitted only if all of it fits, one bigger than the bound is
// invalid; taken packets make room again.
func TestMaxQueuedFull(t *testing.T) {
	s := newSched(t, Config{Workers: 1, MaxQueued: 4, Stages: []string{"one", "two"}})
	var n atomic.Int64
	require.NoError(t, s.Add(counter{&n}))
	require.NoError(t, s.Add(counter{&n}, Priority))
	require.NoError(t, s.AddAll(counters(2, &n), Lend))
	require.NoError(t, s.AddAll(counters(3, &n), StageID(2)))
	assert.EqualValues(t, 4+3, queuedTotal(s.s))
	for name, err := range map[string]error{
		"Add":                 s.Add(counter{&n}),
		"Add/priority":        s.Add(counter{&n}, Priority),
		"AddAll":              s.AddAll(counters(2, &n)),
		"AddAll/Lend":         s.AddAll(counters(2, &n), Lend),
		"AddAll/stage 2 of 2": s.AddAll(counters(2, &n), StageID(2)),
	} {
		assert.ErrorIs(t, err, ErrQueueFull, name)
	}
	require.NoError(t, s.Add(counter{&n}, StageID(2)), "stage 2 has room for one more")
	assert.ErrorIs(t, s.Add(counter{&n}, StageID(2)), ErrQueueFull)
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 8, n.Load())
	assert.Zero(t, queuedTotal(s.s))
	n.Store(4)

	// Three queued: an AddAll of two would pass the bound, one fits.
	require.NoError(t, s.AddAll(counters(3, &n)))
	assert.ErrorIs(t, s.AddAll(counters(2, &n)), ErrQueueFull)
	assert.ErrorIs(t, s.AddAll(counters(2, &n), Lend), ErrQueueFull)
	require.NoError(t, s.AddAll(counters(1, &n)))
	assert.EqualValues(t, 4, queuedTotal(s.s))
	assert.ErrorIs(t, s.Add(counter{&n}), ErrQueueFull)
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 4+4, n.Load())
	assert.Zero(t, queuedTotal(s.s))

	// More than the bound in one call can never fit, Block or not.
	for _, opts := range [][]Option{nil, {Lend}, {Block(bg)}} {
		err := s.AddAll(counters(5, &n), opts...)
		assert.ErrorIs(t, err, ErrInvalid, "AddAll of 5 under MaxQueued 4, options %v", opts)
		assert.ErrorContains(t, err, "MaxQueued (4)")
	}
	assert.Zero(t, queuedTotal(s.s))
}

// TestMaxQueuedAddAllBound: from 7 queued under MaxQueued 8, an AddAll of
// 500 is refused and leaves 7 queued (the bound holds for AddAll too),
// and with Block an AddAll waits until the whole slice fits.
func TestMaxQueuedAddAllBound(t *testing.T) {
	s := newSched(t, Config{Workers: 1, MaxQueued: 8})
	var n atomic.Int64
	require.NoError(t, s.AddAll(counters(7, &n)))
	assert.ErrorIs(t, s.AddAll(counters(500, &n)), ErrInvalid)
	assert.ErrorIs(t, s.AddAll(counters(2, &n)), ErrQueueFull)
	assert.EqualValues(t, 7, queuedTotal(s.s), "queued")

	added := make(chan error, 1)
	go func() { added <- s.AddAll(counters(8, &n), Block(bg)) }()
	waitUntil(t, "the AddAll to wait", func() bool { return s.s.waiters.Load() == 1 })
	assert.EqualValues(t, 7, queuedTotal(s.s), "queued while the AddAll waits")
	require.NoError(t, runCycle(t, s)) // takes the 7: the 8 fit
	require.NoError(t, recvWithin(t, added))
	assert.LessOrEqual(t, queuedTotal(s.s), int64(8))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 15, n.Load(), "packets run")
	assert.Zero(t, queuedTotal(s.s))
}

// TestAddAllRacingCloseCount: AddAlls racing Close leave the queued count
// at zero once Close returned and every AddAll has: each packet admitted
// is taken, dropped by Close (and counted in Stats.Dropped) or refused,
// and leaves the count once. Every packet is accounted for.
func TestAddAllRacingCloseCount(t *testing.T) {
	const producers, batch = 4, 4096
	for trial := range scale(20, 4) {
		s, err := New(Config{Workers: 2, MaxQueued: 1 << 30})
		require.NoError(t, err)
		var n atomic.Int64
		accepted := make(chan int, producers*64)
		var wg sync.WaitGroup
		for range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 64 {
					if err := s.AddAll(counters(batch, &n)); err != nil {
						assert.ErrorIs(t, err, ErrClosed)
						return
					}
					accepted <- batch
				}
			}()
		}
		runErr := make(chan error, 1)
		go func() { runErr <- s.Run(bg) }()
		waitFor(t, 10*time.Second, func() bool { return n.Load() > 0 || queuedTotal(s.s) > batch }, "packets queued")
		require.NoError(t, s.Close())
		wg.Wait()
		close(accepted)
		if err := <-runErr; err != nil {
			require.ErrorIs(t, err, ErrClosed, "trial %d", trial)
		}
		require.Zero(t, queuedTotal(s.s), "trial %d: queued count after Close", trial)
		total := 0
		for k := range accepted {
			total += k
		}
		st := s.Stats()
		// Accepted packets ran or were dropped; a partly queued AddAll's
		// queued runs were dropped too, so Dropped may exceed the rest.
		require.GreaterOrEqual(t, uint64(n.Load())+st.Dropped, uint64(total), "trial %d: run + dropped", trial)
	}
}

// TestBlockWaitsForRoom: with Block, an add to a full queue waits until a
// worker takes a packet, then queues.
func TestBlockWaitsForRoom(t *testing.T) {
	s := newSched(t, Config{Workers: 1, MaxQueued: 2})
	var n atomic.Int64
	added := make(chan struct{})
	// The gate holds the cycle open until the blocked add has returned.
	require.NoError(t, s.Add(Func("gate", func(*Worker) error { <-added; return nil })))
	require.NoError(t, s.Add(counter{&n}))
	addErr := make(chan error, 1)
	go func() {
		err := s.Add(counter{&n}, Block(bg))
		close(added)
		addErr <- err
	}()
	waitUntil(t, "the add to wait", func() bool { return s.s.waiters.Load() == 1 })
	select {
	case <-added:
		require.Fail(t, "Add with Block returned while the queue was full")
	default:
	}
	require.NoError(t, runCycle(t, s))
	require.NoError(t, recvWithin(t, addErr))
	assert.EqualValues(t, 2, n.Load(), "the waiting add's packet ran in the cycle that made room")
	assert.Zero(t, s.s.waiters.Load())
}

// TestBlockCancelled: a Block add whose context is done, before or while
// it waits, returns the context's cause and queues nothing.
func TestBlockCancelled(t *testing.T) {
	s := newSched(t, Config{Workers: 1, MaxQueued: 1})
	var n atomic.Int64
	require.NoError(t, s.Add(counter{&n}))

	before := errors.New("cancelled before")
	ctx, cancel := context.WithCancelCause(bg)
	cancel(before)
	assert.ErrorIs(t, s.Add(counter{&n}, Block(ctx)), before)
	assert.ErrorIs(t, s.AddAll(counters(1, &n), Block(ctx)), before)

	during := errors.New("cancelled while waiting")
	ctx, cancel = context.WithCancelCause(bg)
	addErr := make(chan error, 1)
	go func() { addErr <- s.AddAll(counters(1, &n), Block(ctx)) }()
	waitUntil(t, "the add to wait", func() bool { return s.s.waiters.Load() == 1 })
	cancel(during)
	assert.ErrorIs(t, recvWithin(t, addErr), during)
	assert.Zero(t, s.s.waiters.Load())

	ctx, cancel2 := context.WithTimeout(bg, time.Millisecond)
	defer cancel2()
	assert.ErrorIs(t, s.Add(counter{&n}, Block(ctx)), context.DeadlineExceeded)

	assert.EqualValues(t, 1, queuedTotal(s.s))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 1, n.Load())
}

// TestBlockClosed: Close ends a waiting Block add with ErrClosed.
func TestBlockClosed(t *testing.T) {
	s := newSched(t, Config{Workers: 1, MaxQueued: 1})
	var n atomic.Int64
	require.NoError(t, s.Add(counter{&n}))
	addErr := make(chan error, 1)
	go func() { addErr <- s.Add(counter{&n}, Block(bg)) }()
	waitUntil(t, "the add to wait", func() bool { return s.s.waiters.Load() == 1 })
	require.NoError(t, s.Close())
	assert.ErrorIs(t, recvWithin(t, addErr), ErrClosed)
	assert.ErrorIs(t, s.Add(counter{&n}, Block(bg)), ErrClosed)
	assert.EqualValues(t, 1, s.Stats().Dropped)
	assert.Zero(t, n.Load())
}

// TestBlockFromPacket: from a packet, Block never waits (the workers
// could all be waiting): a full queue is ErrQueueFull.
func TestBlockFromPacket(t *testing.T) {
	s := newSched(t, Config{Workers: 1, MaxQueued: 1})
	var n atomic.Int64
	var errs []error
	require.NoError(t, s.AddDesignated(0, Func("adder", func(w *Worker) error {
		h := w.Scheduler()
		errs = append(errs,
			h.Add(counter{&n}, Block(bg)), // room for one
			h.Add(counter{&n}, Block(bg)),
			h.AddAll(counters(1, &n), Block(bg)),
			h.Add(counter{&n}, Block(bg), Priority))
		return nil
	})))
	require.NoError(t, runCycle(t, s))
	require.Len(t, errs, 4)
	assert.NoError(t, errs[0])
	for _, err := range errs[1:] {
		assert.ErrorIs(t, err, ErrQueueFull)
	}
	assert.EqualValues(t, 1, n.Load())
}

// spinPacket counts its run in runs[i], samples the queue, and spins for d.
type spinPacket struct {
	i      int
	d      time.Duration
	runs   []atomic.Int32
	sample func()
}

func (p *spinPacket) Run(*Worker) error {
	p.runs[p.i].Add(1)
	p.sample()
	for start := time.Now(); time.Since(start) < p.d; {
	}
	return nil
}

// TestBackpressureProducer: a producer that adds with Block about a
// hundred times faster than the workers run the packets keeps the queue
// at MaxQueued (plus one AddAll's packets less one) and never above;
// every packet runs exactly once.
func TestBackpressureProducer(t *testing.T) {
	const maxQueued = 16
	for _, batch := range []int{1, 4} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			s := newSched(t, Config{Workers: 2, MaxQueued: maxQueued})
			total := scale(2000, 8) / batch * batch
			runs := make([]atomic.Int32, total)
			var peak atomic.Int64
			sample := func() {
				q := queuedTotal(s.s)
				for p := peak.Load(); q > p && !peak.CompareAndSwap(p, q); p = peak.Load() {
				}
			}
			done := make(chan struct{})
			// The holder keeps the cycle open until the producer is done.
			require.NoError(t, s.AddDesignated(0, Func("holder", func(w *Worker) error {
				select {
				case <-done:
				case <-w.Context().Done():
				}
				return nil
			})))
			prodErr := make(chan error, 1)
			go func() {
				defer close(done)
				for i := 0; i < total; i += batch {
					ps := make([]Packet, batch)
					for j := range ps {
						ps[j] = &spinPacket{i: i + j, d: 10 * time.Microsecond, runs: runs, sample: sample}
					}
					var err error
					if batch == 1 {
						err = s.Add(ps[0], Block(bg))
					} else {
						err = s.AddAll(ps, Block(bg))
					}
					if err != nil {
						prodErr <- err
						return
					}
					sample()
				}
				prodErr <- nil
			}()
			require.NoError(t, runCycle(t, s))
			require.NoError(t, recvWithin(t, prodErr))
			for i := range runs {
				if c := runs[i].Load(); c != 1 { // plain test first: testify per packet is slow
					require.EqualValues(t, 1, c, "packet %d", i)
				}
			}
			t.Logf("peak queued %d (MaxQueued %d, batch %d)", peak.Load(), maxQueued, batch)
			assert.LessOrEqual(t, peak.Load(), int64(maxQueued+batch-1))
			assert.GreaterOrEqual(t, peak.Load(), int64(maxQueued), "the queue never filled: nothing was held back")
			assert.Zero(t, queuedTotal(s.s))
			assert.Zero(t, s.s.waiters.Load())
		})
	}
}

// TestUnboundedByDefault: without MaxQueued nothing is counted or
// refused.
func TestUnboundedByDefault(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var n atomic.Int64
	for range 10_000 {
		require.NoError(t, s.Add(counter{&n}, Block(bg)))
	}
	require.NoError(t, s.AddAll(counters(50_000, &n)))
	assert.False(t, s.s.bounded)
	assert.Zero(t, queuedTotal(s.s))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 60_000, n.Load())
}

// queuedTotal sums the queued counts of every stage.
func queuedTotal(s *sched) int64 {
	var q int64
	for i := range s.nQueued {
		q += s.nQueued[i].n.Load()
	}
	return q
}

// TestMaxQueuedLaterStageDoesNotBlockHold: a packet queued up front for a
// later stage (the aggregate of a streaming job) does not take the room a
// producer holding the open stage waits for: under MaxQueued 1 a Hold's
// blocking adds stream through stage 1 while stage 2 holds its packet.
func TestMaxQueuedLaterStageDoesNotBlockHold(t *testing.T) {
	const adds = 100
	for _, workers := range []int{1, 2} {
		s := newSched(t, Config{Workers: workers, MaxQueued: 1, Stages: []string{"stream", "after"}})
		var n, after atomic.Int64
		require.NoError(t, s.Add(counter{&after}, StageID(2)))
		hold, err := s.Hold(1)
		require.NoError(t, err)
		ran := make(chan error, 1)
		go func() { ran <- s.Run(bg) }()
		var addErr error
		watchdog.Watch(t, 30*time.Second, func() {
			for range adds {
				if addErr = hold.Add(counter{&n}, Block(bg)); addErr != nil {
					return
				}
			}
		})
		require.NoError(t, addErr)
		assert.Zero(t, after.Load(), "stage 2 waits for the hold")
		hold.Release()
		require.NoError(t, recvWithin(t, ran))
		assert.EqualValues(t, adds, n.Load())
		assert.EqualValues(t, 1, after.Load())
	}
}
