package trace

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// residentBytes is this process's resident set size (Linux).
func residentBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TestRecorderTouchesPages: by default NewRecorder maps every page of its
// buffers before recording starts (so no page fault lands inside a traced
// run); with LazyPages it leaves them for the first events to fault in.
// Measured as the growth of the resident set across NewRecorder with a
// 64 MiB budget.
func TestRecorderTouchesPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/statm")
	}
	const budget = 64 << 20
	for _, lazy := range []bool{true, false} {
		before := residentBytes(t)
		r := NewRecorder(2, Options{MaxBytes: budget, LazyPages: lazy})
		grew := residentBytes(t) - before
		runtime.KeepAlive(r)
		if lazy && grew > budget/4 {
			t.Errorf("LazyPages: resident set grew by %d MiB for a %d MiB budget; want the pages left untouched", grew>>20, budget>>20)
		}
		if !lazy && grew < budget*3/4 {
			t.Errorf("default: resident set grew by %d MiB for a %d MiB budget; want every page touched", grew>>20, budget>>20)
		}
		t.Logf("LazyPages=%v: resident set +%d MiB", lazy, grew>>20)
	}
}
