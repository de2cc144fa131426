package perfetto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

// TestFieldNumbersMatchSchema checks every field number the hand-written
// encoder and decoder use (wire.go) against the generated descriptors of
// perfettopb/perfetto.proto, by field name, and the wire type each
// repeated scalar is written with. It needs no protoc, so it runs
// everywhere; TestGeneratedCodeIsCurrent checks the generated code itself.
func TestFieldNumbersMatchSchema(t *testing.T) {
	msgs := map[string]protoreflect.MessageDescriptor{
		"Trace":               (&perfettopb.Trace{}).ProtoReflect().Descriptor(),
		"TracePacket":         (&perfettopb.TracePacket{}).ProtoReflect().Descriptor(),
		"TrackDescriptor":     (&perfettopb.TrackDescriptor{}).ProtoReflect().Descriptor(),
		"ProcessDescriptor":   (&perfettopb.ProcessDescriptor{}).ProtoReflect().Descriptor(),
		"ThreadDescriptor":    (&perfettopb.ThreadDescriptor{}).ProtoReflect().Descriptor(),
		"CounterDescriptor":   (&perfettopb.CounterDescriptor{}).ProtoReflect().Descriptor(),
		"TrackEvent":          (&perfettopb.TrackEvent{}).ProtoReflect().Descriptor(),
		"DebugAnnotation":     (&perfettopb.DebugAnnotation{}).ProtoReflect().Descriptor(),
		"InternedData":        (&perfettopb.InternedData{}).ProtoReflect().Descriptor(),
		"EventName":           (&perfettopb.EventName{}).ProtoReflect().Descriptor(),
		"EventCategory":       (&perfettopb.EventCategory{}).ProtoReflect().Descriptor(),
		"DebugAnnotationName": (&perfettopb.DebugAnnotationName{}).ProtoReflect().Descriptor(),
		"ClockSnapshot":       (&perfettopb.ClockSnapshot{}).ProtoReflect().Descriptor(),
		"Clock":               (&perfettopb.ClockSnapshot_Clock{}).ProtoReflect().Descriptor(),
		"TracePacketDefaults": (&perfettopb.TracePacketDefaults{}).ProtoReflect().Descriptor(),
		"TrackEventDefaults":  (&perfettopb.TrackEventDefaults{}).ProtoReflect().Descriptor(),
	}
	for _, f := range []struct {
		msg, field string
		num        protowire.Number
	}{
		{"Trace", "packet", fTracePacket},
		{"TracePacket", "timestamp", fTimestamp},
		{"TracePacket", "trusted_packet_sequence_id", fSequenceID},
		{"TracePacket", "track_event", fTrackEvent},
		{"TracePacket", "interned_data", fInternedData},
		{"TracePacket", "sequence_flags", fSequenceFlags},
		{"TracePacket", "previous_packet_dropped", fPreviousDropped},
		{"TracePacket", "track_descriptor", fTrackDescriptor},
		{"TracePacket", "clock_snapshot", fClockSnapshot},
		{"TracePacket", "timestamp_clock_id", fTimestampClockID},
		{"TracePacket", "trace_packet_defaults", fPacketDefaults},
		{"ClockSnapshot", "clocks", fCSClocks},
		{"Clock", "clock_id", fClockID},
		{"Clock", "timestamp", fClockTimestamp},
		{"Clock", "is_incremental", fClockIncrement},
		{"Clock", "unit_multiplier_ns", fClockUnitFactor},
		{"TracePacketDefaults", "timestamp_clock_id", fDefClockID},
		{"TracePacketDefaults", "track_event_defaults", fDefTrackEvent},
		{"TrackEventDefaults", "track_uuid", fDefTrackUUID},
		{"TrackDescriptor", "uuid", fTDUUID},
		{"TrackDescriptor", "name", fTDName},
		{"TrackDescriptor", "process", fTDProcess},
		{"TrackDescriptor", "thread", fTDThread},
		{"TrackDescriptor", "parent_uuid", fTDParentUUID},
		{"TrackDescriptor", "counter", fTDCounter},
		{"TrackDescriptor", "description", fTDDescription},
		{"ProcessDescriptor", "pid", fPDPid},
		{"ProcessDescriptor", "process_name", fPDName},
		{"ThreadDescriptor", "pid", fThDPid},
		{"ThreadDescriptor", "tid", fThDTid},
		{"ThreadDescriptor", "thread_name", fThDName},
		{"CounterDescriptor", "unit", fCDUnit},
		{"CounterDescriptor", "unit_name", fCDUnitName},
		{"TrackEvent", "category_iids", fTECategoryIIDs},
		{"TrackEvent", "debug_annotations", fTEAnnotations},
		{"TrackEvent", "type", fTEType},
		{"TrackEvent", "name_iid", fTENameIID},
		{"TrackEvent", "track_uuid", fTETrackUUID},
		{"TrackEvent", "categories", fTECategories},
		{"TrackEvent", "name", fTEName},
		{"TrackEvent", "counter_value", fTECounterValue},
		{"TrackEvent", "double_counter_value", fTEDoubleCounter},
		{"TrackEvent", "flow_ids", fTEFlowIDs},
		{"TrackEvent", "terminating_flow_ids", fTETermFlowIDs},
		{"DebugAnnotation", "name_iid", fDANameIID},
		{"DebugAnnotation", "bool_value", fDABool},
		{"DebugAnnotation", "uint_value", fDAUint},
		{"DebugAnnotation", "int_value", fDAInt},
		{"DebugAnnotation", "double_value", fDADouble},
		{"DebugAnnotation", "string_value", fDAString},
		{"DebugAnnotation", "name", fDAName},
		{"InternedData", "event_categories", fIDCategories},
		{"InternedData", "event_names", fIDNames},
		{"InternedData", "debug_annotation_names", fIDAnnotNames},
		{"EventName", "iid", fINIID},
		{"EventName", "name", fINName},
		{"EventCategory", "iid", fINIID},
		{"EventCategory", "name", fINName},
		{"DebugAnnotationName", "iid", fINIID},
		{"DebugAnnotationName", "name", fINName},
	} {
		fd := msgs[f.msg].Fields().ByName(protoreflect.Name(f.field))
		if !assert.NotNil(t, fd, "%s.%s: not in perfetto.proto", f.msg, f.field) {
			continue
		}
		assert.Equal(t, fd.Number(), f.num, "%s.%s: wire.go against perfetto.proto", f.msg, f.field)
	}
	ev := msgs["TrackEvent"].Fields()
	for _, name := range []protoreflect.Name{"flow_ids", "terminating_flow_ids"} {
		fd := ev.ByName(name)
		assert.Equal(t, protoreflect.Fixed64Kind, fd.Kind(), "TrackEvent.%s: want fixed64", name)
		assert.False(t, fd.IsPacked(), "TrackEvent.%s: want unpacked", name)
	}
	assert.False(t, ev.ByName("category_iids").IsPacked(), "TrackEvent.category_iids is packed")
	for typ, want := range map[int]string{typeSliceBegin: "TYPE_SLICE_BEGIN", typeSliceEnd: "TYPE_SLICE_END", typeInstant: "TYPE_INSTANT", typeCounter: "TYPE_COUNTER"} {
		assert.Equal(t, want, perfettopb.TrackEvent_Type(typ).String(), "type %d in perfetto.proto", typ)
	}
	// The values of the sequence flags and the counter unit, against
	// perfetto.proto's.
	assert.EqualValues(t, seqIncrementalStateCleared, perfettopb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED)
	assert.EqualValues(t, seqNeedsIncrementalState, perfettopb.TracePacket_SEQ_NEEDS_INCREMENTAL_STATE)
	assert.EqualValues(t, unitCount, perfettopb.CounterDescriptor_UNIT_COUNT)
}
