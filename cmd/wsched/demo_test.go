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
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace/perfetto"
)

// TestMain fails the package's tests if a goroutine outlives them: the
// demo starts schedulers, whose workers Close must have stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runDemoWithin runs demo with args, failing the test with every
// goroutine's stack if it has not returned after d.
func runDemoWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	watchdog.Watch(t, d, func() { code = demo(args, &out, &errb) })
	return code, out.String(), errb.String()
}

func TestDemoUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string // substring of stderr
	}{
		{[]string{"-h"}, 0, "usage: wsched demo"},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined"},
		{[]string{"-workers", "0"}, 2, "-workers 0"},
		{[]string{"-workers", "x"}, 2, "invalid value"},
		{[]string{"-scale", "0"}, 2, "-scale 0"},
		{[]string{"-scale", "NaN"}, 2, "-scale NaN"},
		{[]string{"-cycles", "0"}, 2, "-cycles 0"},
		{[]string{"-policy", "z"}, 2, `"z"`},
		{[]string{"-policy", "all/sideways"}, 2, "unknown steal policy"},
		{[]string{"-policy", "loud/one"}, 2, "unknown wake policy"},
		{[]string{"-policy", "all/one/lifo"}, 2, "WAKE/STEAL[/fifo]"},
		{[]string{"-policy", ","}, 2, "no configurations"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		code, stdout, stderr := runDemoWithin(t, time.Minute, tc.args...)
		assert.Equal(t, tc.code, code, "demo %q: exit code; stderr %q", tc.args, stderr)
		assert.Contains(t, stderr, tc.err, "demo %q: stderr", tc.args)
		assert.Empty(t, stdout, "demo %q wrote to stdout", tc.args)
		// Errors the flag package finds come with the usage; ours are one line.
		if strings.HasPrefix(stderr, "wsched demo: ") {
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "demo %q: error is not one line: %q", tc.args, stderr)
		}
	}
}

// TestDemoRuns runs a small demo end to end: the table has a row per stage
// of each configuration, and each trace is a valid Perfetto file.
func TestDemoRuns(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runDemoWithin(t, 2*time.Minute,
		"-scale", "0.02", "-workers", "2", "-cycles", "2", "-policy", "b,c,all/one/fifo,searcher/half", "-out", dir)
	require.Equal(t, 0, code, "exit code; stderr:\n%s", stderr)
	for _, want := range []string{"(b) ", "(c) ", "all/one/fifo", "searcher/half", "Prepare", "Closure", "Release", "lower bound", "ratio"} {
		assert.Contains(t, stdout, want, "the demo's output")
	}
	traces := []string{"prepare-b.pftrace", "prepare-c.pftrace", "gcmark-all-one-fifo.pftrace", "gcmark-searcher-half.pftrace"}
	for _, name := range traces {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if !assert.NoError(t, err, "trace %s", name) {
			continue
		}
		_, err = perfetto.Check(data)
		assert.NoError(t, err, "trace %s", name)
	}
	assert.Equal(t, len(traces), strings.Count(stdout, ".pftrace"), "traces the output lists")
}

func TestDemoNoTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never")
	code, stdout, stderr := runDemoWithin(t, time.Minute, "-scale", "0.01", "-cycles", "1", "-policy", "d", "-trace=false", "-out", dir)
	require.Equal(t, 0, code, "exit code; stderr:\n%s", stderr)
	_, err := os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "-trace=false created %s (%v)", dir, err)
	assert.NotContains(t, stdout, ".pftrace", "-trace=false listed traces")
}

func TestDemoFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	// -out names a file: the trace directory cannot be made.
	code, _, stderr := runDemoWithin(t, time.Minute, "-scale", "0.01", "-cycles", "1", "-policy", "a", "-out", filepath.Join(file, "sub"))
	assert.Equal(t, 1, code, "exit code; stderr %q", stderr)
	assert.True(t, strings.HasPrefix(stderr, "wsched demo: "), "stderr %q does not start with \"wsched demo: \"", stderr)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "stderr %q is not one line", stderr)
}

// TestMarkPolicies checks that the demo's short gcmark policy names map to
// the scheduler's policies, and that each configuration is one New accepts.
func TestMarkPolicies(t *testing.T) {
	for list, want := range map[string]scheduler.Config{
		"all/one/fifo":    {Wake: scheduler.WakeAll, Steal: scheduler.StealOne, Local: scheduler.LocalFIFO},
		"searcher/half":   {Wake: scheduler.WakeSearcher, Steal: scheduler.StealHalf},
		"n/half":          {Wake: scheduler.WakeN, Steal: scheduler.StealHalf},
		"one/batch:8":     {Wake: scheduler.WakeOne, Steal: scheduler.StealHalf, StealLimit: 8},
		"default/default": {},
	} {
		var c demoConfig
		require.NoError(t, parsePolicies(list, &c), list)
		require.Len(t, c.mark, 1, list)
		assert.Equal(t, list, c.mark[0].name)
		assert.Equal(t, want, c.mark[0].cfg, list)
		cfg := c.mark[0].cfg
		cfg.Workers = 1
		s, err := scheduler.New(cfg)
		require.NoError(t, err, list)
		require.NoError(t, s.Close())
	}
	for _, bad := range []string{"all/batch:0", "all/batch:129", "all/batch:x", "wake-all/one", "all/steal-one"} {
		var c demoConfig
		assert.Error(t, parsePolicies(bad, &c), bad)
	}
}
