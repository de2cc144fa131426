package uts

import (
	"context"
	"encoding/binary"
	"sync/atomic"

	"github.com/wsched/wsched/scheduler"
)

// WSchedOptions say how the wsched search is written: the two ways the
// scheduler's documentation offers to spawn children, the two to add up
// a tree, and, not a packet per node, the way it offers a packet to split
// work of its own.
type WSchedOptions struct {
	// Config is the scheduler's configuration.
	Config scheduler.Config
	// Inline spawns children with scheduler.SpawnOrRun (run at once
	// unless a worker is idle: the documented choice for fine-grained
	// recursion); otherwise with scheduler.Spawn.
	Inline bool
	// Split searches each packet's subtree depth-first on a stack of
	// its own and hands the oldest part of the stack to other workers,
	// as packets of their own, only when Worker.ShouldSplit says an idle
	// worker wants work: the documented way for a packet that works
	// through work of its own, not a packet per node. Inline and Join do
	// not apply.
	Split bool
	// Join adds the count up the tree through joins (scheduler.Join in
	// every node with children; each child adds its subtree's count to
	// its parent's continuation); otherwise every node counts itself on
	// its worker's counter (indexed by Worker.ID, one cache line each).
	Join bool
	// Worklist searches the tree as a scheduler.Worklist whose body
	// feeds a node's children (the sequential loop over a stack, which
	// the worklist splits only while a worker is idle), the count kept in
	// a scheduler.Reducer. Inline, Split and Join do not apply.
	Worklist bool
	// Scalar, with Inline, keeps each node's packet in scalar fields
	// (scalarNode: the SHA-1 state as two uint64 and a uint32), which Go
	// passes in registers, where Node's [20]byte is passed in memory:
	// what the scheduler's SpawnOrRun doc advises for a packet per node.
	Scalar bool
	// Stack, with Worklist, makes it a stack worklist
	// (scheduler.NewStackWorklist): the body gets the node by value and
	// appends its children to the stack it is given, each computed in
	// its place there.
	Stack bool
	// Take, with Worklist, makes the body take up to Take more waiting
	// nodes with Feeder.Take and feed the children of all of them, its
	// own node's first: the batch the docs advise where an item's work is
	// a chain of dependent steps, here a SHA-1 of the parent's hash, that
	// items taken together let the CPU overlap. 0: one node a call.
	Take int
	// WorklistBatch is the worklist's batch (scheduler.WorklistBatch);
	// 0 keeps the default.
	WorklistBatch int
}

