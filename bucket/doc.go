// Package bucket holds one stage's queue of work packets for wsched's
// scheduler: a normal lane and a priority lane (each an unbounded
// lock-free MPMC FIFO of 128-packet blocks), the normal lane's spans (runs
// of packets a Source produces when they are taken), the stage's open and
// enabled state, and at most one sentinel packet. It is public for those
// who build a scheduler of their own on staged buckets; the scheduler
// package is its user here.
//
// # Model and caller roles
//
//   - Producers, any goroutine, call Add (one packet or many, on either
//     lane) and AddSpan (n packets lent: a Source fills them in when
//     consumers take them, so queueing costs O(1)). A bucket wakes nobody:
//     each add reports how many packets became visible to consumers (all
//     of them if the bucket is open, none if it is closed), and the
//     caller's wake policy decides whom to wake. The open state is loaded
//     after the push, so an owner that opens the bucket and then counts its
//     packets and a producer that pushes and then loads the open state
//     cannot both miss each other.
//   - Consumers (workers) call TakePriority (one packet: a priority packet
//     is never taken in a batch with others) and Take (up to len(dst) from
//     the normal lane: queued packets first, then the spans in the order
//     they were added, each run claimed with one atomic add on the span's
//     cursor). Which buckets may be taken from is the owner's decision: the
//     scheduler takes only from open ones.
//   - The owner (the scheduler) calls Open, Close, Disable, Reclaim, Drain
//     and the sentinel methods, serialising the sentinel methods with its
//     own lock.
//
// Closed is not disabled: a closed bucket accepts packets and keeps them
// for when it opens (a later stage filling up while an earlier one runs).
// A disabled bucket refuses them with ErrDisabled; Disable waits for adds
// in progress, so a Drain after it sees every packet that was accepted
// (the scheduler's Close relies on this to count, rather than lose,
// packets added concurrently with it). A bucket holds up to MaxSpans
// spans; Reclaim forgets them once all are consumed, calling each Source's
// Release, and AddSpan reports a full bucket so that its caller can copy
// instead. Spans count in Len and NormalEmpty, and Drain takes them:
// nothing lent is lost or counted twice. The memory-ordering arguments are
// written beside the code.
//
// # Costs
//
// An Add pays two atomic adds on the bucket's gate per call and publishes
// up to 64 packets with one atomic OR of a block's written bits; a take
// claims a run with one CAS on the lane's head. A span costs its producer
// a lock, a slot and one publishing store, and each take one atomic add
// plus the Source's copy, with no blocks to fill, clear or reclaim.
// Measured with
//
//	go test -run '^$' -bench . -benchtime 200ms -count 6 ./bucket/
//
// on the project's 2-vCPU AMD EPYC virtual machine (family 26), Go 1.26.8,
// one goroutine adding and taking, medians of the six runs:
//
//	one Add per packet, taken 32 at a time (AddTake)     34.6 ns a packet
//	one Add of 4,096, taken 32 at a time (AddManyTake)    2.3 ns a packet
//	one AddSpan of 4,096, taken 32 at a time (SpanTake)   0.8 ns a packet
//
// none of which allocates. The lanes allocate one block per 128 packets
// (128 × the packet's size plus 40 bytes) until Reclaim, which the
// scheduler calls at the end of every cycle, hands the consumed blocks
// back for reuse: a scheduler running cycle after cycle allocates no
// blocks.
package bucket
