package tracebuf

import "fmt"

// NameID names an interned string (a packet type or a stage name). IDs start
// at 1; 0 means "no name". See [Recorder.Intern] and [Snapshot.Name].
type NameID uint32

// maxNameID is the largest NameID a record can hold: the name shares a
// uint32 with the 8-bit event kind (see Event), so 24 bits remain. The last
// value is reserved for "too many names" (Intern returns it once the table
// is full), which bounds the name table at 16 Mi entries.
const (
	maxNameID      = 1<<24 - 1
	nameIDOverflow = NameID(maxNameID)
	overflowName   = "(too many names)"
)

// Kind says what an Event records.
type Kind uint8

// Event kinds, one per hook. The zero Kind is invalid.
const (
	KindCycleBegin   Kind = iota + 1 // Cycle()
	KindCycleEnd                     // Cycle()
	KindStageOpen                    // Stage(), Name()
	KindStageClose                   // Stage()
	KindPacketBegin                  // Name(), Stage(), Flow() (terminating; 0 = none)
	KindPacketEnd                    // no arguments
	KindSteal                        // Victim(), Moved(), Flow() (starting; 0 = none)
	KindPark                         // no arguments
	KindUnpark                       // no arguments
	KindWakeSent                     // Target() (-1 = unknown)
	KindWakeReceived                 // Blocked()
	KindCounter                      // Counter(), Index(), Value()
	KindStealOrigin                  // Born(), From(): follows a KindSteal (Buf.StealStamped)
	kindCount
)

var kindNames = [...]string{
	KindCycleBegin:   "cycle_begin",
	KindCycleEnd:     "cycle_end",
	KindStageOpen:    "stage_open",
	KindStageClose:   "stage_close",
	KindPacketBegin:  "packet_begin",
	KindPacketEnd:    "packet_end",
	KindSteal:        "steal",
	KindPark:         "park",
	KindUnpark:       "unpark",
	KindWakeSent:     "wake_sent",
	KindWakeReceived: "wake_received",
	KindCounter:      "counter",
	KindStealOrigin:  "steal_origin",
}

func (k Kind) String() string {
	if k > 0 && k < kindCount {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// CounterKind says which quantity a KindCounter event samples.
type CounterKind uint8

// Counter kinds. The index argument of [Buf.Counter] means a stage for
// CounterBucketDepth, nothing for CounterParked (pass 0), and a worker for
// CounterLocalLen.
const (
	CounterBucketDepth CounterKind = iota // packets queued in a stage's bucket; index = stage
	CounterParked                         // number of parked workers; index unused (0)
	CounterLocalLen                       // length of a worker's local deque; index = worker
	counterKindCount
)

var counterNames = [...]string{
	CounterBucketDepth: "bucket_depth",
	CounterParked:      "parked",
	CounterLocalLen:    "local_len",
}

func (c CounterKind) String() string {
	if c < counterKindCount {
		return counterNames[c]
	}
	return fmt.Sprintf("CounterKind(%d)", uint8(c))
}

// Event is one fixed-size (24-byte) record. The recorder stores Events in its
// buffers exactly as laid out here (Time then holds raw clock ticks); a
// [Snapshot] hands them out with Time converted to nanoseconds since the
// recorder started.
//
// Which accessor is meaningful depends on Kind (see the Kind constants);
// the others return unspecified values.
type Event struct {
	// Time is nanoseconds since the recorder started (in a Snapshot).
	Time int64
	// val: cycle, flow id, counter value or birth time (raw ticks in a
	// buffer, nanoseconds in a Snapshot).
	val uint64
	// arg: stage, packets moved, wake target, counter index or birth buffer.
	arg int32
	// kindArg: Kind in the low 8 bits; name, victim or counter kind in the
	// upper 24.
	kindArg uint32
}

func makeKindArg(k Kind, x uint32) uint32 { return uint32(k) | x<<8 }

// Kind is the event's kind.
func (e Event) Kind() Kind { return Kind(e.kindArg) }

// Cycle is the cycle number of a KindCycleBegin or KindCycleEnd event.
func (e Event) Cycle() uint64 { return e.val }

// Stage is the stage of a KindStageOpen, KindStageClose or KindPacketBegin
// event (0 = Unconstrained).
func (e Event) Stage() int { return int(e.arg) }

// Name is the interned name of a KindStageOpen or KindPacketBegin event.
func (e Event) Name() NameID { return NameID(e.kindArg >> 8) }

// Flow is the flow id of a KindPacketBegin event (the arrow ends there) or a
// KindSteal event (the arrow starts there); 0 means none.
func (e Event) Flow() uint64 { return e.val }

// Victim is the worker a KindSteal event stole from.
func (e Event) Victim() int { return int(e.kindArg >> 8) }

// Moved is the number of packets a KindSteal event moved.
func (e Event) Moved() int { return int(e.arg) }

// Target is the worker a KindWakeSent event tried to wake; -1 = unknown.
func (e Event) Target() int { return int(e.arg) }

// Blocked reports whether the worker of a KindWakeReceived event had been
// waiting in a blocking receive (see Buf.WakeReceived).
func (e Event) Blocked() bool { return e.arg != 0 }

// Counter is the counter a KindCounter event samples.
func (e Event) Counter() CounterKind { return CounterKind(e.kindArg >> 8) }

// Index is the counter index of a KindCounter event (see CounterKind).
func (e Event) Index() int { return int(e.arg) }

// Value is the sampled value of a KindCounter event.
func (e Event) Value() int64 { return int64(e.val) }

// Born is, for a KindStealOrigin event, when the packet taken by the
// KindSteal recorded just before it on the same buffer was queued (spawned
// or added): nanoseconds since the recorder started in a Snapshot, never
// later than the steal.
func (e Event) Born() int64 { return int64(e.val) }

// From is, for a KindStealOrigin event, the buffer whose clock stamped
// Born: the worker that spawned the stolen packet, or -1 for the control
// buffer (the packet was added from outside any worker).
func (e Event) From() int { return int(e.arg) }

func (e Event) String() string {
	k := e.Kind()
	switch k {
	case KindCycleBegin, KindCycleEnd:
		return fmt.Sprintf("%d %s cycle=%d", e.Time, k, e.Cycle())
	case KindStageOpen:
		return fmt.Sprintf("%d %s stage=%d name=%d", e.Time, k, e.Stage(), e.Name())
	case KindStageClose:
		return fmt.Sprintf("%d %s stage=%d", e.Time, k, e.Stage())
	case KindPacketBegin:
		return fmt.Sprintf("%d %s name=%d stage=%d flow=%d", e.Time, k, e.Name(), e.Stage(), e.Flow())
	case KindSteal:
		return fmt.Sprintf("%d %s victim=%d moved=%d flow=%d", e.Time, k, e.Victim(), e.Moved(), e.Flow())
	case KindWakeSent:
		return fmt.Sprintf("%d %s target=%d", e.Time, k, e.Target())
	case KindCounter:
		return fmt.Sprintf("%d %s %s[%d]=%d", e.Time, k, e.Counter(), e.Index(), e.Value())
	case KindStealOrigin:
		return fmt.Sprintf("%d %s born=%d from=%d", e.Time, k, e.Born(), e.From())
	}
	return fmt.Sprintf("%d %s", e.Time, k)
}
