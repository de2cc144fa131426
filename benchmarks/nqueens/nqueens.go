// Package nqueens counts the solutions of the N-queens problem four ways:
// plain recursion, and with wsched as its docs tell a user to write it, a
// packet per board state (SpawnOrRun, the count on a Reducer), a Worklist
// whose body feeds a state's children (and the same body taking up to 15
// more states at once, Feeder.Take, as "Choosing policies" advises for
// small items; and a stack worklist, NewStackWorklist, whose body
// appends them to its stack), and a count by joins (children run with SpawnOrRun or
// Spawn). The wsched versions were first written by a
// newcomer from the README and godoc alone, without the library's source;
// they are kept as written but for the shared state, which the packets
// reach through a pointer instead of a package variable, and for the
// two worklist bodies, which share their feeding loop (shared.feed).
//
// A board state is the next row and three bitmasks of the columns and
// diagonals taken: 16 bytes of scalars, and a few nanoseconds of work
// (N=13: 4,674,890 states, 73,712 solutions), so the figures are mostly
// the cost of each way of scheduling a state.
//
// # Costs
//
// BenchmarkNQueens, N=13, on the 2-vCPU AMD EPYC, medians of 5 runs in
// ns a state (benchmarks/results/epyc2/nqueens):
//
//	go test -run '^$' -bench NQueens -count 5 .
//
//	                                   1 worker   2 workers
//	recursion                          7.54
//	a packet per state (SpawnOrRun)    17.12      8.97
//	Worklist                           12.80      6.72
//	Worklist, the body taking 15 more  9.75       4.96
//	stack worklist (NewStackWorklist)  10.97      5.93
//	joins, children by SpawnOrRun      49.98      26.38
//	joins, children by Spawn           69.88      37.17
//
// At a few nanoseconds a state the scheduler's cost per item is most of
// the time: on two workers the worklist runs 1.12× as fast as the
// recursion, 1.27× in the stack form, 1.52× with Take.
package nqueens

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/wsched/wsched/scheduler"
)

// Count is the sequential recursion: the number of solutions for an n×n
// board, 1 ≤ n ≤ 31.
func Count(n int) int {
	return count(n, uint32(1)<<n-1, 0, 0, 0, 0)
}

func count(n int, mask uint32, row int, cols, d1, d2 uint32) int {
	if row == n {
		return 1
	}
	k := 0
	for avail := ^(cols | d1 | d2) & mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		k += count(n, mask, row+1, cols|bit, (d1|bit)<<1, (d2|bit)>>1)
	}
	return k
}

// States returns the number of board states the worklist ran since the
// Solver was made: the root and the solutions included, as many a count
// as the recursion visits.
func (v *Solver) States() uint64 { return v.wl.Stats().Items }

// A Solver counts solutions with one wsched scheduler. Not safe for
// concurrent use: one count at a time.
type Solver struct {
	s   *scheduler.Scheduler
	sh  *shared
	wl  *scheduler.Worklist[item]
	wlt *scheduler.Worklist[item] // the body on batches (Take)
	wls *scheduler.Worklist[item] // the body in the stack form
}

// shared is what every packet of a count points to.
type shared struct {
	n    int32
	mask uint32
	red  *scheduler.Reducer[int]
}

