package uts

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
	"golang.org/x/sync/errgroup"
)

// An Exec searches one tree with one executor: Search returns the number
// of nodes. An Exec is not reentrant: one Search at a time.
type Exec interface {
	Search() (int64, error)
	// Close stops the executor's goroutines and waits for them.
	Close() error
}

// count is the sequential recursion: n's subtree's node count. (n is
// passed by value: the address of a local passed to a recursive call
// escapes, and each node would be a heap allocation.)
func (t *Tree) count(n Node) int64 {
	c := int64(1)
	for i := range t.NumChildren(&n) {
		c += t.count(t.Child(&n, i))
	}
	return c
}

// Count searches the tree sequentially, by plain recursion on the calling
// goroutine, and returns its node count.
func (t *Tree) Count() int64 {
	return t.count(t.Root())
}

// A Stack is a depth-first search's explicit stack, kept between searches
// so that a search allocates nothing once it has grown to the tree's
// depth. The zero Stack is empty. Not safe for concurrent use.
type Stack struct {
	f []frame
}

// frame is a node on a Stack, with how many of its children have been
// pushed (next) of its n.
type frame struct {
	node    Node
	next, n int32
}

// start returns s's frames emptied, with n pushed.
func (s *Stack) start(t *Tree, n *Node) []frame {
	return append(s.f[:0], frame{node: *n, n: int32(t.NumChildren(n))})
}

// walk searches depth-first on st until k nodes are pushed or st is
// empty, and returns st and the nodes pushed. Each child is computed in
// its place on the stack (ChildInto): no Node is copied. (The search
// keeps its frames in a local slice: through a Stack's field, the
// compiler stores and loads the slice around every call.)
func (t *Tree) walk(st []frame, k int64) ([]frame, int64) {
	c := int64(0)
	for len(st) > 0 && c < k {
		top := len(st) - 1
		p := &st[top]
		if p.next == p.n {
			st = st[:top]
			continue
		}
		if len(st) == cap(st) {
			st = slices.Grow(st, 1)
		}
		st = st[:top+2]
		p, ch := &st[top], &st[top+1]
		t.ChildInto(&p.node, int(p.next), &ch.node)
		p.next++
		ch.next, ch.n = 0, int32(t.NumChildren(&ch.node))
		c++
	}
	return st, c
}

// Search counts n's subtree depth-first on s, 10-13% faster than
// Count's recursion: with Feeding, the baseline T_seq (BenchmarkTargets
// takes the faster of the two; Feeding was 2-4 ns a node faster on T1
// and level on T3), and the cutoff executors' search below their cutoff.
func (t *Tree) Search(n Node, s *Stack) int64 {
	st, c := t.walk(s.start(t, &n), math.MaxInt64)
	s.f = st
	return c + 1
}

// Sequential is a baseline: Search, on a goroutine of its own (started
// per search, as every other executor's searching goroutines are).
func Sequential(t *Tree) Exec { return &seqExec{t: t} }

type seqExec struct {
	t *Tree
	s Stack
}

func (e *seqExec) Search() (int64, error) {
	c := make(chan int64)
	go func() { c <- e.t.Search(e.t.Root(), &e.s) }()
	return <-c, nil
}
func (e *seqExec) Close() error { return nil }

// Recursive is plain recursion (Count), on a goroutine of its own. On
// the calling goroutine the same recursion ran T1 10-12% slower in the
// harness (cmd/bench's goroutine, deep in its call stack), where a fresh
// goroutine, the goroutines of the cutoff executors and a standalone
// program all ran it at the same speed: an effect of where the caller's
// stack lies, not of the search.
func Recursive(t *Tree) Exec { return recExec{t} }

type recExec struct{ t *Tree }

func (e recExec) Search() (int64, error) {
	c := make(chan int64)
	go func() { c <- e.t.Count() }()
	return <-c, nil
}
func (e recExec) Close() error { return nil }

// Feeding is the worklist's search without the scheduler: a loop over
// an explicit stack of nodes that pops the newest into a local and
// pushes all its children, each computed in its place on the stack, on
// a goroutine of its own. The sequential form of "feed the children",
// for the share of a worklist's cost that is the pattern's, not the
// library's: Search computes each child only when it goes down to it
// and copies no node.
func Feeding(t *Tree) Exec { return &feedExec{t: t} }

type feedExec struct {
	t  *Tree
	st []Node
}

