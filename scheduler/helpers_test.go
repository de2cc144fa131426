package scheduler

import (
	"context"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/internal/watchdog"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// stress reports whether the long stress runs are enabled (WSCHED_STRESS=1).
func stress() bool { return os.Getenv("WSCHED_STRESS") == "1" }

// scale returns n, divided by div under the race detector (at least 1).
func scale(n, div int) int {
	if raceEnabled {
		return max(n/div, 1)
	}
	return n
}

// shortScale returns n, divided by div under -short (at least 1): a long
// test keeps every case at a smaller size there, and its full size in a
// normal run.
func shortScale(n, div int) int {
	if testing.Short() {
		return max(n/div, 1)
	}
	return n
}

// newSched returns a scheduler that the test closes at its end.
func newSched(t testing.TB, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err, "New")
	t.Cleanup(func() { s.Close() })
	return s
}

// runCycle runs one cycle under a 30-second watchdog that dumps every
// goroutine's stack on a stall.
func runCycle(t testing.TB, s *Scheduler) error {
	t.Helper()
	return runCycleCtx(t, s, bg)
}

// waitParked waits until at least k workers are registered as parked.
func waitParked(t testing.TB, s *Scheduler, k int) {
	t.Helper()
	waitFor(t, 10*time.Second, func() bool { return int(s.s.nParked.Load()) >= k },
		"%d workers parked", k)
}

// waitFor polls cond (every 50 µs) until it holds, and fails the test if
// it does not within d: a wait for a state, never a fixed sleep.
func waitFor(t testing.TB, d time.Duration, cond func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			require.FailNowf(t, "wait timed out", "waited %v for: "+what+"\n%s", append(append([]any{d}, args...), watchdog.Stacks())...)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// stageOf is the stage of the packet running on w (the stage a Spawn on w
// queues into). Tests only: packets have no use for it.
func stageOf(w *Worker) StageID { return w.cur.stage() }

// fn is a Packet from a function that cannot fail.
type fn func(w *Worker)

func (f fn) Run(w *Worker) error { f(w); return nil }

// counter counts its runs.
type counter struct{ n *atomic.Int64 }

func (c counter) Run(*Worker) error { c.n.Add(1); return nil }

// blocker blocks its worker until release is closed.
type blocker struct {
	started chan<- int
	release <-chan struct{}
}

func (b blocker) Run(w *Worker) error {
	if b.started != nil {
		b.started <- w.ID()
	}
	<-b.release
	return nil
}

var bg = context.Background()

// watch: see watchdog.Watch.
var watch = watchdog.Watch

// runOnce adds ps to stage 1, runs a cycle and checks that each counter
// in runs reads 1: every packet it tracks ran exactly once.
func runOnce(t *testing.T, s *Scheduler, ps []Packet, runs []atomic.Int32) {
	t.Helper()
	require.NoError(t, s.AddAll(ps))
	require.NoError(t, runCycle(t, s))
	i, r, bad := notOnce(runs)
	require.False(t, bad, "packet %d ran %d times", i, r)
}

// notOnce returns the first packet whose run counter is not 1, if any.
func notOnce(runs []atomic.Int32) (i int, n int32, bad bool) {
	for i := range runs {
		if n := runs[i].Load(); n != 1 {
			return i, n, true
		}
	}
	return 0, 0, false
}

// runDropping runs a cycle in which a packet panics and checks that it
// ends with a *CycleError for that panic that dropped want queued
// packets, none of which ran (ran counts their runs).
func runDropping(t *testing.T, s *Scheduler, ran *atomic.Int64, want uint64) *CycleError {
	t.Helper()
	err := runCycle(t, s)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.True(t, ce.Panicked, "CycleError %v: want a packet's panic", ce)
	require.Equal(t, want, ce.Dropped, "Dropped")
	require.Equal(t, int64(0), ran.Load(), "dropped packets that ran")
	return ce
}

// xorshift runs n dependent xorshift steps (about 1 ns each on the EPYC):
// computation the compiler cannot drop if the caller uses the result.
func xorshift(n int) uint64 {
	x := uint64(n) | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// processCPU is the process's user + system CPU time so far.
func processCPU() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// cycleAllocs is testing.AllocsPerRun for a function that runs cycles:
// the mean number of heap allocations a call of f makes over runs calls,
// after one call to warm up, counted at the current GOMAXPROCS. Unlike
// AllocsPerRun it does not set GOMAXPROCS to 1 and back: destroying a P
// drops the runtime's cache of wait records (sudogs), and a worker that
// then parks on its channel allocates one again. That is the runtime's
// cost, not a cycle's, and whether a measured call pays it depends on
// when the workers park, so under load AllocsPerRun saw one allocation
// a cycle where none is made. The result is a float (AllocsPerRun's is
// an integer that hides a few allocations over all runs).
func cycleAllocs(runs int, f func()) float64 {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}
