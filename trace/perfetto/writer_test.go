package perfetto

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/pfwire"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto/perfettopb"
)

// writeChecked writes s, runs the checker and the schema check, and
// returns the bytes and stats.
func writeChecked(t *testing.T, s *trace.Snapshot) ([]byte, Stats, CheckStats) {
	t.Helper()
	return writeCheckedWith(t, s, Options{})
}

// writeCheckedWith is writeChecked with opts (Pid 4242 unless set).
func writeCheckedWith(t *testing.T, s *trace.Snapshot, opts Options) ([]byte, Stats, CheckStats) {
	t.Helper()
	if opts.Pid == 0 {
		opts.Pid = 4242
	}
	var buf bytes.Buffer
	st, err := Write(&buf, s, opts)
	require.NoError(t, err, "Write")
	require.Equal(t, int64(buf.Len()), st.Bytes, "Stats.Bytes against the bytes written")
	cs, err := Check(buf.Bytes())
	require.NoError(t, err, "Check")
	require.Equal(t, st.Packets, cs.Packets, "packets the checker saw against those the writer wrote")
	checkSchema(t, buf.Bytes())
	return buf.Bytes(), st, cs
}

// checkSchema decodes data with the generated types and fails on any field
// the schema does not know (a wrong field number or wire type in the
// hand-written encoder shows up as an unknown field).
func checkSchema(t *testing.T, data []byte) {
	t.Helper()
	var tr perfettopb.Trace
	require.NoError(t, proto.Unmarshal(data, &tr), "proto.Unmarshal")
	var walk func(m protoreflect.Message, path string)
	walk = func(m protoreflect.Message, path string) {
		require.Empty(t, m.GetUnknown(), "%s has unknown fields", path)
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message(), path+"."+string(fd.Name()))
				}
			case fd.Message() != nil:
				walk(v.Message(), path+"."+string(fd.Name()))
			}
			return true
		})
	}
	walk(tr.ProtoReflect(), "Trace")
	require.NotEmpty(t, tr.Packet, "no packets")
}

func TestWriteSynthetic(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 3, Cycles: 2, Seed: 1, Heavy: 30000})
	_, st, cs := writeChecked(t, res.Snapshot)
	assert.Equal(t, res.Packets, st.Slices, "slices against packets executed")
	assert.Zero(t, st.Orphans, "orphans")
	assert.Zero(t, st.Dropped, "dropped")
	assert.Zero(t, cs.PrevDropped, "previous_packet_dropped marks")
	assert.Equal(t, 4, cs.Sequences, "sequences: control + 3 workers")
	assert.NotZero(t, res.Steals, "steals in the synthetic run")
	assert.Equal(t, res.Steals, cs.Flows, "flows against steals")
	assert.NotZero(t, cs.Counters, "counter events")
}

// TestBytesPerSlice measures the size of packet slices on a larger run; the
// budget is 30 bytes per slice (BEGIN + END packets, interning included).
//
//	go test -run BytesPerSlice -v ./trace/perfetto/
func TestBytesPerSlice(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 4, Cycles: 3, Packets: 300, Seed: 2, NoCounters: true})
	_, st, _ := writeChecked(t, res.Snapshot)
	bps := st.BytesPerSlice()
	t.Logf("%d slices: %.1f bytes/slice (BEGIN+END), %.1f file bytes/slice, %d bytes total",
		st.Slices, bps, float64(st.Bytes)/float64(st.Slices), st.Bytes)
	require.LessOrEqual(t, bps, 30.0, "bytes per packet slice, budget 30")
}

// TestBytesPerSliceLongPackets: the same budget when packets run 20 µs to
// 1 ms (timestamp deltas of 3 varint bytes instead of 2, as on the demo's
// traces), with counters, steals and wakes.
func TestBytesPerSliceLongPackets(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Cycles: 3, Packets: 300, Seed: 2})
	stretch(res.Snapshot, 50)
	_, st, _ := writeChecked(t, res.Snapshot)
	t.Logf("%d slices: %.1f bytes/slice (BEGIN+END), %.1f file bytes/slice", st.Slices, st.BytesPerSlice(), float64(st.Bytes)/float64(st.Slices))
	require.LessOrEqual(t, st.BytesPerSlice(), 30.0, "bytes per packet slice, budget 30")
}

