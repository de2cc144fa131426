package uts

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"math"
)

// Kind is a tree's kind: how a node's number of children is drawn.
type Kind int

const (
	// Geometric (UTS -t 1): a node's number of children follows a
	// geometric distribution whose mean depends on its depth (Fn).
	Geometric Kind = iota
	// Binomial (UTS -t 0): the root has B0 children; every other node has
	// M children with probability Q, else none.
	Binomial
)

func (k Kind) String() string {
	switch k {
	case Geometric:
		return "geometric"
	case Binomial:
		return "binomial"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// GeoFn is a geometric tree's shape function (UTS -a): the expected
// number of children of a node at depth d > 0. The root's is B0.
type GeoFn int

const (
	// Linear (UTS -a 0): B0 · (1 − d/Depth).
	Linear GeoFn = 0
	// Fixed (UTS -a 3): B0 below Depth, none at Depth.
	Fixed GeoFn = 3
)

// Params define a tree; the tree is a pure function of them. The fields
// are UTS's command-line parameters, named by its flags.
type Params struct {
	Name string
	Kind Kind
	// Seed (-r) is the root's seed: its state is the SHA-1 of 16 zero
	// bytes and the seed, big-endian.
	Seed int32
	// B0 (-b): geometric, the expected number of children at depth 0 (and
	// below, by Fn); binomial, the root's number of children.
	B0 float64
	// Depth (-d): geometric, the depth at which Fn reaches 0 (gen_mx).
	Depth int
	// Fn (-a): geometric, the shape function.
	Fn GeoFn
	// Q (-q) and M (-m): binomial, a non-root node has M children with
	// probability Q. M·Q slightly below 1 makes a tree that is deep and
	// very unbalanced.
	Q float64
	M int
	// Rounds (-g, "granularity") is how many times a child's SHA-1 is
	// computed; 0 means 1.
	Rounds int
}

// The two shapes of the UTS benchmark used here, with the node counts,
// depths and leaf counts that UTS's sample trees list for them (checked by
// TestPublishedTrees).
var (
	// T1: geometric, fixed shape: 4,130,071 nodes, depth 10, 3,305,118
	// leaves (UTS "-t 1 -a 3 -d 10 -b 4 -r 19").
	T1 = Params{Name: "T1", Kind: Geometric, Seed: 19, B0: 4, Depth: 10, Fn: Fixed}
	// T3: binomial: 4,112,897 nodes, depth 1,572, 3,599,034 leaves (UTS
	// "-t 0 -b 2000 -q 0.124875 -m 8 -r 42"). M·Q = 0.999: the subtrees
	// of the root's children range from one node to hundreds of thousands.
	T3 = Params{Name: "T3", Kind: Binomial, Seed: 42, B0: 2000, Q: 0.124875, M: 8}
)

// Small trees of the same shapes, for tests and quick runs.
var (
	// T1S is T1 cut at depth 7 (under Fixed, the top of T1 unchanged):
	// 63,914 nodes, 51,124 leaves.
	T1S = Params{Name: "T1S", Kind: Geometric, Seed: 19, B0: 4, Depth: 7, Fn: Fixed}
	// T3S is T3's shape with 200 children at the root and seed 31: 94,577
	// nodes, depth 237, 82,779 leaves. (T3's own seed with a smaller root
	// keeps most of T3: one of its first 200 subtrees has 2.7 million
	// nodes.)
	T3S = Params{Name: "T3S", Kind: Binomial, Seed: 31, B0: 200, Q: 0.124875, M: 8}
)

// maxChildren bounds a node's children, except a binomial root's
// (UTS's MAXNUMCHILDREN).
const maxChildren = 100

// A Node is a node of a tree: its 20-byte SHA-1 state and its depth. Its
// children are derived from its state alone.
type Node struct {
	State  [sha1.Size]byte
	Height int32
}

// A Tree computes the nodes of the tree that Params define, on demand.
// Immutable; safe for concurrent use.
type Tree struct {
	p Params
	// geometric: logq[d] = log(1 − p_d), p_d = 1/(1+b_d), for the depths
	// whose expected number of children b_d is positive; deeper nodes
	// are leaves.
	logq   []float64
	rounds int
}

// New checks p and returns its tree.
func New(p Params) (*Tree, error) {
	t := &Tree{p: p, rounds: max(p.Rounds, 1)}
	switch p.Kind {
	case Geometric:
		if p.B0 <= 0 || p.Depth < 1 || (p.Fn != Fixed && p.Fn != Linear) {
			return nil, fmt.Errorf("uts: bad geometric tree %+v", p)
		}
		for d := 0; d < p.Depth; d++ {
			b := p.B0
			if d > 0 && p.Fn == Linear {
				b = p.B0 * (1 - float64(d)/float64(p.Depth))
			}
			t.logq = append(t.logq, math.Log(1-1/(1+b)))
		}
	case Binomial:
		if p.B0 < 1 || p.M < 1 || p.Q < 0 || p.Q > 1 {
			return nil, fmt.Errorf("uts: bad binomial tree %+v", p)
		}
	default:
		return nil, fmt.Errorf("uts: unknown kind %d", p.Kind)
	}
	return t, nil
}

// MustNew is New for parameters known to be good.
func MustNew(p Params) *Tree {
	t, err := New(p)
	if err != nil {
		panic(err)
	}
	return t
}

// Params returns the tree's parameters.
func (t *Tree) Params() Params { return t.p }

// Root returns the root.
func (t *Tree) Root() Node {
	var b [20]byte
	binary.BigEndian.PutUint32(b[16:], uint32(t.p.Seed))
	return Node{State: sha1.Sum(b[:])}
}

// rand is UTS's rng_rand: the state's last four bytes, big-endian, as a
// non-negative 31-bit number.
func rand(n *Node) uint32 {
	return binary.BigEndian.Uint32(n.State[16:]) & 0x7fffffff
}

// NumChildren returns how many children n has.
func (t *Tree) NumChildren(n *Node) int {
	u := float64(rand(n)) / (1 << 31) // uniform on [0, 1)
	if t.p.Kind == Binomial {
		if n.Height == 0 {
			return int(t.p.B0)
		}
		if u < t.p.Q {
			return t.p.M
		}
		return 0
	}
	if int(n.Height) >= len(t.logq) {
		return 0
	}
	// The inverse of the geometric distribution's CDF.
	k := int(math.Floor(math.Log(1-u) / t.logq[n.Height]))
	return min(k, maxChildren)
}

// Child returns n's child number i: its state is the SHA-1 of n's state
// and i, big-endian (UTS's rng_spawn), computed Rounds times.
func (t *Tree) Child(n *Node, i int) Node {
	var c Node
	t.ChildInto(n, i, &c)
	return c
}

// ChildInto is Child writing the child into c, where a search keeps it.
// A search that computes each node in its place on an explicit stack
// (Search) runs the trees 10-13% faster than the recursion that passes
// nodes by value (Count): a Node is 24 bytes, which Go passes and returns in
// memory, and every copy of it is a store and a load of another width.
func (t *Tree) ChildInto(n *Node, i int, c *Node) {
	var b [24]byte
	copy(b[:20], n.State[:])
	binary.BigEndian.PutUint32(b[20:], uint32(i))
	c.Height = n.Height + 1
	for range t.rounds {
		c.State = sha1.Sum(b[:])
	}
}

// Stats describe a whole tree.
type Stats struct {
	Nodes, Leaves int64
	MaxDepth      int32
}

// Stats searches the tree sequentially and returns its size, leaves and
// depth.
func (t *Tree) Stats() Stats {
	var s Stats
	t.stats(t.Root(), &s)
	return s
}

func (t *Tree) stats(n Node, s *Stats) {
	s.Nodes++
	s.MaxDepth = max(s.MaxDepth, n.Height)
	k := t.NumChildren(&n)
	if k == 0 {
		s.Leaves++
	}
	for i := range k {
		t.stats(t.Child(&n, i), s)
	}
}
