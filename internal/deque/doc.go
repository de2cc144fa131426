// Package deque holds the lock-free queues under wsched's workers: a
// work-stealing [Deque] owned by one worker, and an [Injector], the
// multi-producer, multi-consumer FIFO behind a stage's bucket. It depends
// on nothing else in wsched.
//
// # Model and caller roles
//
// A Deque has one owner, the worker goroutine that created it (or that a
// scheduler handed it to). Only the owner calls Push, PushBatch and Pop,
// at the bottom end: Pop is LIFO for [New], FIFO for [NewFIFO]; PushBatch
// leaves a run of items as that many Pushes would and publishes them with
// one store, so thieves see all of them or none. Any goroutine, the
// thieves, may call Steal and StealInto, which take from the top end,
// oldest first, and Len and IsEmpty, which are snapshots. Steal takes one
// item. StealInto takes about half, min(⌈n/2⌉, len(dst)), into the
// caller's slice, oldest first, and leaves the rest of the slice as it
// was: a thief runs the batch from there (wsched's workers do, with
// slices of [MaxTake] at most) or moves it on into its own deque with
// PushBatch. A steal says [Empty] (nothing there), [Retry] (items there,
// but another goroutine won the race for them) or [Success] (at least one
// item taken), so a scheduler can tell an idle system from a contended
// one.
//
// Every Injector method may be called by any goroutine, with one
// exception, Reclaim. Push and PushBatch append; Steal takes the oldest
// item; TakeBatch takes up to len(dst) items into a slice, oldest first,
// never across one of the injector's blocks (so at most MaxTake), for a
// consumer that runs them from there or moves them into its deque with
// PushBatch; Len and IsEmpty are snapshots. Reclaim recycles consumed
// blocks and needs its caller to guarantee that no other call on the
// injector is in progress (see The Injector below).
//
// Misuse that the package checks panics with a "deque:" message: a
// StealInto or TakeBatch destination of length 0, which panics before the
// queue is looked at and takes nothing. An owner-only method called from
// two goroutines at once is not checked; the owner's fields are plain
// memory, so the race detector can see it.
//
// # The deque algorithm: Chase–Lev, and the buffer's size
//
// The deque is Chase and Lev's (SPAA 2005) with the C11 orderings of Lê et
// al. (PPoPP 2013): free-running indices top ≤ bottom, a power-of-two ring
// buffer that grows by doubling, and a CAS on top to settle each race
// between consumers. A new deque's buffer has [MaxTake] (128) slots, the
// most one Injector take moves, so that a worker that puts such a batch
// into its empty deque never grows the buffer for it. The buffer shrinks
// by windows: each time the owner finds its deque empty (or takes or
// loses its last item) after at least as many Pops since the last
// decision as the buffer has slots, a buffer that the window never needed
// a quarter of shrinks to fit the window's peak, never below MaxTake
// slots. The peak is the most items the owner saw: after its Pops, when
// the buffer grew, and after each PushBatch (so that a spawner whose
// batches thieves drain as fast as it pushes them keeps the buffer its
// bursts need instead of shrinking it at every window and regrowing it in
// the next burst). A Pop that finds the deque already known to be empty
// counts a quarter: an owner that only polls still closes its windows,
// and a worker that spins between bursts does not close one made of
// nothing but polls and shrink the buffer its next burst regrows (a
// 16k-packet spawn cycle did so every few cycles when every poll
// counted). A burst of a million packets therefore holds its buffer for
// at most two windows of Pops, or eight million polls, as long as the
// owner keeps using its deque (an owner that never calls it again keeps
// what it has), and a worker that fills and drains the same burst over
// and over keeps its buffer instead of regrowing it each time: shrinking
// is amortised O(1) per Pop. (crossbeam halves on every pop under a
// quarter full; in wsched's spawn benchmark that regrew and reshrank the
// buffers every cycle, 1.9 MB and ~100 allocations per 16k-packet cycle,
// 190 ns per packet; with windows, 0 allocations and 62 ns.)
//
// # Claim-then-read slots
//
// One change makes Chase–Lev clean under the race detector for values of any
// size (an interface is two words): a consumer claims an index with its
// CAS on top *before* it reads the slot, as sync.poolDequeue does, and
// each slot carries a claim word, seq:
//
//  1. The owner writes slot i only when seq == i (a load-acquire of seq).
//     It then publishes bottom = i+1 (store-release).
//  2. A thief loads top t, then bottom b, then the buffer pointer, in that
//     order. If t < b it CASes top from t to t+k: k = 1 for Steal and for
//     each claim of a LIFO StealInto, the whole batch for a FIFO
//     StealInto. The load of bottom synchronises with step 1, so the
//     slots' values are visible; the buffer loaded after bottom holds
//     every unclaimed index below b (a resize copies [top, bottom) before
//     publishing the new buffer).
//  3. After reading each slot the thief stores seq = i+cap (store-release),
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
// # LIFO Pop, batches, and the values thieves leave behind
//
// LIFO Pop is Chase–Lev's: lower bottom, then read top. That store–load
// order needs a sequentially consistent store (Go's atomic.Store, an
// XCHG on amd64), so that a thief either sees the lowered bottom or the
// owner sees the thief's CAS; only for the last item do the two race,
// through a CAS on top. For the same reason a StealInto from a LIFO deque
// claims one item at a time, each against a fresh bottom: the owner pops
// below without a CAS while more than one item is left, so a range claim
// could overlap its pops (crossbeam does the same). A FIFO owner takes
// from the top end by CAS as thieves do, so there one CAS claims a whole
// StealInto batch. Thieves do not clear a slot after reading it (the
// owner may be copying it in a resize, and a write would race with that
// read; the owner's own Pop does clear), so up to a buffer's worth of
// stolen values stay referenced until overwritten, until the buffer is
// replaced, or until Scrub. After a growth the owner also keeps the
// previous buffer, and the values that were live in it, until the deque
// next becomes empty: at most half the current buffer, for one epoch.
// Scrub, called on an empty deque with every thief and the owner
// quiescent (the scheduler calls it at the end of each cycle, every
// worker parked), clears the slots written since the last Scrub and
// drops the previous buffer: what ran is not kept between cycles.
//
// PushBatch writes its run in one loop that checks each slot's claim
// words in place and publishes the run with one store of bottom; the
// first slot that is not free (the ring is full, or a consumer still
// holds the slot) sends the rest through Push's slow path, step 4.
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
// claim against theirs). The 2-vCPU AMD EPYC KVM guest of the Costs below
// runs a bare XCHG+CAS pair in about
// 5.2 ns (every locked instruction costs about 2.5 ns there: XCHG, XADD
// and CMPXCHG alike). What remains above that floor is ordinary work that
// the locked instructions serialise, so it was cut where it sat between
// two of them:
//
//   - a plain store just before a locked instruction makes it wait for
//     the store to drain, so the owner stores its own bookkeeping after
//     the locked instruction, not before (stored before it, a push+pop
//     took 11 ns instead of 9);
//   - Push and Pop keep the common cases (a free slot; the lone item; a
//     LIFO Pop with more left) in small frames and call out for the rest
//     (growth, a stale cached top, FIFO Pops of more than one item, an
//     empty deque), and the owner keeps the buffer's slice header in the
//     Deque itself, one dependent load fewer on each path (interleaved
//     runs, medians: 8.3 ns push+pop and 11.9 ns push+steal, against 10.7
//     and 13.1 ns with every case in one frame and the header behind a
//     pointer).
//
// The Go compiler does not inline either method (a call to the slow path
// alone costs 57 of the inliner's budget of 80), while sync.Mutex's fast
// paths are inlined into the baseline: two calls are part of the gap to
// the floor.
//
// # The Injector
//
// The injector is a linked list of 128-slot blocks and two free-running
// tickets. A producer draws a ticket with one atomic add, walks to (or
// links) its block and writes the value, then sets the slot's bit in the
// block's written bitmap (an atomic OR, a release). PushBatch draws a run
// of tickets with one add and publishes each run of up to 64 slots with
// one OR, so a bulk add costs a plain store per item instead of two
// locked instructions (BenchmarkInjectorPushBatch against
// BenchmarkInjectorPushEach). A consumer loads the bit of the head slot
// (load-acquire), claims it by CAS on head, then reads it; TakeBatch
// counts the written slots from head on, up to len(dst) and within head's
// block, and claims them all with one CAS on head. While operations
// run, a slot is written once and read once and a block is never reused,
// so there is no ABA problem. Blocks are recycled only through Reclaim,
// which its caller runs when no other goroutine is inside the injector (a
// scheduler: at the end of a cycle, its workers parked and its bucket's
// adds held off): the blocks consumers retired go to a free list that
// producers only pop until the next Reclaim, so no popper can meet a
// block that left and came back. A consumer that meets a drawn ticket
// whose value is not yet written returns Retry instead of waiting. It is
// unbounded on purpose: its producers are packets in the middle of a
// phase, which cannot be made to wait without deadlocking the phase; its
// memory is the live items, at most two partial blocks and up to 128
// spare blocks kept for reuse.
//
// # Costs
//
// Measured on the project's AMD EPYC 2-vCPU KVM guest, Go 1.26.8,
// GOMAXPROCS=2: twelve interleaved runs of one process each (the test
// binary with -test.bench for every benchmark below and
// -test.benchtime=200ms), medians by benchstat, two series (the
// benchmarks' JOURNAL.md has the rest; within one series DequePushPop
// ranges over 7.2–11.4 ns while the mutex stays near 11.7, so compare
// within a series):
//
//	Deque Push+Pop (one item)          8.0 / 8.9 ns, 0 allocs
//	Deque Push+Steal (uncontended)     11.8 / 8.7 ns, 0 allocs
//	mutex-guarded slice deque push+pop 11.7 / 11.7 ns (4 locked instructions)
//	textbook Chase–Lev push+pop        14.1 / 14.4 ns
//	a bare atomic store + CAS          5.2 ns (BenchmarkLockedPairFloor)
//
// The ratio to the mutex is what to compare, not the figures, which move
// with the machine's load: BenchmarkDequeVsMutexPushPop runs both in
// alternating blocks inside one loop, so that drift hits both alike, and
// reports the median ratio of the blocks' times. `go test -run '^$'
// -bench 'DequeVsMutexPushPop$' -count 5 ./internal/deque/`, with other
// jobs on both CPUs: mutex/deque 1.97–2.10 (20–21 ns against 41–42).
//
// Two deques side by side in memory, each used by its own goroutine
// (BenchmarkDequeIndependentOwners, medians of six interleaved runs, ns
// per push+pop of one owner, one owner / two owners): 8.6 / 13.0 ns.
// Without the padding that makes the Deque whole cache lines: 11.3 / 24.7
// ns, the owners slowing each other through a shared line.
//
// What a thief saves by running a batch from its slice instead of moving
// it into its deque and popping it back (PushBatch's slot writes and one
// locked instruction per Pop) is BenchmarkDequeStealInto against
// BenchmarkDequeStealIntoPushBatchFIFO (FIFO victims, one CAS per batch),
// and BenchmarkDequeStealIntoLIFO against BenchmarkDequeStealIntoPushBatch
// (LIFO, one CAS per item); for an Injector take, BenchmarkInjectorTakeBatch
// against BenchmarkInjectorTakeBatchPushBatch.
//
// Push allocates only when the buffer grows; the Injector allocates one
// block per 128 pushes (128 × the value size + 40 bytes: ≈ 3 KiB for the
// scheduler's 24-byte tasks, 1 KiB for an int), which rounds to 0
// allocs/op.
package deque
