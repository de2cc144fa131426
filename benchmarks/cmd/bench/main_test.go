package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"help"}, {"compare", "-h"}, {"sweep", "-h"}, {"saturate", "-h"}, {"selftest", "-h"}} {
		code, out, errOut := runCmd(args...)
		if code != 0 || !strings.Contains(out, "usage: bench") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %.80q, stderr %q", args, code, out, errOut)
		}
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
		if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "bench: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestCompareMissingFile(t *testing.T) {
	code, _, errOut := runCmd("compare", "/nonexistent/a", "/nonexistent/b")
	if code != 1 || !strings.HasPrefix(errOut, "bench: ") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// A tiny matrix end to end: files written, summary and plots, compare of
// the run with itself.
func TestMatrixSmoke(t *testing.T) {
	defer watchdog.Start(t, 2*time.Minute)()
	dir := t.TempDir()
	code, out, errOut := runCmd("-workloads", "fanout", "-peers", "chanpool", "-count", "2", "-iters", "1",
		"-warmup", "0", "-workers", "2", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"raw.txt", "summary.txt", "bars-fanout-w2.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(out, "wsched/default against each") || !strings.Contains(out, "loadavg-end:") {
		t.Errorf("summary:\n%s", out)
	}
	if !strings.Contains(errOut, "bench: done in") {
		t.Errorf("no progress on stderr: %q", errOut)
	}
	raw := filepath.Join(dir, "raw.txt")
	code, out, errOut = runCmd("compare", raw, raw)
	if code != 0 || strings.Contains(out, "WARNING") || !strings.Contains(out, "no difference proven") {
		t.Errorf("compare with itself: exit %d\n%s%s", code, out, errOut)
	}
}

// The tree searches on their small trees, at 1 and 2 workers, with the
// sequential baseline: the summary has their table and targets.
func TestUTSSmoke(t *testing.T) {
	defer watchdog.Start(t, 2*time.Minute)()
	dir := t.TempDir()
	code, out, errOut := runCmd("-workloads", "utsgeo,utsbin", "-policies", "default,spawn=inline", "-peers", "seq,waitgroup",
		"-uts-size", "small", "-count", "2", "-iters", "1", "-warmup", "0", "-workers", "1,2", "-plots=false", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"## UTSGeoSmall workers=1", "## UTSBinSmall workers=2", "vs seq:", "### UTSBinSmall (94577 nodes)",
		"## targets of the tree searches", "wsched/spawn=inline efficiency T_seq/(2·T_par) ≥ 0.95"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "raw.txt"))
	if err != nil || !strings.Contains(string(raw), "UTSGeoSmall/sys=seq/workers=1") {
		t.Errorf("raw.txt: %v\n%.500s", err, raw)
	}
	code, _, errOut = runCmd("-workloads", "utsgeo", "-uts-size", "medium", "-out", dir)
	if code != 2 {
		t.Errorf("-uts-size medium: exit %d, %s", code, errOut)
	}
}

func TestSaturateSmoke(t *testing.T) {
	defer watchdog.Start(t, 2*time.Minute)()
	dir := t.TempDir()
	code, out, errOut := runCmd("saturate", "-quick", "-costs", "100us", "-step", "10ms", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"saturation.txt", "saturation.summary.txt", "saturation.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out, "saturation point") {
		t.Errorf("summary:\n%s", out)
	}
}
