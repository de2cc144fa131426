package workload

import (
	"testing"
	"time"
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
			if err := in.Verify(); err != nil {
				t.Errorf("%s: %v", tr.Name, err)
			}
		}
	}
}

func TestTreeShapes(t *testing.T) {
	if n := ForkJoin(14).N(); n != 32767 {
		t.Errorf("ForkJoin(14) has %d nodes", n)
	}
	tr := Irregular(DefaultIrregular)
	if tr.N() != DefaultIrregular.N {
		t.Fatalf("irregular: %d nodes", tr.N())
	}
	// Every node but the root has exactly one parent, listed among its
	// parent's children.
	seen := make([]int, tr.N())
	for p := range tr.N() {
		for _, k := range tr.Kids[tr.First[p]:tr.First[p+1]] {
			if tr.Parent[k] != int32(p) {
				t.Fatalf("node %d: parent %d, listed under %d", k, tr.Parent[k], p)
			}
			seen[k]++
		}
	}
	for i, c := range seen[1:] {
		if c != 1 {
			t.Fatalf("node %d listed %d times", i+1, c)
		}
	}
	// Heavy tail: the costliest 1% of nodes hold a large share of the work.
	var maxC time.Duration
	for _, c := range tr.Cost {
		maxC = max(maxC, c)
	}
	if maxC < 50*time.Microsecond {
		t.Errorf("irregular: largest node cost %v, want a heavy tail", maxC)
	}
	mean := tr.TotalWork() / time.Duration(tr.N())
	if mean < 200*time.Nanosecond || mean > 2*time.Microsecond {
		t.Errorf("irregular: mean node cost %v, want about 0.4 µs", mean)
	}
	// The same parameters give the same tree.
	tr2 := Irregular(DefaultIrregular)
	for i := range tr.Cost {
		if tr.Cost[i] != tr2.Cost[i] || tr.Parent[i] != tr2.Parent[i] {
			t.Fatal("irregular: not deterministic")
		}
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
	if r := float64(ub) / float64(ua); r < 1.045 || r > 1.055 {
		t.Errorf("planted 5%%: work ratio %.4f", r)
	}
}

func TestCalibration(t *testing.T) {
	u := UnitsPerMicrosecond()
	if u < 50 || u > 10000 {
		t.Errorf("%.0f spin units per µs: calibration is off", u)
	}
	if UnitsFor(0) != 0 || UnitsFor(time.Microsecond) <= 0 {
		t.Error("UnitsFor")
	}
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
