package perfetto

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wsched/wsched/trace/internal/problems"
)

// Hand-built packets for checker tests.

func frame(body ...[]byte) []byte {
	var p []byte
	for _, b := range body {
		p = append(p, b...)
	}
	return appendBytesField(nil, fTracePacket, p)
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
	return msg(fTrackDescriptor, u(fTDUUID, uuid), msg(fTDThread, u(fThDPid, 1), u(fThDTid, tid), str(fThDName, "t")))
}

func nameDef(iid uint64, name string) []byte {
	return msg(fInternedData, msg(fIDNames, u(fINIID, iid), str(fINName, name)))
}

func begin(ts, track, nameIID uint64, extra ...[]byte) []byte {
	return msg(fTrackEvent, append([][]byte{u(fTEType, typeSliceBegin), u(fTETrackUUID, track), u(fTENameIID, nameIID)}, extra...)...)
}

func end(track uint64, extra ...[]byte) []byte {
	return msg(fTrackEvent, append([][]byte{u(fTEType, typeSliceEnd), u(fTETrackUUID, track)}, extra...)...)
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
		frame(u(fTimestamp, 0), u(fSequenceID, 1), u(fSequenceFlags, 1), threadDesc(5, 2)),
		frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"), begin(10, 5, 1)),
		frame(u(fTimestamp, 20), u(fSequenceID, 1), end(5)),
	}
}

