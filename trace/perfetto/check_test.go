package perfetto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/problems"
)

// Hand-built packets for checker tests.

func frame(body ...[]byte) []byte {
	var p []byte
	for _, b := range body {
		p = append(p, b...)
	}
	return appendBytesField(nil, pfwire.FTracePacket, p)
}

func u(num protowire.Number, v uint64) []byte { return appendVarintField(nil, num, v) }
func msg(num protowire.Number, body ...[]byte) []byte {
	var p []byte
	for _, b := range body {
		p = append(p, b...)
	}
	return appendBytesField(nil, num, p)
}
func str(num protowire.Number, s string) []byte { return appendStringField(nil, num, s) }
func f64(num protowire.Number, v uint64) []byte { return appendFixed64Field(nil, num, v) }

func threadDesc(uuid uint64, tid uint64) []byte {
	return msg(pfwire.FTrackDescriptor, u(pfwire.FTDUUID, uuid), msg(pfwire.FTDThread, u(pfwire.FThDPid, 1), u(pfwire.FThDTid, tid), str(pfwire.FThDName, "t")))
}

func nameDef(iid uint64, name string) []byte {
	return msg(pfwire.FInternedData, msg(pfwire.FIDNames, u(pfwire.FINIID, iid), str(pfwire.FINName, name)))
}

func begin(ts, track, nameIID uint64, extra ...[]byte) []byte {
	return msg(pfwire.FTrackEvent, append([][]byte{u(pfwire.FTEType, pfwire.TypeSliceBegin), u(pfwire.FTETrackUUID, track), u(pfwire.FTENameIID, nameIID)}, extra...)...)
}

func end(track uint64, extra ...[]byte) []byte {
	return msg(pfwire.FTrackEvent, append([][]byte{u(pfwire.FTEType, pfwire.TypeSliceEnd), u(pfwire.FTETrackUUID, track)}, extra...)...)
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// good is a minimal valid trace: a thread track, one slice.
func good() [][]byte {
	return [][]byte{
		frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1), threadDesc(5, 2)),
		frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"), begin(10, 5, 1)),
		frame(u(pfwire.FTimestamp, 20), u(pfwire.FSequenceID, 1), end(5)),
	}
}

