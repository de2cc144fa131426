package reach

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
)

// Params say which graph New generates.
type Params struct {
	// Name names the graph in benchmark names.
	Name string
	// Nodes is the number of nodes, 2 or more, at most 1<<31.
	Nodes int
	// Edges is the number of edges, at least Nodes-Nodes/Unanchored
	// (the spanning edges), at most 1<<32-1.
	Edges int
	// Seed seeds the generator (a PCG source seeded with Seed and
	// Seed^seedMix).
	Seed uint64
}

// Unanchored is the share of nodes, 1/Unanchored of them, the highest
// numbered, that get no spanning edge: they are reached only if a random
// edge from a reached node leads to them, so that not every node is
// reached and a search's count depends on the edges it follows.
const Unanchored = 16

// Default is the benchmarks' graph: 2 Mi nodes, 8 Mi edges.
var Default = Params{Name: "2Mi", Nodes: 1 << 21, Edges: 1 << 23, Seed: 1}

// Small is the tests' graph: 32 Ki nodes, 128 Ki edges.
var Small = Params{Name: "32Ki", Nodes: 1 << 15, Edges: 1 << 17, Seed: 1}

// seedMix is the PCG source's second seed word: Seed xor seedMix.
const seedMix = 0x9e3779b97f4a7c15

// A Graph is a directed graph in compressed sparse row form: node v's
// out-edges lead to Targets[Offsets[v]:Offsets[v+1]].
type Graph struct {
	// Offsets has Nodes()+1 entries, from 0 to len(Targets), ascending.
	Offsets []uint32
	// Targets are the edges' target nodes, grouped by source node, each
	// node's in the order the generator drew them.
	Targets []uint32
}

// Nodes returns the number of nodes.
func (g *Graph) Nodes() int { return len(g.Offsets) - 1 }

// Edges returns the number of edges.
func (g *Graph) Edges() int { return len(g.Targets) }

// Out returns v's out-edges' targets (a part of g.Targets: not to be
// written).
func (g *Graph) Out(v uint32) []uint32 { return g.Targets[g.Offsets[v]:g.Offsets[v+1]] }

// New generates the graph p describes, the same for the same Params: for
// every node i in 1..Nodes-Nodes/Unanchored-1 a spanning edge from a
// uniformly random node below i to i (so that node 0 reaches all of them),
// then the rest of the Edges edges with uniformly random source and
// target (self-loops and parallel edges included). The edges are drawn
// twice from the same seed, once to count each node's out-degree and
// once to place them, so that no edge list is kept.
func New(p Params) (*Graph, error) {
	anchored := p.Nodes - p.Nodes/Unanchored
	switch {
	case p.Nodes < 2 || p.Nodes > 1<<31:
		return nil, fmt.Errorf("reach: %d nodes: want 2 to 1<<31", p.Nodes)
	case p.Edges < anchored-1 || uint64(p.Edges) > 1<<32-1:
		return nil, fmt.Errorf("reach: %d edges for %d nodes: want %d (the spanning edges) to 1<<32-1", p.Edges, p.Nodes, anchored-1)
	}
	g := &Graph{Offsets: make([]uint32, p.Nodes+1), Targets: make([]uint32, p.Edges)}
	// Count: Offsets[v+1] is v's out-degree.
	edges(p, anchored, func(src, _ uint32) { g.Offsets[src+1]++ })
	for v := range p.Nodes {
		g.Offsets[v+1] += g.Offsets[v]
	}
	// Place: next[v] is where v's next edge goes, starting at Offsets[v].
	next := make([]uint32, p.Nodes)
	copy(next, g.Offsets)
	edges(p, anchored, func(src, dst uint32) {
		g.Targets[next[src]] = dst
		next[src]++
	})
	return g, nil
}

// MustNew is New that panics on an error.
func MustNew(p Params) *Graph {
	g, err := New(p)
	if err != nil {
		panic(err)
	}
	return g
}

// edges calls f with each of p's edges, in the order drawn.
func edges(p Params, anchored int, f func(src, dst uint32)) {
	r := rand.New(rand.NewPCG(p.Seed, p.Seed^seedMix))
	n := uint32(p.Nodes)
	for i := 1; i < anchored; i++ {
		f(r.Uint32N(uint32(i)), uint32(i))
	}
	for range p.Edges - (anchored - 1) {
		src := r.Uint32N(n)
		f(src, r.Uint32N(n))
	}
}

// Marks are a search's mark bits, one per node, set atomically: the
// searches share them, and a node's first marker owns it.
type Marks []atomic.Uint64

// NewMarks returns clear marks for n nodes.
func NewMarks(n int) Marks { return make(Marks, (n+63)/64) }

// TrySet sets v's bit and reports whether it was clear: true for exactly
// one of any number of concurrent calls for v. An atomic load, and an
// atomic Or (a locked instruction) only if the bit was clear: what a
// collector's mark does, since most edges lead to marked nodes (at 4
// edges a node, three in four).
func (m Marks) TrySet(v uint32) bool {
	bit := uint64(1) << (v & 63)
	word := &m[v>>6]
	if word.Load()&bit != 0 {
		return false
	}
	return word.Or(bit)&bit == 0
}

// IsSet reports whether v's bit is set.
func (m Marks) IsSet(v uint32) bool { return m[v>>6].Load()&(uint64(1)<<(v&63)) != 0 }

// Clear clears every bit. Not during a search.
func (m Marks) Clear() {
	for i := range m {
		m[i].Store(0)
	}
}

// Count returns how many bits are set. Not during a search.
func (m Marks) Count() int {
	n := 0
	for i := range m {
		n += bits.OnesCount64(m[i].Load())
	}
	return n
}

// PlainMarks are mark bits with plain loads and stores: for one
// goroutine.
type PlainMarks []uint64

// NewPlainMarks returns clear plain marks for n nodes.
func NewPlainMarks(n int) PlainMarks { return make(PlainMarks, (n+63)/64) }

// TrySet sets v's bit and reports whether it was clear.
func (m PlainMarks) TrySet(v uint32) bool {
	w, bit := &m[v>>6], uint64(1)<<(v&63)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	return true
}

// Clear clears every bit.
func (m PlainMarks) Clear() { clear(m) }

// Count returns how many bits are set.
func (m PlainMarks) Count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}
