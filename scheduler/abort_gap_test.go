package scheduler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNoStartAfterAbortSeen aborts a cycle between a worker's find and the
// start of the packet it found (foundHook: Run's context is cancelled and
// the hook waits until the abort is flagged). The worker looks at the
// abort before it starts the packet, so the packet never runs and is
// counted in Run's CycleError.Dropped.
func TestNoStartAfterAbortSeen(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hooked atomic.Int32
	foundHook = func(w *Worker) {
		if hooked.Add(1) == 1 {
			cancel()
			waitFor(t, 10*time.Second, func() bool { return s.s.abort.Load() }, "the abort flagged")
		}
	}
	t.Cleanup(func() { foundHook = nil })
	var ran atomic.Int64
	require.NoError(t, s.Add(counter{&ran}))
	var err error
	watch(t, 10*time.Second, func() { err = s.Run(ctx) })
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int32(1), hooked.Load(), "finds")
	require.Equal(t, int64(0), ran.Load(), "packets started after their worker saw the abort")
	require.Equal(t, uint64(1), ce.Dropped, "Dropped: the packet found and not started")
	require.Equal(t, uint64(1), s.Stats().Dropped, "Stats().Dropped")
}