func TestCheckRules(t *testing.T) {
	_, err := Check(cat(good()...))
	require.NoError(t, err, "valid trace rejected")
	g := good()
	counterDesc := frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 1),
		msg(pfwire.FTrackDescriptor, u(pfwire.FTDUUID, 9), msg(pfwire.FTDCounter, u(pfwire.FCDUnit, 2))))
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"garbage", []byte("hello world"), "not a trace packet record"},
		{"truncated", cat(g...)[:len(cat(g...))-3], "malformed"},
		{"no sequence id", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"), begin(10, 5, 1)), g[2]),
			"without trusted_packet_sequence_id"},
		{"first packet without clear", cat(frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), threadDesc(5, 2)), g[1], g[2]),
			"does not set SEQ_INCREMENTAL_STATE_CLEARED"},
		{"iid used without flag 2", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), nameDef(1, "A"), begin(10, 5, 1)), g[2]),
			"without SEQ_NEEDS_INCREMENTAL_STATE"},
		{"iid undefined", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), begin(10, 5, 1)), g[2]),
			"name iid 1 not defined earlier"},
		{"iid defined on another sequence", cat(g[0],
			frame(u(pfwire.FTimestamp, 5), u(pfwire.FSequenceID, 3), u(pfwire.FSequenceFlags, 3), nameDef(1, "A")),
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), begin(10, 5, 1)), g[2]),
			"name iid 1 not defined earlier on sequence 1"},
		{"packed flow ids", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, msg(pfwire.FTEFlowIDs, protowire.AppendFixed64(nil, 7)))), g[2],
			frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), begin(30, 5, 1, f64(pfwire.FTETermFlowIDs, 7))),
			frame(u(pfwire.FTimestamp, 40), u(pfwire.FSequenceID, 1), end(5))),
			"flow_ids is packed"},
		{"packed category iids", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			msg(pfwire.FInternedData, msg(pfwire.FIDCategories, u(pfwire.FINIID, 1), str(pfwire.FINName, "c"))),
			begin(10, 5, 1, msg(pfwire.FTECategoryIIDs, protowire.AppendVarint(nil, 1)))), g[2]),
			"category_iids is packed"},
		{"flow id as varint", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(pfwire.FTEFlowIDs, 7))), g[2]),
			"wire type 0, want 1"},
		{"terminating flow id as varint", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(pfwire.FTETermFlowIDs, 7))), g[2]),
			"TrackEvent.48 has wire type 0, want 1"},
		{"packed terminating flow ids", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, f64(pfwire.FTEFlowIDs, 7))), g[2],
			frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), begin(30, 5, 1, msg(pfwire.FTETermFlowIDs, protowire.AppendFixed64(nil, 7)))),
			frame(u(pfwire.FTimestamp, 40), u(pfwire.FSequenceID, 1), end(5))),
			"terminating_flow_ids is packed"},
		{"one-ended flow", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, f64(pfwire.FTEFlowIDs, 7))), g[2]),
			"flow 0x7 has only one end"},
		{"undescribed track", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"), begin(10, 6, 1)),
			frame(u(pfwire.FTimestamp, 20), u(pfwire.FSequenceID, 1), end(6))),
			"track 6 is used but has no descriptor"},
		{"missing track uuid", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant)))),
			"without track_uuid"},
		{"thread without tid", cat(frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1),
			msg(pfwire.FTrackDescriptor, u(pfwire.FTDUUID, 5), msg(pfwire.FTDThread, u(pfwire.FThDPid, 1)))), g[1], g[2]),
			"without pid and tid"},
		{"tid out of range", cat(frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1), threadDesc(5, 1<<40)), g[1], g[2]),
			"out of int32 range"},
		{"duplicate tid", cat(g[0], frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), threadDesc(6, 2)), g[1], g[2]),
			"share pid 1 tid 2"},
		{"process without pid", cat(g[0], frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1),
			msg(pfwire.FTrackDescriptor, u(pfwire.FTDUUID, 1), msg(pfwire.FTDProcess, str(pfwire.FPDName, "p")))), g[1], g[2]),
			"process track 1 without pid"},
		{"end carries a name", cat(g[0], g[1], frame(u(pfwire.FTimestamp, 20), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), end(5, u(pfwire.FTENameIID, 1)))),
			"carries 1 field(s)"},
		{"unbalanced end", cat(g[0], g[1], g[2], frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1), end(5))),
			"with no open slice"},
		{"slice left open", cat(g[0], g[1]), "ends with 1 open slice"},
		{"end before begin in time", cat(g[0], frame(u(pfwire.FTimestamp, 20), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"), begin(20, 5, 1)),
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), end(5))),
			"with no open slice"},
		{"counter on slice track", cat(g[0], g[1], g[2], frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1),
			msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeCounter), u(pfwire.FTETrackUUID, 5), u(pfwire.FTECounterValue, 3)))),
			"counter event on non-counter track 5"},
		{"slice on counter track", cat(g[0], counterDesc, frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 2),
			msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant), u(pfwire.FTETrackUUID, 9), str(pfwire.FTEName, "x")))),
			"slice event on counter track 9"},
		{"counter without value", cat(g[0], counterDesc, frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 2),
			msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeCounter), u(pfwire.FTETrackUUID, 9)))),
			"without a value"},
		{"clock id without snapshot", cat(g[0], frame(u(pfwire.FTimestamp, 5), u(pfwire.FSequenceID, 1), u(pfwire.FTimestampClockID, 64))),
			"no ClockSnapshot"},
		{"track described twice", cat(g[0], frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), threadDesc(5, 3)), g[1], g[2]),
			"track 5 described twice"},
		{"unknown event type", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), msg(pfwire.FTrackEvent, u(pfwire.FTEType, 7), u(pfwire.FTETrackUUID, 5)))),
			"track event with type 7"},
		{"terminating flow without source", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, f64(pfwire.FTETermFlowIDs, 7))), g[2],
			frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), begin(30, 5, 1, f64(pfwire.FTETermFlowIDs, 7))),
			frame(u(pfwire.FTimestamp, 40), u(pfwire.FSequenceID, 1), end(5))),
			"terminating flow 0x7 has no source"},
		{"iid 0 defined", cat(g[0], frame(u(pfwire.FTimestamp, 5), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(0, "Z")), g[1], g[2]),
			"event name interned with iid 0"},
		{"definition without flag 2", cat(g[0], frame(u(pfwire.FTimestamp, 5), u(pfwire.FSequenceID, 1), nameDef(1, "A")), g[1], g[2]),
			"defines interned data without SEQ_NEEDS_INCREMENTAL_STATE"},
		{"interned data outside a sequence", cat(g[0], frame(u(pfwire.FTimestamp, 5), u(pfwire.FSequenceFlags, 2), nameDef(1, "A")), g[1], g[2]),
			"interned data outside a sequence"},
		{"iid used after the state was cleared", cat(g[0], g[1], g[2],
			frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 3), begin(30, 5, 1)),
			frame(u(pfwire.FTimestamp, 40), u(pfwire.FSequenceID, 1), end(5))),
			"name iid 1 not defined earlier on sequence 1"},
		{"category iid undefined", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(pfwire.FTECategoryIIDs, 4))), g[2]),
			"category iid 4 not defined"},
		{"annotation name iid undefined", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, msg(pfwire.FTEAnnotations, u(pfwire.FDANameIID, 3), u(pfwire.FDAInt, 1)))), g[2]),
			"debug annotation name iid 3 not defined"},
		{"extra counter value without a track", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(pfwire.FTEExtraValues, 3))), g[2]),
			"1 extra_counter_values for 0 extra counter track(s)"},
		{"extra counter value for a slice track", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(pfwire.FTEExtraUUIDs, 5), u(pfwire.FTEExtraValues, 3))), g[2]),
			"extra counter value for track 5, which is not a described counter track"},
		{"extra counter value for an undescribed track", cat(g[0], frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(pfwire.FTEExtraUUIDs, 77), u(pfwire.FTEExtraValues, 3))), g[2]),
			"extra counter value for track 77, which is not a described counter track"},
		{"extra counter value on the defaults' track without flag 2", cat(
			frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1), msg(pfwire.FPacketDefaults, msg(pfwire.FDefTrackEvent, u(pfwire.FDefExtraUUIDs, 9))), threadDesc(5, 2)),
			frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), msg(pfwire.FTrackDescriptor, u(pfwire.FTDUUID, 9), msg(pfwire.FTDCounter, u(pfwire.FCDUnit, 2)))),
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant), u(pfwire.FTETrackUUID, 5), str(pfwire.FTEName, "x"), u(pfwire.FTEExtraValues, 3)))),
			"extra_counter_values on the defaults' tracks without SEQ_NEEDS_INCREMENTAL_STATE"},
		{"event without timestamp", cat(g[0], frame(u(pfwire.FSequenceID, 1), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant), u(pfwire.FTETrackUUID, 5), str(pfwire.FTEName, "x")))),
			"without timestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.data)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestCheckErrorTruncatesList(t *testing.T) {
	g := good()
	var parts [][]byte
	parts = append(parts, g...)
	for i := 0; i < 50; i++ {
		parts = append(parts, frame(u(pfwire.FTimestamp, 30), u(pfwire.FSequenceID, 1), end(5)))
	}
	_, err := Check(cat(parts...))
	require.IsType(t, (*CheckError)(nil), err)
	ce := err.(*CheckError)
	require.Equal(t, 50, ce.Total, "problems found")
	require.Len(t, ce.Problems, problems.Max, "problems listed")
	require.ErrorContains(t, err, "and 30 more")
}

