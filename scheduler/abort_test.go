package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type boom struct{}

func (boom) Run(*Worker) error { panic("boom") }

var errNamedBoom = errors.New("named boom")

type namedBoom struct{}

func (namedBoom) Run(*Worker) error  { panic(errNamedBoom) }
func (namedBoom) PacketName() string { return "NamedBoom" }

// TestPanic: the first panic ends the cycle with a *CycleError carrying the
// packet, stage, worker, value and stack; queued packets are dropped and
// counted; the next cycle runs normally.
func TestPanic(t *testing.T) {
	s := newSched(t, Config{Workers: 3, Stages: []string{"a", "b"}})
	var ran atomic.Int64
	const later = 1000
	ps := make([]Packet, later)
	for i := range ps {
		ps[i] = counter{&ran}
	}
	require.NoError(t, s.AddAll(ps, StageID(2)))
	require.NoError(t, s.Add(boom{}))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "scheduler.boom", ce.Packet)
	assert.Equal(t, "boom", ce.Value)
	assert.True(t, ce.Panicked)
	assert.Equal(t, StageID(1), ce.Stage)
	assert.Equal(t, "a", ce.StageName)
	assert.True(t, ce.Worker >= 0 && ce.Worker < 3, "Worker %d", ce.Worker)
	assert.Equal(t, uint64(1), ce.Cycle)
	assert.Contains(t, string(ce.Stack), "scheduler.boom.Run", "the stack shows the panicking frame")
	assert.Equal(t, uint64(later), ce.Dropped)
	assert.Equal(t, int64(0), ran.Load())
	assert.Contains(t, ce.Error(), "boom")
	assert.Contains(t, ce.Error(), "panicked")
	st := s.Stats()
	assert.Equal(t, uint64(1), st.Aborted)
	assert.Equal(t, uint64(later), st.Dropped)
	var panics uint64
	for _, w := range st.Workers {
		panics += w.Panics
	}
	assert.Equal(t, uint64(1), panics)

	// The next cycle works, and a Namer's name and an error value come through.
	require.NoError(t, s.AddAll(ps[:10]))
	require.NoError(t, runCycle(t, s), "cycle after panic")
	require.Equal(t, int64(10), ran.Load())
	require.NoError(t, s.Add(namedBoom{}, Unconstrained))
	err = runCycle(t, s)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "NamedBoom", ce.Packet)
	assert.Equal(t, Unconstrained, ce.Stage)
	assert.Equal(t, "Unconstrained", ce.StageName)
	assert.Equal(t, uint64(3), ce.Cycle)
	assert.ErrorIs(t, err, errNamedBoom, "a panic with an error value unwraps to it")
}

var errFail = errors.New("packet failed")

// failAfter is a value packet that fails after spawning a child.
type failAfter struct{ ran *atomic.Int64 }

func (f failAfter) Run(w *Worker) error {
	Spawn(w, counter{f.ran})
	return fmt.Errorf("wrapped: %w", errFail)
}

// TestPacketError: a packet that returns an error ends the cycle like a
// panic, without the panic fields: Run's *CycleError names it (its Func
// name, or the type of a value packet) and wraps its error; what it
// spawned and everything queued is dropped and counted; Stats count the
// packet as run and as failed.
func TestPacketError(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}})
	var ran atomic.Int64
	require.NoError(t, s.AddAll([]Packet{counter{&ran}, counter{&ran}}, StageID(2)))
	require.NoError(t, s.Add(Func("failer", func(*Worker) error { return errFail })))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, errFail)
	assert.Equal(t, errFail, ce.Err)
	assert.Equal(t, "failer", ce.Packet)
	assert.False(t, ce.Panicked)
	assert.Nil(t, ce.Value)
	assert.Nil(t, ce.Stack)
	assert.Equal(t, StageID(1), ce.Stage)
	assert.Equal(t, uint64(2), ce.Dropped)
	assert.Contains(t, ce.Error(), "packet failer (stage a) failed on worker")
	assert.Equal(t, int64(0), ran.Load())
	st := s.Stats()
	var failed, panics uint64
	for _, w := range st.Workers {
		failed += w.Failed
		panics += w.Panics
	}
	assert.Equal(t, uint64(1), failed)
	assert.Equal(t, uint64(0), panics)
	assert.Equal(t, uint64(1), st.Ran, "a failing packet counts as run")

	// A value packet spawned by a packet: named by its type; its child
	// is dropped.
	require.NoError(t, s.Add(fn(func(w *Worker) { Spawn(w, failAfter{&ran}) })))
	err = runCycle(t, s)
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, errFail)
	assert.Equal(t, "scheduler.failAfter", ce.Packet)
	assert.Equal(t, uint64(1), ce.Dropped, "the failing packet's child")
	assert.Equal(t, int64(0), ran.Load())

	// The next cycle runs what it is given.
	require.NoError(t, s.Add(counter{&ran}, StageID(2)))
	require.NoError(t, runCycle(t, s))
	assert.Equal(t, int64(1), ran.Load())
}

