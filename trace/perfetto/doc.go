// Package perfetto writes a trace.Snapshot as a Perfetto protobuf trace
// (open it in https://ui.perfetto.dev), and reads and checks such files.
//
// # Roles
//
//   - A program that recorded with trace.Recorder calls [Write] or
//     [WriteFile] on a Snapshot. Write streams to any io.Writer through a
//     64 KiB buffer and returns the first write error; WriteFile writes a
//     temporary file in the target directory, syncs it and renames it, so a
//     reader never sees half a trace.
//   - Tools call [Decode] to walk any Perfetto file packet by packet, and
//     [Check] to validate one against the rules below (tests run it on every
//     trace they write; `wsched analyze -check` runs it on a file).
//
// # Layout
//
// One trusted packet sequence per recording buffer: sequence 1 for the
// control buffer, 2+i for worker i. Tracks:
//
//	uuid 1      process track (pid, "wsched"), description "wsched trace v1 workers=N"
//	uuid 2      thread track "control" (tid = pid): one slice per cycle,
//	            "queued" instants of packets added from outside the workers
//	uuid 3      track "stages": one slice per stage, from its opening to the
//	            next stage's opening, its close or the cycle's end
//	uuid 16+i   thread track "worker i" (tid = pid+1+i): a slice per packet
//	            (name = packet type, category = stage), "parked" slices,
//	            instants "steal" (victim, moved), "queued" (thief, victim:
//	            a packet queued here, later stolen), "wake" (target),
//	            "woken" (blocked: 1 if the worker had been blocked, 0 if
//	            it was polling for its wake-up or had not yet parked)
//	uuid 16+N…  counter tracks, described on first use: "bucket: STAGE",
//	            "parked workers", "local deque: worker i" (under the worker)
//
// Each steal draws one flow arrow, from where the stolen packet was queued
// to its slice on the thief (terminating_flow_ids): a "queued" instant
// (flow_ids) at the time it was spawned, on the spawning worker's track,
// or, for a packet added from outside the workers (Scheduler.Add and
// friends, which cannot tell who calls them), on the control track. The
// instant is written on the thief's sequence, which recorded the steal,
// with the other track's track_uuid. A steal recorded without its origin
// (a KindSteal with no KindStealOrigin after it; an origin lost to a full
// buffer or older than an Overwrite recorder's window) draws the arrow
// from a "stolen" instant (thief, moved) on the victim's track at the
// steal instead. Flows whose other end was dropped are left out.
// What each recorder event becomes is decided in trace/internal/timeline,
// shared with trace/chromejson so both exports show the same thing.
//
// # Reading timestamps
//
// [Decode] resolves each packet's Timestamp as Perfetto's trace processor
// does: on timestamp_clock_id, else on the sequence's default clock
// (TracePacketDefaults), else on the trace clock (BOOTTIME, the clock of a
// file that says nothing else); a clock other than BOOTTIME through the
// latest ClockSnapshot that read it with BOOTTIME (for a sequence-scoped
// clock, ids 64-127, on the packet's sequence), an incremental one after
// adding the delta to its last time. A file without snapshots or defaults,
// such as the ones Write produces, has absolute timestamps and decodes as
// written. Packet.RawTimestamp keeps the value written; Packet.Unresolved
// marks a timestamp on a clock no snapshot relates to BOOTTIME (only
// through a chain of snapshots, which Perfetto follows and Decode does
// not). An event without a track_uuid is on its sequence's default track.
//
// # Rules obeyed (Perfetto's trace processor)
//
//  1. Every packet has a non-zero trusted_packet_sequence_id.
//  2. The first packet of each sequence (its track descriptor) sets
//     SEQ_INCREMENTAL_STATE_CLEARED; every packet that defines or uses an
//     interned name (event names, stage categories, debug annotation names)
//     sets SEQ_NEEDS_INCREMENTAL_STATE, and defines it on its own sequence
//     before or in the packet that first uses it.
//  3. Repeated scalars are unpacked; flow ids are fixed64.
//  4. timestamp_clock_id is left unset: timestamps are nanoseconds since the
//     recorder started (in Overwrite mode, once events were lost: since the
//     oldest event kept), read as the default trace clock. So a wsched trace
//     does not line up with a system trace of the same run.
//  5. Thread tracks carry pid, tid (in int32 range) and thread_name; the
//     process track carries pid.
//  6. Slices on a track nest; an END carries only type and track_uuid; at
//     equal timestamps ENDs come before the BEGINs recorded after them.
//     Packets come out in time order over the whole file.
//  7. Flow ids are the scheduler's, global to the trace.
//
// Dropped events are marked, never silently lost: a sequence whose buffer
// stopped (trace.Options default) gets its open slices closed where
// recording stopped and an instant "trace buffer full" with
// previous_packet_dropped; a buffer that overwrote its oldest events gets an
// instant "trace buffer wrapped" with previous_packet_dropped before its
// first event; and the process track gets a summary instant
// "wsched: trace events dropped" with the total, the policy and the count
// per buffer.
//
// # Schema
//
// perfettopb/perfetto.proto is the project's own subset of Perfetto's
// schema; its generated Go types are committed (TestGeneratedCodeIsCurrent
// checks them) and the tests decode every packet the writer produces with
// them, rejecting unknown fields. The writer itself encodes with protowire.
//
// # Costs
//
// Measured on AMD EPYC (Zen 3 "Milan", family 25 model 1), 2 vCPU KVM,
// Go 1.26.8, GOMAXPROCS=2, on a machine shared with other jobs (load
// average 4-6 during the runs, so wall times are inflated):
//
//	size     35.9 bytes per packet slice (BEGIN + END packets, framing and
//	         interning included) on a real scheduler run: 2 workers, 59,523
//	         ~1 µs packets in 24 ms, 36.2 file bytes per slice with steals,
//	         wakes and counters (TestBytesPerSliceRealRun, go test -v -run
//	         BytesPerSlice ./trace/perfetto/). Timestamps are absolute
//	         varints, so a slice grows by 2 bytes each time they need 7 more
//	         bits: at most 36 bytes while the recorder is younger than
//	         268 ms, 38 up to 34 s, 40 up to 73 min, 42 beyond
//	         (TestBytesPerSliceByRecorderAge); a recorder older than 34 s is
//	         at or just over the 40-byte budget (in Overwrite mode, once
//	         events were lost, only the kept window's length counts). Per-sequence delta timestamps (an incremental clock
//	         declared in a ClockSnapshot) would bring a slice to about 30
//	         bytes at any age, but no Perfetto trace processor was at hand to
//	         verify that encoding, so it is not used. Chrome JSON of the same
//	         slices: about 120 bytes.
//	Write    160-200 ns per recorded event, about 110 allocations per file
//	         whatever its size (go test -run XXX -bench 'Write|Check'
//	         -benchtime 20x ./trace/perfetto/)
//	Check    about 300 ns per packet
package perfetto
