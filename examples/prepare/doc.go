// Package prepare models the Prepare stage of a GC cycle and reproduces
// the imbalance of MMTk's luindex case (mmtk-core #1200, ANCHORS §1), then
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
//	(b) one BulkAdd, wake all (MMTk after PR #1182): a worker that wakes
//	    first takes a batch that may hold the heavy packet, which then runs
//	    after the batch's other packets, on the stage's critical path
//	(c) (b) + the heavy packet in the priority lane: it starts first
//	(d) (b) + the heavy packet split into 4096-slot packets
//	(e) (b) with wake-N: wake min(packets, parked)
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
// on AMD EPYC (Zen 3 "Milan", family 25 model 1), 2 vCPU KVM, Go 1.26.8,
// GOMAXPROCS=2, shared with other jobs, default model (scale 1, seed 1):
//
//	MEASURED_PREPARE
//
// On two workers wake-N wakes the same one worker that wake-all wakes, so
// (e) can only match (b); the difference between the two needs more
// workers than there are cores here (go run ./examples/prepare/main
// -workers 8).
package prepare