// TestPanicStopsOthers: while one packet panics, the other workers are in
// long spawn chains; they stop between packets and their local packets
// are dropped and counted.
func TestPanicStopsOthers(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	var ran atomic.Int64
	spin := fn(nil)
	spin = func(w *Worker) {
		ran.Add(1)
		Spawn(w, spin)
		Spawn(w, spin) // the deque grows: surplus for the others to steal
	}
	require.NoError(t, s.Add(spin))
	// The panicking packet is designated for worker 1: a worker runs its
	// designated packets between any two packets, so it starts even if
	// both workers are deep in spawn chains. (Queued in the bucket, it
	// could wait for ever: a worker whose own queue never empties need
	// not go back to the bucket, and once in 800 race runs neither did.)
	// It panics once the chains have run a while, so that queued packets
	// are there to drop.
	require.NoError(t, s.AddDesignated(1, fn(func(w *Worker) {
		for deadline := time.Now().Add(10 * time.Second); ran.Load() < 1000 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
		panic("stop")
	})))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "stop", ce.Value)
	require.GreaterOrEqual(t, ran.Load(), int64(1000), "the chains ran before the panic")
	st := s.Stats()
	var workerDropped uint64
	for _, w := range st.Workers {
		workerDropped += w.Dropped
	}
	assert.NotZero(t, ce.Dropped)
	assert.NotZero(t, workerDropped)
	assert.LessOrEqual(t, workerDropped, ce.Dropped)
	assert.Equal(t, st.Dropped, ce.Dropped, "CycleError.Dropped and Stats.Dropped")
}

// TestGoexit: a packet calling runtime.Goexit (t.FailNow in a packet)
// aborts the cycle like a panic, and the worker keeps going.
func TestGoexit(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	require.NoError(t, s.Add(fn(func(*Worker) { runtime.Goexit() })))
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.Panicked)
	assert.Contains(t, ce.Error(), "Goexit")
	assert.Equal(t, "scheduler.fn", ce.Packet)
	var n atomic.Int64
	for range 100 {
		require.NoError(t, s.Add(counter{&n}))
	}
	require.NoError(t, runCycle(t, s), "after Goexit")
	require.Equal(t, int64(100), n.Load())
	require.Len(t, s.Stats().Workers, 2)

	// A value packet spawned by a packet is named by its value.
	require.NoError(t, s.Add(fn(func(w *Worker) { Spawn(w, ssExit{}) })))
	err = runCycle(t, s)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "SSExit", ce.Packet)
	require.NoError(t, s.Add(counter{&n}))
	require.NoError(t, runCycle(t, s), "after the second Goexit")
	require.Equal(t, int64(101), n.Load())
}

