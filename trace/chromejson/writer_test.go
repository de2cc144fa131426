package chromejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func writeChecked(t *testing.T, s *trace.Snapshot) ([]byte, Stats, CheckStats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Write(&buf, s, Options{Pid: 4242})
	require.NoError(t, err, "Write")
	require.Equal(t, int64(buf.Len()), st.Bytes, "Stats.Bytes against the bytes written")
	cs, err := Check(buf.Bytes())
	require.NoError(t, err, "Check")
	require.True(t, json.Valid(buf.Bytes()), "invalid JSON")
	return buf.Bytes(), st, cs
}

// TestSameAsPerfetto: the JSON export draws what the Perfetto export draws.
func TestSameAsPerfetto(t *testing.T) {
	for _, cfg := range []synth.Config{
		{Workers: 3, Cycles: 2, Seed: 1, Heavy: 30000},
		{Workers: 2, Cycles: 3, Seed: 3, MaxBytes: 16 << 10},
		{Workers: 2, Cycles: 3, Seed: 4, MaxBytes: 16 << 10, Overwrite: true},
	} {
		res := synth.Generate(cfg)
		_, st, cs := writeChecked(t, res.Snapshot)
		var pb bytes.Buffer
		_, err := perfetto.Write(&pb, res.Snapshot, perfetto.Options{})
		require.NoError(t, err)
		ps, err := perfetto.Check(pb.Bytes())
		require.NoError(t, err)
		// JSON draws flow-source instants as X slices.
		assert.Equal(t, ps.Slices, cs.Slices-cs.Flows, "slices: json %+v vs perfetto %+v", cs, ps)
		assert.Equal(t, ps.Instants, cs.Instants+cs.Flows, "instants: json %+v vs perfetto %+v", cs, ps)
		assert.Equal(t, ps.Counters, cs.Counters, "counters: json vs perfetto")
		assert.Equal(t, ps.Flows, cs.Flows, "flows: json vs perfetto")
		if st.Dropped == 0 {
			assert.Equal(t, res.Packets, st.Slices, "slices against packets run")
		}
	}
}

// TestBytesPerSlice: a packet slice costs what the format says. Its E
// event is `,\n{"ph":"E","ts":T,"pid":P,"tid":I}` and its B event
// `,\n{"ph":"B","ts":T,"pid":P,"tid":I,"name":"N","cat":"C"}`, with
// `,"bind_id":"0xF","flow_in":true` added to a stolen packet's B: T is
// the event's time in µs (appendTS), P is 4242 and I the worker track's
// tid (4243 and up: 4 digits), N the packet's name, C its stage's, and F
// the flow id in 1 to 16 hex digits. Summed over the run's packets that
// bounds the slices' bytes to within the flow ids' digits.
func TestBytesPerSlice(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 4, Cycles: 2, Packets: 300, Seed: 2, NoCounters: true})
	s := res.Snapshot
	_, st, cs := writeChecked(t, s)
	t.Logf("%d slices: %.1f bytes/slice (B+E), %.1f file bytes/slice", st.Slices, st.BytesPerSlice(), float64(st.Bytes)/float64(st.Slices))
	const (
		end    = ",\n" + `{"ph":"E","ts":,"pid":4242,"tid":}`
		begin  = ",\n" + `{"ph":"B","ts":,"pid":4242,"tid":,"name":"","cat":""}`
		flowIn = `,"bind_id":"0x","flow_in":true`
		tid    = 4
	)
	require.Zero(t, s.Dropped(), "every packet's begin and end are in the snapshot")
	stages := map[int]string{}
	for _, e := range s.Control().Events {
		if e.Kind() == trace.KindStageOpen {
			stages[e.Stage()] = s.Name(e.Name())
		}
	}
	var want int64 // the slices' bytes but for the flow ids' digits
	slices, stolen := 0, 0
	for _, b := range s.Buffers[:s.Workers()] {
		for _, e := range b.Events {
			switch e.Kind() {
			case trace.KindPacketBegin:
				slices++
				want += int64(len(begin) + len(appendTS(nil, e.Time)) + tid + len(s.Name(e.Name())) + len(stages[e.Stage()]))
				if e.Flow() != 0 {
					stolen++
					want += int64(len(flowIn))
				}
			case trace.KindPacketEnd:
				want += int64(len(end) + len(appendTS(nil, e.Time)) + tid)
			}
		}
	}
	require.Equal(t, slices, st.Slices, "packet slices")
	require.NotZero(t, stolen, "stolen packets in the synthetic run")
	require.Equal(t, stolen, cs.Flows, "steal arrows: one per stolen packet")
	assert.GreaterOrEqual(t, st.SliceBytes, want+int64(stolen), "packet slices' bytes, the format's least")
	assert.LessOrEqual(t, st.SliceBytes, want+int64(16*stolen), "packet slices' bytes, the format's most")
}

func TestGolden(t *testing.T) {
	data, _, _ := writeChecked(t, synth.Small())
	path := filepath.Join("testdata", "small.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run Golden -update to create it")
	assert.Equal(t, string(want), string(data), "output differs from %s (run with -update and review)", path)
}

func TestWriteFileAndErrors(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Seed: 5})
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	_, err := WriteFile(path, res.Snapshot, Options{})
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
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
	_, err = WriteFile(filepath.Join(dir, "no", "t.json"), res.Snapshot, Options{})
	require.Error(t, err, "WriteFile into a missing directory succeeded")
	_, err = Write(&bytes.Buffer{}, nil, Options{})
	require.Error(t, err, "nil snapshot accepted")
	big := synth.Generate(synth.Config{Workers: 2, Cycles: 5, Packets: 200, Seed: 6})
	_, err = Write(&failWriter{n: 100 << 10}, big.Snapshot, Options{})
	require.ErrorContains(t, err, "disk full", "Write's error")
}

