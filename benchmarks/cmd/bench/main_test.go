package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/internal/watchdog"
)

// The command's runs close every scheduler and pool they start.
// IgnoreCurrent: ants starts its default pool's two goroutines when the
// package is initialised, before any test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"help"}, {"compare", "-h"}, {"sweep", "-h"}, {"saturate", "-h"}, {"selftest", "-h"}} {
		code, out, errOut := runCmd(args...)
		assert.Equal(t, 0, code, "%v: exit code", args)
		assert.Contains(t, out, "usage: bench", "%v", args)
		assert.Empty(t, errOut, "%v: stderr", args)
	}
}

// Usage errors exit 2 with exactly one line on stderr.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-bogus"},
		{"-count", "0"},
		{"-gap", "-1ms"},
		{"-gap", "soon"},
		{"-workers", "x"},
		{"-workloads", "nope"},
		{"-policies", "wake=never"},
		{"-peers", "threads"},
		{"frobnicate"},
		{"compare", "onlyone"},
		{"sweep"},
		{"sweep", "colour"},
		{"saturate", "-costs", "fast"},
		{"selftest", "-trials", "0"},
		{"-quick", "extra-arg"},
	} {
		code, _, errOut := runCmd(args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		assert.Equal(t, 2, code, "%v: exit code, stderr %q", args, errOut)
		if assert.Len(t, lines, 1, "%v: stderr %q", args, errOut) {
			assert.True(t, strings.HasPrefix(lines[0], "bench: "), "%v: stderr %q", args, errOut)
		}
	}
}

func TestCompareMissingFile(t *testing.T) {
	code, _, errOut := runCmd("compare", "/nonexistent/a", "/nonexistent/b")
	assert.Equal(t, 1, code, "exit code, stderr %q", errOut)
	assert.True(t, strings.HasPrefix(errOut, "bench: "), "stderr %q", errOut)
}

// A tiny matrix end to end: files written, summary and plots, compare of
// the run with itself.
func TestMatrixSmoke(t *testing.T) {
	defer watchdog.Start(t, 2*time.Minute)()
	dir := t.TempDir()
	code, out, errOut := runCmd("-workloads", "fanout", "-peers", "chanpool", "-count", "2", "-iters", "1",
		"-warmup", "0", "-workers", "2", "-out", dir)
	require.Equal(t, 0, code, "exit code: %s", errOut)
	for _, f := range []string{"raw.txt", "summary.txt", "bars-fanout-w2.svg"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if assert.NoError(t, err, f) {
			assert.Positive(t, st.Size(), "%s is empty", f)
		}
	}
	assert.Contains(t, out, "wsched/default against each")
	assert.Contains(t, out, "loadavg-end:")
	assert.Contains(t, errOut, "bench: done in")
	raw := filepath.Join(dir, "raw.txt")
	code, out, errOut = runCmd("compare", raw, raw)
	assert.Equal(t, 0, code, "compare with itself: exit code\n%s%s", out, errOut)
	assert.NotContains(t, out, "WARNING", "compare with itself")
	assert.Contains(t, out, "no difference proven", "compare with itself")
}

// The tree searches on their small trees, at 1 and 2 workers, with the
// sequential baseline: the summary has their table and targets.
func TestUTSSmoke(t *testing.T) {
	defer watchdog.Start(t, 2*time.Minute)()
	dir := t.TempDir()
	code, out, errOut := runCmd("-workloads", "utsgeo,utsbin", "-policies", "default,spawn=inline", "-peers", "seq,waitgroup",
		"-uts-size", "small", "-count", "2", "-iters", "1", "-warmup", "0", "-workers", "1,2", "-plots=false", "-out", dir)
	require.Equal(t, 0, code, "exit code: %s", errOut)
	for _, want := range []string{"## UTSGeoSmall workers=1", "## UTSBinSmall workers=2", "vs seq:", "### UTSBinSmall (94577 nodes)",
		"## targets of the tree searches", "wsched/spawn=inline efficiency T_seq/(2·T_par) ≥ 0.95"} {
		assert.Contains(t, out, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "raw.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(raw), "UTSGeoSmall/sys=seq/workers=1", "raw.txt")
	code, _, errOut = runCmd("-workloads", "utsgeo", "-uts-size", "medium", "-out", dir)
	assert.Equal(t, 2, code, "-uts-size medium: exit code, %s", errOut)
}

func TestSaturateSmoke(t *testing.T) {
	defer watchdog.Start(t, 2*time.Minute)()
	dir := t.TempDir()
	code, out, errOut := runCmd("saturate", "-quick", "-costs", "100us", "-step", "10ms", "-out", dir)
	require.Equal(t, 0, code, "exit code: %s", errOut)
	for _, f := range []string{"saturation.txt", "saturation.summary.txt", "saturation.svg"} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NoError(t, err)
	}

	assert.Contains(t, out, "saturation point")
}
