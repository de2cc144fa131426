// Package tracebuf is the write side of package trace: the recorder, its
// buffers and the hooks the scheduler calls on them, plus the record
// format (Event, Kind, CounterKind, NameID) and its copy for readers
// (Snapshot, Buffer), which package trace re-exports as type aliases.
// trace.Recorder is declared as this package's Recorder; the scheduler
// converts its Config.Tracer to reach the hooks (see Recorder). Only the
// scheduler, package trace, and code in this module that builds synthetic
// recordings (tests, trace/internal/synth) import it.
//
// # Buffers
//
// A Recorder owns one Buf per worker (Recorder.Worker(i)) plus a control
// buffer (Recorder.Control()) for the code that runs cycles. Each buffer is a
// fixed-capacity array of 24-byte Event records and a write index, with no
// lock and no shared atomic on the write path, so a hook is: read the clock,
// store one record, bump the index. Nothing allocates. The clock is the CPU
// time-stamp counter on amd64 (cheaper than the monotonic clock, and
// invariant and synchronised across cores on current x86 CPUs), converted
// to nanoseconds when a Snapshot is taken by the line through two (ticks,
// monotonic ns) pairs, one taken at NewRecorder and one at the Snapshot;
// the monotonic clock elsewhere; Options.Clock when set.
//
// # Recording protocol
//
// These rules are what make the unsynchronised buffers safe; the race
// detector checks them only as far as a run exercises them.
//
//   - One writer per recorder: the owner (a scheduler) MUST win Claim before
//     it records, and MUST give up if Claim fails. Two schedulers on one
//     recorder would write the same worker buffers from two goroutines and
//     interleave two cycle sequences.
//   - Worker i's buffer MUST be written only by worker i's goroutine: every
//     hook (PacketBegin, PacketEnd, Steal, StealStamped, Park, Unpark,
//     WakeSent, WakeReceived, Counter) and Last, which reads the write index.
//     The scheduler records a worker's first Park before starting its
//     goroutine, which the goroutine start orders before the worker's own
//     events.
//   - The control buffer MUST be written by one goroutine at a time, under
//     the mutex its writer names with SetControlLock (the scheduler's
//     monitor), from whichever goroutine opens a stage, adds packets or
//     sends a wake-up from outside the workers. It takes CycleBegin,
//     CycleEnd, StageOpen, StageClose, Add, the Counter samples made there
//     and WakeSent. Otherwise a Snapshot taken between cycles races an
//     add.
//   - Any goroutine may call Intern, Now, Claim, Workers and Dropped at any
//     time, and Stamp on any buffer (it reads only that buffer's clock,
//     records nothing). Intern takes a mutex: intern each packet type and
//     stage name once and keep its NameID.
//   - Snapshot MUST NOT run concurrently with a hook on a worker buffer;
//     it takes the control lock while it copies the control buffer.
//     Between cycles the scheduler records on the control buffer alone
//     (adds; a worker records its Park before the cycle may end), so its
//     users take a snapshot after Run returns or after Close, even while
//     other goroutines add. Otherwise the copy races the worker's writes.
//
// Exporters read each buffer as one track and rely on its order: a
// PacketEnd closes the newest open PacketBegin of its buffer and an Unpark
// its Park; StageOpen starts a stage slice that runs to the next StageOpen,
// the matching StageClose or the CycleEnd; a flow id is used by one steal
// and ends at the stolen packet's PacketBegin on the same buffer.
//
// # Steal arrows
//
// Exporters draw each steal as a flow arrow from where the stolen packet
// was queued to its slice on the thief. The recorder keeps no event per
// queued packet for that: the owner stamps each packet it queues and
// keeps the stamp with the packet. A worker spawning from inside a packet
// uses [Buf.Last] on its own buffer (the time of its newest event, within
// the spawning packet's slice: no clock reading); a packet queued from
// outside the workers gets [Buf.Stamp] on the control buffer (a clock
// reading, nothing recorded). A stamp may be cut to its low [StampBits]
// bits. A thief then calls [Buf.StealStamped] with the stolen packet's
// stamp and the index of the buffer that stamped it, which records the
// steal and a [KindStealOrigin] event with both; the stolen packet's
// PacketBegin carries the same flow id. The arrow then starts at an
// instant "queued" at the stamp's time on that worker's track (the control
// track for -1). A plain [Buf.Steal], or a stamped one whose origin was
// lost to a full buffer or lies before an Overwrite recorder's oldest
// event, draws the arrow from the victim's track at the steal instead.
//
// # Tracing off
//
// Tracing off is a nil *Recorder: Worker and Control return nil buffers and
// every hook on a nil *Buf returns after one predictable branch. Every hook
// is small enough to inline (go build -gcflags=-m ./internal/tracebuf/), and
// the scheduler calls them as direct methods of *Buf (no interface, no
// function value), so off that branch is all a call site pays. The costs
// are in package trace's documentation (BenchmarkTraceEvent, in this
// package).
//
// # Full buffers
//
// When a buffer is full the default policy drops the event and counts it,
// keeping the times of the first and last drop; Options.Overwrite wraps the
// write index instead and overwrites the oldest events. Recorder.Dropped
// reads the counts from any goroutine; a Snapshot reports them per buffer.
package tracebuf
