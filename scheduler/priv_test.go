package scheduler

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPrivOfferedToIdle: while another worker is idle, Spawn offers every
// private packet but the newest to the deque and wakes it. The spawning
// packet spawns two children and then waits until the first has run on
// the other worker; without the offer it would wait forever.
func TestPrivOfferedToIdle(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a"}})
	waitParked(t, s, 2)
	var first atomic.Int32
	first.Store(-1)
	var second atomic.Int32
	root := Func("root", func(w *Worker) error {
		Spawn(w, fn(func(w2 *Worker) { first.Store(int32(w2.ID())) }))
		Spawn(w, fn(func(*Worker) { second.Add(1) }))
		for deadline := time.Now().Add(10 * time.Second); first.Load() < 0; {
			if time.Now().After(deadline) {
				return errFail // the first child was never offered to the idle worker
			}
			time.Sleep(50 * time.Microsecond)
		}
		if int(first.Load()) == w.ID() {
			panic("the first child ran on its spawner")
		}
		return nil
	})
	require.NoError(t, s.Add(root))
	require.NoError(t, runCycle(t, s), "the first child was never offered to the idle worker")
	require.Equal(t, int32(1), second.Load(), "the second child's runs")
}

// TestPrivSpill: a full private stack moves its older half to the deque
// (where thieves could take it), and every packet still runs exactly
// once, newest first on the spawner.
func TestPrivSpill(t *testing.T) {
	const n = 3*privCap + 7
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	var runs [n]atomic.Int32
	var order []int
	var inDeque, inPriv int
	root := fn(func(w *Worker) {
		for i := range n {
			Spawn(w, fn(func(*Worker) {
				runs[i].Add(1)
				order = append(order, i)
			}))
		}
		inDeque, inPriv = w.local.Len(), int(w.privTail-w.privHead)
	})
	runOnce(t, s, []Packet{root}, runs[:])
	require.Equal(t, n, inPriv+inDeque, "the private stack and deque hold the spawned packets")
	require.LessOrEqual(t, inPriv, privCap)
	require.GreaterOrEqual(t, inDeque, privCap, "packets in the deque after %d spawns: the private stack did not spill", n)
	require.Equal(t, n-1, order[0], "the first packet run: the newest")
}

// TestPrivDroppedOnPanic: private packets are dropped and counted when
// the cycle aborts.
func TestPrivDroppedOnPanic(t *testing.T) {
	const n = 100
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	var ran atomic.Int64
	root := fn(func(w *Worker) {
		for range n {
			Spawn(w, counter{&ran})
		}
		panic("after spawning")
	})
	require.NoError(t, s.Add(root))
	runDropping(t, s, &ran, n)
}
