// Package scheduler is wsched's work-stealing, staged packet scheduler,
// after the MMTk garbage collector's work-packet scheduler: a fixed set of
// worker goroutines runs small units of work (packets) through an ordered
// list of stages, one cycle (one GC, one batch job) per Run call.
//
// # Model
//
// A Scheduler has Config.Workers workers and Config.Stages user stages
// (StageIDs 1..n), plus stage 0, Unconstrained. Each stage has a bucket (a
// normal and a priority lane, package bucket). During a cycle the buckets
// of the open stages are served; Unconstrained is open throughout; a stage
// opens only when every worker is idle and every earlier stage is drained,
// its sentinel included. Empty stages are passed at once. There is no
// coordinator goroutine and no polling: the last worker to go idle decides
// under the scheduler's monitor (as MMTk's WorkerMonitor), see stage.go.
//
// Each worker has a private stack of up to 256 spawned packets, run newest
// first and invisible to thieves, in front of a deque that holds what it
// offers to thieves (they take its oldest packets, half of them with one
// CAS); with Config.LocalFIFO, a FIFO deque alone, and with
// Config.NoLIFOSlot a LIFO deque alone. It also has a bounded queue of
// designated packets. It looks for work in this order (find.go):
// designated → private stack, held batch and deque → the open buckets in stage
// order, priority lane first (one packet, never batched), then the normal
// lane (a batch of up to Config.BucketBatch capped at the worker's fair
// share of the bucket, or under the default Config.Take, TakeGuided, up
// to 128 while the bucket is deep) → other workers'
// deques (Config.Steal: one,
// half, or half up to a limit, at most MaxSteal = 128, from a random
// victim) → Config.Spins
// rounds of the same with runtime.Gosched between them → park. A parked
// worker polls its wake-up channel for Config.ParkSpin (200 µs by
// default), so that a wake-up soon after it parked (the next stage, the
// next back-to-back cycle) costs a channel poll instead of an OS thread
// wake-up, then blocks on the channel and uses no CPU; wake.go states the
// park/wake protocol as numbered steps with the argument that no wake-up
// is lost, and the designs that were rejected.
//
// A full bucket take (at least BucketBatch packets, or 128 when BucketBatch is
// larger: one block of the bucket's queue; at least 9) is held: the worker keeps
// the batch to itself and runs it oldest first, each packet a plain load
// instead of a deque Pop (a locked instruction), until at a packet
// boundary or a Spawn it sees a worker parked or searching while its
// deque holds fewer packets than there are such workers; then the batch
// goes to its deque for them to steal (worker.go: nextHeld, offerHeld).
// A stolen batch of 9 or more is held the same way (find.go: stealInto):
// the thief claims it with one CAS straight into its held array instead
// of into its deque, from which it would take each packet back with a
// locked instruction.
// Other takes (the end of a stage, where the bucket no longer has a
// batch for every worker, and takes cut short by the end of a block) go
// to the deque at once. So, as for its
// private stack, an idle worker may wait until the running packet
// returns or spawns before it can steal what that worker holds, and a
// packet must not wait for another packet of its cycle: the one it waits
// for may be queued behind it, invisible to the others. (On an idle 16-vCPU Xeon, old and
// new builds alternating six rounds: the harness's fan-out of 16,384
// trivial packets on 2 workers −23%, p < 0.001, every other workload at 2
// and 16 workers unchanged within the noise; BenchmarkFanoutPhases −19%
// on 2 workers. benchmarks/results/xeon16-s4/ab-held.)
//
// # Caller roles
//
//   - Seeding, from any goroutine at any time: Add, BulkAdd, AddPriority,
//     BulkAddPriority into any stage (a closed stage keeps its packets until
//     it opens), AddSlice (BulkAdd without the copy: the slice is lent to
//     the scheduler until the cycle that drains it ends, and workers read
//     it in place, claiming runs of it with one atomic add),
//     AddDesignated for one worker, SetSentinel (one-shot, at
//     most one per stage; a sentinel that sets a new one makes its stage
//     loop).
//   - From a running packet, through its *Worker: Spawn (same stage, onto
//     the worker's private stack, the cheap path), SpawnOrRun (the same, but
//     run at once, inline, unless idle workers lack queued work to take:
//     errgroup's TryGo-or-run-inline for fine-grained recursion), Stage,
//     ID, and everything above through w.Scheduler().
//   - One goroutine at a time calls Run(ctx); it only waits. Close ends the
//     scheduler (idempotent, waits for the workers; not from a packet).
//   - Stats from any goroutine; exact once Run has returned.
//
// # Wake policies
//
// Adding packets to an open stage may wake parked workers. A one-packet
// Add, AddPriority and AddDesignated wake one (AddDesignated wakes its own
// worker, fixing MMTk #1160). BulkAdd, BulkAddPriority, AddSlice and stage openings
// follow Config.Wake, overridable per call with WithWake: WakeOne,
// WakeAll (MMTk's bulk_add), WakeN (min(packets, parked); MMTk #1589) and
// WakeSearcher (the Go runtime's and Tokio's rule: wake one only if no
// worker is searching; a searcher that finds work wakes the next). The
// default is WakeN, chosen by the sweep in benchmarks/results/DEFAULTS.md
// (see DefaultWake for the figures). Under
// every policy, a worker whose deque gains surplus packets (the private
// packets a Spawn or a packet boundary offers while workers are idle, a
// batch from a bucket, a steal of several), or
// a thief that leaves packets behind in its victim's deque, wakes one
// parked worker if nobody is searching, so work spreads without waking a
// herd; Spawn wakes nobody while others search. Packets left in a bucket
// wake only by the policy: WakeOne with BucketBatch 1 and TakeFair wakes
// one worker for a burst, and the rest wait for it (TestWakeSearcher;
// under the default TakeGuided a deep burst is taken up to four at a
// time).
//
// # Failures
//
// A panicking packet ends its cycle: Run returns a *PanicError with the
// packet's name, stage, worker, panic value and stack. The other workers
// stop after their current packet (an atomic flag checked between
// packets); every queued packet (buckets, deques, private stacks, held
// batches, designated queues, sentinels) is discarded and counted in PanicError.Dropped and
// Stats.Dropped; the next Run works normally. A packet calling
// runtime.Goexit is reported the same way (a fresh goroutine takes over
// the worker), and so is panic(nil) under GODEBUG panicnil=1, which
// recover cannot tell from runtime.Goexit by its value. Cancelling Run's
// context does the same once the running packets return, with a
// *CycleError wrapping ctx.Err(); a context cancelled before Run runs no
// packet. Misuse returns
// ErrUnknownStage, ErrNilPacket, ErrClosed, ErrCycleRunning,
// ErrUnknownWorker, ErrDesignatedFull or ErrSentinelSet, and an unknown
// policy passed to WithWake is ErrInvalidConfig, as it is in Config.Wake.
// Programming errors panic with a "scheduler:" message (in a packet, so
// the cycle reports it as a *PanicError): Spawn(nil); Spawn or SpawnOrRun
// on a *Worker kept past its packet's Run (between cycles, after Close,
// from another scheduler's packet), which would otherwise run the packet
// in the wrong cycle or never; and Close called from one of the
// scheduler's own packets, which would wait for its own worker. New
// refuses a trace.Recorder that another Scheduler already records into.
//
// # Observability
//
// Stats: per worker (packets, bucket takes, steal attempts and successes,
// packets stolen, parks, wake-ups sent and received, idle time, drops),
// per packet name, merged and per worker (count; total/min/max time with
// Config.PacketTiming; the minimum starts from the first timed run, never
// from 0 as in MMTk), per stage (opens, opening offset, makespan). Counters are plain fields
// owned by each worker and published every 4096 packets and at every park;
// Stats merges them.
//
// Config.Tracer (package trace) records packet begin/end, steals with flow
// IDs, park/unpark, wake-ups, stage and cycle boundaries and queue-depth
// counters; off, each hook costs one branch. While tracing, every queued
// packet carries a clock stamp and whose it is: the spawning worker's
// (Spawn) or the control buffer's (Add*, BulkAdd*, a sentinel when it is
// queued; Add* cannot tell whether a packet calls it). A steal records the
// stolen packet's stamp, so the exported flow arrow runs from the packet's
// spawn or add to its slice on the thief. Designated packets are never
// stolen and carry none. Stage and cycle events and
// wake-ups sent by non-worker goroutines go to the recorder's control
// buffer, written under the scheduler's monitor (so by one goroutine at a
// time). Config.RuntimeTrace adds a runtime/trace task per cycle and a
// region per packet; Config.PprofLabels sets the goroutine label
// wsched_stage on each worker to the stage it runs.
//
// # When not to use it
//
// Packets of microseconds and up gain little from it over a channel-fed
// pool; goroutines that block for long (I/O) belong in plain goroutines:
// a blocked packet holds its worker. Names returned by Namer should come
// from a small set: each distinct name gets a stats slot on every worker.
//
// # Costs
//
// Measured with
//
//	go test -run '^$' -bench 'SpawnTrivial|BulkAddFanout|ForkJoinTree|WakeLatency|Cycle$' \
//		-count=6 -benchtime=300ms ./scheduler/
//
// on AMD EPYC (Zen 3 "Milan", family 25 model 1), 2 vCPU KVM, Go 1.26.8,
// GOMAXPROCS=2, on a machine shared with other jobs (medians, 2026-11-29
// 20:37 UTC, after the deque's fast paths; the README keeps the latest
// figures):
//
//	SpawnTrivial (chained spawns, 2 chains)       9.5 ns/packet, 0 allocs
//	SpawnTrivialNamed (packets with PacketName)   12.9 ns/packet
//	SpawnTrivialNoLIFOSlot                        10.0 ns/packet
//	SpawnTrivialPacketTiming                      27 ns/packet
//	SpawnTrivialWaitGroup (go f() + WaitGroup)    460 ns/packet, 1 alloc
//	SpawnTrivialChanPool (channel, 2 goroutines)  60 ns/packet
//	BulkAddFanout (4096 per cycle)                26 ns/packet, 0 B
//	ForkJoinTree (2^21-1 packets)                 13 ns/packet, 0 allocs
//	SpawnOrRunTree (the same tree, SpawnOrRun)    7.0 ns/packet against
//	                                              17.1 for ForkJoinTree in
//	                                              the same run (-count=6
//	                                              -benchtime=10x, 21:40)
//	WakeLatency (Add to start, parked worker)     p50 0.4 µs, p99 10 µs
//	Cycle (three stages, one packet each)         2.6 µs
//
// and, fifth session (BenchmarkParkSpin, -benchtime 300x, six processes,
// 2026-11-30 02:13 UTC, medians): back-to-back cycles of a 32,767-packet
// spawn tree on 2 workers, 631 µs a cycle with Config.ParkSpin off and 305
// µs with the default 200 µs poll (50 µs: 350), which catches the wake-up
// of a worker that parked at the end of the previous cycle before its
// thread sleeps (the host took about 180 µs to run a halted virtual CPU
// again); cycles a millisecond apart cost about 250 µs more CPU each with
// the poll, and their Run took 1.08 ms against 0.83 without it.
//
// Sixth session (BenchmarkFanoutPhases, -benchtime 300x, three runs,
// 2026-11-30 03:55 UTC): a cycle of 16,384 trivial packets on 2 workers
// took 228–406 µs queued by BulkAdd (of which the add, before any worker
// starts, 48–80 µs) and 110–155 µs lent by AddSlice (its add 0.1–0.2 µs).
//
// Seventh session (the harness, one binary with TakeFair and TakeGuided
// alternating, 20 samples each; benchmarks/results/epyc2/ab-take-guided):
// guided takes, up to 128 packets a take from a deep bucket, made the
// harness's lent 16,384-packet fan-out 233.9 → 211.0 µs on 1 worker and
// 160.2 → 119.9 µs on 2, and a packet lending its 16,383 children 233.5 →
// 210.4 and 163.6 → 132.6 µs.
//
// A packet spawned by a packet costs an interface call, a push and a pop
// of the private stack (plain loads and stores, no atomics: Tokio's
// lifo_slot and the Go runtime's runnext, grown to 256 packets), with two
// or more packets on it two loads of the idle counters, and a per-type
// counter behind a one-entry type cache; it stays below the deque's two
// locked instructions per push and pop, which NoLIFOSlot pays. While no
// worker is idle, thieves cannot take the private packets; while one is,
// Spawn and every packet boundary offer all but the newest to the deque
// (Worker.Spawn). (The figures above were measured with a one-packet LIFO
// slot; the README has the private stack's.) Config.PacketTiming
// reads the monotonic clock once per packet (≈ 33 ns here, time.Since via
// the vDSO), so it is off by default; tracing adds two events per packet,
// ≈ 13 ns each (package trace). A stage transition costs the last worker's
// park and the decision under the monitor, a few µs (Cycle), because a
// searching worker stops spinning as soon as no worker runs a packet.
package scheduler
