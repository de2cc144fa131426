package scheduler

import (
	"sync/atomic"
	"testing"
	"time"
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
	root := fn(func(w *Worker) {
		w.Spawn(fn(func(w2 *Worker) { first.Store(int32(w2.ID())) }))
		w.Spawn(fn(func(*Worker) { second.Add(1) }))
		for deadline := time.Now().Add(10 * time.Second); first.Load() < 0; {
			if time.Now().After(deadline) {
				panic("the first child was never offered to the idle worker")
			}
			time.Sleep(50 * time.Microsecond)
		}
		if int(first.Load()) == w.ID() {
			panic("the first child ran on its spawner")
		}
	})
	if err := s.Add(1, root); err != nil {
		t.Fatal(err)
	}
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if second.Load() != 1 {
		t.Fatalf("the second child ran %d times", second.Load())
	}
}

// TestPrivSpill: a full private stack moves its older half to the deque
// (where thieves could take it), and every packet still runs exactly
// once, newest first on the spawner.
func TestPrivSpill(t *testing.T) {
	const n = 3*privCap + 7
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	var runs [n]atomic.Int32
	var order []int
	var inDeque int
	root := fn(func(w *Worker) {
		for i := range n {
			w.Spawn(fn(func(*Worker) {
				runs[i].Add(1)
				order = append(order, i)
			}))
		}
		inDeque = w.local.Len()
		if got := int(w.privTail - w.privHead); got+inDeque != n || got > privCap {
			panic("private stack and deque do not hold the spawned packets")
		}
	})
	runOnce(t, s, []Packet{root}, runs[:])
	if inDeque < privCap {
		t.Fatalf("%d packets in the deque after %d spawns: the private stack did not spill", inDeque, n)
	}
	if order[0] != n-1 {
		t.Fatalf("first packet run: %d, want the newest, %d", order[0], n-1)
	}
}

// TestPrivDroppedOnPanic: private packets are dropped and counted when
// the cycle aborts.
func TestPrivDroppedOnPanic(t *testing.T) {
	const n = 100
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	var ran atomic.Int64
	root := fn(func(w *Worker) {
		for range n {
			w.Spawn(counter{&ran})
		}
		panic("after spawning")
	})
	if err := s.Add(1, root); err != nil {
		t.Fatal(err)
	}
	runDropping(t, s, &ran, n)
}
