package uts

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/watchdog"
	"go.uber.org/goleak"
)

// Every scheduler, pool and watchdog a test starts is stopped before it
// returns. IgnoreCurrent: ants starts its default pool's two goroutines
// when the package is initialised, before any test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }

// The small trees' sizes, as their docs give them.
func TestSmallTrees(t *testing.T) {
	assert.Equal(t, Stats{Nodes: 63914, Leaves: 51124, MaxDepth: 7}, MustNew(T1S).Stats())
	assert.Equal(t, Stats{Nodes: 94577, Leaves: 82779, MaxDepth: 237}, MustNew(T3S).Stats())
}

// T1 and T3 are UTS's trees: the node counts, depths and leaf counts of
// UTS's sample trees (its sample_trees.sh). About 1.5 s.
func TestPublishedTrees(t *testing.T) {
	if testing.Short() {
		t.Skip("searches 8 million nodes")
	}
	assert.Equal(t, Stats{Nodes: 4130071, Leaves: 3305118, MaxDepth: 10}, MustNew(T1).Stats())
	assert.Equal(t, Stats{Nodes: 4112897, Leaves: 3599034, MaxDepth: 1572}, MustNew(T3).Stats())
}

func TestTreeIsDeterministic(t *testing.T) {
	tr := MustNew(T1S)
	r := tr.Root()
	c0, c1 := tr.Child(&r, 0), tr.Child(&r, 1)
	assert.NotEqual(t, c0.State, c1.State)
	assert.Equal(t, c0, tr.Child(&r, 0))
	assert.Equal(t, int32(1), c0.Height)
	// Rounds repeats the same hash: the tree does not change.
	p := T1S
	p.Rounds = 3
	assert.Equal(t, c0, MustNew(p).Child(&r, 0))
	assert.Equal(t, tr.Stats().Nodes, tr.Count())
}

// Search, depth-first on a Stack with each child computed in place,
// counts what the recursion counts, child for child as Child computes
// them, and a search on a grown Stack allocates nothing.
func TestSearchOnStack(t *testing.T) {
	for _, p := range []Params{T1S, T3S} {
		tr := MustNew(p)
		r := tr.Root()
		var c Node
		tr.ChildInto(&r, 3, &c)
		assert.Equal(t, tr.Child(&r, 3), c)
		var s Stack
		want := tr.Stats()
		assert.Equal(t, want.Nodes, tr.Search(r, &s), p.Name)
		assert.Equal(t, tr.Count(), tr.Search(r, &s), p.Name)
		assert.GreaterOrEqual(t, cap(s.f), int(want.MaxDepth)+1, "the stack held the deepest path")
		// A leaf's subtree is the leaf.
		leaf := r
		for tr.NumChildren(&leaf) > 0 {
			leaf = tr.Child(&leaf, 0)
		}
		assert.Equal(t, int64(1), tr.Search(leaf, &s))
		assert.Zero(t, testing.AllocsPerRun(2, func() { tr.Search(r, &s) }), p.Name)
	}
}

func TestBadParams(t *testing.T) {
	for _, p := range []Params{
		{Kind: Geometric, B0: 0, Depth: 5, Fn: Fixed},
		{Kind: Geometric, B0: 4, Depth: 0, Fn: Fixed},
		{Kind: Geometric, B0: 4, Depth: 5, Fn: 7},
		{Kind: Binomial, B0: 0, M: 8, Q: 0.1},
		{Kind: Binomial, B0: 10, M: 0, Q: 0.1},
		{Kind: Binomial, B0: 10, M: 8, Q: 1.5},
		{Kind: 9},
	} {
		_, err := New(p)
		assert.Error(t, err, "%+v", p)
	}
}

// Linear is UTS's linearly decreasing shape (T5: "-t 1 -a 0 -d 20 -b 4
// -r 34", 4,147,582 nodes, depth 20): its top levels, cut short, are
// deterministic too and shrink as Depth does.
func TestLinearShape(t *testing.T) {
	p := Params{Kind: Geometric, Seed: 34, B0: 4, Depth: 8, Fn: Linear}
	s := MustNew(p).Stats()
	assert.LessOrEqual(t, s.MaxDepth, int32(8))
	assert.Positive(t, s.Nodes)
	assert.Equal(t, s, MustNew(p).Stats())
}