// TestCancel: cancelling the context ends the cycle once the running
// packets return, with a *CycleError wrapping the context's cause and
// error and the count of dropped packets; the next cycle runs normally.
func TestCancel(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}})
	var ran atomic.Int64
	forever := fn(nil)
	forever = func(w *Worker) {
		ran.Add(1)
		Spawn(w, forever)
		Spawn(w, forever)
	}
	require.NoError(t, s.Add(forever))
	require.NoError(t, s.AddAll([]Packet{counter{&ran}, counter{&ran}, counter{&ran}}, StageID(2)))
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	var err error
	watch(t, 30*time.Second, func() { err = s.Run(ctx) })
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "", ce.Packet, "ended from outside")
	assert.Equal(t, -1, ce.Worker)
	assert.GreaterOrEqual(t, ce.Dropped, uint64(3))
	assert.Equal(t, uint64(1), ce.Cycle)
	st := s.Stats()
	assert.Equal(t, ce.Dropped, st.Dropped)
	assert.Equal(t, uint64(1), st.Aborted)

	// A cause of its own: Run's error wraps both the cause and Canceled.
	errMine := errors.New("my cause")
	ctx2, cancel2 := context.WithCancelCause(bg)
	require.NoError(t, s.Add(counter{&ran}))
	cancel2(errMine)
	watch(t, 30*time.Second, func() { err = s.Run(ctx2) })
	require.ErrorIs(t, err, errMine)
	require.ErrorIs(t, err, context.Canceled)

	// The next cycle runs normally; nothing of the cancelled ones is left.
	ran.Store(0)
	require.NoError(t, s.Add(counter{&ran}, StageID(2)))
	require.NoError(t, runCycle(t, s), "after cancel")
	require.Equal(t, int64(1), ran.Load())
}

// TestWorkerContext: Worker.Context is the cycle's context: derived from
// Run's (its values), cancelled with the cycle's *CycleError as cause
// when a packet fails, so a packet that waits can stop; cancelled when
// the cycle ends; a fresh one each cycle; refused outside a packet.
func TestWorkerContext(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	type key struct{}
	ctx := context.WithValue(bg, key{}, "v")
	started := make(chan struct{})
	var cause error
	var value any
	var kept context.Context
	var keptW *Worker
	require.NoError(t, s.AddAll([]Packet{
		fn(func(w *Worker) {
			c := w.Context()
			kept, keptW, value = c, w, c.Value(key{})
			close(started)
			select {
			case <-c.Done():
				cause = context.Cause(c)
			case <-time.After(10 * time.Second):
			}
		}),
		Func("failer", func(w *Worker) error {
			<-started
			return errFail
		}),
	}))
	var err error
	watch(t, 30*time.Second, func() { err = s.Run(ctx) })
	require.ErrorIs(t, err, errFail)
	assert.Equal(t, "v", value, "the cycle's context carries Run's values")
	var ce *CycleError
	require.ErrorAs(t, cause, &ce, "the waiting packet saw the cycle's cause")
	assert.Equal(t, "failer", ce.Packet)
	require.Error(t, kept.Err(), "cancelled once the cycle ended")
	assert.PanicsWithValue(t, fmt.Sprintf("scheduler: Context on worker %d outside its packet: a *Worker is valid only inside the Run call that received it", keptW.ID()),
		func() { keptW.Context() })

	// A cycle that ends normally: its context is cancelled afterwards
	// (context.Canceled), and the next cycle's is a new, live one.
	var c1, c2 context.Context
	var live bool
	require.NoError(t, s.Add(fn(func(w *Worker) { c1 = w.Context() })))
	require.NoError(t, runCycle(t, s))
	require.ErrorIs(t, c1.Err(), context.Canceled)
	assert.Equal(t, context.Canceled, context.Cause(c1))
	require.NoError(t, s.Add(fn(func(w *Worker) { c2 = w.Context(); live = c2.Err() == nil })))
	require.NoError(t, runCycle(t, s))
	assert.True(t, live, "a new cycle's context is live")
	assert.NotSame(t, c1, c2)
}

