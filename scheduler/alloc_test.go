package scheduler

import (
	"sync/atomic"
	"testing"
)

// TestAllocs: the hot paths allocate nothing. Add and BulkAdd pay only the
// bucket's block, one per 128 packets (below one per call here), AddSlice
// nothing (its span sources are allocated once per stage); a cycle
// that runs thousands of packets spawned by packets (through the private
// stack, through the deque, and a fork tree whose workers steal) allocates nothing
// per packet, with or without PacketTiming.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var n atomic.Int64
	p := Packet(counter{&n})
	ps := []Packet{p, p, p, p, p, p, p, p}
	check := func(what string, runs int, f func(), max float64) {
		t.Helper()
		if got := testing.AllocsPerRun(runs, f); got > max {
			t.Errorf("%s: %v allocs per run, want <= %v", what, got, max)
		}
	}
	for _, cfg := range []Config{{}, {NoLIFOSlot: true}, {LocalFIFO: true, Steal: StealOne()}, {PacketTiming: true}} {
		cfg.Workers, cfg.Stages = 2, []string{"a"}
		s := newSched(t, cfg)
		check("Add (closed stage)", 100, func() { s.Add(1, p) }, 0)
		check("Add (open, no cycle)", 100, func() { s.Add(Unconstrained, p) }, 0)
		check("AddPriority", 100, func() { s.AddPriority(1, p) }, 0)
		check("BulkAdd(8)", 100, func() { s.BulkAdd(1, ps) }, 0)
		check("BulkAdd(8, WithWake)", 100, func() { s.BulkAdd(1, ps, WithWake(WakeN)) }, 0)
		check("AddSlice(8)", 100, func() { s.AddSlice(1, ps) }, 0) // 64 spans, then copies
		// Into an open stage (Unconstrained): the wake policy is worked
		// out, with or without an option.
		check("BulkAdd(8), open stage", 100, func() { s.BulkAdd(Unconstrained, ps) }, 0)
		check("BulkAdd(8, WithWake), open stage", 100, func() { s.BulkAdd(Unconstrained, ps, WithWake(WakeOne)) }, 0)
		check("AddSlice(8), open stage", 100, func() { s.AddSlice(Unconstrained, ps) }, 0)
		if err := runCycle(t, s); err != nil {
			t.Fatal(err)
		}

		wide := make([]Packet, 1000)
		for i := range wide {
			wide[i] = p
		}
		check("cycle of AddSlice(1000)", 20, func() {
			s.AddSlice(1, wide)
			s.Run(bg)
		}, 0)

		const chain = 10000
		var done atomic.Int64
		chains := []Packet{&chainPacket{done: &done}, &chainPacket{done: &done}}
		check("cycle of 2 spawn chains", 5, func() {
			for _, c := range chains {
				c.(*chainPacket).left = chain
			}
			s.BulkAdd(1, chains)
			s.Run(bg)
		}, 0)
		if done.Load() != 2*6 {
			t.Fatalf("%d chains done, want 12", done.Load())
		}

		tree := &heapTree{nodes: make([]heapNode, 1<<13-1), leaves: make([]paddedCount, 2)}
		for i := range tree.nodes {
			tree.nodes[i] = heapNode{tree: tree, i: i}
		}
		// A FIFO deque runs the tree breadth first: it grows to a level's
		// width (4096) in O(log n) resizes in a worker's first cycles, and
		// shrinks at most once per window of Cap() pops. None per packet
		// (8191).
		treeMax := 0.0
		if cfg.LocalFIFO {
			treeMax = 64
		}
		check("cycle of a fork tree", 5, func() {
			s.Add(1, &tree.nodes[0])
			s.Run(bg)
		}, treeMax)
		if got := tree.leafCount(); got != 6<<12 {
			t.Fatalf("%d leaves, want %d", got, 6<<12)
		}
	}
}
