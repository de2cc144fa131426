package perfetto

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/internal/timeline"
	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

// wantEvent is what the writer must have written for one timeline op: its
// time, event type and sequence.
type wantEvent struct {
	t   int64
	typ int32
	seq uint32
}

func walkEvents(s *trace.Snapshot) []wantEvent {
	var out []wantEvent
	timeline.Walk(s, func(op *timeline.Op) {
		typ := map[timeline.OpKind]int32{timeline.Begin: pfwire.TypeSliceBegin, timeline.End: pfwire.TypeSliceEnd,
			timeline.Instant: pfwire.TypeInstant, timeline.Counter: pfwire.TypeCounter}[op.Kind]
		seq := uint32(seqControl)
		if op.Buffer >= 0 && op.Buffer < s.Workers() {
			seq = uint32(seqWorker0 + op.Buffer)
		}
		out = append(out, wantEvent{op.Time, typ, seq})
	})
	return out
}

func decodedEvents(t *testing.T, data []byte) []wantEvent {
	t.Helper()
	var out []wantEvent
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		if p.HasEvent {
			require.False(t, p.Unresolved, "packet %d", p.Index)
			out = append(out, wantEvent{int64(p.Timestamp), p.Event.Type, p.Seq})
		}
		return nil
	}))
	return out
}

// pbTimes resolves every packet's timestamp from the generated types
// (proto.Unmarshal of the whole Trace), independently of Decode: a
// sequence's incremental clock starts at its ClockSnapshot's reading, which
// must equal BOOTTIME's, and each packet on it adds its delta; a packet on
// BOOTTIME (clock 6) or with no clock carries its time. Packets with a
// snapshot get -1.
func pbTimes(t *testing.T, data []byte) []int64 {
	t.Helper()
	var tr perfettopb.Trace
	require.NoError(t, proto.Unmarshal(data, &tr))
	clock := map[uint32]uint64{}    // sequence → time of its incremental clock
	defClock := map[uint32]uint32{} // sequence → default clock id
	var out []int64
	for i, p := range tr.Packet {
		seq := p.GetTrustedPacketSequenceId()
		if p.GetSequenceFlags()&uint32(perfettopb.TracePacket_SEQ_INCREMENTAL_STATE_CLEARED) != 0 {
			delete(defClock, seq)
		}
		if d := p.GetTracePacketDefaults(); d != nil {
			defClock[seq] = d.GetTimestampClockId()
		}
		if cs := p.GetClockSnapshot(); cs != nil {
			readings := map[uint32]uint64{}
			for _, c := range cs.GetClocks() {
				readings[c.GetClockId()] = c.GetTimestamp()
				require.Equal(t, c.GetClockId() == pfwire.ClockIncremental, c.GetIsIncremental(), "packet %d clock %d", i, c.GetClockId())
			}
			require.Len(t, readings, 2, "packet %d", i)
			require.Equal(t, readings[pfwire.ClockBoottime], readings[pfwire.ClockIncremental], "packet %d", i)
			clock[seq] = readings[pfwire.ClockIncremental]
			out = append(out, -1)
			continue
		}
		id := defClock[seq]
		if p.TimestampClockId != nil {
			id = p.GetTimestampClockId()
		}
		switch id {
		case pfwire.ClockIncremental:
			clock[seq] += p.GetTimestamp()
			out = append(out, int64(clock[seq]))
		case 0, pfwire.ClockBoottime:
			out = append(out, int64(p.GetTimestamp()))
		default:
			require.FailNow(t, fmt.Sprintf("packet %d on clock %d", i, id))
		}
	}
	return out
}

// checkTimes checks, for data written from s, that the events Decode
// resolves are the timeline's ops (time, type, sequence) in order, and
// that the generated types resolve every packet's time as Decode does.
func checkTimes(t *testing.T, s *trace.Snapshot, data []byte) {
	t.Helper()
	require.Equal(t, walkEvents(s), decodedEvents(t, data))
	pb := pbTimes(t, data)
	i := 0
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		if !p.ClockSnapshot {
			require.Equal(t, pb[i], int64(p.Timestamp), "packet %d", i)
		}
		i++
		return nil
	}))
	require.Equal(t, len(pb), i)
}

