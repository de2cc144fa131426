package simulate

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace/internal/rawtrace"
)

// The budget Load and a Run at up to 3 workers keep for any input of n
// bytes, as trace/analyze's (bounds_test.go there): wsched's own traces
// take about 20-30 bytes allocated and 1-3 µs per byte here (the
// replay's events included); the budget leaves room, plus a constant for
// the smallest files, and stays far below what a replay whose cost grew
// with what a file claims would take.
func allocBudget(n int) uint64 { return 256*uint64(n) + 1<<20 }

func timeBudget(n int) time.Duration {
	d := time.Duration(n)*20*time.Microsecond + 500*time.Millisecond
	if raceEnabled {
		d *= 10
	}
	return d
}

// replayed loads data and replays it at up to 3 workers, and checks the
// budget.
func replayed(t testing.TB, data []byte) (*Workload, *Result, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	wl, err := Load(data)
	var r *Result
	if err == nil {
		cfg := wl.Config
		cfg.Workers = min(wl.Workers, 3)
		r, err = Run(wl, cfg, Options{})
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	assert.LessOrEqual(t, alloc, allocBudget(len(data)), "bytes allocated for a %d-byte file", len(data))
	assert.LessOrEqual(t, elapsed, timeBudget(len(data)), "time for a %d-byte file", len(data))
	return wl, r, err
}

// TestClaims65536Workers: a small file that claims 65,536 workers loads
// and replays at a few workers within the budget; replaying it at the
// workers it claims is refused, saying why.
func TestClaims65536Workers(t *testing.T) {
	data := rawtrace.ManyWorkersChain(1<<16, 2000)
	wl, r, err := replayed(t, data)
	require.NoError(t, err)
	assert.Equal(t, 1<<16, wl.Workers)
	require.Len(t, r.Cycles, 1)
	assert.Equal(t, 2000, r.Cycles[0].Stages[0].Packets)
	_, err = Run(wl, wl.Config, Options{})
	require.ErrorContains(t, err, "simulate replays 1 to 4094 workers")
}

// TestRealTraceBudget: a real run's trace keeps the budget.
func TestRealTraceBudget(t *testing.T) {
	tree(t)
	_, _, err := replayed(t, treeOnce)
	require.NoError(t, err)
	t.Logf("%d bytes", len(treeOnce))
}

func FuzzSimulate(f *testing.F) {
	f.Add(rawtrace.ManyWorkersChain(4, 3))
	f.Add(rawtrace.ManyWorkersChain(1<<16, 10))
	if data, err := os.ReadFile(filepath.Join("..", "perfetto", "testdata", "small.pftrace.golden")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("garbage"))
	tree(f)
	f.Add(treeOnce)
	f.Fuzz(func(t *testing.T, data []byte) {
		replayed(t, data)
	})
}
