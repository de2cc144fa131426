package scheduler

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllocs: the hot paths allocate nothing. Add and AddAll pay only the
// bucket's block, one per 128 packets (below one per call here), with any
// options; AddAll with Lend nothing (its span sources are allocated once
// per stage); a cycle that runs thousands of packets spawned by packets
// (through the private stack, through the deque, pointers and values, a
// fork tree whose workers steal, and a tree of joins) allocates nothing
// per packet, with or without PacketTiming, and under LearnHeavy (whose
// cycle end reuses its buffers and keeps an unchanged heavy set).
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var n, named atomic.Int64
	p := Packet(counter{&n})
	ps := []Packet{p, p, p, p, p, p, p, p}
	check := func(what string, runs int, f func(), max float64) {
		t.Helper()
		assert.LessOrEqual(t, testing.AllocsPerRun(runs, f), max, "%s: allocs per run", what)
	}
	// checkCycle measures f, which runs a cycle, after ten runs: a
	// cycle's deques and arenas grow to what it holds at once in the
	// first cycles. It allows fewer than one allocation a cycle over max:
	// rarely, a later cycle whose steals leave more live at once grows
	// them a chunk more, and a parked worker may allocate the runtime's
	// wait record after a collection (see cycleAllocs). A cycle here runs
	// thousands of packets, so one allocation a packet is far above that.
	checkCycle := func(what string, runs int, f func(), max float64) {
		t.Helper()
		for range 10 {
			f()
		}
		assert.Less(t, cycleAllocs(runs, f), max+1, "%s: allocs per cycle", what)
	}
	for _, cfg := range []Config{{}, {Local: LocalLIFO}, {Local: LocalFIFO, Steal: StealOne}, {PacketTiming: true}, {LearnHeavy: true}} {
		cfg.Workers, cfg.Stages = 2, []string{"a", "b"}
		s := newSched(t, cfg)
		check("Add (closed stage)", 100, func() { s.Add(p, StageID(2)) }, 0)
		check("Add (open, no cycle)", 100, func() { s.Add(p, Unconstrained) }, 0)
		check("Add", 100, func() { s.Add(p) }, 0)
		check("Add(Priority)", 100, func() { s.Add(p, Priority) }, 0)
		check("Add(Priority, WakeAll)", 100, func() { s.Add(p, StageID(2), Priority, WakeAll) }, 0)
		check("AddAll(8)", 100, func() { s.AddAll(ps) }, 0)
		check("AddAll(8, WakeN)", 100, func() { s.AddAll(ps, WakeN) }, 0)
		check("AddAll(8, Lend)", 100, func() { s.AddAll(ps, Lend) }, 0) // 64 spans, then copies
		check("AddAll(8, Priority)", 100, func() { s.AddAll(ps, StageID(2), Priority) }, 0)
		// Into an open stage (Unconstrained): the wake policy is worked
		// out, with or without an option.
		check("AddAll(8), open stage", 100, func() { s.AddAll(ps, Unconstrained) }, 0)
		check("AddAll(8, WakeOne), open stage", 100, func() { s.AddAll(ps, Unconstrained, WakeOne) }, 0)
		check("AddAll(8, Lend), open stage", 100, func() { s.AddAll(ps, Unconstrained, Lend) }, 0)
		require.NoError(t, runCycle(t, s))

		wide := make([]Packet, 1000)
		for i := range wide {
			wide[i] = p
		}
		checkCycle("cycle of AddAll(1000, Lend)", 20, func() {
			s.AddAll(wide, Lend)
			s.Run(bg)
		}, 0)

		const chain = 10000
		var done atomic.Int64
		chains := []Packet{&chainPacket{done: &done}, &chainPacket{done: &done}}
		checkCycle("cycle of 2 spawn chains", 20, func() {
			for _, c := range chains {
				c.(*chainPacket).left = chain
			}
			s.AddAll(chains)
			s.Run(bg)
		}, 0)
		require.Equal(t, int64(2*31), done.Load(), "chains done")

		done.Store(0)
		values := []Packet{valueChain{chain, &done}, valueChain{chain, &done}}
		checkCycle("cycle of 2 value spawn chains", 20, func() {
			s.AddAll(values)
			s.Run(bg)
		}, 0)
		require.Equal(t, int64(2*31), done.Load(), "value chains done")

		tree := &heapTree{nodes: make([]heapNode, 1<<13-1), leaves: make([]paddedCount, 2)}
		for i := range tree.nodes {
			tree.nodes[i] = heapNode{tree: tree, i: i}
		}
		// A FIFO deque runs the tree breadth first: it grows to a level's
		// width (4096) in O(log n) resizes, and shrinks at most once per
		// window of Cap() pops; the arenas hold what is live at once,
		// which varies from cycle to cycle with the steals. None per
		// packet (8191).
		treeMax := 0.0
		if cfg.Local == LocalFIFO {
			treeMax = 64
		}
		checkCycle("cycle of a fork tree", 20, func() {
			s.Add(&tree.nodes[0])
			s.Run(bg)
		}, treeMax)
		require.Equal(t, int64(31<<12), tree.leafCount(), "leaves")

		// Value packets that name themselves (Namer), run inline by
		// SpawnOrRun (on 2 workers some are spawned and stolen): named
		// without boxing the value.
		namedRoot := Packet(namedNode{depth: 12, done: &named})
		checkCycle("cycle of a SpawnOrRun tree of Namer values", 20, func() {
			s.Add(namedRoot)
			s.Run(bg)
		}, treeMax)
		named.Store(0)
		s.Add(namedRoot)
		require.NoError(t, s.Run(bg))
		require.Equal(t, int64(1<<13-1), named.Load(), "named nodes run")
		require.Contains(t, packetNames(s), "named-node", "the nodes are counted by their name")

		var out int
		root := Packet(fibArgs{18, &out}) // converted once: 2 words allocate
		checkCycle("cycle of a join tree (fib 18, 4180 joins)", 20, func() {
			s.Add(root)
			s.Run(bg)
		}, treeMax)
		require.Equal(t, fib(18), out)
	}
}

