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
)

// TestMaxQueuedFull: with Config.MaxQueued, Add and AddAll fail with
// ErrQueueFull once that many packets are queued (every stage and lane
// counts), queueing nothing; an AddAll is admitted only if all of it
// fits, one bigger than the bound is invalid; taken packets make room
// again.
func TestMaxQueuedFull(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1, MaxQueued: 4, Stages: []string{"one", "two"}})
	var n atomic.Int64
	require.NoError(t, s.Add(v1Count{&n}))
	require.NoError(t, s.Add(v1Count{&n}, Priority))
	require.NoError(t, s.Add(v1Count{&n}, StageID(2)))
	require.NoError(t, s.AddAll(v1Counts(1, &n), Lend))
	assert.EqualValues(t, 4, s.s.nQueued.Load())
	for name, err := range map[string]error{
		"Add":          s.Add(v1Count{&n}),
		"Add/priority": s.Add(v1Count{&n}, Priority),
		"Add/stage 2":  s.Add(v1Count{&n}, StageID(2)),
		"AddAll":       s.AddAll(v1Counts(2, &n)),
		"AddAll/Lend":  s.AddAll(v1Counts(2, &n), Lend),
	} {
		assert.ErrorIs(t, err, ErrQueueFull, name)
	}
	require.NoError(t, v1Run(t, s))
	assert.EqualValues(t, 4, n.Load())
	assert.Zero(t, s.s.nQueued.Load())

	// Three queued: an AddAll of two would pass the bound, one fits.
	require.NoError(t, s.AddAll(v1Counts(3, &n)))
	assert.ErrorIs(t, s.AddAll(v1Counts(2, &n)), ErrQueueFull)
	assert.ErrorIs(t, s.AddAll(v1Counts(2, &n), Lend), ErrQueueFull)
	require.NoError(t, s.AddAll(v1Counts(1, &n)))
	assert.EqualValues(t, 4, s.s.nQueued.Load())
	assert.ErrorIs(t, s.Add(v1Count{&n}), ErrQueueFull)
	require.NoError(t, v1Run(t, s))
	assert.EqualValues(t, 4+4, n.Load())
	assert.Zero(t, s.s.nQueued.Load())

	// More than the bound in one call can never fit, Block or not.
	for _, opts := range [][]Option{nil, {Lend}, {Block(v1Bg)}} {
		err := s.AddAll(v1Counts(5, &n), opts...)
		assert.ErrorIs(t, err, ErrInvalid, "AddAll of 5 under MaxQueued 4, options %v", opts)
		assert.ErrorContains(t, err, "MaxQueued (4)")
	}
	assert.Zero(t, s.s.nQueued.Load())
}

// TestMaxQueuedAddAllBound: from 7 queued under MaxQueued 8, an AddAll of
// 500 is refused and leaves 7 queued (the bound holds for AddAll too),
// and with Block an AddAll waits until the whole slice fits.
func TestMaxQueuedAddAllBound(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1, MaxQueued: 8})
	var n atomic.Int64
	require.NoError(t, s.AddAll(v1Counts(7, &n)))
	assert.ErrorIs(t, s.AddAll(v1Counts(500, &n)), ErrInvalid)
	assert.ErrorIs(t, s.AddAll(v1Counts(2, &n)), ErrQueueFull)
	assert.EqualValues(t, 7, s.s.nQueued.Load(), "queued")

	added := make(chan error, 1)
	go func() { added <- s.AddAll(v1Counts(8, &n), Block(v1Bg)) }()
	v1WaitFor(t, "the AddAll to wait", func() bool { return s.s.waiters.Load() == 1 })
	assert.EqualValues(t, 7, s.s.nQueued.Load(), "queued while the AddAll waits")
	require.NoError(t, v1Run(t, s)) // takes the 7: the 8 fit
	require.NoError(t, v1Recv(t, added))
	assert.LessOrEqual(t, s.s.nQueued.Load(), int64(8))
	require.NoError(t, v1Run(t, s))
	assert.EqualValues(t, 15, n.Load(), "packets run")
	assert.Zero(t, s.s.nQueued.Load())
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
					if err := s.AddAll(v1Counts(batch, &n)); err != nil {
						assert.ErrorIs(t, err, ErrClosed)
						return
					}
					accepted <- batch
				}
			}()
		}
		runErr := make(chan error, 1)
		go func() { runErr <- s.Run(v1Bg) }()
		waitFor(t, 10*time.Second, func() bool { return n.Load() > 0 || s.s.nQueued.Load() > batch }, "packets queued")
		require.NoError(t, s.Close())
		wg.Wait()
		close(accepted)
		if err := <-runErr; err != nil {
			require.ErrorIs(t, err, ErrClosed, "trial %d", trial)
		}
		require.Zero(t, s.s.nQueued.Load(), "trial %d: queued count after Close", trial)
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
	s := v1Sched(t, Config{Workers: 1, MaxQueued: 2})
	var n atomic.Int64
	added := make(chan struct{})
	// The gate holds the cycle open until the blocked add has returned.
	require.NoError(t, s.Add(Func("gate", func(*Worker) error { <-added; return nil })))
	require.NoError(t, s.Add(v1Count{&n}))
	addErr := make(chan error, 1)
	go func() {
		err := s.Add(v1Count{&n}, Block(v1Bg))
		close(added)
		addErr <- err
	}()
	v1WaitFor(t, "the add to wait", func() bool { return s.s.waiters.Load() == 1 })
	select {
	case <-added:
		t.Fatal("Add with Block returned while the queue was full")
	default:
	}
	require.NoError(t, v1Run(t, s))
	require.NoError(t, v1Recv(t, addErr))
	assert.EqualValues(t, 2, n.Load(), "the waiting add's packet ran in the cycle that made room")
	assert.Zero(t, s.s.waiters.Load())
}