// TestMisuse: every misuse returns an error or panics with a "scheduler:"
// message; none hangs or loses packets silently.
func TestMisuse(t *testing.T) {
	s, err := New(Config{Workers: 2, Stages: []string{"a"}})
	require.NoError(t, err)
	check := func(what string, got, want error) {
		t.Helper()
		if want == nil {
			assert.NoError(t, got, what)
			return
		}
		assert.ErrorIs(t, got, want, what)
	}
	var n atomic.Int64
	p := counter{&n}
	ps := []Packet{p, p}
	check("Add(unknown stage)", s.Add(p, StageID(7)), ErrInvalid)
	check("Add(stage -1)", s.Add(p, StageID(-1)), ErrInvalid)
	check("Add(nil)", s.Add(nil), ErrInvalid)
	check("Add(nil, Priority)", s.Add(nil, Priority), ErrInvalid)
	check("Add(Lend)", s.Add(p, Lend), ErrInvalid)
	check("Add(unknown wake policy)", s.Add(p, WakePolicy(200)), ErrInvalid)
	check("Add(a steal policy's value as a wake policy)", s.Add(p, WakePolicy(StealHalf)), ErrInvalid)
	check("AddAll(with nil)", s.AddAll([]Packet{p, nil}), ErrInvalid)
	check("AddAll(unknown stage, Priority)", s.AddAll(ps, StageID(9), Priority), ErrInvalid)
	check("AddAll(Lend, Priority)", s.AddAll(ps, Lend, Priority), ErrInvalid)
	check("AddAll(Lend, unknown stage)", s.AddAll(ps, Lend, StageID(2)), ErrInvalid)
	check("AddAll(Lend, unknown wake policy)", s.AddAll(ps, Lend, WakePolicy(99)), ErrInvalid)
	check("AddDesignated(-1)", s.AddDesignated(-1, p), ErrInvalid)
	check("AddDesignated(2)", s.AddDesignated(2, p), ErrInvalid)
	check("AddDesignated(nil)", s.AddDesignated(0, nil), ErrInvalid)
	check("SetSentinel(Unconstrained)", s.SetSentinel(Unconstrained, p), ErrInvalid)
	check("SetSentinel(unknown stage)", s.SetSentinel(2, p), ErrInvalid)
	check("SetSentinel(nil)", s.SetSentinel(1, nil), ErrInvalid)
	check("SetSentinel", s.SetSentinel(1, p), nil)
	check("SetSentinel twice", s.SetSentinel(1, p), ErrInvalid)
	// An error names what was wrong.
	assert.Contains(t, s.Add(p, StageID(7)).Error(), "StageID 7: unknown stage")
	assert.Contains(t, s.Add(p, WakePolicy(TakeGuided)).Error(), "wake-policy(9) is not a wake policy")
	assert.Contains(t, s.AddDesignated(5, p).Error(), "worker 5: unknown worker")
	assert.Contains(t, s.SetSentinel(1, p).Error(), "already has a sentinel")
	// A nil Option is no option.
	check("Add(nil Option)", s.Add(p, nil), nil)
	for range designatedCap {
		check("AddDesignated", s.AddDesignated(1, p), nil)
	}
	check("AddDesignated(full)", s.AddDesignated(1, p), ErrQueueFull)

	// Two Runs at once; Run from inside a packet.
	release := make(chan struct{})
	started := make(chan int, 1)
	var inner error
	require.NoError(t, s.Add(blocker{started: started, release: release}))
	require.NoError(t, s.Add(fn(func(w *Worker) { inner = w.Scheduler().Run(bg) })))
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(bg) }()
	<-started
	check("second Run", s.Run(bg), ErrCycleRunning)
	close(release)
	watch(t, 30*time.Second, func() { err = <-runErr })
	check("Run", err, nil)
	check("Run from a packet", inner, ErrCycleRunning)
	assert.Equal(t, int64(designatedCap+2), n.Load(), "the designated packets, the sentinel and the nil-Option add")

	// Spawn, SpawnOrRun and Join of a nil Packet panic inside the packet:
	// the cycle reports it.
	for _, c := range []struct {
		op string
		f  func(w *Worker)
	}{
		{"Spawn", func(w *Worker) { Spawn[Packet](w, nil) }},
		{"SpawnOrRun", func(w *Worker) { SpawnOrRun[Packet](w, nil) }},
		{"Join", func(w *Worker) { Join[Packet](w, nil) }},
	} {
		require.NoError(t, s.Add(fn(c.f)))
		err = runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce, c.op)
		assert.Equal(t, "scheduler: "+c.op+" of a nil Packet", ce.Value)
	}

	// After Close.
	require.NoError(t, s.Add(p)) // queued, then dropped by Close and counted
	check("Close", s.Close(), nil)
	check("Close again", s.Close(), nil)
	check("Run after Close", s.Run(bg), ErrClosed)
	check("Add after Close", s.Add(p), ErrClosed)
	check("Add(Priority) after Close", s.Add(p, Priority), ErrClosed)
	check("AddAll after Close", s.AddAll(ps), ErrClosed)
	check("AddAll(Lend) after Close", s.AddAll(ps, Lend), ErrClosed)
	check("AddDesignated after Close", s.AddDesignated(0, p), ErrClosed)
	check("SetSentinel after Close", s.SetSentinel(1, p), ErrClosed)
	check("Add(nil) after Close", s.Add(nil), ErrInvalid)
	assert.Equal(t, uint64(1), s.Stats().Dropped, "Stats.Dropped after Close")
	assert.Equal(t, int64(designatedCap+2), n.Load())
}

