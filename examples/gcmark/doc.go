// Package gcmark is the mark phase of a tracing garbage collector on a
// wsched scheduler, on real Go heaps and synthetic ones, beside the markers
// a collector has without wsched: the example that shows what the
// scheduler is for, and a guide for collector authors who embed it.
//
// # Real heaps first
//
// Package heapdump (examples/gcmark/heapdump) reads the Go runtime's heap
// dumps into a [Heap] ([NewHeapFrom]: objects in address order, padded to
// their sizes, pointer fields as slots, a root packet per goroutine's stack
// and one for the global roots), and its command makes two from real
// programs: a go/types type-check (3.85 M live objects, 301 MB, 2.42
// pointer fields to objects an object) and an inverted index of GOROOT/src
// (3.67 M, 587 MB, 5.51). In neither is an object's referent its
// neighbour: 61% and 87% of sampled references cross the 64 ranges the
// partitioned design would cut (the synthetic built heap: 6%). On a
// 2-vCPU AMD EPYC, 11 interleaved rounds
// (benchmarks/results/epyc2/gcmark-worklist-auto; a 2-vCPU Xeon's runs
// of the other designs are in benchmarks/results/xeon2/gcmark-realheaps):
//
//	go run ./examples/gcmark/heapdump/main gen -program typecheck -out /tmp/typecheck.dump
//	go run ./examples/gcmark/main -dump /tmp/typecheck.dump -compare seq-dfs,seq-dfs-atomic,seq-bfs,goroutines,auto -workers 1,2 -rounds 11
//
//	speed vs seq-dfs                        typecheck        index            built
//	Marker, default (auto), 1 worker        1.00 (dfs)       1.04 (dfs)       0.98 (dfs)
//	Marker, default (auto), 2 workers       1.65 (worklist)  1.58 (worklist)  2.00 (parts)
//	partitioned design, 2 workers           1.21             0.82             2.00
//	goroutine marker, 2 workers             1.29             1.30
//
// (medians of per-round ratios to seq-dfs, the faster sequential marker
// on all three here; index's 1-worker figure is from the designs run
// beside it, the headline run's host slowed that marker to 0.79 with a
// range of 141-312 ms). The worklist with CAS bits stays under the CAS
// ceiling, twice seq-dfs-atomic's speed (1.85× and 1.75× here); the
// partitioned design, the fastest on the built heap, forwards most
// references on a real one and gains little or nothing from a second
// worker. So the Marker chooses (TraceAuto, below).
//
// # The synthetic heaps
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
// (about 100 ns each, [DefaultRootSlotWork]) and hand the referents to
// Closure. Closure traces, in one of four designs, by default the one
// [TraceAuto] chooses from the heap. In [TracePartitioned] the objects are
// cut into ranges of whole lines of
// the mark bitmap, each marked depth-first with plain bits by one packet
// at a time, a referent in another range forwarded to that range's
// packet: described below, and in partition.go. [TraceDepthFirst] makes
// each packet a mark stack, shared bitmap and CAS bits, split for idle
// workers; [TraceEdgeBuffers] is MMTk's design (buffers of up to 4,096
// references, marked, the winners' slots gathered into new buffers);
// [TraceWorklist] is the mark loop as a scheduler.Worklist (a body per
// object that feeds the referents it marks), what TraceAuto takes on
// heaps whose references cross, with more than one worker (below).
// Release: Sweep packets count the live objects and bytes.
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
// # Choosing the design: TraceAuto
//
// NewMarker samples the heap once ([SampleCrossing]: 8,192 objects evenly
// spaced over the ids, up to 8 references each, well under a millisecond)
// and partitions when at most [AutoCrossingLimit] (0.35) of the sampled
// references cross between the partitioned design's ranges, else marks
// with the library's Worklist ([TraceWorklist], below); on one worker it
// always marks depth-first (plain bits, nothing to forward, two clock
// reads a packet of many objects). The limit comes from a sweep of built heaps whose
// long-range share grows, 2 workers: the partitioned design marked
// 1.25, 1.28, 1.28, 1.21 and 1.09 times as fast as the depth-first one at
// sampled shares 0.06, 0.11, 0.15, 0.21 and 0.30, as fast at 0.40 (the
// power-law heap, 1.01), slower at 0.45 (0.96), and on the real heaps
// (0.61, 0.87) took 1.5 and 1.8 times as long
// (benchmarks/results/xeon2/gcmark-realheaps/sweep-crossing.txt, with the
// commands). [Marker.Tracing] says what it chose and the share it saw.
//
// # What it costs on the built heap
//
// Interleaved cycles (one of each marker per round, the first round a
// warm-up), 40 rounds, on the default heap, on the 2-vCPU AMD EPYC KVM
// guest (family 26) shared with other jobs, Go 1.26.8; median ms per
// cycle, lowest and highest of six runs
// (benchmarks/results/epyc2/gcmark-2c579bf):
//
//	go run ./examples/gcmark/main -compare seq-dfs,seq-dfs-atomic,seq-bfs,goroutines,parts,dfs -workers 1,2 -rounds 40 -quiet 0.1
//
//	seq-dfs  seq-dfs-atomic  seq-bfs  goroutines/1  goroutines/2  parts/1  parts/2  dfs/1    dfs/2
//	103–107     107–111      254–271    124–130        73–76     103–107   52–54   103–108  65–67
//
// Speed against seq-dfs, per round (median): the Marker on 1 worker
// 0.99–1.00× (one partition, marked through seq-dfs's own loop: what
// the scheduler adds is about 1%), on 2 workers 1.93–2.02×; the
// goroutine marker 0.81–0.83× and 1.39–1.47×; the depth-first design
// 0.99–1.00× and 1.56–1.63×. On 2 workers the Marker takes 0.70–0.72×
// the goroutine marker's time, and every stage stays within
// 1.02/1.02/1.03× (Prepare, Closure, Release) of its lower bound. The
// same directory holds runs that a busy host slowed (every 2-worker
// marker by 15–20%, and the 1-worker partitioned marker alone of the
// 1-worker ones, to 0.74×).
//
// # Where the mark bits live: partitions
//
// The choice that decides 2 workers' speed is which CPU writes which line
// of the mark bitmap. Workers that share one bitmap must set its bits by
// CAS, and seq-dfs-atomic, seq-dfs with CAS bits, runs at 0.96–0.97×
// seq-dfs's speed: so no such marker on W workers beats W × that speed,
// which -compare prints last as the CAS ceiling (1.91–1.94× on 2
// workers in the runs above). The depth-first design reaches 0.81–0.85
// of it. Its two workers' Closure adds up to 21–23% more than
// seq-dfs-atomic's, while two seq-dfs-atomic markers, each with a bitmap
// of its own, run on one shared heap as fast as one alone:
//
//	go test -run '^$' -bench TwoSequentialMarkers -count 4 ./examples/gcmark/
//
// The loss follows the long-range references: their marks land all over
// the one bitmap, so that a test or CAS often finds the line last written
// by the other CPU, a transfer of 230–250 ns on that machine,
//
//	go test -run '^$' -bench LineTransfer -count 4 ./examples/gcmark/
//
// The partitioned design gives each packet lines of its own instead. The
// objects are cut into Options.Partitions ranges of consecutive ids, each
// a whole number of 512-object lines of the bitmap; one packet at a time
// marks a range, depth-first from its stack, and is the only writer of
// the range's bits while it runs, so it sets them with plain stores. A
// referent in another range is not marked but forwarded: gathered per
// range in the worker's buffer, handed over 64 at a time to the range's
// inbox (a mutex and a slice), which starts a packet for the range if
// none is queued or running. On the default heap a cycle forwards about
// 440 thousand referents (7.5% of its slots) and runs about 4,400
// partition packets on 2 workers. The inboxes hold at most what a cycle
// forwards; the protocol that never leaves a referent without a packet
// to take it is written in partition.go.
//
// How many ranges: enough for the scheduler to balance, few enough that a
// depth-first walk stays in one. Partitions per worker, on 2 workers
// (median ms, speed against seq-dfs):
//
//	go run ./examples/gcmark/main -sweep parts -workers 2 -rounds 20 -quiet 0.1
//
//	per worker   1      2      4      8      16     32     64
//	ms           61.5   56.2   54.5   52.3   51.7   51.4   52.7
//	speed        1.650  1.801  1.875  1.943  1.971  1.975  1.934
//
// so [DefaultPartitionsPerWorker] is 32; with one worker the Marker uses
// one range, which nothing is forwarded to. Against the share of
// long-range slots (one run each; parts and dfs at 2 workers):
//
//	go run ./examples/gcmark/main -compare seq-dfs,seq-dfs-atomic,goroutines,parts,dfs -workers 1,2 -longrange 0 -rounds 40 -quiet 0.1
//
//	-longrange     0      0.01   0.02   0.05 (default)
//	parts/2        1.734  1.873  1.918  1.993–2.022
//	dfs/2          1.818  1.674  1.631  1.575–1.626
//	goroutines/2   1.720  1.559  1.507  1.410–1.471
//
// With no long-range slots at all (a forest of structures, none pointing
// into another) little is lost to shared lines, and the depth-first
// design runs 5% faster than the partitions; with 1% or more, as a
// program's heap has (shared types, interned strings), the partitions
// win, and by more the more there are. On the power-law heap, whose
// references go anywhere 40% of the time, parts/2 runs 1.56× seq-dfs,
// dfs/2 1.24×, goroutines/2 1.16×, MMTk's edge buffers 0.63×
// (powerlaw.txt in the same directory).
//
// Slower than the partitions on the default heap, with one bitmap
// shared (figures in benchmarks/JOURNAL.md, 2026-12-02): marking far
// referents in batches;
// a bitmap of one byte per object (64 objects a line instead of 512);
// forwarding far referents to the worker that first scanned an object in
// their chunk, with CAS bits kept; and, without the scheduler, chunks
// owned by whichever worker first marked in them, which interleaved the
// chunks between the workers and forwarded over a quarter of all
// referents.
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
// Both depth-first designs scan in this order, through one loop
// (scanDFS; the partitioned design's copy adds the range test, and with
// one range it runs scanDFS itself). A depth-first Closure packet holds a
// mark stack in a buffer it owns (from a per-worker pool, so a packet is
// a value and spawning one allocates nothing); it runs until its stack is
// empty (and, partitioned, its inbox). Each worker keeps its largest
// buffer and moves a packet's stack into it, so that the deepest stack
// (about 200 Ki entries on the default heap) is grown once, not every cycle: a cycle
// of the partitioned Marker allocates 185 times on 1 worker and about
// 290 on 2 (BenchmarkGCMark, allocs/op), none per object or packet.
//
// # Packet granularity: the batch
//
// The unit of scheduling is a range or a mark stack, not an object: a
// packet scans thousands to millions of objects. A partition's packet
// looks at its inbox every 256 objects (an atomic load); a depth-first
// packet consults the scheduler every [DefaultSplitEvery] (64) objects, at
// the cost of two atomic loads. Within the packet, [Options.Batch]
// objects ([DefaultBatch], 32) are popped at once: their headers are
// loaded in one pass, so that their cache misses overlap, and scanned in
// a second. Measured by
//
//	go run ./examples/gcmark/main -sweep batch -workers 1,2 -rounds 15 -quiet 0.1
//
// batches of 32 against 1 object at a time: seq-dfs 102 against 181 ms,
// dfs/1 113 against 201, dfs/2 68 against 107; 48 and 64 are no faster,
// 8 and 16 slower (134 and 113 ms for seq-dfs).
//
// # Closure on the library's Worklist
//
// [TraceWorklist] writes the mark loop as the scheduler's docs tell users
// to: a Worklist of objects, whose body takes up to Options.Batch − 1 more
// objects off its stack (Feeder.Take), loads their headers in one pass as
// the batch above does, scans them, and feeds the referents it marks; it
// marks with plain bits on one worker, by CAS on more, and each body call
// times itself as a Closure packet (two clock reads). Speed against
// seq-dfs (median of per-round ratios), 11 interleaved rounds on a 2-vCPU
// AMD EPYC (benchmarks/results/epyc2/gcmark-worklist-auto):
//
//	go run ./examples/gcmark/main -dump /tmp/typecheck.dump -compare seq-dfs,seq-dfs-atomic,auto,parts,dfs,worklist -workers 1,2 -rounds 11
//
//	                      typecheck    index        built        powerlaw
//	worklist, 1 / 2       0.93 / 1.60  0.99 / 1.68  0.95 / 1.54  0.96 / 1.26
//	depth-first, 1 / 2    0.99 / 1.54  1.04 / 1.46  0.98 / 1.55  0.99 / 1.21
//	partitioned, 1 / 2    0.98 / 1.21  0.98 / 0.82  1.00 / 2.00  0.98 / 1.52
//
// On two workers the worklist is the faster on both real heaps (by 4% and
// 15%), as fast on the built one, and TraceAuto takes it wherever it does
// not partition. On one worker it is 3–6% slower than the depth-first
// packets, which read the clock twice a packet where it reads it twice a
// body call: the same runs without those reads put it at 168–172 ms
// against 176–181 on typecheck and 137–144 against 145–152 on index (the
// depth-first design: 171–177 and 148–159), so on one worker TraceAuto
// keeps the depth-first design. The powerlaw heap's sampled share, 0.40,
// is over AutoCrossingLimit: the partitioned design marked 1.52× here
// against the worklist's 1.26×, but level with it, or 4% slower, in the
// two sweeps of the share (AutoCrossingLimit's doc). Without Take a body sees one object and cannot overlap the
// next objects' header misses: on a 2-vCPU Xeon it ran at 0.54–0.59× on 1
// worker and 1.0–1.16× on 2 (benchmarks/results/xeon2/gcmark-realheaps).
//
// # When to split, and what to give away
//
// In the partitioned design the unit of balance is the range: 32 per
// worker, each a packet when it has work, which idle workers steal like
// any other; a packet does not split. The depth-first design splits on
// demand. A packet that works through a stack of its own cannot be
// stolen from: it must offer work. Every SplitEvery objects it calls
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
// One bit per object. In the partitioned design a range's bits are set
// with plain stores by the one packet marking it; an object is pushed by
// that packet when its bit was clear, so it is scanned exactly once. In
// the other designs the bitmap is shared by all workers and its bits are
// set by compare-and-swap after a plain load (most referents are already
// marked, and the load avoids the locked instruction for them): an
// object is pushed only by the worker whose CAS set the bit. CAS bits
// cost 3–5%: seq-dfs-atomic against seq-dfs in the table above, the same
// loop (scanDFS) with the other kind of bit. With one worker nobody else
// marks, so the depth-first Marker sets its bits with plain stores there;
// that and one scan loop for every depth-first marker are what bring it
// to seq-dfs's speed on 1 worker (with CAS bits, and a loop of its own,
// it took 1.12–1.15× seq-dfs's time: benchmarks/results/epyc2/gcmark-742ff63).
// A collector that knows it marks alone should do the same; one that
// marks on several CPUs should give each its own lines, as the partitions
// do. The edge-buffer design marks a buffer's referents in one pass and
// scans the winners in a second, so that the CASes do not serialise
// the objects' misses.
//
// # Roots
//
// Roots are found in Prepare, while Closure's bucket is closed: root
// packets queue their referents as Closure packets without waking anyone,
// and Closure opens when every root is known. In the partitioned design a
// root packet puts each referent in its range's inbox, and Closure starts
// with one packet per range, which marks what its inbox holds. A
// depth-first root packet claims its referents when it runs, then drains
// like any other.
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
// (d). The partitioned and depth-first markers' Prepare stays within
// 1.02–1.03× on 2 workers, except under WakeOne (1.43–1.54: the second
// worker starts late). Across the scheduler's policies, wake × steal ×
// local order,
//
//	go run ./examples/gcmark/main -sweep policy -workers 2 -rounds 15 -quiet 0.1
//
// the partitioned marker's cycles stay within 6% of each other in each
// of two runs (51.7–55.0 ms in the quieter; LocalFIFO's the lowest
// medians in both, by 2–3%, inside the noise), so the Marker keeps the
// scheduler's defaults; the same sweep of the depth-first marker (-closure dfs,
// benchmarks/results/epyc2/gcmark-742ff63) found none measurably faster
// either.
//
// # Writing either design: the rules
//
// What a collector author needs to get right, each rule with what breaks
// without it (TestEveryDesignOnEveryHeap checks every design's marks
// object for object against the sequential marker's, on the generated
// heaps and on a forest where each object has exactly one referrer, laid
// out in shuffled order: there a lost referent loses its whole subtree,
// which a heap of many referrers would mark by another path).
//
// Both designs:
//
//  1. Stages: Prepare clears the marks and finds the roots while Closure's
//     bucket is closed, so its adds wake nobody and Closure starts with
//     every root known. A stage opens only once the earlier ones have
//     drained and every worker is idle, under the scheduler's monitor, so
//     plain writes of an earlier stage (the cleared bitmap) are visible to
//     every packet of a later one. A marker of one stage works too, the
//     bitmap cleared before Run: root packets then claim their referents
//     themselves and push them on their own stack, because a stage ends
//     only when every packet has run and every worker is idle.
//  2. A Closure packet that runs long looks at the cycle's end
//     (Worker.Context().Done(), without blocking) every few thousand
//     objects, and if it is closed returns nil (the cycle's error is
//     already recorded); its marks are abandoned. Whatever else the cycle
//     left half-done is reset before the next Run: the marks, and in the
//     partitioned design every inbox, active flag and forwarding buffer
//     (an ended cycle drops the queued range packets whose active flags
//     are still set: not reset, those ranges never get a packet again, and
//     the next cycle marks nothing there).
//  3. Work made by a Closure packet goes out with scheduler.Spawn (onto
//     its worker's queue, in the running packet's stage, where idle
//     workers steal it); work found by a root packet in Prepare goes out
//     with Add and Closure's StageID (into Closure's bucket, which opens
//     with the stage): a Spawn from Prepare would run in Prepare.
//  4. Mark stacks newest first, slots pushed last to first, and Batch
//     headers loaded before any is scanned (the order section above); the
//     buffers come from per-worker pools so that a packet is a value and
//     spawning one allocates nothing.
//
// Depth-first and worklist (what TraceAuto chooses on real heaps, on one
// worker and on more):
//
//  5. A bit shared by workers is set by CAS after a plain load, and an
//     object is pushed only by the call whose CAS set its bit, so it is
//     scanned once; with one worker, plain stores (nobody else marks).
//  6. Depth-first: every SplitEvery objects ask Worker.ShouldSplit; when
//     it says yes, spawn the oldest half of the stack as a packet, spawn
//     the rest too, and return: under LocalPrivate a lone spawn stays
//     private until the spawner spawns again or returns, and the idle
//     worker would wait. The worklist leaves splitting to the library.
//
// Partitioned (what TraceAuto chooses when few references cross):
//
//  7. Ranges are whole 512-object lines of the bitmap, and the bitmap
//     starts on a 64-byte line (NewBitmap): otherwise two ranges share a
//     line and their packets' plain stores to it race.
//  8. Each range has an inbox (a slice under a mutex) and an active flag,
//     set when a packet for the range is queued or running. A forwarder
//     appends to the inbox and, under the same hold of the mutex, tests
//     active and, if it is clear, sets it; then it queues the range's
//     packet (Spawn from a Closure packet, Add from a root packet: rule
//     3). At most one packet runs per range, so its plain mark bits have
//     one writer.
//  9. A packet hands over its partial forwarding buffers when its own
//     stack is empty, before it decides to end: a referent left in a
//     worker's buffer is in no inbox and no packet will mark it (an
//     implementation without the rule lost 580 of 3.1 M objects).
//  10. A packet ends only under the inbox's mutex: if the inbox is empty it
//     clears active and returns, else it takes the inbox and goes on. The
//     same mutex orders the ending packet's plain mark bits before the
//     next packet of the range, on whatever worker it runs.
//  11. A packet looks at its inbox's count (an atomic, read without the
//     lock) every few hundred objects and takes the inbox when it is not
//     zero, so that forwarded work does not wait for the end of a long
//     walk.
//
// # Roles
//
// One goroutine owns a Marker: NewMarker, then Mark as often as wanted
// (one at a time), Marks to read the last cycle's bits, Close. The
// packets run on the scheduler's workers; each worker's buffers and
// counters are its own (indexed by Worker.ID), so the only shared writes
// are the inboxes (partitioned) or the mark bits (the other designs).
package gcmark