// WSched searches with a wsched scheduler: every node a value packet,
// created while the search runs, as a user of the public API writes it
// (see the node types below).
func WSched(t *Tree, o WSchedOptions) (Exec, error) {
	s, err := scheduler.New(o.Config)
	if err != nil {
		return nil, err
	}
	e := &wsExec{t: t, s: s, o: o, counts: make([]counter, s.Workers()), stacks: make([]stack, s.Workers())}
	if o.Worklist {
		e.nodes = scheduler.NewReducer(s, func(a, b int64) int64 { return a + b })
		var opts []scheduler.WorklistOption
		if o.WorklistBatch != 0 {
			opts = append(opts, scheduler.WorklistBatch(o.WorklistBatch))
		}
		if o.Stack {
			e.wl, err = scheduler.NewStackWorklist(s, "uts", func(w *scheduler.Worker, n Node, st []Node) ([]Node, error) {
				*e.nodes.Local(w)++
				for i := range t.NumChildren(&n) {
					st = append(st, Node{})
					t.ChildInto(&n, i, &st[len(st)-1])
				}
				return st, nil
			}, opts...)
		} else if o.Take > 0 {
			e.wl, err = scheduler.NewWorklist(s, "uts", func(w *scheduler.Worker, n *Node, f *scheduler.Feeder[Node]) error {
				taken := f.Take(o.Take) // before feeding: the waiting nodes, not n's children
				*e.nodes.Local(w) += int64(1 + len(taken))
				for i := range t.NumChildren(n) {
					t.ChildInto(n, i, f.Next())
				}
				for j := range taken {
					m := &taken[j]
					for i := range t.NumChildren(m) {
						t.ChildInto(m, i, f.Next())
					}
				}
				return nil
			}, opts...)
		} else {
			e.wl, err = scheduler.NewWorklist(s, "uts", func(w *scheduler.Worker, n *Node, f *scheduler.Feeder[Node]) error {
				*e.nodes.Local(w)++
				for i := range t.NumChildren(n) {
					t.ChildInto(n, i, f.Next())
				}
				return nil
			}, opts...)
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	return e, nil
}

type wsExec struct {
	t      *Tree
	s      *scheduler.Scheduler
	o      WSchedOptions
	counts []counter
	stacks []stack // Split's, one per worker
	total  int64   // the join variants' sum
	wl     *scheduler.Worklist[Node]
	nodes  *scheduler.Reducer[int64] // the worklist's count
}

// counter is one worker's node count, alone on its cache line.
type counter struct {
	n int64
	_ [56]byte
}

func (e *wsExec) Search() (int64, error) {
	clear(e.counts)
	e.total = 0
	root := e.t.Root()
	if e.o.Worklist {
		e.nodes.Reset()
		if err := e.wl.Add([]Node{root}); err != nil {
			return 0, err
		}
		if err := e.s.Run(context.Background()); err != nil {
			return 0, err
		}
		return e.nodes.Result(), nil
	}
	var p scheduler.Packet
	switch {
	case e.o.Split:
		p = splitNode{root, e}
	case e.o.Join && e.o.Inline:
		p = joinInlineNode{root, e.t, &e.total}
	case e.o.Join:
		p = joinNode{root, e.t, &e.total}
	case e.o.Inline && e.o.Scalar:
		p = packNode(&root, e)
	case e.o.Inline:
		p = inlineNode{root, e}
	default:
		p = node{root, e}
	}
	if err := e.s.Add(p); err != nil {
		return 0, err
	}
	if err := e.s.Run(context.Background()); err != nil {
		return 0, err
	}
	if e.o.Join && !e.o.Split {
		return e.total, nil
	}
	var n int64
	for i := range e.counts {
		n += e.counts[i].n
	}
	return n, nil
}

func (e *wsExec) Close() error { return e.s.Close() }

// Scheduler returns the scheduler (its stats, in tests).
func (e *wsExec) Scheduler() *scheduler.Scheduler { return e.s }

// node is a tree node as a packet, spawning its children with
// scheduler.Spawn and counting itself on its worker's counter.
type node struct {
	Node
	e *wsExec
}

func (n node) Run(w *scheduler.Worker) error {
	e := n.e
	e.counts[w.ID()].n++
	for i := range e.t.NumChildren(&n.Node) {
		scheduler.Spawn(w, node{e.t.Child(&n.Node, i), e})
	}
	return nil
}

// inlineNode is node with scheduler.SpawnOrRun.
type inlineNode struct {
	Node
	e *wsExec
}

func (n inlineNode) Run(w *scheduler.Worker) error {
	e := n.e
	e.counts[w.ID()].n++
	for i := range e.t.NumChildren(&n.Node) {
		scheduler.SpawnOrRun(w, inlineNode{e.t.Child(&n.Node, i), e})
	}
	return nil
}

// scalarNode is inlineNode with the node's state in scalar fields, so
// that the packet is passed in registers.
type scalarNode struct {
	s0, s1 uint64
	s2     uint32
	height int32
	e      *wsExec
}

func packNode(n *Node, e *wsExec) scalarNode {
	return scalarNode{binary.LittleEndian.Uint64(n.State[0:]), binary.LittleEndian.Uint64(n.State[8:]), binary.LittleEndian.Uint32(n.State[16:]), n.Height, e}
}

func (n scalarNode) Run(w *scheduler.Worker) error {
	e := n.e
	e.counts[w.ID()].n++
	var nd, c Node
	binary.LittleEndian.PutUint64(nd.State[0:], n.s0)
	binary.LittleEndian.PutUint64(nd.State[8:], n.s1)
	binary.LittleEndian.PutUint32(nd.State[16:], n.s2)
	nd.Height = n.height
	for i := range e.t.NumChildren(&nd) {
		e.t.ChildInto(&nd, i, &c)
		scheduler.SpawnOrRun(w, packNode(&c, e))
	}
	return nil
}

// splitNode is a subtree searched in one packet, depth-first on an
// explicit stack (visit), that hands the oldest part of its stack to
// other workers, as packets of their own, only when Worker.ShouldSplit
// reports an idle worker short of queued work: what ShouldSplit's doc
// tells a packet with a queue of its own to do.
type splitNode struct {
	Node
	e *wsExec
}

func (n splitNode) Run(w *scheduler.Worker) error {
	n.e.counts[w.ID()].n += n.e.visit(w, n.Node)
	return nil
}

// stack is one worker's Stack for visit, kept between packets so that a
// search allocates none, alone on its cache lines.
type stack struct {
	s Stack
	_ [40]byte
}

// visit searches n's subtree depth-first, as Tree.Search does, but for
// the children it spawns, and returns how many nodes it searched.
func (e *wsExec) visit(w *scheduler.Worker, n Node) int64 {
	s := &e.stacks[w.ID()].s
	st, c := s.start(e.t, &n), int64(1)
	for len(st) > 0 {
		var k int64
		st, k = e.t.walk(st, splitEvery)
		c += k
		if len(st) > 0 && w.ShouldSplit() {
			e.split(w, st)
		}
	}
	s.f = st
	return c
}

// splitEvery is how often, in steps of its search, visit asks
// ShouldSplit.
const splitEvery = 8

// split spawns the oldest children on the stack not searched yet: every
// one left in the lowest frames, until at least two are spawned (the
// biggest subtrees, and away from where the worker reads; two, because
// the scheduler offers idle workers every private packet but the newest).
func (e *wsExec) split(w *scheduler.Worker, st []frame) {
	spawned := 0
	for i := range st {
		f := &st[i]
		for ; f.next < f.n; f.next++ {
			scheduler.Spawn(w, splitNode{e.t.Child(&f.node, int(f.next)), e})
			spawned++
		}
		if spawned >= 2 {
			return
		}
	}
}

// joinNode counts its subtree through a join: a leaf adds 1 to its
// parent's sum; a node with children opens a join whose continuation
// (subtreeSum) adds 1 and what the children added to its own parent's
// sum. Children spawned with scheduler.Spawn.
type joinNode struct {
	Node
	t   *Tree
	out *int64 // the parent's subtreeSum.n, added to atomically
}

func (n joinNode) Run(w *scheduler.Worker) error {
	k := n.t.NumChildren(&n.Node)
	if k == 0 {
		atomic.AddInt64(n.out, 1)
		return nil
	}
	sum := scheduler.Join(w, subtreeSum{out: n.out})
	for i := range k {
		scheduler.Spawn(w, joinNode{n.t.Child(&n.Node, i), n.t, &sum.n})
	}
	return nil
}

// joinInlineNode is joinNode with scheduler.SpawnOrRun.
type joinInlineNode struct {
	Node
	t   *Tree
	out *int64
}

func (n joinInlineNode) Run(w *scheduler.Worker) error {
	k := n.t.NumChildren(&n.Node)
	if k == 0 {
		atomic.AddInt64(n.out, 1)
		return nil
	}
	sum := scheduler.Join(w, subtreeSum{out: n.out})
	for i := range k {
		scheduler.SpawnOrRun(w, joinInlineNode{n.t.Child(&n.Node, i), n.t, &sum.n})
	}
	return nil
}

// subtreeSum is the continuation of a node's join: n is what its
// children added (their subtrees' counts), and the node itself is one
// more.
type subtreeSum struct {
	n   int64
	out *int64
}

func (s subtreeSum) Run(*scheduler.Worker) error {
	atomic.AddInt64(s.out, s.n+1)
	return nil
}
