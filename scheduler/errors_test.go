package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

// codeError is a custom error type: errors.Is compares it by value,
// errors.As finds it.
type codeError struct{ code int }

func (e codeError) Error() string { return fmt.Sprintf("code %d", e.code) }

// TestPacketErrorEndsCycle: a packet's error ends the cycle at once. The
// packet running on the other worker finishes (its context is cancelled)
// and nothing queued starts: not the bucket's packets, not the later
// stage's, not what the two packets spawned. Run returns a *CycleError
// that wraps the error and names the packet, its stage and worker, with
// every packet not run in Dropped.
func TestPacketErrorEndsCycle(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"mark", "sweep"}})
	var started atomic.Int64 // packets that must never start
	var holderDone atomic.Bool
	fStarted, aSpawned := make(chan struct{}), make(chan struct{})
	// Worker 0 runs its designated holder first; worker 1 takes the
	// priority packet, the failer, before any normal one.
	require.NoError(t, s.AddDesignated(0, Func("holder", func(w *Worker) error {
		<-fStarted
		for range 10 {
			Spawn(w, counter{&started})
		}
		close(aSpawned)
		<-w.Context().Done() // the failure cancels it
		holderDone.Store(true)
		return nil
	})))
	require.NoError(t, s.Add(Func("failer", func(w *Worker) error {
		close(fStarted)
		<-aSpawned
		for range 5 {
			Spawn(w, counter{&started})
		}
		return fmt.Errorf("marking: %w", codeError{7})
	}), Priority))
	require.NoError(t, s.AddAll(counters(1000, &started)))
	require.NoError(t, s.AddAll(counters(500, &started), StageID(2)))

	err := runCycle(t, s)
	require.Error(t, err)
	assert.True(t, holderDone.Load(), "the holder finished its run")
	assert.Zero(t, started.Load(), "queued packets started after the failure")

	assert.ErrorIs(t, err, codeError{7})
	var code codeError
	require.ErrorAs(t, err, &code)
	assert.Equal(t, 7, code.code)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "failer", ce.Packet)
	assert.Equal(t, StageID(1), ce.Stage)
	assert.Equal(t, "mark", ce.StageName)
	assert.Equal(t, 1, ce.Worker)
	assert.False(t, ce.Panicked)
	assert.EqualValues(t, 1, ce.Cycle)
	assert.EqualValues(t, 1000+500+10+5, ce.Dropped)
	assert.Contains(t, ce.Error(), "packet failer (stage mark) failed on worker 1: marking: code 7 (cycle 1; 1515 packets dropped)")

	st := s.Stats()
	assert.EqualValues(t, 2, st.Ran, "the holder and the failer")
	assert.EqualValues(t, 1, st.Aborted)
	assert.EqualValues(t, 1515, st.Dropped)
	assert.EqualValues(t, 1, st.Workers[1].Failed)
	assert.Zero(t, st.Workers[0].Failed)

	// The next cycle starts clean and runs exactly what it is given.
	var ran atomic.Int64
	require.NoError(t, s.AddAll(counters(100, &ran), StageID(2)))
	require.NoError(t, s.AddAll(counters(100, &ran)))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 200, ran.Load())
	assert.Zero(t, started.Load())
}

// holdUntilAbort waits until w's cycle is aborting. Run's context is
// the cycle context's parent: its cancellation reaches a packet waiting
// on w.Context() before Run has aborted the cycle, and until it has, the
// workers go on (see TestContextDoneEndsWorkerRun).
func holdUntilAbort(w *Worker) {
	for !w.s.abort.Load() {
		runtime.Gosched()
	}
}

type failKid struct{}

var errKid = errors.New("kid failed")

func (failKid) Run(*Worker) error { return errKid }

