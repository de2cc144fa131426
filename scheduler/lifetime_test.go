package scheduler

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sumC is a join continuation that records where its value lived.
type sumC struct {
	left, right int
	got         *atomic.Int64
}

func (c sumC) Run(*Worker) error { c.got.Add(int64(c.left + c.right)); return nil }

// setLeft and setRight are join members writing their result through the
// pointer Join returned.
type setLeft struct{ c *sumC }

func (p setLeft) Run(*Worker) error { p.c.left = 20; return nil }

type setRight struct{ c *sumC }

func (p setRight) Run(*Worker) error { p.c.right = 22; return nil }

// TestJoinPointerLifetime: the members' writes through Join's pointer
// reach the continuation, and once it has started the frame is cleared
// and a later Join on the worker reuses it (frames come from an arena of
// 64-frame chunks, reused once every frame of a chunk has fired), which
// is why Join's doc allows only members to write through the pointer.
func TestJoinPointerLifetime(t *testing.T) {
	const joins = 3 * chunkSlots
	s := newSched(t, Config{Workers: 1})
	var got atomic.Int64
	var ptrs []*sumC
	opener := fn(func(w *Worker) {
		c := Join(w, sumC{got: &got})
		ptrs = append(ptrs, c)
		Spawn(w, setLeft{c})
		Spawn(w, setRight{c})
	})
	for range joins {
		require.NoError(t, s.Add(opener))
	}
	require.NoError(t, runCycle(t, s))
	require.Equal(t, int64(42*joins), got.Load(), "every continuation saw its members' writes")
	require.Len(t, ptrs, joins)
	seen := map[*sumC]int{}
	for _, p := range ptrs {
		seen[p]++
		assert.Zero(t, *p, "a frame is cleared once its continuation is spawned")
	}
	assert.Less(t, len(seen), joins, "later Joins reuse earlier frames")
}

// TestKeptWorkerLaterPacket: a *Worker kept from a packet of an earlier
// cycle is, inside a later packet on the same worker, that packet's own:
// a spawn on it is counted and runs in the later cycle; used between
// cycles it panics.
func TestKeptWorkerLaterPacket(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var kept *Worker
	require.NoError(t, s.Add(fn(func(w *Worker) { kept = w })))
	require.NoError(t, runCycle(t, s))
	require.NotNil(t, kept)
	var ran atomic.Int64
	require.PanicsWithValue(t, "scheduler: Spawn on worker 0 outside its packet: a *Worker is valid only inside the Run call that received it",
		func() { Spawn(kept, counter{&ran}) })

	var same bool
	require.NoError(t, s.Add(fn(func(w *Worker) {
		same = w == kept
		Spawn(kept, counter{&ran})
	})))
	require.NoError(t, runCycle(t, s))
	assert.True(t, same, "one *Worker per worker across cycles")
	assert.Equal(t, int64(1), ran.Load(), "the spawn on the kept *Worker ran in the later cycle")
	assert.Equal(t, uint64(0), s.Stats().Dropped)
}
