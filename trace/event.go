package trace

import "github.com/wsched/wsched/internal/tracebuf"

// The read side of a recording. These types are defined in the module's
// internal recorder package, which writes them, and re-exported here as
// aliases, so that exporters and users keep writing trace.Event,
// trace.Kind and so on; their methods are listed below.

// NameID names an interned string (a packet type or a stage name). IDs start
// at 1; 0 means "no name". [Snapshot.Name] reads one back.
type NameID = tracebuf.NameID

// Kind says what an Event records (method String: "packet_begin" and so on).
type Kind = tracebuf.Kind

// Event kinds. The zero Kind is invalid. Each line lists the accessors of
// Event that are meaningful for that kind.
const (
	KindCycleBegin   = tracebuf.KindCycleBegin   // Cycle()
	KindCycleEnd     = tracebuf.KindCycleEnd     // Cycle()
	KindStageOpen    = tracebuf.KindStageOpen    // Stage(), Name()
	KindStageClose   = tracebuf.KindStageClose   // Stage()
	KindPacketBegin  = tracebuf.KindPacketBegin  // Name(), Stage(), Flow() (terminating; 0 = none)
	KindPacketEnd    = tracebuf.KindPacketEnd    // no arguments
	KindSteal        = tracebuf.KindSteal        // Victim(), Moved(), Flow() (starting; 0 = none)
	KindPark         = tracebuf.KindPark         // no arguments
	KindUnpark       = tracebuf.KindUnpark       // no arguments
	KindWakeSent     = tracebuf.KindWakeSent     // Target() (-1 = unknown)
	KindWakeReceived = tracebuf.KindWakeReceived // Blocked()
	KindCounter      = tracebuf.KindCounter      // Counter(), Index(), Value()
	KindStealOrigin  = tracebuf.KindStealOrigin  // Born(), From(): follows a KindSteal on the same buffer
	KindAdd          = tracebuf.KindAdd          // How(), Stage() or Target(), Packets(), Wake(), Born(): one add call
)

// AddHow says how an add call (KindAdd) queued its packets (method
// String: "add", "priority", "lend", "sentinel", "designated").
type AddHow = tracebuf.AddHow

// Add calls, by the scheduler call that made them.
const (
	AddNormal     = tracebuf.AddNormal     // Add or AddAll: a bucket's normal lane
	AddPriority   = tracebuf.AddPriority   // Add or AddAll with Priority
	AddLend       = tracebuf.AddLend       // AddAll with Lend
	AddSentinel   = tracebuf.AddSentinel   // a stage's sentinel, queued when the stage drained
	AddDesignated = tracebuf.AddDesignated // AddDesignated; Target() is the worker
)

// ParseAddHow returns the AddHow named s ("add", "priority", "lend",
// "sentinel", "designated").
func ParseAddHow(s string) (AddHow, bool) { return tracebuf.ParseAddHow(s) }

// Where a packet begin says its packet was queued (Event.From): a worker
// index for a spawn on that worker, or one of these.
const (
	FromAdd     = tracebuf.FromAdd     // an add (Add, AddAll, a sentinel): Born() is the add's stamp
	FromNone    = tracebuf.FromNone    // queued without a stamp: AddDesignated
	FromUnknown = tracebuf.FromUnknown // the begin does not say (recorded before wsched recorded it)
)

// CounterKind says which quantity a KindCounter event samples (method
// String: "bucket_depth" and so on).
type CounterKind = tracebuf.CounterKind

// Counter kinds, with what a counter event's Index means for each.
const (
	CounterBucketDepth = tracebuf.CounterBucketDepth // packets queued in a stage's bucket; index = stage
	CounterParked      = tracebuf.CounterParked      // number of parked workers; index unused (0)
	CounterLocalLen    = tracebuf.CounterLocalLen    // length of a worker's local deque; index = worker
)

// Event is one fixed-size (24-byte) record, as a [Snapshot] hands it out:
// Time is nanoseconds since the recorder started. Its accessors read the
// arguments of its kind (the Kind constants say which apply; the others
// return unspecified values):
//
//	Kind() Kind           every event
//	Cycle() uint64        the cycle number of a cycle begin or end
//	Stage() int           the stage of a stage open or close, a packet begin or an add (0 = Unconstrained)
//	Name() NameID         the interned name of a stage open or a packet begin
//	Flow() uint64         the flow id of a packet begin (the arrow ends there) or a steal (it starts there); 0 = none
//	Victim() int          the worker a steal stole from
//	Moved() int           the number of packets a steal moved
//	Target() int          the worker a wake-up was sent to (-1 = unknown), or an AddDesignated add's worker
//	Blocked() bool        whether a woken worker had been waiting in a blocking receive (its OS thread may have slept)
//	Counter() CounterKind the counter a counter event samples
//	Index() int           the counter's index (see the Counter constants)
//	Value() int64         the sampled value
//	Born() int64          for a steal origin: when the packet taken by the steal just before it was queued (ns since start, never after the steal);
//	                      for a packet begin with HasBorn: when that packet was queued (never after its begin); for an add: its packets' stamp
//	HasBorn() bool        whether a packet begin holds Born (it was not stolen, and the scheduler recorded where it was queued)
//	From() int            for a steal origin: the worker that queued it, -1 for the control buffer (added from outside any worker);
//	                      for a packet begin: the worker that spawned it, FromAdd, FromNone or FromUnknown
//	Priority() bool       whether a packet begin's packet was taken from a priority lane
//	How() AddHow          how an add queued its packets
//	Packets() int         how many packets an add queued
//	Wake() uint8          an add's wake policy (a scheduler.WakePolicy's value; 0: the scheduler's own rule)
//	String() string       a one-line rendering, for tests and debugging
type Event = tracebuf.Event

// Snapshot is a copy of a recorder's events, in nanoseconds since the
// recorder started, for exporters and tests. Its fields: Names (Names[id]
// is the string of a NameID), Buffers (worker 0..Workers()-1's buffers, then
// the control buffer), Overwrite (the recorder's full-buffer policy) and
// End (when it was taken; no event is later). Its methods:
//
//	Workers() int               the number of worker buffers
//	Control() *Buffer           the control buffer
//	Name(NameID) string         the string of an interned name ("" for 0 or an unknown id)
//	Dropped() uint64            the events lost over all buffers
//	All() iter.Seq2[int, Event] every event in time order, with its buffer's worker index (-1 for control)
//
// At equal times All yields the control buffer first, then workers in index
// order, and each buffer in its own order.
type Snapshot = tracebuf.Snapshot

// Buffer is one buffer's events in a Snapshot: Worker (the worker index, -1
// for the control buffer), Events (in recording order, with non-decreasing
// Time), Dropped (events lost to the full-buffer policy: in stop mode the
// newest, after Events; in Overwrite mode the oldest, before Events) and,
// in stop mode, DropStart and DropEnd (the times of the first and last
// dropped events; 0 when none were dropped).
type Buffer = tracebuf.Buffer
