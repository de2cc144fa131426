package tracebuf

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// residentBytes is this process's resident set size (Linux).
func residentBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("statm: %q", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()), err
}

const pagesChildEnv = "WSCHED_TRACE_PAGES_CHILD"

// TestRecorderTouchesPages: by default NewRecorder maps every page of its
// buffers before recording starts (so that no page fault lands inside a
// traced run); with LazyPages it leaves them for the first events to
// fault in. Measured as the growth of the resident set across NewRecorder
// with a 64 MiB budget, each mode in a fresh child process (this test
// binary run again), where the buffers come fresh from the OS: in a
// process that has freed memory before, the runtime hands back pages that
// are already resident.
func TestRecorderTouchesPages(t *testing.T) {
	const budget = 64 << 20
	if mode := os.Getenv(pagesChildEnv); mode != "" {
		before, err := residentBytes()
		require.NoError(t, err)
		r := NewRecorder(2, Options{MaxBytes: budget, LazyPages: mode == "lazy"})
		after, err := residentBytes()
		require.NoError(t, err)
		runtime.KeepAlive(r)
		fmt.Printf("grew %d\n", after-before)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/statm")
	}
	if raceEnabled {
		// Under -race a lazy recorder's child once grew by 30 MiB of
		// shadow memory (1 run in 12 on a loaded machine).
		t.Skip("the race detector's shadow memory moves the resident set")
	}
	for _, mode := range []string{"lazy", "touch"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRecorderTouchesPages$", "-test.count=1")
		cmd.Env = append(os.Environ(), pagesChildEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s child:\n%s", mode, out)
		var grew int64
		i := strings.Index(string(out), "grew ")
		require.GreaterOrEqual(t, i, 0, "%s child printed no figure:\n%s", mode, out)
		_, err = fmt.Sscan(string(out[i+len("grew "):]), &grew)
		require.NoError(t, err, "%s child:\n%s", mode, out)
		t.Logf("%s: resident set +%d MiB for a %d MiB budget", mode, grew>>20, budget>>20)
		switch mode {
		case "lazy":
			assert.LessOrEqual(t, grew, int64(budget/4), "LazyPages: resident set grew by %d MiB; want the pages left untouched", grew>>20)
		case "touch":
			assert.GreaterOrEqual(t, grew, int64(budget*3/4), "default: resident set grew by %d MiB; want every page touched", grew>>20)
		}
	}
}