func (e *feedExec) Search() (int64, error) {
	c := make(chan int64)
	go func() {
		t, st, k := e.t, append(e.st[:0], e.t.Root()), int64(0)
		for len(st) > 0 {
			n := st[len(st)-1]
			st = st[:len(st)-1]
			k++
			for i := range t.NumChildren(&n) {
				st = append(st, Node{})
				t.ChildInto(&n, i, &st[len(st)-1])
			}
		}
		e.st = st
		c <- k
	}()
	return <-c, nil
}
func (e *feedExec) Close() error { return nil }

// FeedingTake is Feeding taking up to k nodes off the stack at once and
// pushing the children of each, the newest first: the sequential form of
// a worklist body that takes k−1 more with Feeder.Take. A child's hash
// is the SHA-1 of its parent's, and Feeding's next node is the child it
// has just computed: on the geometric tree, where a node has about one
// child, every hash waits for the one before. The nodes of a batch are
// independent, so the CPU can overlap their hashes; on the binomial tree,
// whose parents compute eight independent children at once, the batch
// gains nothing (BenchmarkTargets).
func FeedingTake(t *Tree, k int) Exec { return &feedTakeExec{t: t, k: max(k, 1)} }

type feedTakeExec struct {
	t      *Tree
	k      int
	st, bt []Node
}

func (e *feedTakeExec) Search() (int64, error) {
	c := make(chan int64)
	go func() {
		t, st, bt, k := e.t, append(e.st[:0], e.t.Root()), e.bt[:0], int64(0)
		for len(st) > 0 {
			top := max(len(st)-e.k, 0)
			bt = append(bt[:0], st[top:]...)
			st = st[:top]
			k += int64(len(bt))
			for j := len(bt) - 1; j >= 0; j-- {
				n := &bt[j]
				for i := range t.NumChildren(n) {
					st = append(st, Node{})
					t.ChildInto(n, i, &st[len(st)-1])
				}
			}
		}
		e.st, e.bt = st, bt
		c <- k
	}()
	return <-c, nil
}
func (e *feedTakeExec) Close() error { return nil }

// worklistTake is how many more nodes the worklist body with Take takes
// a call (wsched-worklist-take): a batch of 16, as the docs' examples.
const worklistTake = 15

// DefaultCutoff is the depth to which the cutoff executors (Goroutines,
// Errgroup) make a goroutine per node for the given number of workers:
// log2(workers) + 2, the usual rule (a few subtrees per worker below it on
// a binary tree; more on UTS's wider ones).
func DefaultCutoff(workers int) int {
	return bits.Len(uint(max(workers, 1))) - 1 + 2
}

// Goroutines runs a goroutine per node above depth cutoff, joined with a
// sync.WaitGroup, and the sequential Search below: what careful Go code
// does for a parallel tree search.
func Goroutines(t *Tree, cutoff int) Exec { return &goExec{t: t, cutoff: cutoff} }

type goExec struct {
	t      *Tree
	cutoff int
}

func (e *goExec) Search() (int64, error) {
	return e.count(e.t.Root()), nil
}

func (e *goExec) count(n Node) int64 {
	if int(n.Height) >= e.cutoff {
		var s Stack
		return e.t.Search(n, &s)
	}
	k := e.t.NumChildren(&n)
	sums := make([]int64, k)
	var wg sync.WaitGroup
	for i := range k {
		c := e.t.Child(&n, i)
		wg.Go(func() { sums[i] = e.count(c) })
	}
	wg.Wait()
	s := int64(1)
	for _, v := range sums {
		s += v
	}
	return s
}

func (e *goExec) Close() error { return nil }

// Errgroup is Goroutines written with errgroup.Group (no limit: a limit
// would deadlock a parent waiting for children that cannot start).
func Errgroup(t *Tree, cutoff int) Exec { return &egExec{t: t, cutoff: cutoff} }

type egExec struct {
	t      *Tree
	cutoff int
}

func (e *egExec) Search() (int64, error) {
	return e.count(e.t.Root())
}