// namedNode is a value packet with a name of its own: a binary tree of
// depth levels below it, each node run inline where SpawnOrRun can.
type namedNode struct {
	depth int32
	pad   [3]int64 // not pointer-shaped: an interface would box it
	done  *atomic.Int64
}

func (n namedNode) PacketName() string { return "named-node" }

func (n namedNode) Run(w *Worker) error {
	n.done.Add(1)
	if n.depth > 0 {
		SpawnOrRun(w, namedNode{depth: n.depth - 1, done: n.done})
		SpawnOrRun(w, namedNode{depth: n.depth - 1, done: n.done})
	}
	return nil
}

// packetNames is the names in s's Stats.
func packetNames(s *Scheduler) []string {
	var names []string
	for _, p := range s.Stats().Packets {
		names = append(names, p.Name)
	}
	return names
}

// varNode is a node of a tree whose nodes have 0 to 7 children, counted
// through a join per node whose continuation holds the children's sum;
// its children are spawned, or run with SpawnOrRun if inline.
type varNode struct {
	key    uint64
	depth  int32
	out    *int64
	inline bool
}

type varSum struct {
	sum int64
	out *int64
}

func (d varSum) Run(*Worker) error { atomic.AddInt64(d.out, d.sum+1); return nil }

func (n varNode) Run(w *Worker) error {
	kids := 0
	if n.depth < 9 {
		kids = int(n.key*0x9e3779b97f4a7c15>>61) % 8
	}
	if kids == 0 {
		atomic.AddInt64(n.out, 1)
		return nil
	}
	j := Join(w, varSum{out: n.out})
	for i := range kids {
		c := varNode{n.key*31 + uint64(i) + 1, n.depth + 1, &j.sum, n.inline}
		if n.inline {
			SpawnOrRun(w, c)
		} else {
			Spawn(w, c)
		}
	}
	return nil
}

// TestJoinAnyChildrenAllocatesNothingPerNode: a count by joins over a tree
// whose nodes have any number of children (0 to 7) allocates nothing per
// node once the arenas have grown: a cycle of 100,000 nodes or more
// allocates what its Add does.
func TestJoinAnyChildrenAllocatesNothingPerNode(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := newSched(t, Config{Workers: 2})
	var nodes int64
	cycle := func() {
		nodes = 0
		if err := s.Add(varNode{key: 3, out: &nodes}); err != nil {
			panic(err)
		}
		if err := s.Run(context.Background()); err != nil {
			panic(err)
		}
	}
	for range 5 {
		cycle()
	}
	require.Greater(t, nodes, int64(100_000), "the tree's size")
	allocs := testing.AllocsPerRun(10, cycle)
	assert.LessOrEqual(t, allocs, 4.0, "allocations per cycle of %d nodes", nodes)
}

// TestJoinInlineFreesFrames: a count by joins whose children run inline
// (SpawnOrRun) frees each join's frame as its subtree finishes, in the
// running packet: the first cycle over a tree of 100,000 nodes or more,
// all of it run inside the root's packet on one worker, allocates what a
// few arena chunks hold, not a frame per node (before, continuations of
// joins whose members ran inline were spawned, and ran only once the
// root's packet had returned, every frame kept until then: about 80 bytes
// a node). Every node is counted once.
func TestJoinInlineFreesFrames(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := newSched(t, Config{Workers: 1})
	var nodes int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	require.NoError(t, s.Add(varNode{key: 3, out: &nodes, inline: true}))
	require.NoError(t, runCycle(t, s))
	runtime.ReadMemStats(&after)
	var want int64
	var count func(key uint64, depth int32)
	count = func(key uint64, depth int32) {
		want++
		kids := 0
		if depth < 9 {
			kids = int(key*0x9e3779b97f4a7c15>>61) % 8
		}
		for i := range kids {
			count(key*31+uint64(i)+1, depth+1)
		}
	}
	count(3, 0)
	require.Greater(t, want, int64(100_000), "the tree's size")
	require.Equal(t, want, nodes, "nodes counted")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by the first cycle of %d nodes", want)
	st := s.Stats()
	assert.Greater(t, st.Workers[0].Inlined, uint64(want/2), "packets run inline")
}
