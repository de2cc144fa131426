package reach

import (
	"context"
	"fmt"

	"github.com/wsched/wsched/scheduler"
)

// SequentialDFS searches g depth-first from node 0 on an explicit stack
// and returns how many nodes it reached, node 0 included: the sequential
// baseline, with the same atomic test-and-set (Marks.TrySet) as the
// parallel search. m must be clear; it holds the reached nodes after.
func SequentialDFS(g *Graph, m Marks) int {
	n, _ := dfsAtomic(g, m, nil)
	return n
}

// SequentialPlain is SequentialDFS with plain mark bits (PlainMarks): the
// search without the atomic instruction per edge.
func SequentialPlain(g *Graph, m PlainMarks) int {
	n, _ := dfsPlain(g, m, nil)
	return n
}

// dfsAtomic is SequentialDFS on stack's array (grown if need be, and
// returned for the next search).
func dfsAtomic(g *Graph, m Marks, stack []uint32) (int, []uint32) {
	m.TrySet(0)
	n := 1
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range g.Out(v) {
			if m.TrySet(t) {
				stack = append(stack, t)
				n++
			}
		}
	}
	return n, stack
}

// dfsPlain is dfsAtomic with PlainMarks.
func dfsPlain(g *Graph, m PlainMarks, stack []uint32) (int, []uint32) {
	m.TrySet(0)
	n := 1
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range g.Out(v) {
			if m.TrySet(t) {
				stack = append(stack, t)
				n++
			}
		}
	}
	return n, stack
}

// TakeBatch is how many nodes the batched searches (seq-atomic-take,
// worklist-take) take off their stack at once.
const TakeBatch = 16

