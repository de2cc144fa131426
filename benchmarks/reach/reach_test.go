package reach

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Every scheduler a test starts is closed before it returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }

// The generator gives the same graph for the same Params and another for
// another seed; the graph is well formed CSR.
func TestGraphIsDeterministic(t *testing.T) {
	g := MustNew(Small)
	require.Equal(t, Small.Nodes, g.Nodes())
	require.Equal(t, Small.Edges, g.Edges())
	require.Equal(t, g, MustNew(Small))

	other := Small
	other.Seed++
	require.NotEqual(t, g.Targets, MustNew(other).Targets)

	require.Zero(t, g.Offsets[0])
	require.Equal(t, uint32(g.Edges()), g.Offsets[g.Nodes()])
	descending, outside := 0, 0 // counted, not required one by one: -race
	for v := range g.Nodes() {
		if g.Offsets[v] > g.Offsets[v+1] {
			descending++
		}
	}
	for _, dst := range g.Targets {
		if int(dst) >= g.Nodes() {
			outside++
		}
	}
	require.Zero(t, descending, "offsets below their predecessor")
	require.Zero(t, outside, "targets outside the graph")
}

func TestNewRejectsBadParams(t *testing.T) {
	for _, p := range []Params{
		{Nodes: 1, Edges: 10},
		{Nodes: 1 << 10, Edges: 100}, // fewer than the spanning edges
	} {
		_, err := New(p)
		require.Error(t, err, "%+v", p)
	}
}

// Node 0 reaches every anchored node and most of the others, but not all.
func TestSequentialReach(t *testing.T) {
	g := MustNew(Small)
	pm := NewPlainMarks(g.Nodes())
	want := SequentialPlain(g, pm)
	require.Equal(t, want, pm.Count())
	anchored := Small.Nodes - Small.Nodes/Unanchored
	require.Greater(t, want, anchored)
	require.Less(t, want, Small.Nodes)
	missed := 0
	for v := range anchored {
		if pm[v>>6]&(1<<(v&63)) == 0 {
			missed++
		}
	}
	require.Zero(t, missed, "anchored nodes not reached")

	m := NewMarks(g.Nodes())
	require.Equal(t, want, SequentialDFS(g, m))
	words := make([]uint64, len(m))
	for i := range m {
		words[i] = m[i].Load()
	}
	require.Equal(t, []uint64(pm), words)
}

// Every executor reaches what SequentialPlain reaches, at 1, 2 and 3
// workers, three searches in a row on one executor; the worklist runs
// each reached node once and drops nothing. (The sequential executors,
// which ignore the worker count, run at 1 only.)
func TestExecutorsAgree(t *testing.T) {
	g := MustNew(Small)
	pm := NewPlainMarks(g.Nodes())
	want := SequentialPlain(g, pm)
	for _, workers := range []int{1, 2, 3} {
		names, mk := executors(g, workers)
		for _, name := range names {
			if workers > 1 && strings.HasPrefix(name, "seq-") {
				continue
			}
			t.Run(fmt.Sprintf("workers=%d/exec=%s", workers, name), func(t *testing.T) {
				ex, err := mk[name]()
				require.NoError(t, err)
				defer func() { require.NoError(t, ex.Close()) }()
				for i := range 3 {
					ex.Reset()
					n, err := ex.Search()
					require.NoError(t, err)
					require.Equal(t, want, n, "search %d", i)
					if wx, ok := ex.(*WorklistExec); ok {
						require.Equal(t, want, wx.Marks().Count(), "search %d", i)
						st := wx.Worklist().Stats()
						require.Equal(t, uint64(want)*uint64(i+1), st.Items, "search %d", i)
						require.Zero(t, st.Dropped, "search %d", i)
						if i == 2 {
							t.Logf("after 3 searches: %d splits, %d items split", st.Splits, st.SplitItems)
						}
					}
				}
			})
		}
	}
}

// A second Search without Reset is refused: the marks are not clear.
func TestSearchWithoutReset(t *testing.T) {
	g := MustNew(Small)
	ex, err := NewWorklistExec(g, 2)
	require.NoError(t, err)
	defer func() { require.NoError(t, ex.Close()) }()
	ex.Reset()
	_, err = ex.Search()
	require.NoError(t, err)
	_, err = ex.Search()
	require.Error(t, err)
}
