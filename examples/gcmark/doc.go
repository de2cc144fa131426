// Package gcmark is a parallel mark, as a tracing garbage collector does
// it, on a synthetic heap, run on a wsched scheduler: the example that shows
// what the scheduler is for.
//
// # The heap
//
// [NewHeap] builds, deterministically from a seed, an object graph that looks
// like a real heap: millions of objects (2 Mi at scale 1) whose out-degrees
// follow a power law (a quarter are leaves, most hold 2–4 references, a few
// hundreds), references that mostly point to objects allocated nearby, a few
// huge reference arrays (four of 128 Ki slots at scale 1) and roots on 64
// mutator stacks plus a code-cache root set of [CodeCacheSlots] (26,845)
// slots, the size seen in MMTk's luindex investigation. [Heap.MarkSequential]
// is the reference: a breadth-first search on one goroutine.
//
// # The mark
//
// A [Marker] runs one GC cycle per [Marker.Mark], in three stages, as MMTk
// does:
//
//   - Prepare: ClearMarks packets clear the mark bitmap; a ScanStackRoots
//     packet per mutator stack and one ScanCodeCacheRoots packet decode their
//     root slots (about 100 ns a slot, see [DefaultRootSlotWork]) and queue
//     the referents, in edge buffers of at most [ChunkSlots] (4096, MMTk's
//     buffer size), as Closure packets. The code-cache packet goes in the
//     priority lane by default ([CodeCachePlacement]): it is the stage's
//     longest, and must start first.
//   - Closure: a ProcessEdges packet marks each referent with a CAS on its
//     mark bit; the objects it wins are scanned and their references gathered
//     into new buffers, each spawned on the worker as a packet when it holds
//     ChunkSlots. A huge array is scanned in place, one ScanArrayChunk packet
//     per ChunkSlots slots.
//   - Release: Sweep packets count the live objects and their bytes.
//
// Every cycle must mark exactly the objects the sequential search finds; the
// tests check this for every wake × steal policy and 1–3 workers.
//
// Each packet times itself ([stagetime]), so a [Result] holds each stage's
// makespan beside its lower bound, max(longest packet, work ÷ workers).
//
// # Roles
//
// One goroutine owns a Marker: NewMarker, then Mark as often as wanted (one
// at a time), Marks to read the last cycle's result, Close. The packets run
// on the scheduler's workers; each worker's buffers and counters are its own
// (indexed by Worker.ID), so the only shared writes are the mark-bit CASes.
//
// # Costs
//
// Measured with
//
//	go test -run XXX -bench GCMark -benchtime 5x -count 5 ./examples/gcmark/
//
// on the default heap (scale 1, seed 1: 2,097,152 objects, 6.9 M slots,
// 1,939,221 reachable), Go 1.26.8, GOMAXPROCS=2. Per op (one GC cycle),
// with each stage's makespan ÷ lower bound (median over the ops):
//
//	                    sequential BFS  1 worker      2 workers     speedup 1→2
//	AMD EPYC (Zen 3), 2 vCPU KVM, while the other jobs on the box were idle:
//	  ns/op             178–204 ms      214–229 ms    102–115 ms    1.9–2.1×
//	  Prepare/Closure/Release ratio     1.00/1.01/1.01 1.00/1.01/1.05–1.07
//	Intel Xeon, 16-core VM, taskset to 2 cores, quiet (-count 5, medians):
//	  ns/op             234 ms          204 ms        109 ms        1.87×
//	  Prepare/Closure/Release ratio     1.01/1.01/1.01 1.00/1.01/1.05
//
// When other jobs share the 2 vCPUs the two workers do not get two cores
// and the figures mean nothing (runs with 2 workers at 190–355 ms were seen).
// Allocation: about 1,000 allocations and 5–6 MiB per cycle (edge buffers
// are pooled per worker; packets for array chunks are not); no Go GC ran
// during a 2-worker cycle. The sequential BFS does no root-slot work (about
// 4 ms of the parallel mark's Prepare stage).
//
// Scaling (Intel Xeon, 16 cores, no SMT, Go 1.26.8; median of 7 cycles):
//
//	workers        1     2     4     6     8    10    12    14    16
//	scale 1 (ms) 151  82.5  56.0  37.6  28.9  26.4  22.3  20.2  17.7   (8.6× at 16)
//	scale 4 (ms) 798   513   283     –   146     –  97.1     –  79.0   (10.1× at 16)
//
// Closure stays within 1.07× of its lower bound up to 16 workers; Release
// (32 sweep packets of about 140 µs) did not, when these figures were
// taken: the first worker to reach the bucket took all 32 in one batch
// (Config.BucketBatch, 32 by default) and the others had to wake and steal them
// from it, so its ratio grew from 1.05 at 2 workers to 3.6 at 16. Bucket
// takes are now capped at a worker's fair share of the bucket (see
// scheduler.TakeFair and TakeGuided); the 16-worker figures predate that.
// On the same kind of host a later run (commit 50ca7f8, with the fair
// share) measured the harness's smaller heap (512 Ki objects, `bench
// -workers 1,2,...,16 -workloads gcmark -peers none -count 8 -iters 3
// -warmup 1`) at every worker count: 36.4 ms on 1 worker, 22.7 on 2
// (1.60×), 8.98 on 8 (4.05×), 6.78 on 16 (5.37×), the curve in
// benchmarks/results/xeon16-s4/scaling-speedup-gcmark.svg; `wsched demo
// -workers 16` there put Release within 2.0–3.9× of its bound (about 300
// µs of work), Closure within 1.025–1.063.
//
// The mark is memory-bound: each newly marked object costs a cache miss on
// its offsets and another on its slots. Marking and scanning are done in
// two passes per packet so that the CASes do not serialise those misses
// (see Marker.trace).
package gcmark
