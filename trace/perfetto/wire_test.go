package perfetto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wsched/wsched/trace/internal/pfwire"
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
		{"Trace", "packet", pfwire.FTracePacket},
		{"TracePacket", "timestamp", pfwire.FTimestamp},
		{"TracePacket", "trusted_packet_sequence_id", pfwire.FSequenceID},
		{"TracePacket", "track_event", pfwire.FTrackEvent},
		{"TracePacket", "interned_data", pfwire.FInternedData},
		{"TracePacket", "sequence_flags", pfwire.FSequenceFlags},
		{"TracePacket", "previous_packet_dropped", pfwire.FPreviousDropped},
		{"TracePacket", "track_descriptor", pfwire.FTrackDescriptor},
		{"TracePacket", "clock_snapshot", pfwire.FClockSnapshot},
		{"TracePacket", "timestamp_clock_id", pfwire.FTimestampClockID},
		{"TracePacket", "trace_packet_defaults", pfwire.FPacketDefaults},
		{"ClockSnapshot", "clocks", pfwire.FCSClocks},
		{"Clock", "clock_id", pfwire.FClockID},
		{"Clock", "timestamp", pfwire.FClockTimestamp},
		{"Clock", "is_incremental", pfwire.FClockIncrement},
		{"Clock", "unit_multiplier_ns", pfwire.FClockUnitFactor},
		{"TracePacketDefaults", "timestamp_clock_id", pfwire.FDefClockID},
		{"TracePacketDefaults", "track_event_defaults", pfwire.FDefTrackEvent},
		{"TrackEventDefaults", "track_uuid", pfwire.FDefTrackUUID},
		{"TrackDescriptor", "uuid", pfwire.FTDUUID},
		{"TrackDescriptor", "name", pfwire.FTDName},
		{"TrackDescriptor", "process", pfwire.FTDProcess},
		{"TrackDescriptor", "thread", pfwire.FTDThread},
		{"TrackDescriptor", "parent_uuid", pfwire.FTDParentUUID},
		{"TrackDescriptor", "counter", pfwire.FTDCounter},
		{"TrackDescriptor", "description", pfwire.FTDDescription},
		{"ProcessDescriptor", "pid", pfwire.FPDPid},
		{"ProcessDescriptor", "process_name", pfwire.FPDName},
		{"ThreadDescriptor", "pid", pfwire.FThDPid},
		{"ThreadDescriptor", "tid", pfwire.FThDTid},
		{"ThreadDescriptor", "thread_name", pfwire.FThDName},
		{"CounterDescriptor", "unit", pfwire.FCDUnit},
		{"CounterDescriptor", "unit_name", pfwire.FCDUnitName},
		{"TrackEvent", "category_iids", pfwire.FTECategoryIIDs},
		{"TrackEvent", "debug_annotations", pfwire.FTEAnnotations},
		{"TrackEvent", "type", pfwire.FTEType},
		{"TrackEvent", "name_iid", pfwire.FTENameIID},
		{"TrackEvent", "track_uuid", pfwire.FTETrackUUID},
		{"TrackEvent", "categories", pfwire.FTECategories},
		{"TrackEvent", "name", pfwire.FTEName},
		{"TrackEvent", "counter_value", pfwire.FTECounterValue},
		{"TrackEvent", "double_counter_value", pfwire.FTEDoubleCounter},
		{"TrackEvent", "flow_ids", pfwire.FTEFlowIDs},
		{"TrackEvent", "terminating_flow_ids", pfwire.FTETermFlowIDs},
		{"DebugAnnotation", "name_iid", pfwire.FDANameIID},
		{"DebugAnnotation", "bool_value", pfwire.FDABool},
		{"DebugAnnotation", "uint_value", pfwire.FDAUint},
		{"DebugAnnotation", "int_value", pfwire.FDAInt},
		{"DebugAnnotation", "double_value", pfwire.FDADouble},
		{"DebugAnnotation", "string_value", pfwire.FDAString},
		{"DebugAnnotation", "name", pfwire.FDAName},
		{"InternedData", "event_categories", pfwire.FIDCategories},
		{"InternedData", "event_names", pfwire.FIDNames},
		{"InternedData", "debug_annotation_names", pfwire.FIDAnnotNames},
		{"EventName", "iid", pfwire.FINIID},
		{"EventName", "name", pfwire.FINName},
		{"EventCategory", "iid", pfwire.FINIID},
		{"EventCategory", "name", pfwire.FINName},
		{"DebugAnnotationName", "iid", pfwire.FINIID},
		{"DebugAnnotationName", "name", pfwire.FINName},
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
	for typ, want := range map[int]string{pfwire.TypeSliceBegin: "TYPE_SLICE_BEGIN", pfwire.TypeSliceEnd: "TYPE_SLICE_END", pfwire.TypeInstant: "TYPE_INSTANT", pfwire.TypeCounter: "TYPE_COUNTER"} {
		assert.Equal(t, want, perfettopb.TrackEvent_Type(typ).String(), "type %d in perfetto.proto", typ)
	}
	// The values of the sequence flags and the counter unit, against
	// perfetto.proto's.
	assert.EqualValues(t, pfwire.SeqIncrementalStateCleared, perfettopb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED)
	assert.EqualValues(t, pfwire.SeqNeedsIncrementalState, perfettopb.TracePacket_SEQ_NEEDS_INCREMENTAL_STATE)
	assert.EqualValues(t, pfwire.UnitCount, perfettopb.CounterDescriptor_UNIT_COUNT)
}