// TestSpawnOrRunInlineError: a child SpawnOrRun runs inline that fails
// ends the cycle with a *CycleError naming the child; SpawnOrRun returns
// and the parent goes on, its context cancelled, and what it spawned
// before and after is dropped.
func TestSpawnOrRunInlineError(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"only"}})
	var ran atomic.Int64
	var returned bool
	var ctxErr error
	require.NoError(t, s.Add(Func("parent", func(w *Worker) error {
		for range 3 {
			Spawn(w, counter{&ran})
		}
		SpawnOrRun(w, failKid{}) // one worker, busy: inline
		returned = true
		ctxErr = w.Context().Err()
		for range 4 {
			Spawn(w, counter{&ran})
		}
		return nil
	})))
	err := runCycle(t, s)
	require.ErrorIs(t, err, errKid)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "scheduler.failKid", ce.Packet)
	assert.Equal(t, "only", ce.StageName)
	assert.Equal(t, 0, ce.Worker)
	assert.EqualValues(t, 7, ce.Dropped)
	assert.True(t, returned, "SpawnOrRun returned to the parent")
	assert.ErrorIs(t, ctxErr, context.Canceled, "the parent's context is cancelled")
	assert.Zero(t, ran.Load())
	st := s.Stats()
	assert.EqualValues(t, 2, st.Ran, "the parent and the inline child")
	assert.EqualValues(t, 1, st.Workers[0].Failed)
	assert.EqualValues(t, 1, statCount(st, "scheduler.failKid"))
}

// TestCancelKeepsCause: cancelling Run's context with a cause ends the
// cycle with a *CycleError that wraps the cause and context.Canceled;
// the running packet sees the same cause through its context; nothing
// queued starts. A context cancelled before Run runs nothing.
func TestCancelKeepsCause(t *testing.T) {
	myErr := errors.New("shutdown")
	t.Run("during", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		ctx, cancel := context.WithCancelCause(bg)
		defer cancel(nil)
		var ran atomic.Int64
		var seen error
		started := make(chan struct{})
		require.NoError(t, s.AddDesignated(0, Func("waiter", func(w *Worker) error {
			close(started)
			<-w.Context().Done()
			seen = context.Cause(w.Context())
			holdUntilAbort(w)
			return nil
		})))
		require.NoError(t, s.AddAll(counters(100, &ran)))
		go func() {
			<-started
			cancel(myErr)
		}()
		err := runCycleCtx(t, s, ctx)
		assert.ErrorIs(t, err, myErr)
		assert.ErrorIs(t, err, context.Canceled)
		var ce *CycleError
		require.ErrorAs(t, err, &ce)
		assert.Empty(t, ce.Packet, "ended from outside")
		assert.Equal(t, -1, ce.Worker)
		assert.EqualValues(t, 100, ce.Dropped)
		assert.Zero(t, ran.Load())
		assert.ErrorIs(t, seen, myErr, "the packet's context cause")
		assert.Contains(t, ce.Error(), "cycle 1 aborted: shutdown (100 packets dropped)")
	})
	t.Run("plain", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		ctx, cancel := context.WithCancel(bg)
		started := make(chan struct{})
		require.NoError(t, s.Add(Func("waiter", func(w *Worker) error {
			close(started)
			<-w.Context().Done()
			holdUntilAbort(w)
			return nil
		})))
		go func() {
			<-started
			cancel()
		}()
		err := runCycleCtx(t, s, ctx)
		assert.ErrorIs(t, err, context.Canceled)
		assert.IsType(t, (*CycleError)(nil), err)
	})
	t.Run("before", func(t *testing.T) {
		s := newSched(t, Config{Workers: 2})
		ctx, cancel := context.WithCancelCause(bg)
		cancel(myErr)
		var ran atomic.Int64
		require.NoError(t, s.AddAll(counters(10, &ran)))
		err := runCycleCtx(t, s, ctx)
		assert.ErrorIs(t, err, myErr)
		assert.ErrorIs(t, err, context.Canceled)
		var ce *CycleError
		require.ErrorAs(t, err, &ce)
		assert.EqualValues(t, 10, ce.Dropped)
		assert.Zero(t, ran.Load())
	})
}

