// Package uts is a tree search in the manner of the Unbalanced Tree Search
// benchmark (UTS, Olivier et al., 2006): a tree that exists only while it is
// searched, every node's children derived from a hash of the node, and a
// search of it by each executor the benchmarks compare: the fastest
// sequential search (the baseline) and the sequential recursion, wsched
// with a packet per node or per subtree, goroutines and errgroup with a
// depth cutoff, and pools with a task per node.
//
// # Model
//
// A node is its 20-byte state and its depth. The root's state is the SHA-1
// of its seed; child i's state is the SHA-1 of its parent's state and i
// (Tree.Child), computed Params.Rounds times (UTS's granularity, -g). The
// number of children comes from the node's own state (Tree.NumChildren):
//
//   - Geometric (UTS T1): a geometric number with mean 4 down to depth 10
//     (shape Fixed), none below: 4,130,071 nodes.
//   - Binomial (UTS T3): 2,000 children at the root; every other node has 8
//     children with probability 0.124875, else none (8 · 0.124875 =
//     0.999): 4,112,897 nodes, depth 1,572, most of them in a few long
//     subtrees.
//
// The counts are UTS's own (TestPublishedTrees checks them). T1S and T3S
// are small trees of the same shapes for tests and quick runs. A search's
// result is the node count, checked against the sequential recursion.
//
// The executors (Exec) are written as each one's users write them:
//
//   - Sequential: Tree.Search, depth-first on an explicit stack (a Stack)
//     with each child computed in its place (Tree.ChildInto), no
//     scheduler; Feeding: the worklist's loop without the scheduler (pop
//     a node, push all its children), faster on T1; FeedingTake: that
//     loop taking 16 nodes at once, faster still on T1, whose nodes have
//     about one child, so that the plain loop's next hash waits for the
//     one just computed: the fastest of the three is the T_seq of
//     efficiency figures. Recursive: plain
//     recursion (Tree.Count), 10-13% slower: a Node is 24 bytes, which Go
//     passes and returns in memory, and the recursion copies each one
//     twice.
//   - WSched: a value packet per node with a Run method, its children
//     spawned from Run with scheduler.Spawn or scheduler.SpawnOrRun, the
//     count kept on per-worker counters (indexed by Worker.ID, a cache line
//     each) or summed through scheduler.Join (WSchedOptions); with
//     SpawnOrRun also as a packet whose fields are scalars (the state as
//     two uint64 and a uint32: WSchedOptions.Scalar), which Go passes in
//     registers, as SpawnOrRun's doc advises; or, not a
//     packet per node, a packet per subtree searched depth-first on a
//     Stack of its own (Search's loop), which spawns the oldest children
//     on its stack only when Worker.ShouldSplit says a worker wants work
//     (WSchedOptions.Split); or a scheduler.Worklist whose body feeds a
//     node's children, built in place on the stack with Feeder.Next, the
//     count in a scheduler.Reducer (WSchedOptions.Worklist), one node a
//     call or, as the docs advise for chains of dependent work, taking 15
//     more with Feeder.Take (WSchedOptions.Take); or a stack
//     worklist (scheduler.NewStackWorklist, WSchedOptions.Stack), no
//     faster here: a Node holds an array, so it is passed in memory by
//     value too (3 runs of 5 at 1 worker: T1 98.9–100.0 ns a node against
//     97.5–100.4 for the Feeder body, T3 93.4–102.8 against 90.5–99.3).
//   - Goroutines and Errgroup: a goroutine per node down to a depth cutoff
//     (DefaultCutoff: log2(workers) + 2), each parent waiting for its
//     children; Search below the cutoff.
//   - ChanPool and Ants: a task per node on a pool of workers goroutines,
//     submitted without blocking or, when the pool is full, searched in
//     place (what users of a bounded pool do to avoid deadlock).
//   - Pond: a task per node, queued with Go (pond's unbounded queue).
//
// # Costs
//
// On the project's 2-vCPU AMD EPYC, a node costs the sequential search
// 88-94 ns (one SHA-1 of 24 bytes, with the SHA-NI instructions, and, on
// the geometric tree, a logarithm), the recursion 97-107 ns; a packet per
// node adds 18-21 ns to the recursion's (SpawnOrRun or Spawn, per-worker
// counters) or 47-55 ns (joins), and the ShouldSplit search under 3 ns
// to the sequential search's. SpawnOrRun with the scalar packet costs
// 11-16 ns a node over the fastest sequential search, against 27-31
// with Node's [20]byte (benchmarks/results/epyc2/worklist-targets).
// benchmarks/README.md has every executor's time per node at 1 and 2
// workers, with the command.
//
// The split search stays beside the worklist, not replaced by it,
// because on the binomial tree it is still a little faster on 2 workers.
// In eight BenchmarkTargets runs at 1 worker and thirteen at 2
// (benchmarks/results/epyc2/worklist-targets: targets-465d30d.txt,
// targets-2w-3c92205.txt, targets-0dc154d.txt), against the fastest
// sequential search: on T1 the worklist body that takes 15 more nodes
// cost 0.1 to 3.5 ns a node at 1 worker (5.8 in one run) and reached
// efficiency 0.981 on 2 (median; 0.918–0.992), the split search
// 0.895–0.953; on T3 0.9 to 2.3 ns and 0.959 (0.931–0.980), the split
// search 0.946–0.988. The body of one node a call costs 4–7 ns a node over the
// same loop without the scheduler (Feeding), where the scheduler's
// BenchmarkWorklistNode, with a cheap body, measures 1.5: it calls its
// body through a func value and keeps its stack in the Feeder, where
// Search's loop inlines the node's work and keeps its stack in a local.
// The worklist is what the docs give users: no ShouldSplit, no stack or
// split rule of their own.
package uts
