package scheduler

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"

	"go.uber.org/goleak"
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

// newSched returns a scheduler that the test closes at its end.
func newSched(t testing.TB, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run runs one cycle under a 30-second watchdog.
func runCycle(t *testing.T, s *Scheduler) error {
	t.Helper()
	var err error
	watch(t, 30*time.Second, func() { err = s.Run(context.Background()) })
	return err
}

// waitParked waits until at least k workers are parked.
func waitParked(t *testing.T, s *Scheduler, k int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for int(s.nParked.Load()) < k {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d workers parked after 10s", s.nParked.Load(), k)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// fn is a Packet from a function.
type fn func(w *Worker)

func (f fn) Run(w *Worker) { f(w) }

// counter counts its runs.
type counter struct{ n *atomic.Int64 }

func (c counter) Run(*Worker) { c.n.Add(1) }

// blocker blocks its worker until release is closed.
type blocker struct {
	started chan<- int
	release <-chan struct{}
}

func (b blocker) Run(w *Worker) {
	if b.started != nil {
		b.started <- w.ID()
	}
	<-b.release
}

var bg = context.Background()

// watch: see watchdog.Watch.
var watch = watchdog.Watch

// runOnce adds ps to stage 1, runs a cycle and checks that each counter
// in runs reads 1: every packet it tracks ran exactly once.
func runOnce(t *testing.T, s *Scheduler, ps []Packet, runs []atomic.Int32) {
	t.Helper()
	if err := s.BulkAdd(1, ps); err != nil {
		t.Fatal(err)
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if i, r, bad := notOnce(runs); bad {
		t.Fatalf("packet %d ran %d times", i, r)
	}
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
// ends with a *PanicError that dropped want queued packets, none of which
// ran (ran counts their runs).
func runDropping(t *testing.T, s *Scheduler, ran *atomic.Int64, want uint64) {
	t.Helper()
	err := runCycle(t, s)
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Run = %v, want *PanicError", err)
	}
	if pe.Dropped != want || ran.Load() != 0 {
		t.Fatalf("Dropped = %d, ran = %d; want %d, 0", pe.Dropped, ran.Load(), want)
	}
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
