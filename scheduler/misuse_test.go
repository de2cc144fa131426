package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
)

// Misuse and hostile use: each test here names the failure it guards
// against.

// nilPanic panics with a nil value.
type nilPanic struct{}

func (nilPanic) Run(*Worker) error  { panic(nil) }
func (nilPanic) PacketName() string { return "NilPanic" }

// TestPanicNilUnderPanicnil: with GODEBUG panicnil=1, recover returns nil
// for panic(nil), as it does for runtime.Goexit. A packet at the top of a
// burst that calls panic(nil) must end its cycle with a CycleError naming
// it, and leave exactly Workers worker goroutines, so that the next Run
// works (taken for a Goexit, it made a fifth worker goroutine and the next
// Run crashed in removeIdle). The same for a value packet spawned by a
// packet.
func TestPanicNilUnderPanicnil(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=1")
	const workers = 4
	s := newSched(t, Config{Workers: workers, Stages: []string{"a"}})
	var ran atomic.Int64
	for round := range 6 {
		if round%2 == 0 {
			require.NoError(t, s.Add(nilPanic{}))
		} else {
			require.NoError(t, s.Add(fn(func(w *Worker) { Spawn(w, nilPanic{}) })))
		}
		err := runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce, "round %d", round)
		assert.Equal(t, "NilPanic", ce.Packet)
		assert.True(t, ce.Panicked)
		assert.Nil(t, ce.Value)
		assert.Contains(t, string(ce.Stack), "nilPanic.Run", "the stack starts at the panic")

		// The next cycle runs every packet on a scheduler of workers workers.
		ps := make([]Packet, 1000)
		for i := range ps {
			ps[i] = counter{&ran}
		}
		require.NoError(t, s.AddAll(ps))
		require.NoError(t, runCycle(t, s), "round %d", round)
		require.Equal(t, int64(1000*(round+1)), ran.Load())
		require.Len(t, s.Stats().Workers, workers)
	}
	// goleak (TestMain) finds any extra worker goroutine left after Close.
}

// TestPanicNil: without panicnil=1, panic(nil) is a *runtime.PanicNilError,
// which the cycle's error wraps.
func TestPanicNil(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=0")
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	require.NoError(t, s.Add(nilPanic{}))
	err := runCycle(t, s)
	var pn *runtime.PanicNilError
	require.ErrorAs(t, err, &pn)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "NilPanic", ce.Packet)
	assert.True(t, ce.Panicked)
}

// TestPanicNilInlineUnderPanicnil: a SpawnOrRun child run inline that
// calls panic(nil) under panicnil=1 ends the cycle with a CycleError naming
// the child (taken for a Goexit, the panic was lost: Run returned nil).
func TestPanicNilInlineUnderPanicnil(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=1")
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	var after atomic.Bool
	require.NoError(t, s.Add(fn(func(w *Worker) {
		SpawnOrRun(w, nilPanic{}) // one worker, nobody idle: runs inline
		after.Store(true)
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "NilPanic", ce.Packet)
	assert.True(t, ce.Panicked)
	assert.True(t, after.Load(), "the parent goes on after an inline child's panic, as documented")
	require.NoError(t, runCycle(t, s))
}

// TestCloseFromPacket: Close called from one of the scheduler's own packets
// would wait for its own worker forever; it panics in the packet instead,
// the cycle reports it, and the scheduler stays usable.
func TestCloseFromPacket(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	require.NoError(t, s.Add(fn(func(w *Worker) { w.Scheduler().Close() })))
	err := runCycle(t, s) // the watchdog fails the test on a hang
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.Panicked)
	assert.Contains(t, fmt.Sprint(ce.Value), "Close called from a packet")

	var ran atomic.Int64
	require.NoError(t, s.Add(counter{&ran}))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(1), ran.Load())

	// Close of another scheduler from a packet is fine.
	other, err := New(Config{Workers: 1, Stages: []string{"x"}})
	require.NoError(t, err)
	require.NoError(t, s.Add(fn(func(*Worker) { other.Close() })))
	require.NoError(t, runCycle(t, s))
	assert.ErrorIs(t, other.Run(bg), ErrClosed)
}

// TestAddDesignatedCloseExact: an AddDesignated racing Close either
// returns nil, and its packet is counted in Stats.Dropped, or returns
// ErrClosed and is not counted (it was counted anyway about once in 2,000
// races, when Close drained the queue between the send and the check).
func TestAddDesignatedCloseExact(t *testing.T) {
	iters := scale(2000, 4)
	for i := range iters {
		s, err := New(Config{Workers: 2, Stages: []string{"a"}})
		require.NoError(t, err)
		var accepted atomic.Uint64
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Go(func() {
				for k := 0; ; k++ {
					err := s.AddDesignated((g+k)%2, counter{})
					switch {
					case err == nil:
						accepted.Add(1)
					case errors.Is(err, ErrClosed):
						return
					case errors.Is(err, ErrQueueFull):
						time.Sleep(time.Microsecond) // let Close come
					default:
						assert.NoError(t, err, "AddDesignated")
						return
					}
				}
			})
		}
		if i%2 == 1 {
			time.Sleep(time.Duration(i%7) * time.Microsecond) // vary the race
		}
		require.NoError(t, s.Close())
		wg.Wait()
		require.Equal(t, accepted.Load(), s.Stats().Dropped, "iteration %d", i)
	}
}

