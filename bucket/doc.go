// Package bucket holds one stage's queue of work packets for wsched's
// scheduler: a normal lane and a priority lane (each a deque.Injector, an
// unbounded MPMC FIFO), the normal lane's spans (runs of packets produced
// when taken), the stage's open/closed and enabled state, and at most one
// sentinel packet.
//
// # Model and caller roles
//
//   - Producers, any goroutine, call Add, BulkAdd, AddPriority and
//     BulkAddPriority (and the Func variants for callers whose packets are
//     not already a []T), or build a Bulk: StartBulk, Push runs of packets,
//     End, with the results of one BulkAdd (the scheduler's BulkAdd). A bucket wakes nobody: each Add reports how many
//     packets became visible to consumers (all of them if the bucket is
//     open, none if it is closed), and the caller's wake policy decides
//     whom to wake. The open state is loaded after the push, so an owner
//     that opens the bucket and then counts its packets and a producer that
//     pushes and then loads the open state cannot both miss each other.
//   - Producers may also lend packets instead of copying them: AddSpan
//     queues n packets that a Source produces when consumers take them
//     (the scheduler's AddSlice: a Source over the caller's []Packet). The
//     spans follow the normal lane's queued packets, in the order they
//     were added; a take claims the next run of the oldest span with one
//     atomic add on its cursor and has the Source fill it. A bucket holds
//     up to MaxSpans spans; Reclaim forgets them once all are consumed,
//     calling each Source's Release, and AddSpan reports a full bucket so
//     that its caller can copy instead. Spans count in Len, IsEmpty and
//     NormalEmpty, and Drain takes them: nothing lent is lost or counted
//     twice. The ordering argument is beside the code (span.go).
//   - Consumers (workers) call TakePriority (one packet: a priority packet
//     is never taken in a batch with others), TakeBatch (up to a limit,
//     one returned and the rest moved into the consumer's own deque), Take
//     and Drain. Which buckets may be taken from is the owner's decision:
//     the scheduler takes only from open ones.
//   - The owner (the scheduler) calls Open, Close, Enable, Disable and the
//     sentinel methods; it serialises the sentinel methods with its own
//     lock.
//
// Closed is not disabled: a closed bucket accepts packets and keeps them for
// when it opens (a later stage filling up while an earlier one runs). A
// disabled bucket refuses them with ErrDisabled; Disable waits for Adds in
// progress, so a Drain after it sees every packet that was accepted (the
// scheduler's Close relies on this to count, rather than lose, packets
// added concurrently with it).
//
// # Costs
//
// An Add costs the injector push (an atomic ticket and an atomic OR of the
// slot's written bit) plus two atomic adds on the gate; a BulkAdd pays the
// gate once per call and publishes up to 64 packets per OR
// (Injector.PushBatch). A BulkAdd of a []T is one PushBatch; the Func
// variants stage 64 packets at a time on the stack, calling their function
// per packet. The scheduler stages its own runs of 64 and pushes them with
// a Bulk: its BulkAdd of 4096 packets went from 7.0 to 4.7 ns per packet
// (BenchmarkBulkAddFanout's add-ns/packet, test binaries of commits
// 637bf04 and 6044d0a, medians of 8 interleaved runs each, p<0.001).
// Measured with
//
//	go test -run XXX -bench . -benchtime=200ms -count=3 ./bucket/
//
// on AMD EPYC (Zen 3 "Milan", family 25 model 1), 2 vCPU KVM, Go 1.26.8,
// GOMAXPROCS=2, on a machine shared with other jobs (best of 3; the
// spread between runs was up to 1.5×):
//
//	Add, then TakeBatch(32) and deque pops, per packet      ≈ 28 ns, 0 allocs
//	BulkAdd(64), then TakeBatch(32) and pops, per packet   ≈ 25 ns, 0 allocs
//
// A span instead costs the producer O(1) (a lock, a slot, one store that
// publishes it) and each take one atomic add plus the Source's copy, with
// no blocks to fill, clear or reclaim: 4096 ints per round, taken 32 at a
// time into a slice (BenchmarkSpanTakeInto against BenchmarkBulkAddTakeInto,
// -count 6 -benchtime 200ms, 2026-11-30 04:00 UTC), 1.17 against 3.69 ns
// per packet, 0 allocs both. Take and TakeBatch produce a span's packets
// through a buffer that escapes (Source.Fill is an interface call): one
// allocation per call that takes from a span, none otherwise; Drain(nil)
// discards a span without producing its packets, and Drain(f) uses one
// buffer for all of them.
//
// The injector allocates one block per 128 packets (128 × the packet's
// size plus 40 bytes, ≈ 25 B per packet for the scheduler's 24-byte tasks)
// until Reclaim, which the scheduler calls at the end of every cycle,
// hands its consumed blocks back for reuse: a scheduler running cycle
// after cycle allocates no blocks (BenchmarkBulkAddFanout: 0 B/op).
package bucket
