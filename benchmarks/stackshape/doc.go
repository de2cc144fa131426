// Package stackshape measures what the shape of a worklist costs, without
// the scheduler: the same depth-first count of N-queens 13 (4,674,890
// board states of a few nanoseconds) written five ways, to tell the
// scheduler's own cost per item from the cost of how a body feeds items.
// Each way is written out in full, the body's work repeated: sharing code
// between them would change what they measure.
//
//   - rec: plain recursion.
//   - stack: a loop over an explicit stack in a local slice, the body's
//     work written in the loop.
//   - feeder: the scheduler.Worklist's shape: the body a func value
//     called per item, feeding through a pointer to a struct that holds
//     the stack (as Feeder.Add does), the item popped into that struct.
//   - direct: feeder with the body a plain function the compiler does
//     not inline, not a func value.
//   - iter: the body's work in the caller's loop, over an iterator on the
//     struct-held stack (range over func, inlined).
//   - append: the body a func value that appends what it feeds to the
//     stack slice it is given and returns it, as append does, the item
//     passed by value: the loop keeps the slice in a local.
//
// # Costs
//
// On the project's 2-vCPU AMD EPYC, 3 runs each, ns a state (none
// allocates):
//
//	go test -run '^$' -bench . -count 3 .
//
//	rec 7.46–7.49   stack 6.73–6.75   feeder 12.51–12.57   direct 12.14–12.35
//	iter 11.34–11.40   append 7.83–7.90
//
// The scheduler's Worklist ran the same count at 13.06 ns a state
// (benchmarks/nqueens), so its own work per item (the idle and abort
// checks, the counts) costs about 0.5 ns; about 5.8 ns is the shape: a stack
// held in memory, which every feed and pop loads and stores, where a local
// slice stays in registers. A call per item costs little (append, through
// a func value, is 1 ns from stack), and inlining the body does not help
// while the stack stays in memory (iter). A worklist whose body appends
// to the stack it is given and returns it would cost about 1 ns an item
// over the sequential loop, where Feeder's costs about 5.8.
package stackshape