func TestCheckRules(t *testing.T) {
	if _, err := Check(cat(good()...)); err != nil {
		t.Fatalf("valid trace rejected: %v", err)
	}
	g := good()
	counterDesc := frame(u(fTimestamp, 0), u(fSequenceID, 2), u(fSequenceFlags, 1),
		msg(fTrackDescriptor, u(fTDUUID, 9), msg(fTDCounter, u(fCDUnit, 2))))
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"garbage", []byte("hello world"), "not a trace packet record"},
		{"truncated", cat(g...)[:len(cat(g...))-3], "malformed"},
		{"no sequence id", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceFlags, 2), nameDef(1, "A"), begin(10, 5, 1)), g[2]),
			"without trusted_packet_sequence_id"},
		{"first packet without clear", cat(frame(u(fTimestamp, 0), u(fSequenceID, 1), threadDesc(5, 2)), g[1], g[2]),
			"does not set SEQ_INCREMENTAL_STATE_CLEARED"},
		{"iid used without flag 2", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), nameDef(1, "A"), begin(10, 5, 1)), g[2]),
			"without SEQ_NEEDS_INCREMENTAL_STATE"},
		{"iid undefined", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), begin(10, 5, 1)), g[2]),
			"name iid 1 not defined earlier"},
		{"iid defined on another sequence", cat(g[0],
			frame(u(fTimestamp, 5), u(fSequenceID, 3), u(fSequenceFlags, 3), nameDef(1, "A")),
			frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), begin(10, 5, 1)), g[2]),
			"name iid 1 not defined earlier on sequence 1"},
		{"packed flow ids", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, msg(fTEFlowIDs, protowire.AppendFixed64(nil, 7)))), g[2],
			frame(u(fTimestamp, 30), u(fSequenceID, 1), u(fSequenceFlags, 2), begin(30, 5, 1, f64(fTETermFlowIDs, 7))),
			frame(u(fTimestamp, 40), u(fSequenceID, 1), end(5))),
			"flow_ids is packed"},
		{"packed category iids", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			msg(fInternedData, msg(fIDCategories, u(fINIID, 1), str(fINName, "c"))),
			begin(10, 5, 1, msg(fTECategoryIIDs, protowire.AppendVarint(nil, 1)))), g[2]),
			"category_iids is packed"},
		{"flow id as varint", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(fTEFlowIDs, 7))), g[2]),
			"wire type 0, want 1"},
		{"terminating flow id as varint", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(fTETermFlowIDs, 7))), g[2]),
			"TrackEvent.48 has wire type 0, want 1"},
		{"packed terminating flow ids", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, f64(fTEFlowIDs, 7))), g[2],
			frame(u(fTimestamp, 30), u(fSequenceID, 1), u(fSequenceFlags, 2), begin(30, 5, 1, msg(fTETermFlowIDs, protowire.AppendFixed64(nil, 7)))),
			frame(u(fTimestamp, 40), u(fSequenceID, 1), end(5))),
			"terminating_flow_ids is packed"},
		{"one-ended flow", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, f64(fTEFlowIDs, 7))), g[2]),
			"flow 0x7 has only one end"},
		{"undescribed track", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"), begin(10, 6, 1)),
			frame(u(fTimestamp, 20), u(fSequenceID, 1), end(6))),
			"track 6 is used but has no descriptor"},
		{"missing track uuid", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), msg(fTrackEvent, u(fTEType, typeInstant)))),
			"without track_uuid"},
		{"thread without tid", cat(frame(u(fTimestamp, 0), u(fSequenceID, 1), u(fSequenceFlags, 1),
			msg(fTrackDescriptor, u(fTDUUID, 5), msg(fTDThread, u(fThDPid, 1)))), g[1], g[2]),
			"without pid and tid"},
		{"tid out of range", cat(frame(u(fTimestamp, 0), u(fSequenceID, 1), u(fSequenceFlags, 1), threadDesc(5, 1<<40)), g[1], g[2]),
			"out of int32 range"},
		{"duplicate tid", cat(g[0], frame(u(fTimestamp, 0), u(fSequenceID, 1), threadDesc(6, 2)), g[1], g[2]),
			"share pid 1 tid 2"},
		{"process without pid", cat(g[0], frame(u(fTimestamp, 0), u(fSequenceID, 1),
			msg(fTrackDescriptor, u(fTDUUID, 1), msg(fTDProcess, str(fPDName, "p")))), g[1], g[2]),
			"process track 1 without pid"},
		{"end carries a name", cat(g[0], g[1], frame(u(fTimestamp, 20), u(fSequenceID, 1), u(fSequenceFlags, 2), end(5, u(fTENameIID, 1)))),
			"carries 1 field(s)"},
		{"unbalanced end", cat(g[0], g[1], g[2], frame(u(fTimestamp, 30), u(fSequenceID, 1), end(5))),
			"with no open slice"},
		{"slice left open", cat(g[0], g[1]), "ends with 1 open slice"},
		{"end before begin in time", cat(g[0], frame(u(fTimestamp, 20), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"), begin(20, 5, 1)),
			frame(u(fTimestamp, 10), u(fSequenceID, 1), end(5))),
			"with no open slice"},
		{"counter on slice track", cat(g[0], g[1], g[2], frame(u(fTimestamp, 30), u(fSequenceID, 1),
			msg(fTrackEvent, u(fTEType, typeCounter), u(fTETrackUUID, 5), u(fTECounterValue, 3)))),
			"counter event on non-counter track 5"},
		{"slice on counter track", cat(g[0], counterDesc, frame(u(fTimestamp, 10), u(fSequenceID, 2),
			msg(fTrackEvent, u(fTEType, typeInstant), u(fTETrackUUID, 9), str(fTEName, "x")))),
			"slice event on counter track 9"},
		{"counter without value", cat(g[0], counterDesc, frame(u(fTimestamp, 10), u(fSequenceID, 2),
			msg(fTrackEvent, u(fTEType, typeCounter), u(fTETrackUUID, 9)))),
			"without a value"},
		{"clock id without snapshot", cat(g[0], frame(u(fTimestamp, 5), u(fSequenceID, 1), u(fTimestampClockID, 64))),
			"no ClockSnapshot"},
		{"track described twice", cat(g[0], frame(u(fTimestamp, 0), u(fSequenceID, 1), threadDesc(5, 3)), g[1], g[2]),
			"track 5 described twice"},
		{"unknown event type", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), msg(fTrackEvent, u(fTEType, 7), u(fTETrackUUID, 5)))),
			"track event with type 7"},
		{"terminating flow without source", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, f64(fTETermFlowIDs, 7))), g[2],
			frame(u(fTimestamp, 30), u(fSequenceID, 1), u(fSequenceFlags, 2), begin(30, 5, 1, f64(fTETermFlowIDs, 7))),
			frame(u(fTimestamp, 40), u(fSequenceID, 1), end(5))),
			"terminating flow 0x7 has no source"},
		{"iid 0 defined", cat(g[0], frame(u(fTimestamp, 5), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(0, "Z")), g[1], g[2]),
			"event name interned with iid 0"},
		{"definition without flag 2", cat(g[0], frame(u(fTimestamp, 5), u(fSequenceID, 1), nameDef(1, "A")), g[1], g[2]),
			"defines interned data without SEQ_NEEDS_INCREMENTAL_STATE"},
		{"interned data outside a sequence", cat(g[0], frame(u(fTimestamp, 5), u(fSequenceFlags, 2), nameDef(1, "A")), g[1], g[2]),
			"interned data outside a sequence"},
		{"iid used after the state was cleared", cat(g[0], g[1], g[2],
			frame(u(fTimestamp, 30), u(fSequenceID, 1), u(fSequenceFlags, 3), begin(30, 5, 1)),
			frame(u(fTimestamp, 40), u(fSequenceID, 1), end(5))),
			"name iid 1 not defined earlier on sequence 1"},
		{"category iid undefined", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, u(fTECategoryIIDs, 4))), g[2]),
			"category iid 4 not defined"},
		{"annotation name iid undefined", cat(g[0], frame(u(fTimestamp, 10), u(fSequenceID, 1), u(fSequenceFlags, 2), nameDef(1, "A"),
			begin(10, 5, 1, msg(fTEAnnotations, u(fDANameIID, 3), u(fDAInt, 1)))), g[2]),
			"debug annotation name iid 3 not defined"},
		{"event without timestamp", cat(g[0], frame(u(fSequenceID, 1), msg(fTrackEvent, u(fTEType, typeInstant), u(fTETrackUUID, 5), str(fTEName, "x")))),
			"without timestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.data)
			if err == nil {
				t.Fatalf("accepted; want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestCheckErrorTruncatesList(t *testing.T) {
	g := good()
	var parts [][]byte
	parts = append(parts, g...)
	for i := 0; i < 50; i++ {
		parts = append(parts, frame(u(fTimestamp, 30), u(fSequenceID, 1), end(5)))
	}
	_, err := Check(cat(parts...))
	ce, ok := err.(*CheckError)
	if !ok || ce.Total != 50 || len(ce.Problems) != problems.Max || !strings.Contains(err.Error(), "and 30 more") {
		t.Fatalf("err = %v", err)
	}
}
