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

	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
	"github.com/wsched/wsched/trace/perfetto"
)

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
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("demo %q: exit %d, stderr %q; want exit %d, stderr containing %q", tc.args, code, stderr, tc.code, tc.err)
		}
		if stdout != "" {
			t.Errorf("demo %q wrote to stdout: %q", tc.args, stdout)
		}
		// Errors the flag package finds come with the usage; ours are one line.
		if strings.HasPrefix(stderr, "wsched demo: ") && strings.Count(stderr, "\n") != 1 {
			t.Errorf("demo %q: error is not one line: %q", tc.args, stderr)
		}
	}
}

// TestDemoRuns runs a small demo end to end: the table has a row per stage
// of each configuration, and each trace is a valid Perfetto file.
func TestDemoRuns(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runDemoWithin(t, 2*time.Minute,
		"-scale", "0.02", "-workers", "2", "-cycles", "2", "-policy", "b,c,all/one/fifo,searcher/half", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"(b) ", "(c) ", "all/one/fifo", "searcher/half", "Prepare", "Closure", "Release", "lower bound", "ratio"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	traces := []string{"prepare-b.pftrace", "prepare-c.pftrace", "gcmark-all-one-fifo.pftrace", "gcmark-searcher-half.pftrace"}
	for _, name := range traces {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := perfetto.Check(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := strings.Count(stdout, ".pftrace"); n != len(traces) {
		t.Errorf("output lists %d traces, want %d", n, len(traces))
	}
}

func TestDemoNoTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never")
	code, stdout, stderr := runDemoWithin(t, time.Minute, "-scale", "0.01", "-cycles", "1", "-policy", "d", "-trace=false", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("-trace=false created %s (%v)", dir, err)
	}
	if strings.Contains(stdout, ".pftrace") {
		t.Errorf("-trace=false listed traces:\n%s", stdout)
	}
}

func TestDemoFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// -out names a file: the trace directory cannot be made.
	code, _, stderr := runDemoWithin(t, time.Minute, "-scale", "0.01", "-cycles", "1", "-policy", "a", "-out", filepath.Join(file, "sub"))
	if code != 1 || !strings.HasPrefix(stderr, "wsched demo: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line starting with \"wsched demo: \"", code, stderr)
	}
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