func (e *egExec) count(n Node) (int64, error) {
	if int(n.Height) >= e.cutoff {
		var s Stack
		return e.t.Search(n, &s), nil
	}
	k := e.t.NumChildren(&n)
	sums := make([]int64, k)
	var g errgroup.Group
	for i := range k {
		c := e.t.Child(&n, i)
		g.Go(func() (err error) {
			sums[i], err = e.count(c)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	s := int64(1)
	for _, v := range sums {
		s += v
	}
	return s, nil
}

func (e *egExec) Close() error { return nil }

// poolCap bounds the channel pool's queue, as the harness's channel pool
// peer does (1024 nodes).
const poolCap = 1024

// ChanPool is a pool of workers goroutines ranging over one buffered
// channel of nodes: a task per node, each child sent without blocking or,
// when the channel is full, searched in place (a task counts what it
// searched and adds it to the total once).
func ChanPool(t *Tree, workers int) (Exec, error) {
	if workers < 1 {
		return nil, fmt.Errorf("uts: workers must be >= 1, got %d", workers)
	}
	e := &chanExec{t: t, ch: make(chan Node, poolCap)}
	e.done.Add(workers)
	for range workers {
		go func() {
			defer e.done.Done()
			for n := range e.ch {
				e.total.Add(e.visit(n))
				e.pending.Done()
			}
		}()
	}
	return e, nil
}

type chanExec struct {
	t       *Tree
	ch      chan Node
	pending sync.WaitGroup // nodes sent and not yet searched
	done    sync.WaitGroup // worker goroutines
	total   atomic.Int64
}

func (e *chanExec) visit(n Node) int64 {
	c := int64(1)
	for i := range e.t.NumChildren(&n) {
		child := e.t.Child(&n, i)
		e.pending.Add(1)
		select {
		case e.ch <- child:
		default:
			c += e.visit(child)
			e.pending.Done()
		}
	}
	return c
}

func (e *chanExec) Search() (int64, error) {
	e.total.Store(0)
	e.pending.Add(1)
	e.ch <- e.t.Root()
	e.pending.Wait()
	return e.total.Load(), nil
}

func (e *chanExec) Close() error {
	close(e.ch)
	e.done.Wait()
	return nil
}

// Ants is an ants/v2 pool of workers goroutines, non-blocking: a task
// (a closure) per node, each child submitted or, when the pool is full,
// searched in place.
func Ants(t *Tree, workers int) (Exec, error) {
	p, err := ants.NewPool(workers, ants.WithNonblocking(true), ants.WithPreAlloc(true))
	if err != nil {
		return nil, err
	}
	return &antsExec{t: t, p: p}, nil
}

type antsExec struct {
	t       *Tree
	p       *ants.Pool
	pending sync.WaitGroup
	total   atomic.Int64
}

func (e *antsExec) visit(n Node) int64 {
	c := int64(1)
	for i := range e.t.NumChildren(&n) {
		child := e.t.Child(&n, i)
		e.pending.Add(1)
		err := e.p.Submit(func() {
			e.total.Add(e.visit(child))
			e.pending.Done()
		})
		if err != nil {
			c += e.visit(child)
			e.pending.Done()
		}
	}
	return c
}

func (e *antsExec) Search() (int64, error) {
	e.total.Store(0)
	root := e.t.Root()
	e.pending.Add(1)
	for {
		err := e.p.Submit(func() {
			e.total.Add(e.visit(root))
			e.pending.Done()
		})
		if err == nil {
			break
		}
		if !errors.Is(err, ants.ErrPoolOverload) {
			return 0, err
		}
	}
	e.pending.Wait()
	return e.total.Load(), nil
}

func (e *antsExec) Close() error {
	e.p.Release()
	return nil
}

// Pond is a pond/v2 pool of workers goroutines with its default unbounded
// queue: a task (a closure) per node, every child queued with Go.
func Pond(t *Tree, workers int) (Exec, error) {
	if workers < 1 {
		return nil, fmt.Errorf("uts: workers must be >= 1, got %d", workers)
	}
	return &pondExec{t: t, p: pond.NewPool(workers)}, nil
}

type pondExec struct {
	t       *Tree
	p       pond.Pool
	pending sync.WaitGroup
	total   atomic.Int64
	err     atomic.Pointer[error]
}

func (e *pondExec) submit(n Node) {
	e.pending.Add(1)
	if err := e.p.Go(func() { e.visit(n) }); err != nil {
		e.err.CompareAndSwap(nil, &err)
		e.pending.Done()
	}
}

func (e *pondExec) visit(n Node) {
	e.total.Add(1)
	for i := range e.t.NumChildren(&n) {
		e.submit(e.t.Child(&n, i))
	}
	e.pending.Done()
}

func (e *pondExec) Search() (int64, error) {
	e.total.Store(0)
	e.submit(e.t.Root())
	e.pending.Wait()
	if p := e.err.Load(); p != nil {
		return 0, *p
	}
	return e.total.Load(), nil
}

func (e *pondExec) Close() error {
	e.p.StopAndWait()
	return nil
}
