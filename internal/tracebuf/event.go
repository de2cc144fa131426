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
	KindAdd                          // How(), Stage() or Target(), Packets(), Wake(), Born(): an add call (Buf.Add)
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
	KindAdd:          "add",
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

// The arg of a KindPacketBegin event (Buf.PacketBeginQueued): the stage in
// the low bits, then whether val holds the packet's birth stamp (else its
// flow id, or 0), whether it was taken from a bucket's priority lane, and
// where it was queued: 0 not recorded (Buf.PacketBegin), 1 unstamped (a
// designated packet), 2 an add (the control buffer's stamp), 3+i a spawn
// on worker i.
const (
	beginStageBits  = 11
	beginStageMask  = 1<<beginStageBits - 1
	beginBornBit    = 1 << beginStageBits
	beginPrioBit    = beginBornBit << 1
	beginFromShift  = beginStageBits + 2
	beginFromNone   = 1
	beginFromAdd    = 2
	beginFromWorker = 3
	// MaxBeginStage is the largest stage a KindPacketBegin event records
	// (PacketBeginQueued keeps the stage's low bits only).
	MaxBeginStage = beginStageMask
	// maxBeginFrom bounds the worker index a begin records (19 bits).
	maxBeginFrom = 1<<(32-beginFromShift) - 1 - beginFromWorker
)

// AddHow says how an add call (KindAdd) queued its packets.
type AddHow uint8

// Add calls, by the scheduler call that made them.
const (
	AddNormal     AddHow = iota // Add or AddAll into a bucket's normal lane (copied)
	AddPriority                 // Add or AddAll with Priority: the priority lane
	AddLend                     // AddAll with Lend: the normal lane, the slice lent
	AddSentinel                 // a stage's sentinel, queued when its stage drained
	AddDesignated               // AddDesignated: one worker's designated queue
	addHowCount
)

var addHowNames = [...]string{
	AddNormal: "add", AddPriority: "priority", AddLend: "lend", AddSentinel: "sentinel", AddDesignated: "designated",
}

func (h AddHow) String() string {
	if h < addHowCount {
		return addHowNames[h]
	}
	return fmt.Sprintf("AddHow(%d)", uint8(h))
}

// ParseAddHow returns the AddHow named s ("add", "priority", ...).
func ParseAddHow(s string) (AddHow, bool) {
	for i, n := range addHowNames {
		if n == s {
			return AddHow(i), true
		}
	}
	return 0, false
}

// The arg of a KindAdd event: how (3 bits), whether the call was a
// one-packet Add (1 bit), the wake policy (4 bits), the stage or, for
// AddDesignated, the target worker (24 bits).
const (
	addHowMask     = 7
	addSingleBit   = 8
	addWakeShift   = 4
	addTargetShift = 8
	// MaxAddPackets is the largest packet count a KindAdd event records;
	// larger adds record it.
	MaxAddPackets = 1<<24 - 1
)

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

// Stage is the stage of a KindStageOpen, KindStageClose, KindPacketBegin or
// KindAdd event (0 = Unconstrained).
func (e Event) Stage() int {
	switch e.Kind() {
	case KindPacketBegin:
		if e.From() != FromUnknown {
			return int(uint32(e.arg) & beginStageMask)
		}
	case KindAdd:
		return int(uint32(e.arg) >> addTargetShift)
	}
	return int(e.arg)
}

// Name is the interned name of a KindStageOpen or KindPacketBegin event.
func (e Event) Name() NameID { return NameID(e.kindArg >> 8) }

// Flow is the flow id of a KindPacketBegin event (the arrow ends there) or a
// KindSteal event (the arrow starts there); 0 means none.
func (e Event) Flow() uint64 {
	if e.HasBorn() {
		return 0
	}
	return e.val
}

// Victim is the worker a KindSteal event stole from.
func (e Event) Victim() int { return int(e.kindArg >> 8) }

// Moved is the number of packets a KindSteal event moved.
func (e Event) Moved() int { return int(e.arg) }

// Target is the worker a KindWakeSent event tried to wake (-1 = unknown),
// or the worker a KindAdd event of AddDesignated queued for.
func (e Event) Target() int {
	if e.Kind() == KindAdd {
		return e.Stage()
	}
	return int(e.arg)
}

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
// later than the steal. For a KindPacketBegin event with HasBorn, when
// that packet was queued, never later than its begin; for a KindAdd event,
// the stamp of the packets the add queued (their Born), never later than
// the event.
func (e Event) Born() int64 { return int64(e.val) }

// HasBorn reports whether a KindPacketBegin event holds its packet's Born
// (a packet that was not stolen, begun with Buf.PacketBeginQueued); a
// stolen packet's is in the KindStealOrigin that follows its steal.
func (e Event) HasBorn() bool {
	return e.Kind() == KindPacketBegin && e.From() != FromUnknown && uint32(e.arg)&beginBornBit != 0
}

// From is, for a KindStealOrigin event, the buffer whose clock stamped
// Born: the worker that spawned the stolen packet, or -1 for the control
// buffer (the packet was added from outside any worker). For a
// KindPacketBegin event it is where the packet was queued: a worker index
// for a spawn, FromAdd for an add (Born is the add's stamp), FromNone for
// a packet queued unstamped (a designated one), or FromUnknown when the
// begin did not record it (Buf.PacketBegin).
func (e Event) From() int {
	if e.Kind() == KindPacketBegin {
		return int(uint32(e.arg)>>beginFromShift) - beginFromWorker
	}
	return int(e.arg)
}

// Where a KindPacketBegin event says its packet was queued (From).
const (
	FromAdd     = beginFromAdd - beginFromWorker  // -1: an add (Add, AddAll, a sentinel)
	FromNone    = beginFromNone - beginFromWorker // -2: unstamped (AddDesignated)
	FromUnknown = -beginFromWorker                // -3: not recorded
)

// Priority reports whether the packet of a KindPacketBegin event was taken
// from a bucket's priority lane.
func (e Event) Priority() bool {
	return e.Kind() == KindPacketBegin && e.From() != FromUnknown && uint32(e.arg)&beginPrioBit != 0
}

// How is how a KindAdd event's call queued its packets.
func (e Event) How() AddHow { return AddHow(uint32(e.arg) & addHowMask) }

// Single reports whether a KindAdd event's call was a one-packet Add
// (whose wake-up follows the scheduler's one-packet rule), not an AddAll.
func (e Event) Single() bool { return uint32(e.arg)&addSingleBit != 0 }

// Wake is a KindAdd event's wake policy, as internal/policy's Kind (0:
// the scheduler's own, Config.Wake or its one-packet rule).
func (e Event) Wake() uint8 { return uint8(uint32(e.arg) >> addWakeShift & 0xF) }

// Packets is how many packets a KindAdd event's call queued (at most
// MaxAddPackets).
func (e Event) Packets() int { return int(e.kindArg >> 8) }

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
		if from := e.From(); from != FromUnknown {
			return fmt.Sprintf("%d %s name=%d stage=%d flow=%d from=%d born=%d priority=%t", e.Time, k, e.Name(), e.Stage(), e.Flow(), from, e.Born()*b2i(e.HasBorn()), e.Priority())
		}
		return fmt.Sprintf("%d %s name=%d stage=%d flow=%d", e.Time, k, e.Name(), e.Stage(), e.Flow())
	case KindAdd:
		return fmt.Sprintf("%d %s how=%s single=%t stage=%d packets=%d wake=%d born=%d", e.Time, k, e.How(), e.Single(), e.Stage(), e.Packets(), e.Wake(), e.Born())
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

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
