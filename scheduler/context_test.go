package scheduler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ctxKey struct{}

// TestContextOfCycle: w.Context() carries Run's context's values, is the
// same context for every packet of a cycle, is live during the cycle and
// done (context.Canceled) once it has ended normally; the next cycle has
// a fresh one.
func TestContextOfCycle(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	for cycle := range 3 {
		ctx := context.WithValue(bg, ctxKey{}, cycle)
		var mu sync.Mutex
		ctxs := map[context.Context]int{}
		var bad atomic.Int64
		probe := Func("probe", func(w *Worker) error {
			c := w.Context()
			if c.Value(ctxKey{}) != cycle || c.Err() != nil {
				bad.Add(1)
			}
			mu.Lock()
			ctxs[c]++
			mu.Unlock()
			return nil
		})
		require.NoError(t, s.Add(Func("root", func(w *Worker) error {
			for range 50 {
				Spawn(w, probe)
			}
			return nil
		})))
		require.NoError(t, s.AddAll([]Packet{probe, probe, probe}))
		require.NoError(t, runCycleCtx(t, s, ctx))
		assert.Zero(t, bad.Load(), "a packet saw another value or a done context")
		require.Len(t, ctxs, 1, "one context per cycle")
		for c, n := range ctxs {
			assert.Equal(t, 53, n)
			assert.ErrorIs(t, c.Err(), context.Canceled, "done after the cycle")
			assert.Equal(t, context.Canceled, context.Cause(c))
		}
	}
}

// waiterPacket signals started, then blocks on its context, records the
// cause that released it, and returns once the cycle is aborting.
func waiterPacket(started chan<- struct{}, cause *error) Packet {
	return Func("waiter", func(w *Worker) error {
		close(started)
		<-w.Context().Done()
		*cause = context.Cause(w.Context())
		holdUntilAbort(w)
		return nil
	})
}

// TestContextCancelledByFailure: a packet blocked on its context is
// released by another packet's failure, with the cycle's *CycleError as
// the cause.
func TestContextCancelledByFailure(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	started := make(chan struct{})
	var cause error
	boom := errors.New("boom")
	require.NoError(t, s.AddDesignated(0, waiterPacket(started, &cause)))
	require.NoError(t, s.AddDesignated(1, Func("failer", func(w *Worker) error {
		<-started
		return boom
	})))
	err := runCycle(t, s)
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, cause, boom)
	var ce *CycleError
	require.ErrorAs(t, cause, &ce)
	assert.Equal(t, "failer", ce.Packet)
	assert.Equal(t, 1, ce.Worker)
}

// TestContextCancelledByRun: cancelling Run's context releases a packet
// blocked on its cycle's context, with the same cause.
func TestContextCancelledByRun(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	myErr := errors.New("stop")
	ctx, cancel := context.WithCancelCause(bg)
	defer cancel(nil)
	started := make(chan struct{})
	var cause error
	require.NoError(t, s.Add(waiterPacket(started, &cause)))
	go func() {
		<-started
		cancel(myErr)
	}()
	err := runCycleCtx(t, s, ctx)
	require.ErrorIs(t, err, myErr)
	require.ErrorIs(t, cause, myErr)
}

// TestContextCancelledByClose: closing the scheduler releases a packet
// blocked on its cycle's context, with a cause wrapping ErrClosed; Run
// returns a *CycleError wrapping ErrClosed.
func TestContextCancelledByClose(t *testing.T) {
	s := newSched(t, Config{Workers: 2})
	started := make(chan struct{})
	var cause error
	require.NoError(t, s.Add(waiterPacket(started, &cause)))
	closed := make(chan error)
	go func() {
		<-started
		closed <- s.Close()
	}()
	err := runCycle(t, s)
	require.NoError(t, recvWithin(t, closed))
	require.ErrorIs(t, err, ErrClosed)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, cause, ErrClosed)
}

// TestContextAfterInlineFailure: the first Context call of a cycle that
// is already ending (an inline child failed) returns a context done with
// the cycle's cause.
func TestContextAfterInlineFailure(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var cause error
	require.NoError(t, s.Add(Func("parent", func(w *Worker) error {
		SpawnOrRun(w, failKid{})
		cause = context.Cause(w.Context())
		return nil
	})))
	require.ErrorIs(t, runCycle(t, s), errKid)
	require.ErrorIs(t, cause, errKid)
	var ce *CycleError
	require.ErrorAs(t, cause, &ce)
	assert.Equal(t, "scheduler.failKid", ce.Packet)
}

// TestContextOutsidePacket: Context on a *Worker kept past its packet
// panics.
func TestContextOutsidePacket(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var kept *Worker
	require.NoError(t, s.Add(Func("keep", func(w *Worker) error { kept = w; return nil })))
	require.NoError(t, runCycle(t, s))
	assert.Contains(t, panicMsg(func() { kept.Context() }), "Context on worker 0 outside its packet")
}

// TestContextDoneEndsWorkerRun: a packet released by its context, when
// Run's context is cancelled, is the last packet its worker starts in
// that cycle, as it is when another packet fails.
func TestContextDoneEndsWorkerRun(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	started := make(chan struct{})
	var ran atomic.Int64
	require.NoError(t, s.AddDesignated(0, Func("waiter", func(w *Worker) error {
		close(started)
		<-w.Context().Done()
		return nil
	})))
	require.NoError(t, s.AddAll(counters(100, &ran)))
	go func() {
		<-started
		cancel()
	}()
	err := runCycleCtx(t, s, ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, ran.Load(), "packets started after the waiter saw its context done")
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.EqualValues(t, 100, ce.Dropped)
}
