// Package scheduler is wsched's work-stealing, staged packet scheduler,
// after the MMTk garbage collector's work-packet scheduler: a fixed set of
// worker goroutines runs small units of work (packets) through an ordered
// list of stages, one cycle (one GC, one batch job) per Run call.
//
// # Model
//
// A packet is any type with a Run(w *Worker) error method. Packets are
// queued into stages; a Scheduler has Config.Stages stages (StageIDs 1..n;
// one, "main", by default) plus stage 0, Unconstrained, open throughout
// every cycle. Run opens stage 1; a stage opens only when every earlier
// stage is drained and every worker is idle; the cycle ends when the last
// stage drains, and Run returns. Workers stay parked between cycles.
//
// Each stage's packets wait in its bucket (package bucket), which workers
// take from in batches. Packets spawn packets (Spawn): a spawned packet
// goes onto its worker's own queue, in the same stage, and idle workers
// steal from busy ones. Spawn keeps the packet by value in memory the
// worker reuses, so a small struct, a pointer or a Func spawned from a
// packet costs no allocation. Join runs a continuation when everything a
// packet spawned has finished, with no worker blocking: a tree sum, fib or
// merge sort needs no per-worker slots.
//
// A Worklist runs a body on items and on every item a body feeds, the
// sequential loop over a stack on every worker: each worker keeps its
// items by value on a stack of its own, depth-first, and the oldest half
// moves to an idle worker only while one is idle (NewWorklist: the body
// feeds through a Feeder; NewStackWorklist: it gets the item by value and
// appends to the stack it is given, faster for small items of scalar
// fields). A Reducer keeps a value
// per worker (a count, a sum) that packets update without atomics and
// combines them once the cycle has run.
//
// # Caller roles
//
//   - Seeding, from any goroutine at any time: Add (one packet), AddAll
//     (many, copied, or lent with the Lend option) and AddValues (a slice
//     of value packets, copied once, no interface per value) into any
//     stage (a StageID option, looked up by name with Scheduler.Stage; a
//     closed stage keeps its packets until it opens),
//     with Priority for known-heavy packets; AddDesignated for one worker;
//     SetSentinel (a packet queued when its stage drains; one that sets a
//     new sentinel makes its stage loop).
//   - From a running packet, through its *Worker: Spawn, SpawnOrRun (run
//     inline unless a worker is idle), Join, w.Context(), w.ID(),
//     Worklist.Spawn, Reducer.Local, and the adds above through
//     w.Scheduler(). A worklist's body feeds items through its Feeder.
//   - Producers outside the workers (a directory walk, a socket reader):
//     Scheduler.Hold(stage) keeps the cycle from closing that stage, with
//     no worker blocked, while the producer adds through the Hold; Run
//     returns once every hold is released and everything has run. A cycle
//     that ends early ends its holds: their adds return its error.
//   - One goroutine at a time calls Run(ctx); it only waits. Close ends
//     the scheduler (idempotent; waits for the workers). Stats from any
//     goroutine, exact once Run has returned.
//
// # Choosing policies
//
// The defaults come from sweeps (benchmarks/results/DEFAULTS.md). Change
// them when the workload's shape says so:
//
//   - Recursion, graph traversal, mark loops: work that a sequential
//     program writes as a loop over a stack. Where an item costs under
//     about 1 µs, write it as a Worklist (the body handles one item and
//     feeds the items it finds): on one worker it costs 4–7 ns an item
//     over the same loop written sequentially on the UTS trees, whose
//     81–99 ns nodes are computation (4–8%; BenchmarkTargets in
//     benchmarks/uts), 1.5 ns over the same loop with a cheap body
//     (BenchmarkWorklistNode), and it splits only while a worker is idle.
//     A body that takes 15 more waiting items (Feeder.Take) and works on
//     all 16 spreads that cost over the batch, and where an item's work
//     is a chain of dependent steps that its child continues (a hash of
//     its parent's hash), the batch's items are independent and the CPU
//     overlaps them: on the UTS geometric tree such a body ran within
//     0.1–3.5 ns a node of the same batched loop written sequentially
//     (5.8 in one run of eight), itself 2.3–2.9 ns faster than the plain
//     loop, and at efficiency 0.98 on two workers (median of 13 runs,
//     0.92–0.99), 2–6% faster than goroutines with a depth cutoff; on the
//     binomial tree +0.9 to +2.3 ns and 0.96 (0.93–0.98).
//     The cost does not shrink with the item: on N-queens 13, whose
//     states take a few nanoseconds, it ran 12.8 ns a state against the
//     recursion's 7.5 on one worker, and 1.12× the recursion's speed on
//     two; below about 20 ns an item, let the body take a batch
//     (Feeder.Take), which brought that to 9.8 ns and 1.52×
//     (benchmarks/nqueens), or make the items larger. Most of that cost
//     is the Feeder's shape, a stack held in memory and the item handed
//     over through a pointer (benchmarks/stackshape): NewStackWorklist's
//     body gets the item by value and appends to the stack it is given,
//     which ran the same count at 11.0 ns a state on one worker and 1.27×
//     the recursion's speed on two. Items
//     that are memory loads pay more a call: a CSR reachability's body of
//     one node ran 27–44 ns a node over its sequential search (211
//     against 184, 303 against 259 in a slower run; benchmarks/reach),
//     which a batch (below) spreads over 16. A body whose items are memory
//     loads (a mark loop) takes a batch of waiting items with Feeder.Take
//     and starts their loads together: on real Go heaps that brings
//     examples/gcmark's worklist design to 1.60–1.68× its sequential
//     marker on two workers, against 1.46–1.54× for its hand-written
//     depth-first packets, and gcmark marks with it by default there; on
//     one worker 0.93–0.99× against 0.99–1.04×, its body timing itself
//     with two clock reads a call
//     (benchmarks/results/epyc2/gcmark-worklist-auto); a CSR reachability
//     (benchmarks/reach, 2 Mi nodes, atomic marks) whose body takes 16
//     nodes at once runs at 0.98× the same batched search written
//     sequentially on one worker and 2.3–2.8× the sequential DFS with
//     the same atomic marks on two (benchmarks/results/epyc2/reach-take). A packet per node (SpawnOrRun)
//     costs about 10 ns a node beyond a function call when the node's
//     fields are scalars (BenchmarkSpawnOrRunNode), about 19 when one is
//     an array, which Go passes in memory (BenchmarkSpawnOrRunArrayNode):
//     over 1% of an item under 1 µs; keep a node's fields scalars. Spawn
//     costs more (a queue trip per node). A packet per node is the choice
//     when nodes take longer, when a node's result must come back to its
//     parent (Join), or when children should run elsewhere while the
//     parent computes (Spawn).
//   - A few long packets among many short ones (MMTk's luindex Prepare
//     stage): queue the long ones with Priority, so that the worker that
//     takes one takes it alone, and keep Wake at WakeN. When which ones
//     are long is not known in advance but repeats from cycle to cycle,
//     Config.LearnHeavy finds them from the second cycle on (it times
//     every packet: see its cost there); `wsched simulate -policy
//     learn_heavy=true` predicts what it gives from a trace without it.
//   - A packet that spawns and then computes for long: Local = LocalLIFO,
//     so that thieves see its children at once.
//   - Breadth-first order wanted: Local = LocalFIFO.
//
// Config.Wake says whom an add or a stage opening wakes (WakeN: as many as
// packets arrived), Config.Steal how much a thief takes (StealHalf),
// Config.Take how much a bucket take moves (TakeGuided: up to four batches
// while a bucket is deep, the fair share as it drains). `wsched analyze`
// reads a trace and says which stage ran over its bound and why.
//
// # Failures
//
// A packet that returns an error or panics ends its cycle: the other
// workers stop after their running packet (an atomic flag that a worker
// checks after it has found a packet and right before it starts it: once
// it has seen the flag it starts no packet of the cycle), every queued
// packet is discarded and counted, the cycle's
// context (Worker.Context) is cancelled with the cause, and Run returns a
// *CycleError naming the packet, its stage and worker, wrapping the error
// (for a panic: the value, with the stack). A cancelled Run context does
// the same once the running packets return, wrapping context.Cause; a
// context cancelled before Run runs no packet. runtime.Goexit in a packet
// is reported as a panic, and so is panic(nil) under GODEBUG panicnil=1.
// The next Run starts clean.
//
// Misuse is an error for what a caller can meet at run time (ErrClosed,
// ErrCycleRunning, ErrQueueFull, and ErrInvalid for a bad argument: a bad
// Config, an unknown stage or worker, a nil packet, an option that does not
// apply) and a panic with a "scheduler:" message for programming errors,
// raised in the packet so that its cycle reports it: Spawn, SpawnOrRun,
// Join or Context on a *Worker kept past its packet's Run (between cycles,
// after Close, from another scheduler's packet), which would otherwise run
// the packet in the wrong cycle or never; a second Join in one run; Close
// from one of the scheduler's own packets, which would wait for its own
// worker; a zero Scheduler. New refuses a trace.Recorder another Scheduler
// records into.
//
// # Backpressure
//
// Config.MaxQueued bounds the packets Add and AddAll have queued in a stage
// and no worker has taken yet, each stage on its own: an add whose packets
// do not all fit fails with ErrQueueFull and queues nothing, or waits with
// the Block(ctx) option. The default is unbounded, because a garbage
// collector's work must never wait, and packets spawned by packets are
// never counted: they are the cycle's own work. With a Hold, a producer
// outside the workers streams through a bounded pipeline: the workers take
// at most MaxQueued packets behind it, each worker's take is at most what
// the stage held, so at most MaxQueued × (1 + Workers) packets are in
// flight (examples/hashstream measures it).
//
// # Observability
//
// Stats: per worker (packets, bucket takes, steals, parks, wake-ups, idle
// time, drops, failures), per packet name (count; total, min, mean and max
// time with Config.PacketTiming), per stage (opens, makespan). Config.Tracer
// (package trace) records packet begin and end, steals with flow arrows,
// parks, wake-ups, stage and cycle boundaries and queue depths for the
// Perfetto UI and `wsched analyze`; off, each hook costs one branch.
// Config.RuntimeTrace adds runtime/trace regions; Config.PprofLabels a
// goroutine label per stage.
//
// # When not to use it
//
// Packets that block (I/O, locks held by other packets, channels) hold
// their worker meanwhile: use goroutines for them. When every task takes
// milliseconds, errgroup or a channel-fed pool is as fast and simpler. A
// packet must not wait for another packet of its cycle: the one it waits
// for may be queued behind it, on its own worker.
//
// # Costs
//
// Measured with
//
//	go test -run '^$' -bench 'SpawnValue$|Join$|SpawnTrivial$|SpawnTrivialWaitGroup|AbortLatency|WakeLatency|Cycle$' -count 6 ./scheduler/
//
// on the project's 2-vCPU AMD EPYC virtual machine (family 26), Go 1.26.8,
// GOMAXPROCS=2, 2 workers, nothing else running; medians of the six runs:
//
//	spawn a value packet, per packet (SpawnValue)         13.3 ns, 0 allocs
//	spawn a pointer packet, per packet (SpawnTrivial)      6.1 ns, 0 allocs
//	  the same with go and a sync.WaitGroup                 780 ns, 1 alloc
//	a fork-join tree with Join, per packet (Join)         20.8 ns
//	  per join: two children, the continuation and the join  63 ns
//	a parked worker woken by Add, to its packet's start    2.0 µs (p50)
//	a cycle of three stages of one packet each             2.9 µs
//	a packet's error to Run's return (AbortLatency)       32 µs (p50)
//	  a cancel of Run's context to Run's return            35 µs (p50)
//
// A join's own work (opening it, counting its members, spawning the
// continuation) costs about 23 ns beyond the continuation's spawn: 63 ns
// a join against two value children (26.6 ns) and the continuation run
// as a value packet (13.3 ns). The abort figures have 20 µs packets
// running on both workers: the other worker finishes its packet first.
//
// Worklists and per-node packets, on the 2-vCPU AMD EPYC (shared, noisy;
// three to thirteen runs of each, benchmarks/results/epyc2/worklist-targets; the
// fastest sequential search is the fastest of Search's loop, the
// worklist's loop and that loop taking 16 nodes at once):
//
//	go test -run '^$' -bench Targets -benchtime 9x -count 5 ./uts/   (in benchmarks/)
//	go test -run '^$' -bench 'WorklistNode|SpawnOrRunArrayNode|SpawnOrRunNode/shape=tree' -count 5 ./scheduler/
//
//	a worklist item over the fastest sequential search, 1 worker      +4.5–10.5 ns (T1; 17.0 in one run), +4.3–9.8 ns (T3), medians
//	  its efficiency on 2 workers, T_seq ÷ (2·T)                      0.84–0.90 (T1), 0.88–0.94 (T3)
//	  a body that takes 15 more (Feeder.Take), 1 worker               +0.1 to +5.8 ns (T1), +0.9 to +2.3 ns (T3)
//	    its efficiency on 2 workers, median (range) of 13 runs        0.981 (0.92–0.99) (T1), 0.959 (0.93–0.98) (T3)
//	  over a loop on a local stack with the same body (WorklistNode)  +1.5 ns
//	a SpawnOrRun child over a plain call, a 40-byte node of scalars   +10.3 ns
//	  the same node with an array field (passed in memory)            +18.6 ns
//	a UTS packet per node over the fastest sequential search         +11–18 ns (scalar fields; 27–34 in one T1 run), +27–31 ns ([20]byte)
//
// Per item of a few nanoseconds (N-queens 13, medians of 5, ns a state;
// benchmarks/results/epyc2/nqueens): the recursion 7.54; a Feeder body
// 12.80 on one worker and 6.72 on two, with Take 9.75 and 4.96; a stack
// body 10.97 and 5.93; a packet per state 17.12 and 8.97.
//
// benchmarks/README.md compares wsched with goroutines, errgroup, a
// channel pool, ants, pond and conc on the harness's workloads, and with
// the fastest sequential search on a tree generated while it is searched.
package scheduler
