package simulate

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/trace/internal/rawtrace"
	"github.com/wsched/wsched/trace/perfetto"
)

// The budget Load and a Run at up to 3 workers keep for any input of n
// bytes, as trace/analyze's (bounds_test.go there): wsched's own traces
// take about 20-30 bytes allocated per byte here (the replay's events
// included) and fewer than one simulated event per 10 bytes; the budget
// leaves room, plus a constant for the smallest files, and stays far
// below what a replay whose cost grew with what a file claims would take.
// A run's time is O(e log w) in its e events on w workers (Run), so the
// events budget bounds the time without reading a clock.
func allocBudget(n int) uint64 { return 256*uint64(n) + 1<<20 }

func eventsBudget(n int) int64 { return int64(n) + 1000 }

// replayed loads data and replays it at up to 3 workers, and checks the
// budget.
func replayed(t testing.TB, data []byte) (*Workload, *Result, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	wl, err := Load(data)
	var r *Result
	if err == nil {
		cfg := wl.Config
		cfg.Workers = min(wl.Workers, 3)
		r, err = Run(wl, cfg, Options{})
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	assert.LessOrEqual(t, alloc, allocBudget(len(data)), "bytes allocated for a %d-byte file", len(data))
	if r != nil {
		assert.LessOrEqual(t, r.Events, eventsBudget(len(data)), "simulated events for a %d-byte file", len(data))
	}
	return wl, r, err
}

// wide is a trace that claims workers workers and holds one cycle with
// one stage: one add of packets packets before the cycle, run round-robin
// on the workers, 80 ns each, with their queuing.
func wide(workers, packets int) []byte {
	r := rawtrace.New(workers)
	m := uint64(workers + perfetto.QueuedWorker0)
	r.AddCall(10, "add", 1, uint64(packets), 5)
	r.Cycle(100, 1)
	r.Stage(100, 1, "S")
	end := int64(0)
	for i := range packets {
		t := int64(200 + (i/workers)*90)
		r.QueuedPacket(i%workers, t, t+80, "P", "S", perfetto.QueuedAdd+m*uint64(t-5))
		end = max(end, t+90)
	}
	r.End(end, rawtrace.Stages)
	r.End(end+10, rawtrace.Control)
	return r.Bytes()
}

// cost loads data and replays it at workers workers, and returns the
// bytes and objects it allocated and the simulated events.
func cost(t *testing.T, data []byte, workers int) (bytes, objects uint64, events int64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	wl, err := Load(data)
	require.NoError(t, err)
	require.Zero(t, wl.Orphans)
	cfg := wl.Config
	cfg.Workers = workers
	r, err := Run(wl, cfg, Options{})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	require.Len(t, r.Cycles, 1)
	require.Equal(t, len(wl.Cycles[0].Packets), r.Cycles[0].Stages[0].Packets)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs, r.Events
}

// TestCostLinear: Load and Run allocate linearly in the packets (16× the
// packets, from 8,000: at most 16 × 1.25 the bytes and objects; here
// about 3 objects and 730-870 bytes per packet, the bytes per packet
// levelling off from 64,000 packets), their simulated events grow
// linearly too (so their time, O(e log w), does), and more workers add
// O(w) bytes and events, not O(packets × w): from 2 to 4,094 workers, at
// most 1 KiB and 4 events per worker more. Skipped with -short.
func TestCostLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("replays of 8,000 and 128,000 packets, at 3 worker counts")
	}
	const n = 8000
	workers := []int{2, 64, 4094}
	bytesAt, eventsAt := map[int]uint64{}, map[int]int64{}
	for _, w := range workers {
		b1, o1, e1 := cost(t, wide(64, n), w)
		b16, o16, e16 := cost(t, wide(64, 16*n), w)
		t.Logf("%d workers: %d packets: %d B, %d objects, %d events; %d packets: %d B, %d objects, %d events", w, n, b1, o1, e1, 16*n, b16, o16, e16)
		assert.LessOrEqual(t, float64(b16), 20*float64(b1), "bytes at %d workers", w)
		assert.LessOrEqual(t, float64(o16), 20*float64(o1), "objects at %d workers", w)
		assert.LessOrEqual(t, float64(e16), 20*float64(e1), "events at %d workers", w)
		bytesAt[w], eventsAt[w] = b1, e1
	}
	assert.LessOrEqual(t, bytesAt[4094], bytesAt[2]+4094<<10, "bytes at 4094 workers")
	assert.LessOrEqual(t, eventsAt[4094], eventsAt[2]+4*4094, "events at 4094 workers")
}

// BenchmarkRun: a replay's time per simulated event, at 2, 64 and 4,094
// workers (O(log w) per event).
func BenchmarkRun(b *testing.B) {
	wl, err := Load(wide(64, 32000))
	require.NoError(b, err)
	for _, w := range []int{2, 64, 4094} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			cfg := wl.Config
			cfg.Workers = w
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				r, err := Run(wl, cfg, Options{})
				require.NoError(b, err)
				events += r.Events
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(events, 1)), "ns/event")
		})
	}
}

// TestClaims65536Workers: a small file that claims 65,536 workers and
// holds events on one worker's track does not load, within the budget,
// and says why; the same file claiming one worker loads and replays
// within the budget, and a replay at more than MaxWorkers is refused,
// saying why.
func TestClaims65536Workers(t *testing.T) {
	_, _, err := replayed(t, rawtrace.ManyWorkersChain(1<<16, 2000))
	require.ErrorIs(t, err, ErrClaimedWorkers)
	assert.ErrorContains(t, err, "claims 65536 workers")
	assert.ErrorContains(t, err, "holds events on 1 worker track(s)")

	wl, r, err := replayed(t, rawtrace.ManyWorkersChain(1, 2000))
	require.NoError(t, err)
	assert.Equal(t, 1, wl.Workers)
	require.Len(t, r.Cycles, 1)
	assert.Equal(t, 2000, r.Cycles[0].Stages[0].Packets)
	cfg := wl.Config
	cfg.Workers = 1 << 16
	_, err = Run(wl, cfg, Options{})
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