// TestFuncNames: a Func's name is its name in Stats, in a *CycleError
// (failed or panicked, added or spawned by value) and in traces: the
// recorder's packet slices and a Perfetto export.
func TestFuncNames(t *testing.T) {
	t.Run("stats-and-trace", func(t *testing.T) {
		rec := trace.NewRecorder(2, trace.Options{MaxBytes: 1 << 20})
		s, err := New(Config{Workers: 2, Tracer: rec})
		require.NoError(t, err)
		defer s.Close()
		var n atomic.Int64
		leaf := Func("leaf", func(*Worker) error { n.Add(1); return nil })
		require.NoError(t, s.Add(Func("root", func(w *Worker) error {
			for range 10 {
				Spawn(w, leaf)
			}
			SpawnOrRun(w, leaf) // tracing: spawned
			return nil
		})))
		require.NoError(t, runCycle(t, s))
		require.EqualValues(t, 11, n.Load())
		st := s.Stats()
		assert.EqualValues(t, 1, statCount(st, "root"))
		assert.EqualValues(t, 11, statCount(st, "leaf"))
		require.NoError(t, s.Close())

		snap := rec.Snapshot()
		begins := map[string]int{}
		for _, e := range snap.All() {
			if e.Kind() == trace.KindPacketBegin {
				begins[snap.Name(e.Name())]++
			}
		}
		assert.Equal(t, map[string]int{"root": 1, "leaf": 11}, begins)

		var buf bytes.Buffer
		_, err = perfetto.Write(&buf, snap, perfetto.Options{})
		require.NoError(t, err)
		// Read back through the official schema's generated types.
		var tr perfettopb.Trace
		require.NoError(t, proto.Unmarshal(buf.Bytes(), &tr))
		names := map[string]bool{}
		for _, p := range tr.GetPacket() {
			for _, in := range p.GetInternedData().GetEventNames() {
				names[in.GetName()] = true
			}
			if n := p.GetTrackEvent().GetName(); n != "" {
				names[n] = true
			}
		}
		assert.True(t, names["root"], "root in the Perfetto export: %v", names)
		assert.True(t, names["leaf"], "leaf in the Perfetto export: %v", names)
	})
	t.Run("errors", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		boom := errors.New("boom")
		cases := []struct {
			name     string
			add      Packet
			panicked bool
		}{
			{"added", Func("added", func(*Worker) error { return boom }), false},
			{"spawned", Func("parent", func(w *Worker) error {
				Spawn(w, Func("spawned", func(*Worker) error { return boom }))
				return nil
			}), false},
			{"inline", Func("parent", func(w *Worker) error {
				SpawnOrRun(w, Func("inline", func(*Worker) error { return boom }))
				return nil
			}), false},
			{"panics", Func("parent", func(w *Worker) error {
				Spawn(w, Func("panics", func(*Worker) error { panic(boom) }))
				return nil
			}), true},
		}
		for _, c := range cases {
			require.NoError(t, s.Add(c.add))
			err := runCycle(t, s)
			var ce *CycleError
			require.ErrorAs(t, err, &ce, c.name)
			assert.Equal(t, c.name, ce.Packet)
			assert.Equal(t, c.panicked, ce.Panicked, c.name)
			assert.ErrorIs(t, err, boom, c.name)
		}
	})
}

// emptyNamer is a Namer that names itself "" and fails.
type emptyNamer struct{}

func (emptyNamer) Run(*Worker) error  { return errors.New("empty-named failure") }
func (emptyNamer) PacketName() string { return "" }

// TestEmptyNames: Func refuses an empty name, and a Namer named "" that
// fails is named by its Go type in the CycleError, which keeps "" and
// "cycle aborted" for a cycle ended from outside; added, spawned by value
// and run inline alike.
func TestEmptyNames(t *testing.T) {
	require.PanicsWithValue(t, "scheduler: Func with an empty name (packets are named in Stats, traces and errors)",
		func() { Func("", func(*Worker) error { return nil }) })
	for _, how := range []string{"add", "spawn", "spawnorrun"} {
		s := newSched(t, Config{Workers: 1})
		var p Packet = emptyNamer{}
		if how != "add" {
			p = fn(func(w *Worker) {
				if how == "spawn" {
					Spawn(w, emptyNamer{})
				} else {
					SpawnOrRun(w, emptyNamer{})
				}
			})
		}
		require.NoError(t, s.Add(p))
		err := runCycle(t, s)
		var ce *CycleError
		require.ErrorAs(t, err, &ce, how)
		assert.Equal(t, "scheduler.emptyNamer", ce.Packet, how)
		assert.Equal(t, 0, ce.Worker, how)
		assert.NotContains(t, err.Error(), "aborted", how)
		assert.Contains(t, err.Error(), "packet scheduler.emptyNamer (stage main) failed on worker 0", how)
		found := false
		for _, ps := range s.Stats().Packets {
			found = found || ps.Name == "scheduler.emptyNamer"
			assert.NotEmpty(t, ps.Name, "%s: a stats entry named \"\"", how)
		}
		assert.True(t, found, "%s: stats name the packet by its type", how)
	}
}