func clockReading(id, ts uint64, incremental bool, unit uint64) []byte {
	parts := [][]byte{u(pfwire.FClockID, id), u(pfwire.FClockTimestamp, ts)}
	if incremental {
		parts = append(parts, u(pfwire.FClockIncrement, 1))
	}
	if unit != 0 {
		parts = append(parts, u(pfwire.FClockUnitFactor, unit))
	}
	return msg(pfwire.FCSClocks, parts...)
}

func snapshotOf(clocks ...[]byte) []byte { return msg(pfwire.FClockSnapshot, clocks...) }

func defaultsOf(clock, track uint64) []byte {
	return msg(pfwire.FPacketDefaults, u(pfwire.FDefClockID, clock), msg(pfwire.FDefTrackEvent, u(pfwire.FDefTrackUUID, track)))
}

// goodDelta is the writer's encoding in miniature: a sequence whose clock
// 64 is incremental from 1000 ns, whose default track is 5, and a slice
// from 1010 to 1020 whose events name no track.
func goodDelta() [][]byte {
	return [][]byte{
		frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1),
			snapshotOf(clockReading(pfwire.ClockBoottime, 1000, false, 0), clockReading(pfwire.ClockIncremental, 1000, true, 0)),
			defaultsOf(pfwire.ClockIncremental, 5)),
		frame(u(pfwire.FTimestamp, 0), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), threadDesc(5, 2)),
		frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeSliceBegin), u(pfwire.FTENameIID, 1))),
		frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeSliceEnd))),
	}
}

