package workload

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inline runs a tree sequentially, children depth first.
type inline struct{ in *Instance }

func (s inline) Spawn(i int32) { s.in.Run(s, i) }

func (s inline) SpawnAll(ids []int32) {
	for _, i := range ids {
		s.Spawn(i)
	}
}

func TestTreesComplete(t *testing.T) {
	for _, tr := range []*Tree{Fanout(100), Spawn(100), ForkJoin(6), Irregular(DefaultIrregular)} {
		in := NewInstance(tr, 0)
		in.CountLeaves()
		for range 2 {
			in.Reset()
			for _, r := range tr.Roots {
				in.Run(inline{in}, r)
			}
			assert.NoError(t, in.Verify(), tr.Name)
		}
	}
}

func TestTreeShapes(t *testing.T) {
	assert.Equal(t, 32767, ForkJoin(14).N(), "ForkJoin(14) nodes")
	tr := Irregular(DefaultIrregular)
	require.Equal(t, DefaultIrregular.N, tr.N(), "irregular: nodes")
	// Every node but the root has exactly one parent, listed among its
	// parent's children.
	seen := make([]int, tr.N())
	for p := range tr.N() {
		for _, k := range tr.Kids[tr.First[p]:tr.First[p+1]] {
			require.Equal(t, int32(p), tr.Parent[k], "node %d: parent, listed under %d", k, p)
			seen[k]++
		}
	}
	for i, c := range seen[1:] {
		require.Equal(t, 1, c, "node %d: times listed", i+1)
	}
	// Heavy tail: the costliest 1% of nodes hold a large share of the work.
	var maxC time.Duration
	for _, c := range tr.Cost {
		maxC = max(maxC, c)
	}
	assert.GreaterOrEqual(t, maxC, 50*time.Microsecond, "irregular: largest node cost, want a heavy tail")
	mean := tr.TotalWork() / time.Duration(tr.N())
	assert.GreaterOrEqual(t, mean, 200*time.Nanosecond, "irregular: mean node cost, want about 0.4 µs")
	assert.LessOrEqual(t, mean, 2*time.Microsecond, "irregular: mean node cost, want about 0.4 µs")
	// The same parameters give the same tree.
	tr2 := Irregular(DefaultIrregular)
	for i := range tr.Cost {
		require.Equal(t, tr.Cost[i], tr2.Cost[i], "irregular: not deterministic (node %d's cost)", i)
		require.Equal(t, tr.Parent[i], tr2.Parent[i], "irregular: not deterministic (node %d's parent)", i)
	}
}

func TestPlantedWork(t *testing.T) {
	tr := Irregular(DefaultIrregular)
	a, b := NewInstance(tr, 0), NewInstance(tr, 0.05)
	var ua, ub int64
	for i := range a.units {
		ua += int64(a.units[i])
		ub += int64(b.units[i])
	}
	assert.InDelta(t, 1.05, float64(ub)/float64(ua), 0.005, "planted 5%: work ratio")
}

func TestCalibration(t *testing.T) {
	u := UnitsPerMicrosecond()
	assert.Positive(t, u, "spin units per µs")
	// The rate itself is the machine's: its range is checked only in the
	// long runs (WSCHED_STRESS=1), where a loaded core cannot fail it.
	if os.Getenv("WSCHED_STRESS") == "1" {
		assert.GreaterOrEqual(t, u, 50.0, "spin units per µs: calibration is off")
		assert.LessOrEqual(t, u, 10000.0, "spin units per µs: calibration is off")
	}
	assert.Zero(t, UnitsFor(0), "UnitsFor(0)")
	assert.Positive(t, UnitsFor(time.Microsecond), "UnitsFor(1µs)")
}

// BenchmarkReset: the untimed gap between two of the harness's fork-join
// operations, the Reset of a 32,767-node instance, against an atomic Store
// per node (a locked exchange each on amd64), in the same run:
//
//	go test -run '^$' -bench Reset -count 6 ./workload/
func BenchmarkReset(b *testing.B) {
	in := NewInstance(ForkJoin(14), 0)
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in.Reset()
		}
	})
	b.Run("store-per-node", func(b *testing.B) {
		t := in.t
		b.ReportAllocs()
		for b.Loop() {
			for i := range in.pending {
				in.pending[i].Store(t.First[i+1] - t.First[i])
				in.sum[i].Store(0)
			}
			in.total.Store(0)
			in.roots.Store(0)
		}
	})
}