// NewSolver makes a Solver for n×n boards (1 ≤ n ≤ 31) on a scheduler of
// the given number of workers.
func NewSolver(n, workers int) (*Solver, error) {
	if n < 1 || n > 31 {
		return nil, fmt.Errorf("nqueens: board size %d outside 1..31", n)
	}
	s, err := scheduler.New(scheduler.Config{Workers: workers})
	if err != nil {
		return nil, err
	}
	sh := &shared{n: int32(n), mask: uint32(1)<<n - 1, red: scheduler.NewReducer(s, func(a, b int) int { return a + b })}
	wl, err := scheduler.NewWorklist(s, "nqueens", func(w *scheduler.Worker, it *item, f *scheduler.Feeder[item]) error {
		*sh.red.Local(w) += sh.feed(*it, f)
		return nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	// The same body on batches: the item and up to 15 more (Feeder.Take).
	wlt, err := scheduler.NewWorklist(s, "nqueens-take", func(w *scheduler.Worker, it *item, f *scheduler.Feeder[item]) error {
		var batch [16]item
		batch[0] = *it
		k := 1 + copy(batch[1:], f.Take(15))
		solutions := 0
		for _, x := range batch[:k] {
			solutions += sh.feed(x, f)
		}
		*sh.red.Local(w) += solutions
		return nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	// The body in the stack form: it appends to the stack it is given.
	wls, err := scheduler.NewStackWorklist(s, "nqueens-stack", func(w *scheduler.Worker, it item, st []item) ([]item, error) {
		if it.row == sh.n {
			*sh.red.Local(w)++
			return st, nil
		}
		for avail := ^(it.cols | it.d1 | it.d2) & sh.mask; avail != 0; {
			bit := avail & -avail
			avail ^= bit
			st = append(st, item{it.row + 1, it.cols | bit, (it.d1 | bit) << 1, (it.d2 | bit) >> 1})
		}
		return st, nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return &Solver{s: s, sh: sh, wl: wl, wlt: wlt, wls: wls}, nil
}

// WorklistStack counts with a stack worklist (NewStackWorklist) whose
// body appends a state's children to the stack it is given.
func (v *Solver) WorklistStack() (int, error) { return v.runWorklist(v.wls) }

// WorklistTake counts with a Worklist whose body takes up to 15 more
// waiting states (Feeder.Take) and handles them in its own loop.
func (v *Solver) WorklistTake() (int, error) { return v.runWorklist(v.wlt) }

// Close closes the scheduler.
func (v *Solver) Close() error { return v.s.Close() }

// Packets counts with a packet per state, children run by SpawnOrRun,
// the solutions counted on a Reducer.
func (v *Solver) Packets() (int, error) {
	v.sh.red.Reset()
	if err := v.s.Add(node{sh: v.sh}); err != nil {
		return 0, err
	}
	if err := v.s.Run(context.Background()); err != nil {
		return 0, err
	}
	return v.sh.red.Result(), nil
}

// Worklist counts with a Worklist whose body feeds a state's children.
func (v *Solver) Worklist() (int, error) { return v.runWorklist(v.wl) }

// runWorklist seeds wl with the empty board and runs a cycle.
func (v *Solver) runWorklist(wl *scheduler.Worklist[item]) (int, error) {
	v.sh.red.Reset()
	if err := wl.Add([]item{{}}); err != nil {
		return 0, err
	}
	if err := v.s.Run(context.Background()); err != nil {
		return 0, err
	}
	return v.sh.red.Result(), nil
}

// feed feeds x's children to f and returns 1 if x is a solution, else 0.
func (sh *shared) feed(x item, f *scheduler.Feeder[item]) int {
	if x.row == sh.n {
		return 1
	}
	for avail := ^(x.cols | x.d1 | x.d2) & sh.mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		f.Add(item{x.row + 1, x.cols | bit, (x.d1 | bit) << 1, (x.d2 | bit) >> 1})
	}
	return 0
}

// Join counts by joins: every state with children opens a join whose
// continuation adds their count to its parent's; children run with
// SpawnOrRun if inline, else with Spawn.
func (v *Solver) Join(inline bool) (int, error) {
	var total int64
	if err := v.s.Add(jnode{sh: v.sh, out: &total, inline: inline}); err != nil {
		return 0, err
	}
	if err := v.s.Run(context.Background()); err != nil {
		return 0, err
	}
	return int(total), nil
}

// item is a board state: the next row, and the columns and diagonals
// taken.
type item struct {
	row          int32
	cols, d1, d2 uint32
}

// node is a board state as a packet.
type node struct {
	sh           *shared
	row          int32
	cols, d1, d2 uint32
}

func (p node) Run(w *scheduler.Worker) error {
	if p.row == p.sh.n {
		*p.sh.red.Local(w)++
		return nil
	}
	for avail := ^(p.cols | p.d1 | p.d2) & p.sh.mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		scheduler.SpawnOrRun(w, node{p.sh, p.row + 1, p.cols | bit, (p.d1 | bit) << 1, (p.d2 | bit) >> 1})
	}
	return nil
}

// jnode is a board state as a packet of the count by joins: out is its
// parent's continuation's count.
type jnode struct {
	sh           *shared
	out          *int64
	row          int32
	cols, d1, d2 uint32
	inline       bool
}

// jsum is a join's continuation: its children add to count, and it adds
// count to its own parent's.
type jsum struct {
	count int64
	out   *int64
}

func (s jsum) Run(*scheduler.Worker) error {
	atomic.AddInt64(s.out, s.count)
	return nil
}

func (p jnode) Run(w *scheduler.Worker) error {
	if p.row == p.sh.n {
		atomic.AddInt64(p.out, 1)
		return nil
	}
	avail := ^(p.cols | p.d1 | p.d2) & p.sh.mask
	if avail == 0 {
		return nil
	}
	c := scheduler.Join(w, jsum{out: p.out})
	for avail != 0 {
		bit := avail & -avail
		avail ^= bit
		ch := jnode{p.sh, &c.count, p.row + 1, p.cols | bit, (p.d1 | bit) << 1, (p.d2 | bit) >> 1, p.inline}
		if p.inline {
			scheduler.SpawnOrRun(w, ch)
		} else {
			scheduler.Spawn(w, ch)
		}
	}
	return nil
}