// TestTimestampsRoundTrip writes synthetic runs (plain, a stopped buffer, a
// wrapped flight recorder) and reads their delta timestamps back, through
// Decode and through proto.Unmarshal of the whole Trace into the generated
// types: both give every op's time.
func TestTimestampsRoundTrip(t *testing.T) {
	for name, cfg := range map[string]synth.Config{
		"plain":     {Workers: 3, Cycles: 2, Seed: 1, Heavy: 30000},
		"stop":      {Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10},
		"overwrite": {Workers: 2, Cycles: 3, Seed: 4, MaxBytes: 16 << 10, Overwrite: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := synth.Generate(cfg).Snapshot
			shift(s, 3600e9) // an hour-old recorder: deltas stay small
			data, _, _ := writeChecked(t, s)
			checkTimes(t, s, data)
		})
	}
}

// TestDropRestartsSequence: a buffer that lost events restarts its
// sequence's incremental state (SEQ_INCREMENTAL_STATE_CLEARED, a new
// ClockSnapshot and defaults) in the packet that marks the loss, so
// Perfetto, which skips a sequence's packets that need incremental state
// after a loss until the next clear, keeps them; names are interned again.
func TestDropRestartsSequence(t *testing.T) {
	s := synth.Generate(synth.Config{Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10}).Snapshot
	require.NotZero(t, s.Dropped())
	data, _, cs := writeChecked(t, s)
	require.NotZero(t, cs.PrevDropped)
	marks := 0
	afterMark := map[uint32]bool{}
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		if p.PrevDropped {
			marks++
			assert.NotZero(t, p.Flags&pfwire.SeqIncrementalStateCleared, "packet %d", p.Index)
			assert.True(t, p.ClockSnapshot && p.HasDefaults, "packet %d", p.Index)
			afterMark[p.Seq] = true
			return nil
		}
		if afterMark[p.Seq] && p.HasEvent && p.Event.NameIID != 0 {
			// The first named event after the restart defines its name.
			assert.True(t, p.Interned.Present, "packet %d", p.Index)
			afterMark[p.Seq] = false
		}
		return nil
	}))
	require.Equal(t, cs.PrevDropped, marks)
}

// TestTimestampBeforeSequenceClock: an op earlier than the previous packet
// of its sequence is written with an absolute BOOTTIME timestamp and leaves
// the sequence's clock alone. Here the control buffer's stop mark is dated
// after the snapshot's end, so the stage slice it left open is closed, and
// the drop summary written, at the end, after the mark on the same
// sequence.
func TestTimestampBeforeSequenceClock(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(1, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { now += 100; return now }})
	a := r.Intern("A")
	r.Control().StageOpen(1, a)
	r.Worker(0).PacketBegin(a, 1, 0)
	r.Worker(0).PacketEnd()
	s := r.Snapshot()
	for i := range s.Buffers {
		if b := &s.Buffers[i]; b.Worker < 0 {
			b.Dropped, b.DropStart, b.DropEnd = 1, s.End+5000, s.End+6000
		}
	}
	data, _, _ := writeChecked(t, s)
	checkTimes(t, s, data)
	absolute := 0
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		if p.HasClockID {
			absolute++
			assert.Equal(t, uint32(pfwire.ClockBoottime), p.ClockID)
			assert.Equal(t, uint64(s.End), p.Timestamp)
			assert.False(t, p.Delta)
		}
		return nil
	}))
	require.Equal(t, 2, absolute, "packets that went back in time")
}

// eventLine is an event as a reader sees it, whatever the encoding.
type eventLine struct {
	t           uint64
	seq         uint32
	typ         int32
	track       uint64
	name, cat   string
	flows, term []uint64
}