// times decodes data and returns each packet's resolved timestamp (-1 for
// none, -2 for an unresolved one).
func times(t *testing.T, data []byte) []int64 {
	t.Helper()
	var out []int64
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		switch {
		case p.Unresolved:
			out = append(out, -2)
		case !p.HasTimestamp:
			out = append(out, -1)
		default:
			out = append(out, int64(p.Timestamp))
		}
		return nil
	}))
	return out
}

func TestCheckDeltaEncoding(t *testing.T) {
	g := goodDelta()
	_, err := Check(cat(g...))
	require.NoError(t, err)
	require.Equal(t, []int64{-1, 1000, 1010, 1020}, times(t, cat(g...)))
	var tracks []uint64
	require.NoError(t, pfwire.Decode(cat(g...), func(p *pfwire.Packet) error {
		if p.HasEvent {
			assert.True(t, p.Event.DefaultTrack)
			tracks = append(tracks, p.Event.TrackUUID)
		}
		return nil
	}))
	require.Equal(t, []uint64{5, 5}, tracks)

	// A loss marked on a packet that clears the state again, with the
	// sequence's clock restarted at 2000, is fine.
	restart := frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1), u(pfwire.FPreviousDropped, 1),
		snapshotOf(clockReading(pfwire.ClockBoottime, 2000, false, 0), clockReading(pfwire.ClockIncremental, 2000, true, 0)),
		defaultsOf(pfwire.ClockIncremental, 5))
	again := cat(g[0], g[1], g[2], g[3], restart,
		frame(u(pfwire.FTimestamp, 7), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), nameDef(1, "A"),
			msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant), u(pfwire.FTENameIID, 1))))
	_, err = Check(again)
	require.NoError(t, err)
	require.Equal(t, []int64{-1, 1000, 1010, 1020, -1, 2007}, times(t, again))

	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"packet after defaults without flag 2", cat(g[0], g[1], g[2],
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeSliceEnd)))),
			"has TracePacketDefaults but this packet does not set SEQ_NEEDS_INCREMENTAL_STATE"},
		{"loss without a clear", cat(g[0], g[1], g[2],
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), u(pfwire.FPreviousDropped, 1), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeSliceEnd)))),
			"Perfetto skips this packet"},
		{"incremental builtin clock", cat(frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1),
			snapshotOf(clockReading(pfwire.ClockBoottime, 0, false, 0), clockReading(3, 0, true, 0)))),
			"clock 3 is incremental but not sequence-scoped"},
		{"sequence clock outside a sequence", cat(frame(
			snapshotOf(clockReading(pfwire.ClockBoottime, 0, false, 0), clockReading(pfwire.ClockIncremental, 0, true, 0)))),
			"sequence-scoped clock 64 in a snapshot without trusted_packet_sequence_id"},
		{"clock read twice", cat(frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1),
			snapshotOf(clockReading(pfwire.ClockBoottime, 0, false, 0), clockReading(pfwire.ClockBoottime, 5, false, 0)))),
			"clock 6 read twice"},
		{"unit changed", cat(g[0], g[1], g[2], g[3], frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2),
			snapshotOf(clockReading(pfwire.ClockBoottime, 3000, false, 0), clockReading(pfwire.ClockIncremental, 3, true, 1000)))),
			"clock 64 declared with unit 1000 ns"},
		{"clock going backwards", cat(g[0], g[1], g[2], g[3], frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2),
			snapshotOf(clockReading(pfwire.ClockBoottime, 500, false, 0), clockReading(pfwire.ClockIncremental, 500, true, 0)))),
			"reads less than in an earlier snapshot"},
		{"another sequence's clock", cat(g[0], g[1],
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FTimestampClockID, pfwire.ClockIncremental), u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 3),
				msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant), u(pfwire.FTETrackUUID, 5), str(pfwire.FTEName, "x")))),
			"clock 64, which no earlier ClockSnapshot on sequence 2 relates to BOOTTIME"},
		{"clock never related", cat(frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1),
			snapshotOf(clockReading(pfwire.ClockBoottime, 0, false, 0), clockReading(1, 0, false, 0))),
			frame(u(pfwire.FTimestamp, 10), u(pfwire.FTimestampClockID, 3), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2), threadDesc(5, 2))),
			"clock 3, which no earlier ClockSnapshot relates to BOOTTIME"},
		{"snapshot packet with an event", cat(g[0], g[1], frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2),
			snapshotOf(clockReading(pfwire.ClockBoottime, 3000, false, 0)), msg(pfwire.FTrackEvent, u(pfwire.FTEType, pfwire.TypeInstant), str(pfwire.FTEName, "x")))),
			"also holds a track event or descriptor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.data)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDecodeClocks: units, a builtin clock converted through the latest