// scanBatch scans nodes (newest last) as the batched searches do: first
// every node's offsets, then the mark word of every target, each load
// independent of the others so that their cache misses overlap, then
// each node newest first, calling claim for every target whose mark it
// sets, targets in order.
func scanBatch(g *Graph, m Marks, nodes []uint32, claim func(uint32)) {
	var lo, hi [TakeBatch]uint32
	offs, targets := g.Offsets, g.Targets
	for i, v := range nodes {
		lo[i], hi[i] = offs[v], offs[v+1]
	}
	for i := range nodes {
		for _, t := range targets[lo[i]:hi[i]] {
			m[t>>6].Load() // an atomic load stays, its value unused: only its miss matters
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		for _, t := range targets[lo[i]:hi[i]] {
			if m.TrySet(t) {
				claim(t)
			}
		}
	}
}

// dfsAtomicTake is dfsAtomic taking up to TakeBatch nodes off the stack
// at once and scanning them with scanBatch: the sequential search with
// the batched loads the worklist-take body makes.
func dfsAtomicTake(g *Graph, m Marks, stack []uint32) (int, []uint32) {
	m.TrySet(0)
	n := 1
	stack = append(stack[:0], 0)
	var nodes [TakeBatch]uint32
	for len(stack) > 0 {
		k := min(len(stack), TakeBatch)
		copy(nodes[:k], stack[len(stack)-k:])
		stack = stack[:len(stack)-k]
		scanBatch(g, m, nodes[:k], func(t uint32) {
			stack = append(stack, t)
			n++
		})
	}
	return n, stack
}

// SeqAtomicTake returns an Exec that runs dfsAtomicTake.
func SeqAtomicTake(g *Graph) Exec { return &seqAtomicTake{seqAtomic{g: g, m: NewMarks(g.Nodes())}} }

type seqAtomicTake struct{ seqAtomic }

func (e *seqAtomicTake) Search() (n int, err error) {
	n, e.stack = dfsAtomicTake(e.g, e.m, e.stack)
	return n, nil
}

// An Exec searches one graph, again and again.
type Exec interface {
	// Reset readies the next search: clears the marks (not part of a
	// search's time).
	Reset()
	// Search searches from node 0 and returns how many nodes it reached.
	Search() (int, error)
	// Close releases what the executor holds.
	Close() error
}

// SeqAtomic returns an Exec that runs SequentialDFS, on a stack it keeps
// from one search to the next (as a worklist keeps its stacks).
func SeqAtomic(g *Graph) Exec { return &seqAtomic{g: g, m: NewMarks(g.Nodes())} }

type seqAtomic struct {
	g     *Graph
	m     Marks
	stack []uint32
}

func (e *seqAtomic) Reset() { e.m.Clear() }
func (e *seqAtomic) Search() (n int, err error) {
	n, e.stack = dfsAtomic(e.g, e.m, e.stack)
	return n, nil
}
func (e *seqAtomic) Close() error { return nil }

// SeqPlain returns an Exec that runs SequentialPlain, on a stack it keeps
// from one search to the next.
func SeqPlain(g *Graph) Exec { return &seqPlain{g: g, m: NewPlainMarks(g.Nodes())} }

type seqPlain struct {
	g     *Graph
	m     PlainMarks
	stack []uint32
}

func (e *seqPlain) Reset() { e.m.Clear() }
func (e *seqPlain) Search() (n int, err error) {
	n, e.stack = dfsPlain(e.g, e.m, e.stack)
	return n, nil
}
func (e *seqPlain) Close() error { return nil }

// WorklistExec searches with a scheduler.Worklist[uint32] on a scheduler
// of its own: an item is a node that its feeder has marked; the body scans
// the node's out-edges and feeds every target whose mark it sets (the
// sequential loop's body), and counts the node on its worker's value of a
// scheduler.Reducer. The scheduler, worklist and reducer serve every
// search.
type WorklistExec struct {
	g     *Graph
	m     Marks
	s     *scheduler.Scheduler
	wl    *scheduler.Worklist[uint32]
	count *scheduler.Reducer[int64]
	seed  [1]uint32
	dirty bool // a search ran since the last Reset
}

// NewWorklistExec returns a WorklistExec with workers workers (GOMAXPROCS
// if 0) and the worklist's options (scheduler.WorklistBatch).
func NewWorklistExec(g *Graph, workers int, opts ...scheduler.WorklistOption) (*WorklistExec, error) {
	return newWorklistExec(g, workers, false, opts...)
}

// NewWorklistTakeExec is NewWorklistExec whose body takes up to
// TakeBatch − 1 more nodes off its stack (Feeder.Take) and scans them
// with its own as the batched sequential search does (scanBatch).
func NewWorklistTakeExec(g *Graph, workers int, opts ...scheduler.WorklistOption) (*WorklistExec, error) {
	return newWorklistExec(g, workers, true, opts...)
}

func newWorklistExec(g *Graph, workers int, take bool, opts ...scheduler.WorklistOption) (*WorklistExec, error) {
	s, err := scheduler.New(scheduler.Config{Workers: workers})
	if err != nil {
		return nil, err
	}
	e := &WorklistExec{g: g, m: NewMarks(g.Nodes()), s: s}
	e.count = scheduler.NewReducer(s, func(a, b int64) int64 { return a + b })
	offs, targets, m, count := g.Offsets, g.Targets, e.m, e.count
	body := func(w *scheduler.Worker, v *uint32, f *scheduler.Feeder[uint32]) error {
		u := *v
		for _, t := range targets[offs[u]:offs[u+1]] {
			if m.TrySet(t) {
				f.Add(t)
			}
		}
		*count.Local(w)++
		return nil
	}
	if take {
		body = func(w *scheduler.Worker, v *uint32, f *scheduler.Feeder[uint32]) error {
			var nodes [TakeBatch]uint32
			taken := f.Take(TakeBatch - 1) // newest first
			k := len(taken) + 1
			for i, t := range taken { // nodes newest last: the body's own item last
				nodes[k-2-i] = t
			}
			nodes[k-1] = *v
			scanBatch(g, m, nodes[:k], f.Add)
			*count.Local(w) += int64(k)
			return nil
		}
	}
	e.wl, err = scheduler.NewWorklist(s, "reach", body, opts...)
	if err != nil {
		s.Close()
		return nil, err
	}
	return e, nil
}

// Reset clears the marks and the count.
func (e *WorklistExec) Reset() {
	e.m.Clear()
	e.count.Reset()
	e.dirty = false
}

// Search marks node 0, seeds the worklist with it and runs a cycle. The
// marks must be clear (Reset).
func (e *WorklistExec) Search() (int, error) {
	if e.dirty {
		return 0, fmt.Errorf("reach: Search without Reset")
	}
	e.dirty = true
	e.m.TrySet(0)
	e.seed[0] = 0
	if err := e.wl.Add(e.seed[:]); err != nil {
		return 0, err
	}
	if err := e.s.Run(context.Background()); err != nil {
		return 0, err
	}
	return int(e.count.Result()), nil
}

// Close closes the scheduler.
func (e *WorklistExec) Close() error { return e.s.Close() }

// Worklist returns the worklist (its stats, in tests).
func (e *WorklistExec) Worklist() *scheduler.Worklist[uint32] { return e.wl }

// Marks returns the marks of the last search.
func (e *WorklistExec) Marks() Marks { return e.m }

// executors returns, by name, the makers of every executor at workers
// workers, in the benchmarks' order: seq-atomic, seq-plain, worklist (the
// default batch), seq-atomic-take, worklist-take, then worklist-batch=B
// for B in 1, 4, 8, 16.
func executors(g *Graph, workers int) (names []string, mk map[string]func() (Exec, error)) {
	mk = map[string]func() (Exec, error){
		"seq-atomic":      func() (Exec, error) { return SeqAtomic(g), nil },
		"seq-plain":       func() (Exec, error) { return SeqPlain(g), nil },
		"worklist":        func() (Exec, error) { return NewWorklistExec(g, workers) },
		"seq-atomic-take": func() (Exec, error) { return SeqAtomicTake(g), nil },
		"worklist-take":   func() (Exec, error) { return NewWorklistTakeExec(g, workers) },
	}
	names = []string{"seq-atomic", "seq-plain", "worklist", "seq-atomic-take", "worklist-take"}
	for _, b := range []int{1, 4, 8, 16} {
		name := fmt.Sprintf("worklist-batch=%d", b)
		mk[name] = func() (Exec, error) { return NewWorklistExec(g, workers, scheduler.WorklistBatch(b)) }
		names = append(names, name)
	}
	return names, mk
}
