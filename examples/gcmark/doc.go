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
// on AMD EPYC (Zen 3 "Milan", family 25 model 1), 2 vCPU KVM, Go 1.26.8,
// GOMAXPROCS=2, shared with other jobs (see the figures' spread), default
// heap (scale 1, seed 1: 2,097,152 objects, 6.9 M slots, 1,939,221 reachable):
//
//	MEASURED_GCMARK
//
// The mark is memory-bound: each newly marked object costs a cache miss on
// its offsets and another on its slots. Marking and scanning are done in
// two passes per packet so that the CASes do not serialise those misses
// (see Marker.trace).
package gcmark