// shift moves every event of s later by d ns, as if the recorder had been
// running for d ns before.
func shift(s *trace.Snapshot, d int64) {
	for i := range s.Buffers {
		b := &s.Buffers[i]
		for j := range b.Events {
			b.Events[j].Time += d
		}
		if b.DropStart != 0 || b.DropEnd != 0 {
			b.DropStart += d
			b.DropEnd += d
		}
	}
	s.End += d
}

// stretch multiplies every time in s by k.
func stretch(s *trace.Snapshot, k int64) {
	for i := range s.Buffers {
		b := &s.Buffers[i]
		for j := range b.Events {
			b.Events[j].Time *= k
		}
		b.DropStart *= k
		b.DropEnd *= k
	}
	s.End *= k
}

// TestBytesPerSliceByRecorderAge: timestamps are deltas on each sequence,
// so a slice costs the same however long the recorder has run (absolute
// varints grew by 2 bytes a slice for every 7 more bits of age), and a
// flight recorder that lost its oldest events costs the same too.
func TestBytesPerSliceByRecorderAge(t *testing.T) {
	cfg := synth.Config{Workers: 4, Cycles: 2, Packets: 200, Seed: 2, NoCounters: true}
	var young float64
	for _, age := range []int64{0, 1e9, 40e9, 2 * 3600e9} {
		res := synth.Generate(cfg)
		shift(res.Snapshot, age)
		_, st, _ := writeChecked(t, res.Snapshot)
		t.Logf("recorder age %v: %.2f bytes/slice", time.Duration(age), st.BytesPerSlice())
		if age == 0 {
			young = st.BytesPerSlice()
		}
		require.LessOrEqual(t, st.BytesPerSlice(), 30.0, "recorder age %v", time.Duration(age))
		require.InDelta(t, young, st.BytesPerSlice(), 0.01, "recorder age %v", time.Duration(age))
	}
	ow := cfg
	ow.Overwrite, ow.MaxBytes = true, 64<<10
	res := synth.Generate(ow)
	require.NotZero(t, res.Snapshot.Dropped(), "no events overwritten")
	shift(res.Snapshot, 2*3600e9)
	_, st, _ := writeChecked(t, res.Snapshot)
	t.Logf("flight recorder after 2 h: %.2f bytes/slice", st.BytesPerSlice())
	require.LessOrEqual(t, st.BytesPerSlice(), 30.0)
}

// checkDropMarks checks that previous_packet_dropped marks exactly the
// sequences of the buffers that lost events (worker i writes sequence
// seqWorker0+i, the control buffer seqControl), and that the process track
// carries the summary with the total.
func checkDropMarks(t *testing.T, s *trace.Snapshot, data []byte) {
	t.Helper()
	want := map[uint32]bool{}
	for _, b := range s.Buffers {
		if b.Dropped > 0 {
			seq := uint32(seqControl)
			if b.Worker >= 0 {
				seq = uint32(seqWorker0 + b.Worker)
			}
			want[seq] = true
		}
	}
	got := map[uint32]bool{}
	var summary uint64
	annots := map[uint64]string{}
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		if p.PrevDropped {
			got[p.Seq] = true
		}
		for _, e := range p.Interned.AnnotationNames {
			if p.Seq == seqControl {
				annots[e.IID] = e.Name
			}
		}
		if p.HasEvent && p.Event.TrackUUID == uuidProcess {
			for _, a := range p.Event.Annotations {
				if annots[a.NameIID] == ArgDropped {
					summary = a.Uint
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, want, "no buffer lost events")
	assert.Equal(t, want, got, "sequences marked previous_packet_dropped")
	assert.Equal(t, s.Dropped(), summary, "drop summary against the snapshot's count")
}

func TestWriteDropsStop(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10})
	s := res.Snapshot
	require.NotZero(t, s.Dropped(), "expected drops with a 16 KiB cap")
	data, st, cs := writeChecked(t, s)
	assert.NotZero(t, cs.PrevDropped, "no packet marks previous_packet_dropped")
	assert.Equal(t, s.Dropped(), st.Dropped, "Stats.Dropped against the snapshot's")
	assert.True(t, bytes.Contains(data, []byte(NameDropped)), "drop summary missing")
	assert.True(t, bytes.Contains(data, []byte(NameFull)), "drop marker missing")
	checkDropMarks(t, s, data)
}

