package scheduler

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// abandon makes k schedulers of two workers, runs a cycle of value
// packets and joins on each, and drops them without Close (all but the
// last: that one is closed, and dropped too).
//
//go:noinline
func abandon(t *testing.T, k int) {
	for i := range k {
		s, err := New(Config{Workers: 2})
		require.NoError(t, err)
		var n atomic.Int64
		out := 0
		require.NoError(t, s.Add(&fanPacket{n: 100, grand: 1, count: &n}))
		require.NoError(t, s.Add(fibJoin{n: 12, out: &out}))
		require.NoError(t, s.Add(Func("self", func(w *Worker) error {
			if w.Scheduler() == nil {
				n.Add(1000) // the handle must be alive while Run runs
			}
			return nil
		})))
		require.NoError(t, runCycle(t, s))
		require.EqualValues(t, 200, n.Load())
		require.Equal(t, fibDirect(12), out)
		if i == k-1 {
			require.NoError(t, s.Close())
		}
	}
}

// TestUnreachableSchedulerReleasesWorkers: a Scheduler dropped without
// Close is closed by the garbage collector, and its workers exit. Workers
// are told apart by goroutine id, so that the goroutines of other tests,
// starting or ending meanwhile, do not count.
func TestUnreachableSchedulerReleasesWorkers(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	before := workerGoroutines()
	const k = 3
	// No collection until the count below: one during abandon would
	// close a dropped scheduler before it is counted.
	gcPercent := debug.SetGCPercent(-1)
	abandon(t, k)
	// The workers of the k-1 schedulers not closed are still there. (The
	// closed one's may still be seen for a moment: a worker's goroutine
	// ends just after Close's wait for it returns.)
	waitFor(t, 10*time.Second, func() bool { return len(newIDs(before, workerGoroutines())) <= 2*(k-1) },
		"the closed scheduler's workers to exit")
	assert.Len(t, newIDs(before, workerGoroutines()), 2*(k-1))
	debug.SetGCPercent(gcPercent)
	deadline := time.Now().Add(10 * time.Second)
	for len(newIDs(before, workerGoroutines())) > 0 && time.Now().Before(deadline) {
		runtime.GC() // finds them unreachable; their cleanups close them
		time.Sleep(time.Millisecond)
	}
	assert.Empty(t, newIDs(before, workerGoroutines()), "workers of the dropped schedulers")
	goleak.VerifyNone(t, ignore)
}

// workerGoroutines returns the ids of the goroutines running a worker's
// main loop.
func workerGoroutines() map[string]bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	ids := map[string]bool{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if id, ok := strings.CutPrefix(header, "goroutine "); ok && strings.Contains(g, "scheduler.(*Worker).main(") {
			id, _, _ = strings.Cut(id, " ")
			ids[id] = true
		}
	}
	return ids
}

// newIDs returns the ids in now that were not in before.
func newIDs(before, now map[string]bool) []string {
	var out []string
	for id := range now {
		if !before[id] {
			out = append(out, id)
		}
	}
	return out
}
