package nqueens

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/internal/watchdog"
)

// TestEveryWayCounts: every way counts the published numbers of
// solutions for n = 1 to 10, three counts in a row, at 1, 2 and 3
// workers.
func TestEveryWayCounts(t *testing.T) {
	stop := watchdog.Start(t, 120*time.Second)
	defer stop()
	want := []int{1, 0, 0, 2, 10, 4, 40, 92, 352, 724}
	for n := 1; n <= len(want); n++ {
		require.Equal(t, want[n-1], Count(n), "Count(%d)", n)
		for _, workers := range []int{1, 2, 3} {
			v, err := NewSolver(n, workers)
			require.NoError(t, err)
			for range 3 {
				for name, f := range ways(v) {
					got, err := f()
					require.NoError(t, err, "n=%d workers=%d %s", n, workers, name)
					require.Equal(t, want[n-1], got, "n=%d workers=%d %s", n, workers, name)
				}
			}
			require.NoError(t, v.Close())
		}
	}
	_, err := NewSolver(0, 1)
	require.Error(t, err)
	_, err = NewSolver(32, 1)
	require.Error(t, err)
}

// ways are a Solver's counts by name.
func ways(v *Solver) map[string]func() (int, error) {
	return map[string]func() (int, error){
		"packets":        v.Packets,
		"worklist":       v.Worklist,
		"worklist-take":  v.WorklistTake,
		"worklist-stack": v.WorklistStack,
		"join-inline":    func() (int, error) { return v.Join(true) },
		"join-spawn":     func() (int, error) { return v.Join(false) },
	}
}

// BenchmarkNQueens: N=13 (4,674,890 states) every way, at 1 and 2
// workers (GOMAXPROCS set to match), the recursion first; ns/state is
// per state visited:
//
//	go test -run '^$' -bench NQueens -count 5 .
func BenchmarkNQueens(b *testing.B) {
	const n = 13
	want := Count(n)
	v, err := NewSolver(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Worklist(); err != nil {
		b.Fatal(err)
	}
	states := float64(v.States())
	v.Close()
	b.Run("exec=seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got := Count(n); got != want {
				b.Fatalf("%d solutions, want %d", got, want)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*states), "ns/state")
	})
	for _, workers := range []int{1, 2} {
		for _, name := range []string{"packets", "worklist", "worklist-take", "worklist-stack", "join-inline", "join-spawn"} {
			b.Run(fmt.Sprintf("workers=%d/exec=%s", workers, name), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
				v, err := NewSolver(n, workers)
				if err != nil {
					b.Fatal(err)
				}
				defer v.Close()
				f := ways(v)[name]
				b.ReportAllocs()
				for b.Loop() {
					if got, err := f(); err != nil || got != want {
						b.Fatalf("%d solutions, %v; want %d", got, err, want)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*states), "ns/state")
			})
		}
	}
}