// executors builds every executor the benchmarks run, by name.
func executors(t *Tree, workers int) map[string]func() (Exec, error) {
	ws := func(o WSchedOptions) func() (Exec, error) {
		return func() (Exec, error) {
			o.Config.Workers = workers
			return WSched(t, o)
		}
	}
	return map[string]func() (Exec, error){
		"seq":                   func() (Exec, error) { return Sequential(t), nil },
		"seq-rec":               func() (Exec, error) { return Recursive(t), nil },
		"seq-feed":              func() (Exec, error) { return Feeding(t), nil },
		"seq-feed-take":         func() (Exec, error) { return FeedingTake(t, worklistTake+1), nil },
		"wsched-spawn":          ws(WSchedOptions{}),
		"wsched-inline":         ws(WSchedOptions{Inline: true}),
		"wsched-inline-scalar":  ws(WSchedOptions{Inline: true, Scalar: true}),
		"wsched-spawn-join":     ws(WSchedOptions{Join: true}),
		"wsched-inline-join":    ws(WSchedOptions{Inline: true, Join: true}),
		"wsched-split":          ws(WSchedOptions{Split: true}),
		"wsched-worklist":       ws(WSchedOptions{Worklist: true}),
		"wsched-worklist-stack": ws(WSchedOptions{Worklist: true, Stack: true}),
		"wsched-worklist-take":  ws(WSchedOptions{Worklist: true, Take: worklistTake}),
		"waitgroup":             func() (Exec, error) { return Goroutines(t, DefaultCutoff(workers)), nil },
		"errgroup":              func() (Exec, error) { return Errgroup(t, DefaultCutoff(workers)), nil },
		"chanpool":              func() (Exec, error) { return ChanPool(t, workers) },
		"ants":                  func() (Exec, error) { return Ants(t, workers) },
		"pond":                  func() (Exec, error) { return Pond(t, workers) },
	}
}

// Every executor counts every node of both small trees, three searches in
// a row, at 1, 2 and 3 workers (GOMAXPROCS too).
func TestExecutorsCountEveryNode(t *testing.T) {
	stop := watchdog.Start(t, 120*time.Second)
	defer stop()
	for _, p := range []Params{T1S, T3S} {
		tr := MustNew(p)
		want := tr.Count()
		for _, workers := range []int{1, 2, 3} {
			for name, mk := range executors(tr, workers) {
				t.Run(fmt.Sprintf("%s/%s/w%d", p.Name, name, workers), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
					ex, err := mk()
					require.NoError(t, err)
					defer func() { require.NoError(t, ex.Close()) }()
					for run := range 3 {
						got, err := ex.Search()
						require.NoError(t, err, "run %d", run)
						require.Equal(t, want, got, "run %d", run)
					}
				})
			}
		}
	}
}

// The wsched search runs every node as a packet of its own (a value
// packet spawned, or run inline by SpawnOrRun), and, in the join
// variants, one continuation per node with children.
func TestWSchedPacketsPerNode(t *testing.T) {
	tr := MustNew(T3S)
	st := tr.Stats()
	for _, o := range []WSchedOptions{{}, {Inline: true}, {Join: true}, {Inline: true, Join: true}} {
		o.Config.Workers = 2
		ex, err := WSched(tr, o)
		require.NoError(t, err)
		n, err := ex.Search()
		require.NoError(t, err)
		require.Equal(t, st.Nodes, n)
		s := ex.(*wsExec).Scheduler().Stats()
		require.NoError(t, ex.Close())
		want := uint64(st.Nodes)
		if o.Join {
			want += uint64(st.Nodes - st.Leaves)
		}
		assert.Equal(t, want, s.Ran, "%+v", o)
		var inlined uint64
		for _, w := range s.Workers {
			inlined += w.Inlined
		}
		if o.Inline {
			assert.Positive(t, inlined, "%+v", o)
		} else {
			assert.Zero(t, inlined, "%+v", o)
		}
	}
}

func TestDefaultCutoff(t *testing.T) {
	for w, d := range map[int]int{0: 2, 1: 2, 2: 3, 3: 3, 4: 4, 8: 5, 16: 6} {
		assert.Equal(t, d, DefaultCutoff(w), "workers %d", w)
	}
}

// TestSearchUnderCachegrind searches T1S three times, at one worker, with
// the executor that UTS_EXEC names (skipped without it): a fixed amount
// of work whose instructions cachegrind counts exactly, where timings on a
// shared machine move by 10%. An executor's instructions per node over
// the sequential search are the difference of two runs' totals over
// 3 · 63,914 nodes:
//
//	go test -c -o uts.test .
//	UTS_EXEC=seq valgrind --tool=cachegrind --cache-sim=no ./uts.test -test.run SearchUnderCachegrind -test.v
//	UTS_EXEC=wsched-inline valgrind --tool=cachegrind --cache-sim=no ./uts.test -test.run SearchUnderCachegrind -test.v
//
// (Under valgrind the SHA-1 runs without SHA-NI, so totals are larger than
// on the machine; the difference is the executor's. Valgrind 3.19 stops
// at an instruction of the runtime's lock timing now and then: run again.)
func TestSearchUnderCachegrind(t *testing.T) {
	name := os.Getenv("UTS_EXEC")
	if name == "" {
		t.Skip("UTS_EXEC names the executor")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	tr := MustNew(T1S)
	mk, ok := executors(tr, 1)[name]
	require.True(t, ok, "no executor %q", name)
	ex, err := mk()
	require.NoError(t, err)
	defer ex.Close()
	for range 3 {
		n, err := ex.Search()
		require.NoError(t, err)
		require.Equal(t, int64(63914), n)
	}
}
