// Package gcmark is the mark phase of a tracing garbage collector on a
// wsched scheduler, on a synthetic heap, beside the markers a collector has
// without wsched: the example that shows what the scheduler is for, and a
// guide for collector authors who embed it.
//
// # The heap
//
// [NewHeap] builds, from a seed, objects laid out in memory as a program's
// are: a header (the number of reference slots), the slots, then scalar
// words. [DefaultHeapConfig] (shape [ShapeBuilt]) allocates them as a
// program builds its data: structure after structure, each depth-first
// from its root, so that an object's first child is allocated right after
// it; 5% of the slots point anywhere ([HeapConfig.LongRange]), the others
// to a child or back to an ancestor. At scale 1: 2 Mi objects, 6.5 M
// slots, 64 MB, four arrays of 32 Ki slots, and 42,600 root slots (64
// mutator stacks and a code cache of [CodeCacheSlots], 26,845 slots, the
// size seen in MMTk's luindex investigation). A depth-first mark of it
// scans the next allocated object next 73% of the time, a breadth-first
// one 13% (TestBuiltHeapLocality). [PowerLawHeapConfig] ([ShapePowerLaw])
// is a graph without that layout (power-law out-degrees, 60% of
// references to objects allocated within 64); the luindex demo uses it.
//
// # The markers
//
// A [Marker] runs one GC cycle per [Marker.Mark] in three stages, as MMTk
// does. Prepare: ClearMarks packets clear the mark bitmap, and a root
// packet per mutator stack and one for the code cache decode their slots
// (about 100 ns each, [DefaultRootSlotWork]) into buffers of up to
// [ChunkSlots] referents, queued in Closure. Closure traces: by default
// ([TraceDepthFirst]) each packet is a mark stack, described below;
// [TraceEdgeBuffers] is MMTk's design (buffers of up to 4,096 references,
// marked, the winners' slots gathered into new buffers). Release: Sweep
// packets count the live objects and bytes.
//
// A [Baseline] is a marker without the scheduler, a whole cycle per Mark:
// [SequentialDFS] (explicit mark stack, plain mark bits: the marker a
// collector replaces), [SequentialDFSAtomic] (the same with CAS bits),
// [SequentialBFS] (a FIFO queue), and [Goroutines] (goroutines on one
// channel of chunks, depth-first, handing the oldest half of a stack to
// the channel when one waits on it).
//
// Every cycle of every marker must mark exactly the objects a sequential
// marker finds, scanning each once and tracing each slot once: the tests
// check it for every policy, design and 1–3 workers, the benchmark on its
// first and last cycle, ExampleMarker at 2 workers. Each packet times
// itself, so a [Result] holds each stage's makespan beside its lower
// bound, max(longest packet, work ÷ workers).
//
// # What it costs
//
// Interleaved cycles (one of each marker per round, the first round a
// warm-up), 40 rounds, on the default heap, on a 2-vCPU KVM guest (AMD
// EPYC, family 26) shared with other jobs, Go 1.26.8; median ms per
// cycle, the two undisturbed runs of three:
//
//	go run ./examples/gcmark/main -compare seq-dfs,seq-dfs-atomic,seq-bfs,goroutines,dfs -workers 1,2 -rounds 40 -quiet 0.1
//
//	seq-dfs  seq-dfs-atomic  seq-bfs  goroutines/1  goroutines/2  dfs/1    dfs/2
//	102–103     107–108      251–255    123–124        72–76     103–105  65–69
//
// Speed against seq-dfs, per round (median): the Marker on 1 worker
// 0.99× (it marks with plain bits there, through seq-dfs's own loop:
// what the scheduler adds is under 2%), on 2 workers 1.54–1.58×; the
// goroutine marker 0.83–0.84× and 1.38–1.41×. On 2 workers the Marker
// takes 0.90–0.92× the goroutine marker's time, and every stage stays
// within 1.02/1.00/1.03× (Prepare/Closure/Release) of its lower bound.
// Other runs on 2 workers, on a machine shared with other jobs, gave
// 1.52–1.81×.
//
// # The ceiling on 2 workers
//
// Workers that mark one bitmap together must set its bits atomically,
// and seq-dfs-atomic, seq-dfs with CAS bits, runs at 0.95–0.96× seq-dfs's
// speed. So no such marker on W workers beats W × that speed: the speed
// of W workers sharing seq-dfs-atomic's cycle with no loss at all.
// -compare prints it last, when seq-dfs and seq-dfs-atomic are both
// compared: 1.918× seq-dfs on 2 workers in both runs above. It leaves out
// Prepare's longest root packet, which bounds Prepare at 2.3 ms on 2
// workers where half its work is 1.85; with Prepare and Release as
// measured, 1.89–1.90×. The Marker reaches 0.80–0.82 of the ceiling on
// the default heap, and 0.87–0.90 with fewer long-range slots:
//
//	go run ./examples/gcmark/main -compare seq-dfs,seq-dfs-atomic,goroutines,dfs -workers 1,2 -longrange 0 -rounds 40 -quiet 0.1
//
//	-longrange     0      0.01   0.02   0.05 (default)
//	dfs/2          1.723  1.686  1.653  1.538–1.575
//	ceiling        1.907  1.907  1.897  1.918
//	goroutines/2   1.613  1.549  1.507  1.382–1.406
//
// Where 2 workers lose: both are busy all through Closure, but their
// work adds up to 22–29% more than seq-dfs-atomic's on the default heap
// (Closure 62–66 ms on each of 2 workers, 101–102 ms for
// seq-dfs-atomic), 8% more with no long-range slots. The machine leaves
// room for 2×: two seq-dfs-atomic markers at once, each with a bitmap of
// its own, take 106–110 ms a cycle on one shared heap, as one alone does
// (107–109 ms; three of four runs each, the fourth disturbed by other
// jobs: 129 and 139 ms):
//
//	go test -run '^$' -bench TwoSequentialMarkers -count 4 ./examples/gcmark/
//
// The loss grows with the long-range references. With them the workers'
// marks land all over one bitmap, so that a worker's test or CAS often
// finds the line last written by the other worker's cache, a transfer
// each: 230–250 ns here,
//
//	go test -run '^$' -bench LineTransfer -count 4 ./examples/gcmark/
//
// so the 23–29 ms the two workers add would be 95–125 thousand
// transfers, where a cycle follows 326 thousand long-range slots. Three designs that share
// less were tried and lost more than they won (benchmarks/JOURNAL.md,
// 2026-12-02): far referents marked in batches; a bitmap of one byte per
// object (eight times larger, 64 objects a line instead of 512), which
// scaled better on 2 workers but lost more to the bitmap's misses; and
// owner-computes marking, where each 512-object chunk of the bitmap
// belongs to the worker that marks in it first, which marks it with plain
// bits, the other forwarding it the referents that fall there: no line
// of the bitmap written by two workers, and no CAS, but the ownership
// test on every slot cost one worker 18–52% against seq-dfs, more than
// the CAS bits' 4–6%, and 2 workers reached 1.24–1.63×. The guest has
// no cache counters to confirm where the rest goes. The files are in
// benchmarks/results/epyc2/gcmark-1cc1e0c and gcmark-a5676ba.
//
// # Order: depth-first
//
// Pop the newest object first and push an object's slots last to first,
// so that its first slot is scanned next: a heap built depth-first is then
// read in allocation order, and most header and slot loads hit lines
// already fetched. Breadth-first order reads the same objects in another
// order: seq-bfs takes 2.6–2.7× seq-dfs's time on the built heap (the
// table above). MMTk's 4,096-slot edge buffers walk the heap
// breadth-first too: 211 ms a cycle on 1 worker and 117 on 2, against the
// depth-first Marker's 116 and 78 in the same run:
//
//	go run ./examples/gcmark/main -compare seq-dfs,seq-bfs,dfs,edges -workers 1,2 -rounds 20 -quiet 0.1
//
// A Closure packet holds a mark stack in a buffer it owns (from a per-worker
// pool, so a packet is a value and spawning one allocates nothing); it
// runs until its stack is empty. Each worker keeps its largest buffer and
// moves a packet's stack into it, so that the deepest stack (about 200 Ki
// entries here) is grown once, not every cycle: a cycle allocates about
// 18 KB in about 250 allocations on 1 worker (BenchmarkGCMark, B/op).
//
// # Packet granularity: the batch
//
// The unit of scheduling is a mark stack, not an object: a packet scans
// thousands to millions of objects, and the scheduler is consulted every
// [DefaultSplitEvery] (64) objects, at the cost of two atomic loads. Within the
// packet, [Options.Batch] objects ([DefaultBatch], 32) are popped at once:
// their headers are loaded in one pass, so that their cache misses
// overlap, and scanned in a second. Measured by
//
//	go run ./examples/gcmark/main -sweep batch -workers 1,2 -rounds 15 -quiet 0.1
//
// batches of 32 against 1 object at a time: seq-dfs 102 against 181 ms,
// dfs/1 113 against 201, dfs/2 68 against 107; 48 and 64 are no faster,
// 8 and 16 slower (134 and 113 ms for seq-dfs).
//
// # When to split, and what to give away
//
// A packet that works through a stack of its own cannot be stolen from:
// it must offer work. Every SplitEvery objects it calls
// [scheduler.Worker.ShouldSplit] (two atomic loads and the deque's length:
// true when a worker is parked or searching and this worker's deque holds
// fewer packets than there are such workers). When true it gives away the
// oldest [Options.SplitShare] (half) of its stack as a packet: the oldest
// entries are the shallowest, the roots of the largest subtrees left, so
// the thief gets much work for one steal and the giver keeps the part of
// the heap its cache holds. It then spawns the rest too and returns
// ([Options.KeepRest] off), so that under the default local order
// (scheduler.LocalPrivate) the part given away is offered to thieves at
// once. On 2 workers a cycle splits about 4 times and steals about 7;
// Closure's makespan is within 1.00× of its lower bound. Asking every
// 16, 64 or 256 objects, giving away a quarter, half or three quarters,
// keeping the rest or not, LocalPrivate or LocalLIFO: all 36 settings
// ran within each other's noise (77–82 ms medians under a busy machine):
//
//	go run ./examples/gcmark/main -sweep split -workers 2 -rounds 15 -quiet 0.1
//
// Splitting only on demand is what keeps one worker's mark close to the
// sequential one: with nobody idle, nothing moves (and with one worker
// a packet does not ask).
//
// # Mark bits
//
// One bit per object in a bitmap shared by all workers, set by
// compare-and-swap after a plain load (most referents are already
// marked, and the load avoids the locked instruction for them). An object
// is marked when its reference is read and pushed only by the worker
// whose CAS set the bit, so it is scanned exactly once, by whichever
// packet holds it then. CAS bits cost 5%: seq-dfs-atomic against seq-dfs
// in the table above, the same loop (scanDFS) with the other kind of
// bit. With one worker nobody else marks, so the depth-first Marker sets
// its bits with plain stores there; that and one scan loop for every
// depth-first marker are what bring it to seq-dfs's speed on 1 worker
// (with CAS bits, and a loop of its own, it took 1.12–1.15× seq-dfs's
// time at 742ff63). A collector that knows it marks alone should do the
// same. The edge-buffer design marks a buffer's referents in one pass
// and scans the winners in a second, so that the CASes do not serialise
// the objects' misses.
//
// # Roots
//
// Roots are found in Prepare, while Closure's bucket is closed: root
// packets queue their referents as Closure packets without waking anyone,
// and Closure opens when every root is known. A depth-first root packet
// claims its referents when it runs, then drains like any other.
// A root set much heavier than the others must start first, or it decides
// the stage's makespan: by default ([CodeCachePriority]) the code-cache
// packet goes in Prepare's priority lane; [CodeCacheSplit] cuts it into
// ChunkSlots-slot packets; [CodeCacheLast] queues it after the stacks in
// one bulk add, as MMTk does. Prepare's makespan ÷ lower bound, median of
// 5 cycles on 2 workers, three runs (MMTk's design on the power-law heap):
//
//	go run ./cmd/wsched demo -workers 2 -cycles 5 -policy a,b,c,d,e -trace=false
//
// 1.42–1.51 with one Add per packet (a), one AddAll (b) or wake-N (e);
// 1.04–1.09 with the code cache in the priority lane (c); 1.09–1.11 split
// (d). The depth-first marker's Prepare stays within 1.02–1.03× on 2 workers,
// except under WakeOne (1.46–1.54: the second worker starts late), in
//
//	go run ./examples/gcmark/main -sweep policy -workers 2 -rounds 15 -quiet 0.1
//
// where no wake × steal × local order marked measurably faster than
// another.
//
// # Roles
//
// One goroutine owns a Marker: NewMarker, then Mark as often as wanted
// (one at a time), Marks to read the last cycle's bits, Close. The
// packets run on the scheduler's workers; each worker's buffers and
// counters are its own (indexed by Worker.ID), so the only shared writes
// are the mark bits.
package gcmark