func eventLines(t *testing.T, data []byte) []eventLine {
	t.Helper()
	names := map[[2]uint64]string{}
	cats := map[[2]uint64]string{}
	var out []eventLine
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		for _, e := range p.Interned.Names {
			names[[2]uint64{uint64(p.Seq), e.IID}] = e.Name
		}
		for _, e := range p.Interned.Categories {
			cats[[2]uint64{uint64(p.Seq), e.IID}] = e.Name
		}
		if !p.HasEvent {
			return nil
		}
		e := &p.Event
		l := eventLine{t: p.Timestamp, seq: p.Seq, typ: e.Type, track: e.TrackUUID,
			name:  names[[2]uint64{uint64(p.Seq), e.NameIID}],
			flows: append([]uint64(nil), e.FlowIDs...), term: append([]uint64(nil), e.TerminatingFlowIDs...)}
		for _, c := range e.CategoryIIDs {
			l.cat += cats[[2]uint64{uint64(p.Seq), c}]
		}
		out = append(out, l)
		return nil
	}))
	return out
}

// TestAbsoluteTimestampsStillDecode: testdata/small-absolute.pftrace.golden is the
// golden trace as the writer encoded it before delta timestamps (absolute
// timestamps, every event naming its track); it is kept as it is. Decode
// and Check still read it, and its events are the current golden's.
func TestAbsoluteTimestampsStillDecode(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "small-absolute.pftrace.golden"))
	require.NoError(t, err)
	cur, err := os.ReadFile(filepath.Join("testdata", "small.pftrace.golden"))
	require.NoError(t, err)
	_, err = Check(old)
	require.NoError(t, err)
	require.NoError(t, pfwire.Decode(old, func(p *pfwire.Packet) error {
		assert.False(t, p.Delta || p.Event.DefaultTrack || p.Unresolved, "packet %d", p.Index)
		return nil
	}))
	require.Equal(t, eventLines(t, old), eventLines(t, cur))
	require.Less(t, len(cur), len(old)+100, "the header's clock packets cost more than the deltas saved")
}

// TestProtocDecodesOfficialProtos decodes the golden trace with protoc and
// Perfetto's own protos, and fails on any field they do not know. It needs
// protoc on PATH and PERFETTO_PROTOS set to a directory holding
// protos/perfetto/trace/trace.proto (a checkout of google/perfetto):
//
//	PERFETTO_PROTOS=~/src/perfetto go test -run Protoc -v ./trace/perfetto/
func TestProtocDecodesOfficialProtos(t *testing.T) {
	root := os.Getenv("PERFETTO_PROTOS")
	protoc, err := exec.LookPath("protoc")
	if root == "" || err != nil {
		t.Skip("set PERFETTO_PROTOS to a google/perfetto checkout and put protoc on PATH to run")
	}
	for _, name := range []string{"small.pftrace.golden", "small-origins.pftrace.golden", "small-absolute.pftrace.golden"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		cmd := exec.Command(protoc, "-I"+root, "--decode=perfetto.protos.Trace", "protos/perfetto/trace/trace.proto")
		cmd.Stdin = bytes.NewReader(data)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "%s: %s", name, stderr.String())
		text := string(out)
		require.NotRegexp(t, regexp.MustCompile(`(?m)^\s*[0-9]+[:{ ]`), text, "%s: fields Perfetto's protos do not know", name)
		packets := 0
		require.NoError(t, pfwire.Decode(data, func(*pfwire.Packet) error { packets++; return nil }))
		require.Equal(t, packets, strings.Count(text, "\npacket {")+1, "%s: packets", name)
		if name == "small-origins.pftrace.golden" {
			for _, want := range []string{"extra_counter_track_uuids: 18", "extra_counter_values: "} {
				require.Contains(t, text, want)
			}
		}
		if name == "small.pftrace.golden" {
			for _, want := range []string{"is_incremental: true", "trace_packet_defaults {", "timestamp_clock_id: 64", "track_event_defaults {"} {
				require.Contains(t, text, want)
			}
		}
	}
}
