package scheduler

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
)

// TestSnapshotBetweenCyclesWhileAdding takes snapshots after Run returned
// while another goroutine adds and designates (both record on the control
// buffer), as trace.Recorder.Snapshot's doc allows. Under -race, a
// snapshot that did not take the control buffer's lock is reported as a
// data race. Every add is in the last snapshot, and every packet added
// runs in the next cycle.
func TestSnapshotBetweenCyclesWhileAdding(t *testing.T) {
	rec := trace.NewRecorder(2, trace.Options{})
	s := newSched(t, Config{Workers: 2, Tracer: rec})
	var ran atomic.Int64
	require.NoError(t, s.Add(counter{&ran}))
	require.NoError(t, runCycle(t, s))

	const adds = 2000
	var finished atomic.Bool
	go func() {
		defer finished.Store(true)
		for i := range adds {
			var err error
			if i%64 == 0 {
				err = s.AddDesignated(i%2, counter{&ran})
			} else {
				err = s.Add(counter{&ran})
			}
			if !assert.NoError(t, err, "add %d", i) {
				return
			}
		}
	}()
	snaps := 0
	for !finished.Load() {
		require.NotNil(t, rec.Snapshot())
		snaps++
	}
	n := 0
	for _, e := range rec.Snapshot().Control().Events {
		if e.Kind() == trace.KindAdd {
			n++
		}
	}
	require.Equal(t, adds+1, n, "adds recorded on the control buffer")
	require.NoError(t, runCycle(t, s))
	require.Equal(t, int64(adds+1), ran.Load(), "packets run")
	t.Logf("%d snapshots while adding", snaps)
}