// failWriter fails once n bytes have been written.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestAppendString(t *testing.T) {
	in := "a\"b\\c\n\x01é\xff"
	got := string(appendString(nil, in))
	var back string
	require.NoError(t, json.Unmarshal([]byte(got), &back), "%s", got)
	require.Equal(t, "a\"b\\c\n\x01é\uFFFD", back, "round trip")
	for ns, want := range map[int64]string{1234567: "1234.567", 5000: "5", 5007: "5.007", 5200: "5.2"} {
		assert.Equal(t, want, string(appendTS(nil, ns)), "appendTS(%d)", ns)
	}
}

func TestCheckRules(t *testing.T) {
	meta := `{"ph":"M","name":"process_name","pid":1,"tid":1,"args":{"name":"p"}},{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"t"}}`
	wrap := func(evs string) []byte { return []byte(`{"traceEvents":[` + meta + evs + `]}`) }
	_, err := Check(wrap(`,{"ph":"B","name":"a","ts":1,"pid":1,"tid":2},{"ph":"E","ts":2,"pid":1,"tid":2}`))
	require.NoError(t, err, "valid trace rejected")
	cases := []struct{ name, data, want string }{
		{"not json", `hello`, "not a JSON trace"},
		{"no events", `{"x":1}`, "no traceEvents"},
		{"unbalanced", string(wrap(`,{"ph":"E","ts":2,"pid":1,"tid":2}`)), "no open B"},
		{"left open", string(wrap(`,{"ph":"B","name":"a","ts":1,"pid":1,"tid":2}`)), "open slice"},
		{"missing ts", string(wrap(`,{"ph":"i","name":"a","pid":1,"tid":2}`)), "without ts"},
		{"negative ts", string(wrap(`,{"ph":"i","name":"a","ts":-1,"pid":1,"tid":2}`)), "bad ts"},
		{"unnamed thread", string(wrap(`,{"ph":"i","name":"a","ts":1,"pid":1,"tid":3}`)), "no thread_name"},
		{"bad phase", string(wrap(`,{"ph":"Q","name":"a","ts":1,"pid":1,"tid":2}`)), "unknown phase"},
		{"one-ended flow", string(wrap(`,{"ph":"X","dur":0,"name":"a","ts":1,"pid":1,"tid":2,"bind_id":"0x1","flow_out":true}`)), "0 destination"},
		{"decimal bind id", string(wrap(`,{"ph":"X","dur":0,"name":"a","ts":1,"pid":1,"tid":2,"bind_id":12,"flow_out":true}`)), "not a \"0x...\" string"},
		{"counter text", string(wrap(`,{"ph":"C","name":"c","ts":1,"pid":1,"args":{"v":"x"}}`)), "not a number"},
		{"x with negative dur", string(wrap(`,{"ph":"X","dur":-1,"name":"a","ts":1,"pid":1,"tid":2}`)), "bad dur"},
		{"unknown metadata", string(wrap(`,{"ph":"M","name":"thread_sort_index","pid":1,"tid":2,"args":{"name":"x"}}`)), "unknown metadata"},
		{"thread_name without tid", string(wrap(`,{"ph":"M","name":"thread_name","pid":1,"args":{"name":"x"}}`)), "thread_name without tid"},
		{"metadata without name", string(wrap(`,{"ph":"M","name":"thread_name","pid":1,"tid":2}`)), "without pid or string args.name"},
		{"unnamed process", string(wrap(`,{"ph":"M","name":"thread_name","pid":5,"tid":2,"args":{"name":"t"}},{"ph":"i","name":"a","ts":1,"pid":5,"tid":2}`)),
			"process 5 has no process_name"},
		{"missing pid", string(wrap(`,{"ph":"i","name":"a","ts":1,"tid":2}`)), "without pid"},
		{"missing tid", string(wrap(`,{"ph":"B","name":"a","ts":1,"pid":1}`)), "without tid"},
		{"unnamed slice", string(wrap(`,{"ph":"B","ts":1,"pid":1,"tid":2},{"ph":"E","ts":2,"pid":1,"tid":2}`)), "without name"},
		{"counter without name", string(wrap(`,{"ph":"C","ts":1,"pid":1,"args":{"v":1}}`)), "counter without name"},
		{"counter without args", string(wrap(`,{"ph":"C","name":"c","ts":1,"pid":1}`)), "counter without args"},
		{"bind id not hex", string(wrap(`,{"ph":"X","dur":0,"name":"a","ts":1,"pid":1,"tid":2,"bind_id":"0xZZ","flow_out":true}`)), "not hexadecimal"},
		{"bind id without direction", string(wrap(`,{"ph":"X","dur":0,"name":"a","ts":1,"pid":1,"tid":2,"bind_id":"0x1"}`)), "without flow_in or flow_out"},
		{"flow without source", string(wrap(`,{"ph":"X","dur":0,"name":"a","ts":1,"pid":1,"tid":2,"bind_id":"0x1","flow_in":true}`)), "0 source"},
		{"end before begin in time", string(wrap(`,{"ph":"B","name":"a","ts":2,"pid":1,"tid":2},{"ph":"E","ts":1,"pid":1,"tid":2}`)), "no open B"},
		{"event not an object", string(wrap(`,[1,2]`)), "not an event object"},
		{"x without dur", string(wrap(`,{"ph":"X","name":"a","ts":1,"pid":1,"tid":2}`)), "without dur"},
	}
	for _, tc := range cases {
		_, err := Check([]byte(tc.data))
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}
