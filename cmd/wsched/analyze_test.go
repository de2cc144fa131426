package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/tracebuf"
	"github.com/wsched/wsched/trace"
	"github.com/wsched/wsched/trace/perfetto"
)

// twoCycles records two small cycles by hand with a fake clock.
func twoCycles() *trace.Snapshot {
	var now int64
	r := tracebuf.NewRecorder(2, tracebuf.Options{MaxBytes: 1 << 16, Clock: func() int64 { return now }})
	a, b, st := r.Intern("A"), r.Intern("B"), r.Intern("Mark")
	c := r.Control()
	for cyc := uint64(1); cyc <= 2; cyc++ {
		now += 1000
		c.CycleBegin(cyc)
		c.StageOpen(1, st)
		c.WakeSent(1)
		for w := range 2 {
			tb := r.Worker(w)
			tb.PacketBegin(a, 1, 0)
			now += 5000
			tb.PacketEnd()
			tb.PacketBegin(b, 1, 0)
			now += 2000
			tb.PacketEnd()
		}
		c.StageClose(1)
		c.CycleEnd(cyc)
	}
	return r.Snapshot()
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		{nil, 2, "usage: wsched"},
		{[]string{"-h"}, 0, "analyze"},
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"analyze", "-h"}, 0, "usage: wsched analyze"},
		{[]string{"analyze"}, 2, "want one FILE"},
		{[]string{"analyze", "a", "b"}, 2, "want one FILE"},
		{[]string{"analyze", "-bogus", "x"}, 2, "flag provided but not defined"},
		{[]string{"analyze", filepath.Join(t.TempDir(), "missing.pftrace")}, 1, "no such file"},
	} {
		code, out, errs := runCmd(tc.args...)
		assert.Equal(t, tc.code, code, "%v: exit code; output %q", tc.args, out+errs)
		assert.Contains(t, out+errs, tc.out, "%v: output", tc.args)
		if code == 1 {
			assert.NotContains(t, strings.TrimSpace(errs), "\n", "%v: error is not one line", tc.args)
		}
	}
}

func TestAnalyzeCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.pftrace")
	_, err := perfetto.WriteFile(path, twoCycles(), perfetto.Options{})
	require.NoError(t, err)
	code, out, errs := runCmd("analyze", "-check", path)
	require.Equal(t, 0, code, "exit code\nstdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "cycle 2", "the report")
	require.Contains(t, out, "lower bound", "the report")
	code, out, _ = runCmd("analyze", path, "-json") // flags after FILE too
	var rep struct {
		Workers int `json:"workers"`
		Cycles  []struct {
			MakespanNs int64 `json:"makespan_ns"`
		} `json:"cycles"`
	}
	require.Equal(t, 0, code, "-json: exit code; stdout %q", out)
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "-json: %q", out)
	require.Equal(t, 2, rep.Workers, "-json: workers")
	require.Len(t, rep.Cycles, 2, "-json: cycles")
	require.Positive(t, rep.Cycles[0].MakespanNs, "-json: the first cycle's makespan")

	// Bad input: one-line error, exit 1, no panic.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	bad := map[string][]byte{
		"garbage.pftrace":   []byte("garbage garbage"),
		"truncated.pftrace": data[:len(data)/2],
		"empty.pftrace":     nil,
		"trace.json":        []byte(`{"traceEvents":[]}`),
	}
	// A stream (a pipe, a device) is read only as far as it looks like a
	// trace: /dev/zero fails at its first byte instead of filling memory.
	if _, err := os.Stat("/dev/zero"); err == nil {
		code, _, errs := runCmd("analyze", "/dev/zero")
		assert.Equal(t, 1, code, "/dev/zero: exit code; stderr %q", errs)
		assert.Contains(t, errs, "malformed trace at byte 0", "/dev/zero: stderr")
	}
	for name, b := range bad {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		code, _, errs := runCmd("analyze", p)
		assert.Equal(t, 1, code, "%s: exit code; stderr %q", name, errs)
		assert.True(t, strings.HasPrefix(errs, "wsched analyze: "), "%s: stderr %q", name, errs)
		assert.NotContains(t, strings.TrimSpace(errs), "\n", "%s: error is not one line", name)
	}
}

func TestAnalyzeSVG(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.pftrace")
	_, err := perfetto.WriteFile(path, twoCycles(), perfetto.Options{})
	require.NoError(t, err)
	out := filepath.Join(dir, "t.svg")

	code, stdout, stderr := runCmd("analyze", "-svg", out, path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "cycle 2", "the report is still printed")
	assert.Contains(t, stderr, "stage Mark (ratio ")
	assert.Contains(t, stderr, "drawn to "+out+": 2 workers, 4 packet rectangles for 4 slices")
	doc, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(doc, new(struct {
		XMLName xml.Name `xml:"svg"`
	})))
	assert.Equal(t, 2, strings.Count(string(doc), `<g class="worker"`))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file left: %v", entries)

	// The whole of cycle 1, to stdout: only the picture goes there.
	code, stdout, stderr = runCmd("analyze", path, "-svg", "-", "-svg-cycle", "1")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "<?xml"), stdout)
	assert.NotContains(t, stdout, "busy:", "no text report on stdout")
	assert.Contains(t, stdout, "wsched timeline: cycle 1, all stages")
	assert.Contains(t, stderr, "cycle 1 (ratio ")

	// A window that is not there: a one-line error that lists what is, and
	// the old picture is left as it was.
	code, _, stderr = runCmd("analyze", "-svg", out, "-svg-stage", "Sweep", path)
	assert.Equal(t, 1, code)
	assert.Equal(t, `wsched analyze: `+path+`: no stage "Sweep"; the trace's stages: "Mark"`+"\n", stderr)
	again, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, doc, again)

	code, _, stderr = runCmd("analyze", "-svg-cycle", "1", path)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "need -svg OUT")
	missing := filepath.Join(dir, "missing", "t.svg")
	code, _, stderr = runCmd("analyze", "-svg", missing, path)
	assert.Equal(t, 1, code)
	// The output is named, not the input trace nor a temporary file.
	assert.Equal(t, "wsched analyze: -svg "+missing+": no such file or directory\n", stderr)

	code, stdout, stderr = runCmd("analyze", "-h")
	assert.Equal(t, 0, code)
	for _, flag := range []string{"-svg OUT", "-svg-stage NAME", "-svg-cycle N", "merged"} {
		assert.Contains(t, stdout+stderr, flag)
	}
}