// TestWorkerOutsidePacket: a *Worker kept past its packet's Run is refused
// with a panic. Before, Spawn on a worker kept from a stage-2 packet and
// called between cycles ran the packet first in the next cycle, before
// stage 1; after Close, or from another scheduler's packet, the packet
// never ran and was not counted as dropped.
func TestWorkerOutsidePacket(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}})
	var kept *Worker
	require.NoError(t, s.Add(fn(func(w *Worker) { kept = w }), StageID(2)))
	require.NoError(t, runCycle(t, s))
	require.NotNil(t, kept)
	var ran atomic.Int64
	outside := func(op string) string {
		return "scheduler: " + op + " on worker " + fmt.Sprint(kept.ID()) +
			" outside its packet: a *Worker is valid only inside the Run call that received it"
	}

	// Between cycles.
	require.PanicsWithValue(t, outside("Spawn"), func() { Spawn(kept, counter{&ran}) })
	require.PanicsWithValue(t, outside("SpawnOrRun"), func() { SpawnOrRun(kept, counter{&ran}) })
	require.PanicsWithValue(t, outside("Join"), func() { Join(kept, counter{&ran}) })
	require.PanicsWithValue(t, outside("Context"), func() { kept.Context() })

	// The next cycle runs stage 1 first and only what was added.
	var order []string
	var mu sync.Mutex
	note := func(s string) Packet {
		return fn(func(*Worker) { mu.Lock(); order = append(order, s); mu.Unlock() })
	}
	require.NoError(t, s.Add(note("a")))
	require.NoError(t, s.Add(note("b"), StageID(2)))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, []string{"a", "b"}, order)

	// From another scheduler's packet: that packet panics, its cycle says so.
	other := newSched(t, Config{Workers: 1, Stages: []string{"x"}})
	require.NoError(t, other.Add(fn(func(*Worker) { Spawn(kept, counter{&ran}) })))
	err := runCycle(t, other)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, fmt.Sprint(ce.Value), "outside its packet")

	// After Close.
	require.NoError(t, s.Close())
	require.Panics(t, func() { Spawn(kept, counter{&ran}) })
	assert.Equal(t, int64(0), ran.Load())
	assert.Equal(t, uint64(0), s.Stats().Dropped)
}

// TestWakeOptionInvalid: a wake option must be a wake policy: a
// WakePolicy value outside the family (made by a conversion) is refused
// per call as New refuses it in Config.Wake (WithWake(200) was silently
// ignored), and nothing is queued.
func TestWakeOptionInvalid(t *testing.T) {
	_, err := New(Config{Workers: 1, Stages: []string{"a"}, Wake: 200})
	require.ErrorIs(t, err, ErrInvalid)

	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	var ran atomic.Int64
	ps := []Packet{counter{&ran}, counter{&ran}}
	require.ErrorIs(t, s.AddAll(ps, WakePolicy(200)), ErrInvalid)
	require.ErrorIs(t, s.AddAll(ps, Priority, WakePolicy(StealHalf)), ErrInvalid)
	require.ErrorIs(t, s.AddAll(ps, Lend, WakePolicy(200)), ErrInvalid)
	require.ErrorIs(t, s.Add(ps[0], WakePolicy(200)), ErrInvalid)
	require.ErrorIs(t, s.Add(ps[0], Unconstrained, WakePolicy(StealOne)), ErrInvalid)
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(0), ran.Load())
	require.NoError(t, s.AddAll(ps, WakeAll))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(2), ran.Load())
}

// TestTracerOneScheduler: a Recorder records one Scheduler; a second New
// with it is refused (both wrote the same worker buffers, and the mixed
// trace still passed the Perfetto check).
func TestTracerOneScheduler(t *testing.T) {
	rec := trace.NewRecorder(2, trace.Options{MaxBytes: 1 << 16})
	newSched(t, Config{Workers: 2, Stages: []string{"a"}, Tracer: rec})
	_, err := New(Config{Workers: 2, Stages: []string{"a"}, Tracer: rec})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "another Scheduler")
	// A refused Config does not claim its recorder.
	rec2 := trace.NewRecorder(2, trace.Options{MaxBytes: 1 << 16})
	_, err = New(Config{Workers: 2, Tracer: rec2, BucketBatch: -1})
	require.ErrorIs(t, err, ErrInvalid)
	newSched(t, Config{Workers: 2, Stages: []string{"a"}, Tracer: rec2})
}

// TestRunCancelledRunsNone: Run with a context cancelled before it starts
// runs no packet (it ran one before aborting) and drops them all.
func TestRunCancelledRunsNone(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}})
	var ran atomic.Int64
	ctx, cancel := context.WithCancel(bg)
	cancel()
	for round := range 100 {
		for range 50 {
			require.NoError(t, s.Add(counter{&ran}))
			require.NoError(t, s.Add(counter{&ran}, StageID(2)))
		}
		err := s.Run(ctx)
		var ce *CycleError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, context.Canceled)
		require.Equal(t, uint64(100), ce.Dropped, "round %d", round)
		require.Equal(t, int64(0), ran.Load(), "round %d", round)
	}
	require.NoError(t, s.Add(counter{&ran}))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(1), ran.Load())
}
