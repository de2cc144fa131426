// Package deque holds the lock-free queues under wsched's workers: a
// work-stealing [Deque] owned by one worker, and an [Injector], the
// multi-producer, multi-consumer FIFO behind a stage's bucket. It depends
// on nothing else in wsched.
//
// # Model and caller roles
//
// A Deque has one owner, the worker goroutine that created it (or that a
// scheduler handed it to). The owner calls Push and Pop at the bottom end
// (Pop is LIFO for [New], FIFO for [NewFIFO]; PushBatch adds a run of
// items and publishes them with one store, so thieves see all or none),
// Cap and Release, and uses its deque as the destination of a batch steal. Any goroutine, the thieves,
// may call Steal, StealBatch, StealBatchAndPop and StealInto on it, which take from
// the top end, oldest first. A steal says [Empty] (nothing there), [Retry]
// (items there, but another goroutine won the race for them) or
// [Success], so a scheduler can tell an idle system from a contended one.
//
// StealBatch moves min(⌈n/2⌉, limit) items into the thief's own deque;
// StealBatchAndPop moves min(⌊(n−1)/2⌋, limit−1) and returns one more to
// run at once, both as crossbeam-deque defines them; StealInto takes
// min(⌈n/2⌉, len(dst)) into a slice, for a thief that runs its batch from
// a private array (wsched's workers do, 128 at most) instead of pushing it
// into its deque and popping it back. An Injector takes any
// goroutine on every method; its StealBatchAndPop takes up to limit items
// (never across one of its internal blocks), and TakeBatch takes up to
// len(dst) into a slice, for a consumer that keeps the batch private
// instead of publishing it in a deque (wsched's workers hold a bucket take
// that way while nobody is idle).
//
// Misuse panics with a "deque:" message: a limit ≤ 0, a nil or empty destination,
// a deque stealing into itself, any use after Release (but Len and
// IsEmpty, which report 0), and Release of a deque that still holds items
// (which would lose them).
//
// # The deque algorithm: Chase–Lev with claim-then-read slots
//
// The deque is Chase and Lev's (SPAA 2005) with the C11 orderings of Lê et
// al. (PPoPP 2013): free-running indices top ≤ bottom, a power-of-two ring
// buffer that grows by doubling, and a CAS on top to settle each race
// between consumers. The buffer shrinks by windows: each time the owner
// finds its deque empty (or takes or loses its last item) after at least
// Cap() Pops since the last decision, a buffer that the window never
// needed a quarter of shrinks to fit the window's peak (at least 64
// slots). The peak is the most items the owner saw: after its Pops, when
// the buffer grew, and after each PushBatch (so that a spawner whose
// batches thieves drain as fast as it pushes them keeps the buffer its
// bursts need instead of shrinking it at every window and regrowing it
// in the next burst). A Pop that finds the deque already known to be empty counts a
// quarter: an owner that only polls still closes its windows, and a worker
// that spins a few dozen rounds between bursts no longer closes one made
// of nothing but polls and shrinks the buffer its next burst regrows (a
// 16k-packet spawn round did so every few rounds). A burst of a million
// packets therefore holds its buffer for at most two windows of Pops, or
// eight million polls, as long as the owner keeps using its deque (an
// owner that never calls it again keeps what it has until Release), and a
// worker that fills and drains the same burst over
// and over keeps its buffer instead of regrowing it each time: shrinking
// is amortised O(1) per Pop. (crossbeam halves on every pop under a
// quarter full; in wsched's spawn benchmark that regrew and reshrank the
// buffers every round, 1.9 MB and ~100 allocations per 16k-packet round,
// 190 ns per packet; with windows, 0 allocations and 62 ns.)
//
// One change makes it clean under the race detector for values of any
// size (an interface is two words): a consumer claims an index with its
// CAS on top *before* it reads the slot, as sync.poolDequeue does, and
// each slot carries a claim word, seq:
//
//  1. The owner writes slot i only when seq == i (a load-acquire of seq).
//     It then publishes bottom = i+1 (store-release).
//  2. A thief loads top t, then bottom b, then the buffer pointer, in that
//     order. If t < b it CASes top from t to t+k. The load of bottom
//     synchronises with step 1, so the slot's value is visible; the buffer
//     loaded after bottom holds every unclaimed index below b (a resize
//     copies [top, bottom) before publishing the new buffer).
//  3. After reading the slot the thief stores seq = i+cap (store-release),
//     handing the slot to the owner's next lap: the owner's write in step
//     1 happens after the thief's read.
//  4. If the owner finds seq != i in step 1, it first asks whether index
//     i−cap was taken, during the resize that built this buffer, by a
//     thief that read it from the previous buffer: then the previous
//     buffer's seq says so (i−cap+len(prev)), that thief never touches
//     this buffer, and the slot is free. (A resize copies from a top it
//     read before publishing the new buffer, so such a thief's index
//     stays marked "may hold" here; treating it as held made the owner
//     copy its whole buffer about once a lap in a spawn burst with a busy
//     thief.) Otherwise (the ring is full, or a thief has claimed index
//     i−cap and not yet released it) it does not wait: it moves the live
//     items to a fresh buffer, doubling it only when full. Thieves still
//     reading the old buffer are safe: nobody writes it again.
//
// LIFO Pop is Chase–Lev's: lower bottom, then read top. That store–load
// order needs a sequentially consistent store (Go's atomic.Store, an
// XCHG on amd64), so that a thief either sees the lowered bottom or the
// owner sees the thief's CAS; only for the last item do the two race,
// through a CAS on top. Thieves do not clear a slot after reading it
// (the owner may be copying it in a resize, and a write would race with
// that read; the owner's own Pop does clear), so up to Cap() stolen values
// stay referenced until overwritten or until the buffer is replaced. After
// a growth the owner also keeps the previous buffer, and the values that
// were live in it, until the deque next becomes empty (releasedInPrev,
// settlePrev): at most half the current buffer, for one epoch.
//
// # Sequentially consistent stores on the owner's path
//
// Go offers only sequentially consistent atomics, so each atomic store is
// a locked instruction; the owner's hot path has exactly these:
//
//   - Push: one store of bottom (publication; a release would do, Go has
//     none cheaper). The claim word is only loaded (a plain MOV on amd64).
//   - Pop with at most one item left (the owner's cached copy of top says
//     so) and every FIFO Pop: one CAS on top, the same CAS a thief would
//     make, and no store of bottom. The slot is handed to the next lap
//     through the slot's owner-private twin of seq, free, a plain store:
//     the owner consumed the index itself, so no thief can be reading it.
//   - LIFO Pop with more left: one store of bottom (the Chase–Lev
//     store–load fence) and no CAS.
//   - Pop of an empty deque whose cached top already shows it empty: none.
//
// So a push+pop costs two locked instructions, the floor for a deque whose
// items thieves can take at any moment (the owner's pop must order its
// claim against theirs). A 2-vCPU Zen 3 runs a bare XCHG+CAS pair in about
// 5.2 ns (every locked instruction costs about 2.5 ns there: XCHG, XADD
// and CMPXCHG alike). What remains above that floor is ordinary work that
// the locked instructions serialise, so it was cut where it sat between
// two of them:
//
//   - a plain store just before a locked instruction makes it wait for
//     the store to drain, so the owner stores its own bookkeeping after
//     the locked instruction, not before (11 → 9 ns);
//   - Push and Pop keep the common cases (a free slot; the lone item; a
//     LIFO Pop with more left) in small frames and call out for the rest
//     (growth, a stale cached top, FIFO Pops of more than one item, an
//     empty deque), and the owner keeps the buffer's slice header in the
//     Deque itself, one dependent load fewer on each path (interleaved
//     runs, medians: 10.7 → 8.3 ns push+pop, 13.1 → 11.9 ns push+steal).
//
// The Go compiler does not inline either method (a call to the slow path
// alone costs 57 of the inliner's budget of 80), while sync.Mutex's fast
// paths are inlined into the baseline: two calls are part of the gap to
// the floor.
//
// A batch moved into the thief's deque is published with one store of
// bottom for the whole batch; an Injector batch is copied into the
// destination in one loop that checks each slot's claim words in place. For a LIFO deque a batch is claimed one item
// at a time, each against a fresh bottom: the owner pops below without a
// CAS while more than one item is left, so a range claim could overlap
// its pops (crossbeam does the same).
//
// # The Injector
//
// The injector is a linked list of 128-slot blocks and two free-running
// tickets. A producer draws a ticket with one atomic add, walks to (or
// links) its block and writes the value, then sets the slot's bit in the
// block's written bitmap (an atomic OR, a release). PushBatch draws a run
// of tickets with one add and publishes each run of up to 64 slots with
// one OR, so a bulk add costs a plain store per item (measured: 19 against
// 29 ns per item for a 1024-item add and its batched removal,
// BenchmarkInjectorPushBatch vs BenchmarkInjectorPushEach). A consumer
// loads the bit of the head slot (load-acquire), claims it by CAS on head,
// then reads it. While operations run, a slot is written once and read
// once and a block is never reused, so there is no ABA problem. Blocks are
// recycled only through Reclaim, which its caller runs when no other
// goroutine is inside the injector (a scheduler: at the end of a cycle,
// its workers parked and its bucket's adds held off): the blocks consumers
// retired go to a free list that producers only pop until the next
// Reclaim, so no popper can meet a block that left and came back. A
// consumer that meets a drawn ticket whose value is not yet written
// returns Retry instead of waiting. It is unbounded on purpose: its
// producers are packets in the middle of a phase, which cannot be made to
// wait without deadlocking the phase; its memory is the live items, at
// most two partial blocks and up to 128 spare blocks kept for reuse.
//
// # Costs
//
// Measured on an AMD EPYC (Zen 3, family 25 model 1), 2 vCPU KVM guest,
// Go 1.26.8, GOMAXPROCS=2: twelve interleaved rounds of one process each
// (the test binary with -test.bench for every benchmark below and
// -test.benchtime=200ms), medians by benchstat, two runs (the README has
// the rest; one round's DequePushPop ranges over 7.2–11.4 ns while the
// mutex stays near 11.7, so compare within a run):
//
//	Deque Push+Pop (one item)          8.0 / 8.9 ns, 0 allocs
//	Deque Push+Steal (uncontended)     11.8 / 8.7 ns, 0 allocs
//	mutex-guarded slice deque push+pop 11.7 / 11.7 ns (4 locked instructions)
//	textbook Chase–Lev push+pop        14.1 / 14.4 ns
//	a bare atomic store + CAS          5.2 ns (BenchmarkLockedPairFloor)
//
// Against the mutex the ratio moves with the machine's load: 30 paired
// rounds (third session) gave a median of 1.44× (quartiles 1.25–1.61×);
// on the same machine with no neighbour running (sixth session, 2026-11-30
// 05:03 UTC), `go test -run '^$' -bench
// '^Benchmark(DequePushPop|MutexDequePushPop)$' -count 10` and benchstat,
// four times: 6.38–6.54 against 10.64–10.87 ns, 1.66–1.68×.
//
// Two deques side by side in memory, each used by its own goroutine
// (BenchmarkDequeIndependentOwners, six interleaved rounds, ns per
// push+pop of one owner, one owner / two owners): 8.6 / 13.0 ns. Before
// the Deque was padded to whole cache lines: 11.3 / 24.7 ns, the owners
// slowing each other through a shared line.
//
// A batch of 32 stolen from a FIFO deque, per item with its push
// (BenchmarkDequeStealInto against BenchmarkDequeStealBatchFIFO, -count 4,
// 2026-11-30 03:30 UTC): 9.6–11.3 ns into a slice (StealInto), 31.7–33.3
// ns into the thief's deque and popped back from it (StealBatch).
//
// Push allocates only when the buffer grows; the Injector allocates one
// block per 128 pushes (128 × the value size + 32 bytes: ≈ 3 KiB for the
// scheduler's 24-byte tasks, 1 KiB for an int), which rounds to 0
// allocs/op.
package deque
