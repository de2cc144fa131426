// Package trace records what a wsched scheduler does, cheaply enough to
// leave on: per-packet begin/end, steals, parks and wake-ups, stage and cycle
// boundaries and queue-depth counters, one append-only buffer per worker.
// Exporters (trace/perfetto, trace/chromejson) turn a Snapshot into files
// the Perfetto UI opens; trace/analyze explains them.
//
// # Model
//
// A [Recorder] owns one [WorkerBuf] per worker plus a control buffer for the
// goroutine that runs cycles. Each buffer is a fixed-capacity array of
// 24-byte [Event] records written by exactly one goroutine, so a hook is:
// read the clock, store one record, bump an index. There is no lock and no
// shared atomic on that path, and no allocation. Names (packet types,
// stages) are interned once, off the hot path, with [Recorder.Intern].
//
// Timestamps are monotonic nanoseconds since the recorder started. On amd64
// the hooks read the CPU time-stamp counter and the recorder converts ticks
// to nanoseconds when a [Snapshot] is taken (see clock.go for why and how).
//
// # Roles
//
//   - The owner (the scheduler) calls [NewRecorder], hands Worker(i) to
//     worker i's goroutine and Control() to the code that runs cycles.
//   - Each buffer is written by one goroutine at a time: worker i's buffer
//     by worker i; the control buffer by whichever goroutine holds the
//     lock that serialises its calls (the scheduler's mutex).
//   - Anyone may call Intern, Now and Dropped at any time, and Stamp on
//     any buffer (it only reads that buffer's clock).
//   - An exporter calls Snapshot once no hook is running, then iterates the
//     buffers or [Snapshot.All] (all events merged in time order).
//
// # Steal arrows
//
// Exporters draw each steal as a flow arrow from where the stolen packet
// was queued to its slice on the thief. The recorder keeps no event per
// queued packet for that: the owner stamps each packet it queues and
// keeps the stamp with the packet. A worker spawning from inside a packet
// uses [WorkerBuf.Last] on its own buffer (the time of its newest event,
// within the spawning packet's slice: no clock reading); a packet queued
// from outside the workers gets [WorkerBuf.Stamp] on the control buffer (a
// clock reading, nothing recorded). A stamp may be cut to its low
// [StampBits] bits. A thief then
// calls [WorkerBuf.StealStamped] with the stolen packet's stamp and the
// index of the buffer that stamped it, which records the steal and a
// [KindStealOrigin] event with both; the stolen packet's PacketBegin
// carries the same flow id. The arrow then starts at an instant "queued"
// at the stamp's time on that worker's track (the control track for -1).
// A plain [WorkerBuf.Steal], or a stamped one whose origin was lost to a
// full buffer or lies before an Overwrite recorder's oldest event, draws
// the arrow from the victim's track at the steal instead.
//
// Tracing off is a nil *Recorder: Worker and Control return nil buffers and
// every hook on a nil *WorkerBuf returns after one predictable branch. Every
// hook is small enough to inline (go build -gcflags=-m ./trace/), so off
// that branch is all a call site pays.
//
// # Bounded memory
//
// Options.MaxBytes (default 32 MiB) caps all buffers together; the control
// buffer gets 1/16, the workers split the rest. NewRecorder touches every
// page of them up front (about 24 ms for 32 MiB on the project's VM), so
// that no page fault lands inside a traced run, where it would show as a
// worker's idle time; Options.LazyPages leaves them untouched, paying
// resident memory only for what is recorded (for memory fresh from the
// OS; heap memory the runtime reuses is zeroed, hence resident, anyway). When a buffer is full the
// default policy stops recording on it (the start of the run is kept);
// Options.Overwrite keeps the newest events instead. Either way each buffer
// counts what it lost ([Buffer.Dropped], [Recorder.Dropped]) and exporters
// mark it: previous_packet_dropped on the affected Perfetto sequence and a
// summary event.
//
// # Costs
//
// Measured on AMD EPYC (Zen 3 "Milan", family 25 model 1), 2 vCPU KVM,
// Go 1.26.8, GOMAXPROCS=2, on a machine shared with other jobs. Per event,
//
//	go test -run XXX -bench TraceEvent -count=5 ./trace/
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
// Third session, load average about 1.5, five alternating runs of the
// Interleaved variant each: 7.1-7.6% with lazily faulted buffers, 3.7-4.4%
// with the pages touched by NewRecorder (the default since).
package trace