// TestBlockCancelled: a Block add whose context is done, before or while
// it waits, returns the context's cause and queues nothing.
func TestBlockCancelled(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1, MaxQueued: 1})
	var n atomic.Int64
	require.NoError(t, s.Add(v1Count{&n}))

	before := errors.New("v1 cancelled before")
	ctx, cancel := context.WithCancelCause(v1Bg)
	cancel(before)
	assert.ErrorIs(t, s.Add(v1Count{&n}, Block(ctx)), before)
	assert.ErrorIs(t, s.AddAll(v1Counts(1, &n), Block(ctx)), before)

	during := errors.New("v1 cancelled while waiting")
	ctx, cancel = context.WithCancelCause(v1Bg)
	addErr := make(chan error, 1)
	go func() { addErr <- s.AddAll(v1Counts(1, &n), Block(ctx)) }()
	v1WaitFor(t, "the add to wait", func() bool { return s.s.waiters.Load() == 1 })
	cancel(during)
	assert.ErrorIs(t, v1Recv(t, addErr), during)
	assert.Zero(t, s.s.waiters.Load())

	ctx, cancel2 := context.WithTimeout(v1Bg, time.Millisecond)
	defer cancel2()
	assert.ErrorIs(t, s.Add(v1Count{&n}, Block(ctx)), context.DeadlineExceeded)

	assert.EqualValues(t, 1, s.s.nQueued.Load())
	require.NoError(t, v1Run(t, s))
	assert.EqualValues(t, 1, n.Load())
}

// TestBlockClosed: Close ends a waiting Block add with ErrClosed.
func TestBlockClosed(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1, MaxQueued: 1})
	var n atomic.Int64
	require.NoError(t, s.Add(v1Count{&n}))
	addErr := make(chan error, 1)
	go func() { addErr <- s.Add(v1Count{&n}, Block(v1Bg)) }()
	v1WaitFor(t, "the add to wait", func() bool { return s.s.waiters.Load() == 1 })
	require.NoError(t, s.Close())
	assert.ErrorIs(t, v1Recv(t, addErr), ErrClosed)
	assert.ErrorIs(t, s.Add(v1Count{&n}, Block(v1Bg)), ErrClosed)
	assert.EqualValues(t, 1, s.Stats().Dropped)
	assert.Zero(t, n.Load())
}

// TestBlockFromPacket: from a packet, Block never waits (the workers
// could all be waiting): a full queue is ErrQueueFull.
func TestBlockFromPacket(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1, MaxQueued: 1})
	var n atomic.Int64
	var errs []error
	require.NoError(t, s.AddDesignated(0, Func("adder", func(w *Worker) error {
		h := w.Scheduler()
		errs = append(errs,
			h.Add(v1Count{&n}, Block(v1Bg)), // room for one
			h.Add(v1Count{&n}, Block(v1Bg)),
			h.AddAll(v1Counts(1, &n), Block(v1Bg)),
			h.Add(v1Count{&n}, Block(v1Bg), Priority))
		return nil
	})))
	require.NoError(t, v1Run(t, s))
	require.Len(t, errs, 4)
	assert.NoError(t, errs[0])
	for _, err := range errs[1:] {
		assert.ErrorIs(t, err, ErrQueueFull)
	}
	assert.EqualValues(t, 1, n.Load())
}

// v1Spin counts its run in runs[i], samples the queue, and spins for d.
type v1Spin struct {
	i      int
	d      time.Duration
	runs   []atomic.Int32
	sample func()
}

func (p *v1Spin) Run(*Worker) error {
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
			s := v1Sched(t, Config{Workers: 2, MaxQueued: maxQueued})
			total := v1Scale(2000, 8) / batch * batch
			runs := make([]atomic.Int32, total)
			var peak atomic.Int64
			sample := func() {
				q := s.s.nQueued.Load()
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
						ps[j] = &v1Spin{i: i + j, d: 10 * time.Microsecond, runs: runs, sample: sample}
					}
					var err error
					if batch == 1 {
						err = s.Add(ps[0], Block(v1Bg))
					} else {
						err = s.AddAll(ps, Block(v1Bg))
					}
					if err != nil {
						prodErr <- err
						return
					}
					sample()
				}
				prodErr <- nil
			}()
			require.NoError(t, v1Run(t, s))
			require.NoError(t, v1Recv(t, prodErr))
			for i := range runs {
				require.EqualValues(t, 1, runs[i].Load(), "packet %d", i)
			}
			t.Logf("peak queued %d (MaxQueued %d, batch %d)", peak.Load(), maxQueued, batch)
			assert.LessOrEqual(t, peak.Load(), int64(maxQueued+batch-1))
			assert.GreaterOrEqual(t, peak.Load(), int64(maxQueued), "the queue never filled: nothing was held back")
			assert.Zero(t, s.s.nQueued.Load())
			assert.Zero(t, s.s.waiters.Load())
		})
	}
}

// TestUnboundedByDefault: without MaxQueued nothing is counted or
// refused.
func TestUnboundedByDefault(t *testing.T) {
	s := v1Sched(t, Config{Workers: 1})
	var n atomic.Int64
	for range 10_000 {
		require.NoError(t, s.Add(v1Count{&n}, Block(v1Bg)))
	}
	require.NoError(t, s.AddAll(v1Counts(50_000, &n)))
	assert.False(t, s.s.bounded)
	assert.Zero(t, s.s.nQueued.Load())
	require.NoError(t, v1Run(t, s))
	assert.EqualValues(t, 60_000, n.Load())
}
