package scheduler

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunAfterCloseReportsDropped: packets queued before a Close that no
// cycle ran are counted in the next Run's error (a *CycleError wrapping
// ErrClosed), once; a later Run returns ErrClosed alone.
func TestRunAfterCloseReportsDropped(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b"}})
	var ran atomic.Int64
	for i := range 100 {
		require.NoError(t, s.Add(counter{&ran}, StageID(1+i%2)))
	}
	require.NoError(t, s.AddDesignated(1, counter{&ran}))
	require.NoError(t, s.Close())
	err := s.Run(bg)
	var ce *CycleError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, uint64(101), ce.Dropped, "Dropped")
	assert.Equal(t, -1, ce.Worker)
	assert.Equal(t, uint64(1), ce.Cycle)
	assert.Contains(t, err.Error(), "101 packets dropped")
	err = s.Run(bg)
	require.ErrorIs(t, err, ErrClosed)
	assert.False(t, errors.As(err, &ce), "a second Run after Close reports nothing: %v", err)
	assert.Equal(t, uint64(101), s.Stats().Dropped)
	assert.Zero(t, ran.Load())
}

// TestCloseRacingRunCounts: Run and Close race, with 4,000 packets
// queued, on 64 workers: whichever comes first, every packet ran or is
// counted in Run's error, and Stats().Dropped agrees.
func TestCloseRacingRunCounts(t *testing.T) {
	const n = 4000
	for trial := range scale(40, 4) {
		s, err := New(Config{Workers: 64})
		require.NoError(t, err)
		var ran atomic.Int64
		ps := make([]Packet, n)
		for i := range ps {
			ps[i] = counter{&ran}
		}
		require.NoError(t, s.AddAll(ps))
		runErr := make(chan error, 1)
		go func() { runErr <- s.Run(bg) }()
		require.NoError(t, s.Close())
		err = <-runErr
		var dropped uint64
		var ce *CycleError
		if errors.As(err, &ce) {
			require.ErrorIs(t, err, ErrClosed, "trial %d", trial)
			dropped = ce.Dropped
		} else {
			require.NoError(t, err, "trial %d: Run finished before Close", trial)
		}
		require.Equal(t, uint64(n), uint64(ran.Load())+dropped, "trial %d: run + dropped in Run's error (%v)", trial, err)
		require.Equal(t, dropped, s.Stats().Dropped, "trial %d: Stats().Dropped", trial)
	}
}