func TestWriteDropsOverwrite(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Cycles: 3, Seed: 4, MaxBytes: 16 << 10, Overwrite: true})
	s := res.Snapshot
	require.NotZero(t, s.Dropped(), "expected drops with a 16 KiB cap")
	data, _, cs := writeChecked(t, s)
	assert.NotZero(t, cs.PrevDropped, "overwrite drops: no previous_packet_dropped mark")
	assert.True(t, bytes.Contains(data, []byte(NameWrapped)), "overwrite drops: no %q marker", NameWrapped)
	assert.True(t, bytes.Contains(data, []byte("overwrite")), "overwrite drops: the policy is not named")
	checkDropMarks(t, s, data)
}

// TestWriteMisorderedHooks feeds hooks out of order (END first, unclosed
// slices, stage close of a stage that is not innermost): the output must
// still pass the checker.
func TestWriteMisorderedHooks(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(1, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { now += 10; return now }})
	w, c := r.Worker(0), r.Control()
	a := r.Intern("A")
	w.PacketEnd()
	w.Unpark()
	c.CycleEnd(1)
	c.StageOpen(1, a)
	c.StageOpen(2, a)
	c.StageClose(1)
	w.Park()
	w.PacketBegin(a, 1, 77) // flow 77 has no source: dropped from output
	w.Steal(0, 1, 78)       // flow 78 has no destination
	c.CycleBegin(1)
	c.CycleBegin(2)
	_, st, cs := writeChecked(t, r.Snapshot())
	require.Equal(t, 2, st.Orphans, "orphans")
	require.Zero(t, cs.Flows, "flows")
}

func TestWriteFile(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Seed: 5})
	dir := t.TempDir()
	path := filepath.Join(dir, "out.pftrace")
	st, err := WriteFile(path, res.Snapshot, Options{})
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, st.Bytes, int64(len(data)), "bytes read back against bytes written")
	_, err = Check(data)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "file mode")
	// A failed write leaves the old file alone and no temporary file.
	_, err = WriteFile(path, nil, Options{})
	require.Error(t, err, "nil snapshot accepted")
	again, _ := os.ReadFile(path)
	require.Equal(t, data, again, "failed WriteFile changed the existing file")
	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "temporary file left behind: %v", entries)
	_, err = WriteFile(filepath.Join(dir, "missing", "x.pftrace"), res.Snapshot, Options{})
	require.Error(t, err, "WriteFile into a missing directory succeeded")
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Cycles: 5, Packets: 200, Seed: 6})
	_, err := Write(&failWriter{n: 100 << 10}, res.Snapshot, Options{})
	require.ErrorContains(t, err, "disk full", "Write's error")
	_, err = Write(&bytes.Buffer{}, nil, Options{})
	require.Error(t, err, "nil snapshot accepted")
}

// TestWriteTimeOrder: the writer emits packets in non-decreasing timestamp
// order over the whole file (descriptors at time 0 first).
func TestWriteTimeOrder(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 3, Cycles: 2, Seed: 7})
	data, _, _ := writeChecked(t, res.Snapshot)
	var last uint64
	err := pfwire.Decode(data, func(p *pfwire.Packet) error {
		require.GreaterOrEqual(t, p.Timestamp, last, "packet %d's timestamp", p.Index)
		last = p.Timestamp
		return nil
	})
	require.NoError(t, err)
}