// TestCloseDuringRun: Close aborts the running cycle (Run returns a
// *CycleError wrapping ErrClosed) and waits for the workers.
func TestCloseDuringRun(t *testing.T) {
	s, err := New(Config{Workers: 2, Stages: []string{"a", "b"}})
	require.NoError(t, err)
	release := make(chan struct{})
	started := make(chan int, 1)
	require.NoError(t, s.Add(blocker{started: started, release: release}))
	var n atomic.Int64
	require.NoError(t, s.AddAll([]Packet{counter{&n}, counter{&n}}, StageID(2)))
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(bg) }()
	<-started
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	// Release the blocker only once Close has aborted the cycle (a fixed
	// sleep let stage 2 run now and then when Close started late).
	waitFor(t, 10*time.Second, s.s.abort.Load, "Close to abort the cycle")
	close(release)
	watch(t, 30*time.Second, func() {
		err = <-runErr
		<-closed
	})
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, uint64(2), ce.Dropped)
	assert.Equal(t, int64(0), n.Load())
}

// TestAbortAllParked: if every worker were parked in an active cycle (a
// lost wake-up, which the protocol rules out), cancelling Run or Close
// would still end the cycle rather than hang. The state is forged.
func TestAbortAllParked(t *testing.T) {
	forge := func(h *Scheduler) {
		waitParked(t, h, h.Workers())
		s := h.s
		s.mu.Lock()
		s.running = true
		s.beginCycle() // stage 1 opens; nobody is woken
		s.mu.Unlock()
	}
	h := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	s := h.s
	var n atomic.Int64
	require.NoError(t, h.Add(counter{&n}))
	forge(h)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	var err error
	watch(t, 10*time.Second, func() {
		s.mu.Lock()
		s.abortCycle(ctxCause(ctx)) // as Run does on ctx.Done
		s.mu.Unlock()
		<-s.done
		s.mu.Lock()
		err = s.result
		s.result, s.running = nil, false
		s.mu.Unlock()
	})
	var ce *CycleError
	require.ErrorAs(t, err, &ce, "cancel")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, uint64(1), ce.Dropped)
	assert.Equal(t, int64(0), n.Load())
	require.NoError(t, runCycle(t, h), "next cycle")

	h2, err := New(Config{Workers: 3, Stages: []string{"a"}})
	require.NoError(t, err)
	require.NoError(t, h2.Add(counter{&n}))
	forge(h2)
	watch(t, 10*time.Second, func() { h2.Close() })
	st := h2.Stats()
	assert.Equal(t, uint64(1), st.Dropped)
	assert.Equal(t, uint64(1), st.Aborted)
	assert.Equal(t, int64(0), n.Load())
}
