package pfwire

// Perfetto field numbers (Perfetto's protos/perfetto/trace; perfettopb/perfetto.proto is the
// schema these must match, and the tests check that they do).
const (
	FTracePacket = 1 // Trace.packet

	// TracePacket
	FTimestamp        = 8
	FSequenceID       = 10
	FTrackEvent       = 11
	FInternedData     = 12
	FSequenceFlags    = 13
	FPreviousDropped  = 42
	FTrackDescriptor  = 60
	FClockSnapshot    = 6
	FTimestampClockID = 58
	FPacketDefaults   = 59

	// ClockSnapshot, ClockSnapshot.Clock
	FCSClocks        = 1
	FClockID         = 1
	FClockTimestamp  = 2
	FClockIncrement  = 3
	FClockUnitFactor = 4

	// TracePacketDefaults, TrackEventDefaults
	FDefClockID    = 58
	FDefTrackEvent = 11
	FDefTrackUUID  = 11
	FDefExtraUUIDs = 31

	// TrackDescriptor
	FTDUUID        = 1
	FTDName        = 2
	FTDProcess     = 3
	FTDThread      = 4
	FTDParentUUID  = 5
	FTDCounter     = 8
	FTDDescription = 14

	// ProcessDescriptor
	FPDPid  = 1
	FPDName = 6

	// ThreadDescriptor
	FThDPid  = 1
	FThDTid  = 2
	FThDName = 5

	// CounterDescriptor
	FCDUnit     = 3
	FCDUnitName = 6

	// TrackEvent
	FTECategoryIIDs  = 3
	FTEAnnotations   = 4
	FTEType          = 9
	FTENameIID       = 10
	FTETrackUUID     = 11
	FTECategories    = 22
	FTEName          = 23
	FTECounterValue  = 30
	FTEDoubleCounter = 44
	FTEExtraUUIDs    = 31
	FTEExtraValues   = 12
	FTEFlowIDs       = 47
	FTETermFlowIDs   = 48

	// DebugAnnotation
	FDANameIID = 1
	FDABool    = 2
	FDAUint    = 3
	FDAInt     = 4
	FDADouble  = 5
	FDAString  = 6
	FDAName    = 10

	// InternedData
	FIDCategories = 1
	FIDNames      = 2
	FIDAnnotNames = 3
	// EventName / EventCategory / DebugAnnotationName
	FINIID  = 1
	FINName = 2
)

// TrackEvent.Type values.
const (
	TypeSliceBegin = 1
	TypeSliceEnd   = 2
	TypeInstant    = 3
	TypeCounter    = 4
)

// Sequence flags.
const (
	SeqIncrementalStateCleared = 1
	SeqNeedsIncrementalState   = 2
)

// CounterDescriptor.Unit
const UnitCount = 2

// Clock ids (ClockSnapshot.Clock.clock_id, timestamp_clock_id).
const (
	// ClockBoottime is Perfetto's BUILTIN_CLOCK_BOOTTIME, the clock a
	// timestamp is on when nothing says otherwise, and the trace clock
	// of a file whose ClockSnapshots relate it to the others.
	ClockBoottime = 6
	// ClockIncremental is the writer's clock on every sequence: a
	// sequence-scoped clock (ids 64-127 are scoped to the sequence that
	// declares them), declared incremental and equal to BOOTTIME at its
	// ClockSnapshot. The Perfetto SDK uses the same id for its
	// delta-encoded clock.
	ClockIncremental = 64
	// ClockSequenceFirst and ClockSequenceEnd bound the sequence-scoped
	// clock ids, [64, 128).
	ClockSequenceFirst = 64
	ClockSequenceEnd   = 128
)