// TestStealArrowSources: a stamped steal's arrow starts at a "queued"
// instant at the birth time, on the spawning worker's track or, for a
// packet added from outside the workers, on the control track, written in
// time order on the thief's sequence; the steal instant then carries no
// flow. An unstamped steal (origin below -1) keeps the arrow from a
// "stolen" instant on the victim at the steal.
func TestStealArrowSources(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	w0, w1, c := r.Worker(0), r.Worker(1), r.Control()
	a := r.Intern("A")
	at := func(t int64) { now = t }
	at(50)
	w1.PacketBegin(a, 1, 0)
	at(100)
	fromCtl := c.Stamp() // an Add from outside
	at(200)
	fromW1 := w1.Stamp() // a Spawn on worker 1
	at(600)
	w0.StealStamped(1, 1, 1<<40|1, fromCtl, -1)
	w0.PacketBegin(a, 1, 1<<40|1)
	at(700)
	w0.PacketEnd()
	w0.StealStamped(1, 2, 1<<40|2, fromW1, 1)
	w0.PacketBegin(a, 1, 1<<40|2)
	at(800)
	w0.PacketEnd()
	w0.StealStamped(1, 1, 1<<40|3, 0, -2) // unstamped
	w0.PacketBegin(a, 1, 1<<40|3)
	at(900)
	w0.PacketEnd()
	w1.PacketEnd()
	data, _, cs := writeChecked(t, r.Snapshot())
	require.Equal(t, 3, cs.Flows, "flows")
	text, err := dump(data)
	require.NoError(t, err)
	for _, want := range []string{
		` ts=100(+100) seq=2 flags=2 intern(n=1 c=0 a=2) INSTANT track=2 "queued" thief=0 victim=1 flow_out=1099511627777`,
		` ts=200(+100) seq=2 flags=2 INSTANT track=17 "queued" thief=0 victim=1 flow_out=1099511627778`,
		` ts=600(+400) seq=2 flags=2 intern(n=1 c=0 a=1) INSTANT track=(16) "steal" victim=1 moved=1` + "\n",
		` ts=700(+0) seq=2 flags=2 INSTANT track=(16) "steal" victim=1 moved=2` + "\n",
		` ts=800(+0) seq=2 flags=2 INSTANT track=(16) "steal" victim=1 moved=1` + "\n",
		` ts=800(+0) seq=2 flags=2 intern(n=1 c=0 a=0) INSTANT track=17 "stolen" thief=0 moved=1 flow_out=1099511627779`,
	} {
		assert.Contains(t, text, want)
	}
	var last uint64
	require.NoError(t, pfwire.Decode(data, func(p *pfwire.Packet) error {
		require.GreaterOrEqual(t, p.Timestamp, last, "packet %d's timestamp", p.Index)
		last = p.Timestamp
		return nil
	}))
}

// TestStealArrowBirthBeforeWindow: in Overwrite mode, a birth older than
// the oldest event kept is not drawn; the arrow starts at the steal.
func TestStealArrowBirthBeforeWindow(t *testing.T) {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 4096, Overwrite: true, Clock: func() int64 { return now }})
	w0, w1 := r.Worker(0), r.Worker(1)
	a := r.Intern("A")
	now = 10
	born := w0.Stamp()
	for i := range 500 { // wraps worker 0's buffer several times
		now = int64(100 + 10*i)
		w0.PacketBegin(a, 1, 0)
		w0.PacketEnd()
	}
	w1.StealStamped(0, 1, 2<<40|1, born, 0)
	w1.PacketBegin(a, 1, 2<<40|1)
	now += 10
	w1.PacketEnd()
	s := r.Snapshot()
	require.NotZero(t, s.Buffers[0].Dropped, "worker 0 did not wrap")
	data, _, cs := writeChecked(t, s)
	text, err := dump(data)
	require.NoError(t, err)
	// One arrow, from a "stolen" instant, and no "queued" one.
	require.Equal(t, 1, cs.Flows, "flows")
	require.NotContains(t, text, `"queued"`)
	require.Contains(t, text, `"stolen" thief=1 moved=1 flow_out=`)
}
