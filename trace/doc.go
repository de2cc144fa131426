// Package trace records what a wsched scheduler does, cheaply enough to
// leave on: per-packet begin/end, steals, parks and wake-ups, stage and cycle
// boundaries and queue-depth counters, one append-only buffer per worker.
// Exporters (trace/perfetto, trace/chromejson) turn a Snapshot into files
// the Perfetto UI opens; trace/analyze explains them.
//
// # Model
//
// A [Recorder] holds one buffer per worker plus a control buffer for the
// goroutine that runs cycles. Each buffer is a fixed-capacity array of
// 24-byte [Event] records written by one goroutine at a time, so recording
// an event is: read the clock, store one record, bump an index. There is no
// lock and no shared atomic on that path, and no allocation. Names (packet
// types, stages) are interned once, off the hot path; [Snapshot.Name] reads
// them back.
//
// Timestamps are monotonic nanoseconds since the recorder started. On amd64
// the scheduler's hooks read the CPU time-stamp counter and the recorder
// converts ticks to nanoseconds when a [Snapshot] is taken.
//
// Only the scheduler writes into a recorder. The hooks it calls, and the
// rules that keep the unsynchronised buffers safe, are internal to this
// module (package internal/tracebuf); this package is what a user needs:
// make a recorder, give it to the scheduler, read what it recorded.
//
// # Roles
//
//   - The user calls [NewRecorder] with the scheduler's number of workers
//     and passes the recorder as scheduler.Config.Tracer. A recorder records
//     one scheduler for its whole life: a second one refuses it. A nil
//     *Recorder is tracing off.
//   - The scheduler records: worker i into buffer i; cycle and stage events,
//     and wake-ups sent from outside the workers, into the control buffer.
//   - Anyone may call [Recorder.Workers] and [Recorder.Dropped] at any time.
//   - [Recorder.Snapshot] must not run while the scheduler records: take it
//     after Run returned (the workers record nothing between cycles) or
//     after Close. Then iterate [Snapshot.Buffers] or [Snapshot.All] (all
//     events merged in time order), or hand the snapshot to an exporter.
//
// # Steal arrows
//
// Exporters draw each steal as a flow arrow from where the stolen packet
// was queued to its slice on the thief. A steal is a [KindSteal] event on
// the thief's buffer with a flow id, which the stolen packet's
// [KindPacketBegin] carries too; the scheduler stamps each packet it queues
// while tracing, so the steal is followed by a [KindStealOrigin] event that
// says when the packet was queued and on which buffer (the spawning
// worker's, or -1, the control buffer, for a packet added from outside the
// workers). The arrow starts at an instant "queued" at that time on that
// buffer's track. A steal without an origin (one lost to a full buffer, or
// one older than an Overwrite recorder's oldest event) draws the arrow from
// the victim's track at the steal instead.
//
// # How packets were queued
//
// Each packet begin also says how its packet was queued, packed into the
// same event: spawned on which worker, added (Add, AddAll, a sentinel:
// FromAdd), designated (FromNone), taken from a priority lane, and when
// (Born, the stamp the scheduler gave it when it queued it; a stolen
// packet's is in its steal's KindStealOrigin instead). Each add call is one
// [KindAdd] event on the control buffer: how it queued its packets, into
// which stage, how many, under which wake policy, and their stamp. And
// [Snapshot].Config describes the scheduler's policies. `wsched simulate`
// replays a recorded cycle from these (trace/simulate). A spawn's stamp is
// not a clock reading of its own: it is the time of the spawning worker's
// newest event (the running packet's begin, or later), and a worker's
// stamps increase strictly, so they give the spawning packet and the
// order of its spawns, not the moment of each.
//
// # Bounded memory
//
// Options.MaxBytes (default 32 MiB) caps all buffers together; the control
// buffer gets 1/16, the workers split the rest. NewRecorder touches every
// page of them up front (about 24 ms for 32 MiB on the project's VM), so
// that no page fault lands inside a traced run, where it would show as a
// worker's idle time; Options.LazyPages leaves them untouched, paying
// resident memory only for what is recorded (for memory fresh from the
// OS; heap memory the runtime reuses is zeroed, hence resident, anyway).
// When a buffer is full the default policy stops recording on it (the
// start of the run is kept); Options.Overwrite keeps the newest events
// instead. Either way each buffer counts what it lost ([Buffer].Dropped,
// [Recorder.Dropped]) and exporters mark it: previous_packet_dropped on the
// affected Perfetto sequence and a summary event.
//
// # Costs
//
// Tracing off is a nil *Recorder: each hook in the scheduler then returns
// after one predictable branch on a nil buffer.
//
// Measured on the project's AMD EPYC 2-vCPU KVM guest, Go 1.26.8,
// GOMAXPROCS=2, shared with other jobs. Per event,
// with the hook benchmark of the internal recorder package,
//
//	go test -run XXX -bench TraceEvent -count=5 ./internal/tracebuf/
//
// (first column: load average below 1; second: load average 5-7):
//
//	tracing on, per event        12.6-13 ns    13.0-15.4 ns, 0 allocs   (On)
//	tracing off (nil buffer)     1.4 ns        1.4-1.8 ns, 0 allocs     (Off)
//	buffer full, event dropped   14-15 ns      12.7-13.8 ns, 0 allocs   (Full)
//	mutex + slice + time.Since   36.6 ns       35-40 ns                 (MutexSliceBaseline)
//
// Of the 12.6 ns, about 12 are the RDTSC instruction itself; the monotonic
// clock (time.Since, vDSO) costs about 35 ns on this machine. Snapshot costs
// O(events) and copies them (24 bytes each).
//
// In a scheduler running ~1 µs packets on 2 workers, tracing adds 2.7-3.9%
// (median over pairs of an untraced and a traced cycle of 1000 packets,
// five runs at load average 5-6; the ratio of summed times ranged 0.8-5.2%):
//
//	go test -run XXX -bench TraceOverhead -benchtime 200x -count 5 ./scheduler/
//
// At load average about 1.5, five alternating runs of the Interleaved
// variant each: 7.1-7.6% with lazily faulted buffers, 3.7-4.4% with the
// pages touched by NewRecorder (the default).
package trace
