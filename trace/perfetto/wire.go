package perfetto

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// Perfetto field numbers (Perfetto's protos/perfetto/trace; perfettopb/perfetto.proto is the
// schema these must match, and the tests check that they do).
const (
	fTracePacket = 1 // Trace.packet

	// TracePacket
	fTimestamp        = 8
	fSequenceID       = 10
	fTrackEvent       = 11
	fInternedData     = 12
	fSequenceFlags    = 13
	fPreviousDropped  = 42
	fTrackDescriptor  = 60
	fClockSnapshot    = 6
	fTimestampClockID = 58
	fPacketDefaults   = 59

	// ClockSnapshot, ClockSnapshot.Clock
	fCSClocks        = 1
	fClockID         = 1
	fClockTimestamp  = 2
	fClockIncrement  = 3
	fClockUnitFactor = 4

	// TracePacketDefaults, TrackEventDefaults
	fDefClockID    = 58
	fDefTrackEvent = 11
	fDefTrackUUID  = 11
	fDefExtraUUIDs = 31

	// TrackDescriptor
	fTDUUID        = 1
	fTDName        = 2
	fTDProcess     = 3
	fTDThread      = 4
	fTDParentUUID  = 5
	fTDCounter     = 8
	fTDDescription = 14

	// ProcessDescriptor
	fPDPid  = 1
	fPDName = 6

	// ThreadDescriptor
	fThDPid  = 1
	fThDTid  = 2
	fThDName = 5

	// CounterDescriptor
	fCDUnit     = 3
	fCDUnitName = 6

	// TrackEvent
	fTECategoryIIDs  = 3
	fTEAnnotations   = 4
	fTEType          = 9
	fTENameIID       = 10
	fTETrackUUID     = 11
	fTECategories    = 22
	fTEName          = 23
	fTECounterValue  = 30
	fTEDoubleCounter = 44
	fTEExtraUUIDs    = 31
	fTEExtraValues   = 12
	fTEFlowIDs       = 47
	fTETermFlowIDs   = 48

	// DebugAnnotation
	fDANameIID = 1
	fDABool    = 2
	fDAUint    = 3
	fDAInt     = 4
	fDADouble  = 5
	fDAString  = 6
	fDAName    = 10

	// InternedData
	fIDCategories = 1
	fIDNames      = 2
	fIDAnnotNames = 3
	// EventName / EventCategory / DebugAnnotationName
	fINIID  = 1
	fINName = 2
)

// TrackEvent.Type values.
const (
	typeSliceBegin = 1
	typeSliceEnd   = 2
	typeInstant    = 3
	typeCounter    = 4
)

// Sequence flags.
const (
	seqIncrementalStateCleared = 1
	seqNeedsIncrementalState   = 2
)

// CounterDescriptor.Unit
const unitCount = 2

// Clock ids (ClockSnapshot.Clock.clock_id, timestamp_clock_id).
const (
	// clockBoottime is Perfetto's BUILTIN_CLOCK_BOOTTIME, the clock a
	// timestamp is on when nothing says otherwise, and the trace clock
	// of a file whose ClockSnapshots relate it to the others.
	clockBoottime = 6
	// clockIncremental is the writer's clock on every sequence: a
	// sequence-scoped clock (ids 64-127 are scoped to the sequence that
	// declares them), declared incremental and equal to BOOTTIME at its
	// ClockSnapshot. The Perfetto SDK uses the same id for its
	// delta-encoded clock.
	clockIncremental = 64
	// clockSequenceFirst and clockSequenceEnd bound the sequence-scoped
	// clock ids, [64, 128).
	clockSequenceFirst = 64
	clockSequenceEnd   = 128
)

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendStringField(b []byte, num protowire.Number, v string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

func appendFixed64Field(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendInt32Field encodes an int32 as protobuf does: sign-extended to 64
// bits (so negative values take 10 bytes).
func appendInt32Field(b []byte, num protowire.Number, v int32) []byte {
	return appendVarintField(b, num, uint64(int64(v)))
}
