package hashstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/scheduler"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// makeTree writes files regular files of up to maxSize random bytes under
// a new directory, spread over nested directories, and returns its root.
func makeTree(t testing.TB, files, maxSize int) string {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, uint64(files)))
	buf := make([]byte, maxSize)
	for i := range files {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i%7), fmt.Sprintf("e%d", i%13))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		n := rng.IntN(maxSize + 1)
		for k := range n {
			buf[k] = byte(rng.Uint32())
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), buf[:n], 0o644))
	}
	return root
}

// TestStreamMatchesSequential: the streaming job, on any number of workers
// and any bound, and the channel pipeline give the sequential result, on a
// generated tree and on a real one (the Go source tree's net package).
func TestStreamMatchesSequential(t *testing.T) {
	roots := map[string]string{"generated": makeTree(t, 600, 3000)}
	if goroot := filepath.Join(batch.DefaultRoot(), "net"); dirExists(goroot) {
		roots["goroot-net"] = goroot
	}
	for name, root := range roots {
		seq, err := Sequential(root, 1)
		require.NoError(t, err)
		require.NotEmpty(t, seq.Dirs)
		if name == "generated" {
			assert.Equal(t, 600, seq.Files)
			assert.Len(t, seq.Dirs, 7*13)
		}
		for _, workers := range []int{1, 2, 4} {
			for _, bound := range []int{1, 8, 0, -1} {
				t.Run(fmt.Sprintf("%s/workers=%d/max-queued=%d", name, workers, bound), func(t *testing.T) {
					r, err := Stream(context.Background(), root, Options{Workers: workers, MaxQueued: bound})
					require.NoError(t, err)
					assert.Equal(t, seq.Dirs, r.Dirs)
					assert.Equal(t, seq.Files, r.Files)
					assert.Equal(t, seq.Bytes, r.Bytes)
				})
			}
			p, err := Pipeline(context.Background(), root, workers, 16, 1)
			require.NoError(t, err)
			assert.Equal(t, seq.Dirs, p.Dirs, "pipeline, %d workers", workers)
		}
	}
}

// TestJobRunsAgain: one Job runs cycle after cycle with the same result,
// and a changed tree gives a changed digest.
func TestJobRunsAgain(t *testing.T) {
	root := makeTree(t, 200, 500)
	j, err := NewJob(Options{Workers: 2, MaxQueued: 4})
	require.NoError(t, err)
	defer j.Close()
	first, err := j.Run(context.Background(), root)
	require.NoError(t, err)
	for range 3 {
		r, err := j.Run(context.Background(), root)
		require.NoError(t, err)
		assert.Equal(t, first.Dirs, r.Dirs)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "d0", "e0", "f0"), []byte("changed"), 0o644))
	r, err := j.Run(context.Background(), root)
	require.NoError(t, err)
	assert.NotEqual(t, first.Dirs, r.Dirs)
	assert.Equal(t, first.Files, r.Files)
}

// TestStreamErrorNamesTheFile: a file that cannot be read ends the cycle
// with a CycleError naming the file (its path, from the packet's String),
// the walk stops, and every queued packet is accounted for: added = ran +
// dropped.
func TestStreamErrorNamesTheFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	root := makeTree(t, 400, 200)
	secret := filepath.Join(root, "d3", "e5", "f200")
	require.FileExists(t, secret)
	require.NoError(t, os.Chmod(secret, 0))
	for _, workers := range []int{1, 2} {
		j, err := NewJob(Options{Workers: workers, MaxQueued: 8})
		require.NoError(t, err)
		before := j.Scheduler().Stats()
		_, err = j.Run(context.Background(), root)
		require.Error(t, err)
		var ce *scheduler.CycleError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, secret, ce.Item, "the error names the file")
		assert.ErrorIs(t, err, os.ErrPermission)
		assert.Contains(t, err.Error(), secret)
		st := j.Scheduler().Stats()
		// Every file the walk added ran or was dropped, and so was the
		// Aggregate packet (dropped: the cycle ended before its stage).
		assert.Equal(t, uint64(j.Walked()+1), st.Ran-before.Ran+st.Dropped-before.Dropped, "added = ran + dropped")
		assert.LessOrEqual(t, j.Walked(), 400)
		// The job runs again once the file is readable.
		require.NoError(t, os.Chmod(secret, 0o644))
		r, err := j.Run(context.Background(), root)
		require.NoError(t, err)
		assert.Equal(t, 400, r.Files)
		require.NoError(t, os.Chmod(secret, 0))
		require.NoError(t, j.Close())
	}
}

