package chromejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/internal/synth"
	"github.com/wsched/wsched/trace/perfetto"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func writeChecked(t *testing.T, s *trace.Snapshot) ([]byte, Stats, CheckStats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Write(&buf, s, Options{Pid: 4242})
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) {
		t.Fatalf("Stats.Bytes %d, wrote %d", st.Bytes, buf.Len())
	}
	cs, err := Check(buf.Bytes())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatal("invalid JSON")
	}
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
		if _, err := perfetto.Write(&pb, res.Snapshot, perfetto.Options{}); err != nil {
			t.Fatal(err)
		}
		ps, err := perfetto.Check(pb.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		// JSON draws flow-source instants as X slices.
		if cs.Slices-cs.Flows != ps.Slices || cs.Instants+cs.Flows != ps.Instants || cs.Counters != ps.Counters || cs.Flows != ps.Flows {
			t.Errorf("json %+v vs perfetto %+v", cs, ps)
		}
		if st.Slices != res.Packets && st.Dropped == 0 {
			t.Errorf("slices %d, packets %d", st.Slices, res.Packets)
		}
	}
}

func TestBytesPerSlice(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 4, Cycles: 2, Packets: 300, Seed: 2, NoCounters: true})
	_, st, _ := writeChecked(t, res.Snapshot)
	t.Logf("%d slices: %.1f bytes/slice (B+E), %.1f file bytes/slice", st.Slices, st.BytesPerSlice(), float64(st.Bytes)/float64(st.Slices))
}

func TestGolden(t *testing.T) {
	data, _, _ := writeChecked(t, synth.Small())
	path := filepath.Join("testdata", "small.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("output differs from %s (run with -update and review):\n%s", path, data)
	}
}

func TestWriteFileAndErrors(t *testing.T) {
	res := synth.Generate(synth.Config{Workers: 2, Seed: 5})
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	if _, err := WriteFile(path, res.Snapshot, Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(data); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v (%v), want 0644", fi.Mode(), err)
	}
	// A failed write leaves the old file alone and no temporary file.
	if _, err := WriteFile(path, nil, Options{}); err == nil {
		t.Fatal("nil snapshot accepted")
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Fatal("failed WriteFile changed the existing file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
	if _, err := WriteFile(filepath.Join(dir, "no", "t.json"), res.Snapshot, Options{}); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
	if _, err := Write(&bytes.Buffer{}, nil, Options{}); err == nil {
		t.Fatal("nil snapshot accepted")
	}
	big := synth.Generate(synth.Config{Workers: 2, Cycles: 5, Packets: 200, Seed: 6})
	if _, err := Write(&failWriter{n: 100 << 10}, big.Snapshot, Options{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Write error = %v, want disk full", err)
	}
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
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if back != "a\"b\\c\n\x01é\uFFFD" {
		t.Fatalf("round trip %q", back)
	}
	if ts := string(appendTS(nil, 1234567)); ts != "1234.567" {
		t.Fatalf("appendTS = %s", ts)
	}
	if ts := string(appendTS(nil, 5000)); ts != "5" {
		t.Fatalf("appendTS = %s", ts)
	}
	if ts := string(appendTS(nil, 5007)); ts != "5.007" {
		t.Fatalf("appendTS = %s", ts)
	}
	if ts := string(appendTS(nil, 5200)); ts != "5.2" {
		t.Fatalf("appendTS = %s", ts)
	}
}

func TestCheckRules(t *testing.T) {
	meta := `{"ph":"M","name":"process_name","pid":1,"tid":1,"args":{"name":"p"}},{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"t"}}`
	wrap := func(evs string) []byte { return []byte(`{"traceEvents":[` + meta + evs + `]}`) }
	if _, err := Check(wrap(`,{"ph":"B","name":"a","ts":1,"pid":1,"tid":2},{"ph":"E","ts":2,"pid":1,"tid":2}`)); err != nil {
		t.Fatalf("valid trace rejected: %v", err)
	}
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
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
