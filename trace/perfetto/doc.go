// Package perfetto writes a trace.Snapshot as a Perfetto protobuf trace
// (open it in https://ui.perfetto.dev), and checks such files.
//
// # Roles
//
//   - A program that recorded with trace.Recorder calls [Write] or
//     [WriteFile] on a Snapshot. Write streams to any io.Writer through a
//     64 KiB buffer and returns the first write error; WriteFile writes a
//     temporary file in the target directory, syncs it and renames it, so a
//     reader never sees half a trace.
//   - Tools call [Check] to validate a file against the rules below (tests
//     run it on every trace they write; `wsched analyze -check` runs it on a
//     file). Reading a wsched file is trace/analyze's and trace/simulate's
//     job: both read it through one internal decoder and one model
//     (trace/internal/pfwire, trace/internal/wsfile), decoded once.
//
// # Layout
//
// One trusted packet sequence per recording buffer: sequence 1 for the
// control buffer, 2+i for worker i. Each sequence starts with a packet that
// clears its incremental state and sets its clock and default track (see
// Encoding). Tracks:
//
//	uuid 1      process track (pid, "wsched"), description "wsched trace v1 workers=N";
//	            an instant "wsched config" first, with the scheduler's
//	            policies and limits as string arguments (wake, steal,
//	            steal_limit, take, bucket_batch, local, spins, park_spin_ns,
//	            max_queued, learn_heavy)
//	uuid 2      thread track "control" (tid = pid): one slice per cycle,
//	            "queued" instants of packets added from outside the workers,
//	            an instant "add" per add call (how: add, priority, lend,
//	            sentinel or designated; call: Add or AddAll; stage, or
//	            target for designated;
//	            packets; wake, when the call chose a policy; born_ns, the
//	            stamp of its first packet)
//	uuid 3      track "stages": one slice per stage, from its opening to the
//	            next stage's opening, its close or the cycle's end
//	uuid 16+i   thread track "worker i" (tid = pid+1+i): a slice per packet
//	            (name = packet type, category = stage), "parked" slices,
//	            instants "steal" (victim, moved), "queued" (thief, victim:
//	            a packet queued here, later stolen), "wake" (target),
//	            "woken" (blocked: 1 if the worker had been blocked, 0 if
//	            it was polling for its wake-up or had not yet parked)
//	uuid 16+N…  with Options.Origins, worker i's "queued from (wsched
//	            simulate)" counter track (16+N+i, under the worker; see
//	            Origins); then counter tracks, described on first use:
//	            "bucket: STAGE", "parked workers", "local deque: worker i"
//	            (under the worker)
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
//
// # Origins
//
// With Options.Origins, each packet slice also says how its packet was
// queued, for `wsched simulate`: where (a code: 1 designated, 2 an add, 3
// an add taken from a priority lane, 4 + i a spawn on worker i; the
// Queued* constants) and when (a stamp: for an add, its born_ns or a few
// nanoseconds after it for a later packet of the same call; for a spawn, a
// time within the spawning packet's slice on worker i's track; for a
// designated packet none, and its begin stands in). The slice's BEGIN
// carries one extra_counter_values entry for its worker's origins track
// (a counter track described with DescOrigins, named in the sequence's
// TrackEventDefaults.extra_counter_track_uuids, so the event names no
// track). Its value is relative to the sequence's earlier slices (the
// stamp of its previous slice of the same code, or its previous slice's
// begin; the code left out when it repeats): the rules are in
// trace/internal/origin, which the writer and trace/simulate share, and
// a reader must step through every packet slice of a sequence in order.
// In the Perfetto UI the track draws these values as a counter under the
// worker; they mean nothing as a quantity.
//
// It costs about 3 bytes a slice (a tag and a varint of 1 to 3 bytes):
// 32.4 against 30.0 on the run of TestBytesPerSliceRealRun (go test -run
// BytesPerSlice -v ./trace/perfetto/), and 31.9 to 34.1 on the traces
// `wsched demo` writes (32.5 over all of them), which carried a "queued"
// annotation of about 8 bytes a slice in the format before (ArgQueued;
// trace/simulate still reads it). A slice without a value was recorded by
// a scheduler that did not say, or its queuing lies outside an Overwrite
// recorder's window.
//
// What each recorder event becomes is decided in trace/internal/timeline,
// shared with trace/chromejson so both exports show the same thing.
//
// # Encoding
//
// Timestamps are deltas, as Perfetto's SDK writes them. The first packet of
// each sequence sets SEQ_INCREMENTAL_STATE_CLEARED and holds
//
//   - a ClockSnapshot that reads BOOTTIME (clock 6) and clock 64, a clock of
//     that sequence alone (ids 64-127 are sequence-scoped) declared
//     is_incremental, both at the same time T, and
//   - TracePacketDefaults: timestamp_clock_id 64, and
//     track_event_defaults.track_uuid the sequence's own track (the control
//     track, or the worker's).
//
// Every later packet of the sequence sets SEQ_NEEDS_INCREMENTAL_STATE (the
// defaults require it) and writes as its timestamp the nanoseconds since
// the sequence's previous packet (the first, since T); Perfetto adds them up
// and maps the sum onto BOOTTIME through the snapshot, which gives back the
// recorder's times. An event on the sequence's own track omits track_uuid.
// So a packet slice costs 26 bytes plus its two deltas (1 byte under
// 128 ns, 2 under 16.4 µs, 3 under 2.1 ms), plus 10 bytes for the
// terminating flow id of a stolen packet, and interned names once per
// sequence: whatever the recorder's age, where absolute timestamps cost 2
// more bytes a slice for every 7 bits of age. The first packet of a
// sequence costs 32 bytes, and 2 more for each 7 bits of T.
//
// Events lost from a buffer restart its sequence: the packet that marks the
// loss (previous_packet_dropped) is a new first packet, with a snapshot at
// the time of the mark, and names are interned again. Perfetto skips a
// sequence's packets that need incremental state after a loss until it sees
// a clear, so the clear must come with the mark. An op earlier than its
// sequence's previous packet (the writer emits in time order, so only a
// snapshot with times out of order gives one) is written with an absolute BOOTTIME
// timestamp (timestamp_clock_id 6), which leaves clock 64 where it was.
//
// # Reading timestamps
//
// The decoder Check and the readers share resolves each packet's timestamp
// as Perfetto's trace processor
// does: on timestamp_clock_id, else on the sequence's default clock, else on
// the trace clock (BOOTTIME, the clock of a file that says nothing else);
// a clock other than BOOTTIME through the latest ClockSnapshot that read it
// with BOOTTIME (for a sequence-scoped clock, on the packet's sequence), an
// incremental one after adding the delta to its last time. In a file
// without snapshots or defaults, timestamps are absolute. A timestamp on a
// clock no snapshot relates to BOOTTIME (only through a chain of snapshots,
// which Perfetto follows and the decoder does not) is unresolved, and
// Check reports it.
//
// # Rules obeyed (Perfetto's trace processor)
//
//  1. Every packet has a non-zero trusted_packet_sequence_id.
//  2. The first packet of each sequence sets SEQ_INCREMENTAL_STATE_CLEARED
//     and sets the sequence's defaults; every later packet sets
//     SEQ_NEEDS_INCREMENTAL_STATE; an interned name (event names, stage
//     categories, debug annotation names) is defined on its sequence, since
//     the sequence's last clear, before or in the packet that first uses it.
//     A packet with previous_packet_dropped also clears the state.
//  3. Repeated scalars are unpacked; flow ids are fixed64.
//  4. timestamp_clock_id names only clocks that a ClockSnapshot relates to
//     BOOTTIME: the sequence's incremental clock 64, or BOOTTIME itself.
//     Times are nanoseconds since the recorder started (in Overwrite mode,
//     once events were lost: since the oldest event kept), read as
//     BOOTTIME. So a wsched trace does not line up with a system trace of
//     the same run.
//  5. Thread tracks carry pid, tid (in int32 range) and thread_name; the
//     process track carries pid.
//  6. Slices on a track nest; an END carries only its type (and track_uuid
//     when not on the sequence's own track); at equal timestamps ENDs come
//     before the BEGINs recorded after them. Packets come out in time order
//     over the whole file.
//  7. Flow ids are the scheduler's, global to the trace.
//
// Dropped events are marked, never silently lost: a sequence whose buffer
// stopped (trace.Options default) gets its open slices closed where
// recording stopped and an instant "trace buffer full" after a packet with
// previous_packet_dropped; a buffer that overwrote its oldest events gets an
// instant "trace buffer wrapped" after such a packet, before its first
// event; and the process track gets a summary instant
// "wsched: trace events dropped" with the total, the policy and the count
// per buffer.
//
// # Schema
//
// Package perfettopb holds the project's own subset of Perfetto's schema
// and its generated Go types, committed (TestGeneratedCodeIsCurrent checks
// that they match the schema); the tests decode every packet the writer
// produces with them, rejecting unknown fields. The writer itself encodes
// with protowire.
//
// # Costs
//
// Measured on AMD EPYC (family 26 model 2), 2-vCPU KVM guest, Go 1.26.8,
// GOMAXPROCS=2, shared with other jobs (load average 4-5 during the runs,
// so wall times are inflated):
//
//	size     29.2 bytes per packet slice (BEGIN + END packets, framing and
//	         interning included) on a simulated run of 0.2-3 µs packets
//	         (4 workers, 6,866 packets), 30.0 when the same run's packets
//	         last 10-150 µs (3-byte deltas for most ENDs), the same at any
//	         recorder age (go test -run BytesPerSlice -v ./trace/perfetto/).
//	         A run with many steals pays 10 bytes per stolen packet on top.
//	         Chrome JSON: about 130 bytes a slice.
//	Write    120-165 ns per recorded event, about 125 allocations per file
//	         whatever its size (go test -run XXX -bench 'Write|Check'
//	         -benchtime 20x ./trace/perfetto/)
//	Check    about 270 ns per packet (the decoder's timestamp resolution
//	         included)
package perfetto