// snapshot at or before the time, and an incremental clock whose deltas do
// not accumulate before a snapshot declares it.
func TestDecodeClocks(t *testing.T) {
	units := cat(
		frame(u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 1),
			snapshotOf(clockReading(pfwire.ClockBoottime, 5000, false, 0), clockReading(pfwire.ClockIncremental, 5, true, 1000)),
			defaultsOf(pfwire.ClockIncremental, 5)),
		frame(u(pfwire.FTimestamp, 2), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2)),
		frame(u(pfwire.FTimestamp, 3), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2)),
		// An absolute BOOTTIME time in between leaves the clock at 7000.
		frame(u(pfwire.FTimestamp, 6500), u(pfwire.FTimestampClockID, pfwire.ClockBoottime), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2)),
		frame(u(pfwire.FTimestamp, 1), u(pfwire.FSequenceID, 1), u(pfwire.FSequenceFlags, 2)))
	require.Equal(t, []int64{-1, 7000, 10000, 6500, 11000}, times(t, units))

	monotonic := cat(
		frame(snapshotOf(clockReading(pfwire.ClockBoottime, 1000, false, 0), clockReading(3, 500, false, 0))),
		frame(u(pfwire.FTimestamp, 600), u(pfwire.FTimestampClockID, 3)),
		frame(snapshotOf(clockReading(pfwire.ClockBoottime, 5000, false, 0), clockReading(3, 1000, false, 0))),
		frame(u(pfwire.FTimestamp, 1500), u(pfwire.FTimestampClockID, 3)),
		frame(u(pfwire.FTimestamp, 700), u(pfwire.FTimestampClockID, 3)),
		frame(u(pfwire.FTimestamp, 400), u(pfwire.FTimestampClockID, 3)))
	require.Equal(t, []int64{-1, 1100, -1, 5500, 1200, 900}, times(t, monotonic))

	late := cat(
		frame(u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 1), defaultsOf(pfwire.ClockIncremental, 5)),
		frame(u(pfwire.FTimestamp, 40), u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 2)),
		frame(u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 2),
			snapshotOf(clockReading(pfwire.ClockBoottime, 100, false, 0), clockReading(pfwire.ClockIncremental, 100, true, 0))),
		frame(u(pfwire.FTimestamp, 5), u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 2)),
		// A clear drops the defaults: back on the trace clock.
		frame(u(pfwire.FTimestamp, 77), u(pfwire.FSequenceID, 2), u(pfwire.FSequenceFlags, 1)))
	require.Equal(t, []int64{-1, -2, -1, 105, 77}, times(t, late))
}