// TestStreamWalkError: a walk that fails on its own (a directory that
// cannot be listed) cancels the cycle and returns the walk's error.
func TestStreamWalkError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root lists any directory")
	}
	root := makeTree(t, 100, 100)
	locked := filepath.Join(root, "d6")
	require.NoError(t, os.Chmod(locked, 0))
	defer os.Chmod(locked, 0o755)
	_, err := Stream(context.Background(), root, Options{Workers: 2})
	require.ErrorIs(t, err, os.ErrPermission)
	assert.Contains(t, err.Error(), locked)
	_, err = Pipeline(context.Background(), root, 2, 4, 1)
	require.ErrorIs(t, err, os.ErrPermission)
}

// TestStreamCancel: a context cancelled while the walk is blocked on a
// full queue ends the cycle and the walk; every file added ran or was
// dropped, and the next run is whole.
func TestStreamCancel(t *testing.T) {
	root := makeTree(t, 300, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var j *Job
	j, err := NewJob(Options{Workers: 2, MaxQueued: 4, Rounds: 200})
	require.NoError(t, err)
	defer j.Close()
	go func() {
		for j.started.Load() < 20 {
			runtime.Gosched()
		}
		cancel()
	}()
	before := j.Scheduler().Stats()
	_, err = j.Run(ctx, root)
	require.ErrorIs(t, err, context.Canceled)
	st := j.Scheduler().Stats()
	assert.Less(t, j.Walked(), 300, "the walk stopped")
	assert.Equal(t, uint64(j.Walked()+1), st.Ran-before.Ran+st.Dropped-before.Dropped, "added = ran + dropped")
	r, err := j.Run(context.Background(), root)
	require.NoError(t, err)
	assert.Equal(t, 300, r.Files, "the next run is whole")
}

// TestStreamBoundsInFlight: with hashing far slower than the walk, the
// files in flight (found and not yet started) stay within the queue bound
// plus what the workers' takes hold, and the live heap at the end of the
// walk is logged; unbounded, the walk queues nearly every file.
func TestStreamBoundsInFlight(t *testing.T) {
	const files, bound, workers = 3000, 32, 2
	root := makeTree(t, files, 2048)
	measure := func(maxQueued int) (Result, int64) {
		var before, atEnd runtime.MemStats
		j, err := NewJob(Options{Workers: workers, MaxQueued: maxQueued, Rounds: 40,
			AfterWalk: func() { runtime.GC(); runtime.ReadMemStats(&atEnd) }})
		require.NoError(t, err)
		defer j.Close()
		_, err = j.Run(context.Background(), root) // the scheduler's own structures grow on a first run
		require.NoError(t, err)
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := j.Run(context.Background(), root)
		require.NoError(t, err)
		require.Equal(t, files, r.Files)
		return r, int64(atEnd.HeapAlloc) - int64(before.HeapAlloc)
	}
	bounded, boundedHeap := measure(bound)
	unbounded, unboundedHeap := measure(-1)
	t.Logf("in flight at most: %d bounded (MaxQueued %d), %d unbounded; live heap at the walk's end: %+d B bounded, %+d B unbounded",
		bounded.PeakInFlight, bound, unbounded.PeakInFlight, boundedHeap, unboundedHeap)
	// Each worker holds at most one take of at most the bucket's depth.
	assert.LessOrEqual(t, bounded.PeakInFlight, bound*(1+workers))
	assert.Greater(t, unbounded.PeakInFlight, files/2, "unbounded, the walk outran the workers")
	// The live heap is logged, not asserted: a GC's view of it moves by
	// hundreds of KiB run to run on a shared host (the -mem command of
	// main measures it on the Go tree); the count in flight is exact.
}

func TestNewJobErrors(t *testing.T) {
	_, err := NewJob(Options{Rounds: -1})
	assert.ErrorContains(t, err, "Rounds = -1")
	_, err = NewJob(Options{Workers: -3})
	assert.ErrorIs(t, err, scheduler.ErrInvalid)
	_, err = Stream(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{})
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
