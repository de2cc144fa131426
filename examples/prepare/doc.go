// Package prepare models the Prepare stage of a GC cycle and reproduces
// the imbalance of MMTk's luindex case (mmtk-core #1200, after PR #1182), then
// the fixes discussed for it, on a wsched scheduler.
//
// # The model
//
// A cycle starts with a StopMutators packet (Unconstrained) that waits for
// the mutators (0.5 ms), then queues the Prepare stage: a designated
// PrepareCollector packet per worker, a ScanMutatorRoots packet per mutator
// stack (64, of 64 to several thousand slots) and one heavy
// ScanCodeCacheRoots packet of 26,845 slots. A slot costs about 100 ns of
// CPU at scale 1 ([Model]). Each root packet queues Closure work (one
// packet per 4096 slots, each the root of a small tree of spawned packets).
// StopMutators runs long enough for the idle workers to park, so that how
// they are woken matters, as it does in a GC.
//
// # The configurations
//
// All share MMTk's worker behaviour: FIFO local deques, batches of up to 32
// from a bucket, one packet per steal ([Configuration.SchedulerConfig]).
//
//	(a) one Add per packet, wake one (MMTk before PR #1182)
//	(b) one AddAll, wake all (MMTk after PR #1182): a worker that wakes
//	    first takes a batch that may hold the heavy packet, which then runs
//	    after the batch's other packets, on the stage's critical path
//	(c) (b) + the heavy packet in the priority lane: it starts first
//	(d) (b) + the heavy packet split into 4096-slot packets
//	(e) (b) with wake-N: wake min(packets, parked)
//
// and (a), (b) and (e) again as "a+learn", "b+learn" and "e+learn", with
// scheduler.Config.LearnHeavy: the scheduler times the packets of the
// first cycle, marks ScanCodeCacheRoots heavy (its mean run is over half
// the stage's work per worker; ScanMutatorRoots, of the same Go type, is
// not), and from the second cycle on queues it in the priority lane, as
// (c) does by hand. Their [Result.Median] leaves the first cycle out.
//
// Each [Cycle] reports the Prepare and Closure stages' makespans beside
// their lower bounds, max(longest packet, work ÷ workers) ([stagetime]).
// The Prepare stage's makespan runs from the moment StopMutators queues its
// work to the end of its last packet.
//
// # Roles
//
// One goroutine owns a [Runner] (NewRunner, Cycle as often as wanted, Close)
// or calls [Run]. The packets run on the scheduler's workers; each worker's
// scratch state is its own.
//
// # Measured
//
// With
//
//	go test -run XXX -bench Prepare -benchtime 50x -count 5 ./examples/prepare/
//
// (and go run ./examples/prepare/main), default model (scale 1, seed 1),
// Go 1.26.8. The Prepare stage's makespan ÷ its lower bound, median over
// the cycles:
//
//	                                       (a)    (b)    (c)    (d)    (e)
//	AMD EPYC, 2-vCPU KVM guest, quiet     1.39-  1.38-  1.02-  1.04-  1.40-
//	                                      1.44   1.43   1.03   1.08   1.43
//	Intel Xeon VM, taskset to 2 cores     1.38   1.38   1.015  1.04-  1.38-
//	                                                           1.05   1.39
//	same VM, 4 workers                    1.04-  1.04-  1.015  1.13-  1.03-
//	                                      1.09   1.09          1.20   1.08
//	same VM, 16 workers                   1.04-  1.02   1.01   1.23-  1.02
//	                                      1.07                 1.25
//
// The learning configurations, same machine and Go, 2 workers
// (BenchmarkPrepare, median of five runs of 20 cycles after a warm-up,
// benchmarks/results/xeon2/learnheavy): a+learn 1.035, b+learn 1.032,
// e+learn 1.032, against 1.43–1.44 for (a), (b), (e) in the same runs.
//
// On two workers the lower bound is the code-cache packet (about 2.7 ms, DefaultModel);
// (a), (b) and (e) run it after about 1 ms of mutator roots, (c) starts it
// first, (d) balances its pieces to within one piece. Wake-N wakes the same
// one parked worker that wake-all wakes, so on two workers (e) is (b). With
// four or more workers another worker is free to take the heavy packet
// early and the imbalance shrinks; (d)'s ratio then grows because its
// lower bound (work ÷ workers, under 1 ms) is of the order of a wake-up.
package prepare
